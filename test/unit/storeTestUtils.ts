// Builders for crafted dataset folders used by the store, summary and export tests.
import { mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { createDemonstrationRecord, type DemonstrationProvenance } from '../../src/store/demonstrationBuilder';
import type { DemonstrationRecord } from '../../src/store/records';
import { exportIndexPath } from '../../src/store/export/exportIndex';
import { summaryIndexPath } from '../../src/store/summaryIndex';

const created: string[] = [];
after(() => {
  for (const d of created) {
    // The summary index of a temp folder would outlive it in the cache.
    rmSync(summaryIndexPath(realpathSync(d)), { force: true });
    // So would the export index of every file exported into it.
    for (const f of readdirSync(d, { recursive: true, encoding: 'utf8' }))
      rmSync(exportIndexPath(join(realpathSync(d), f)), { force: true });
    rmSync(d, { recursive: true, force: true });
  }
});

/** A fresh temp folder, removed when the test file finishes. */
export function tempDir(prefix = 'forgeenv-store-'): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  created.push(d);
  return d;
}

/** A deterministic uuid-shaped id from a small number. */
export function uuidFor(n: number): string {
  return `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`;
}

export interface DemoSpec {
  n: number;
  taskId?: string;
  primitive?: string;
  params?: Record<string, unknown>;
  seed?: number;
  success?: boolean;
  /** false: a record from before the verifier (no info.verification). */
  verified?: boolean;
  reward?: number;
  activeMs?: number;
  annotator?: string;
  diff?: string;
  script?: string;
  previous?: DemonstrationRecord;
  versions?: Record<string, string>;
  /** Recorded info.breakage_failed (absent: a record from before the flag). */
  breakageFailed?: boolean;
}

export function diffOf(added: number, removed: number, file = 'train.py'): string {
  const lines = [`--- a/${file}`, `+++ b/${file}`, `@@ -1,${removed + 1} +1,${added + 1} @@`, ' import transformers'];
  for (let i = 0; i < removed; i++) lines.push(`-old_line_${i} = 1`);
  for (let i = 0; i < added; i++) lines.push(`+new_line_${i} = 2`);
  return lines.join('\n') + '\n';
}

export function provenance(annotator = 'alice', activeMs = 60_000): DemonstrationProvenance {
  return {
    session_id: 'session-1',
    annotator_id: annotator,
    mode: 'simulated',
    interpreter: 'python3',
    extension_version: '0.1.0',
    env_version: '0.1.0',
    started_at: '2025-03-01T10:00:00.000Z',
    submitted_at: '2025-03-01T10:05:00.000Z',
    active_ms: activeMs,
    wall_ms: activeMs + 1000,
    runs: 2,
  };
}

export function makeDemo(s: DemoSpec): DemonstrationRecord {
  const taskId = s.taskId ?? 'task_a';
  const primitive = s.primitive ?? 'RenameApiCall';
  const params = s.params ?? { old_name: 'eval_strategy', new_name: 'evaluation_strategy' };
  const versions = s.versions ?? { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' };
  const success = s.success ?? true;
  // A revision changes the repair (an identical one is refused), so its default diff grows a line per revision.
  const diff = s.diff ?? diffOf(1 + (s.previous ? s.previous.info.revision : 0), 1);
  const episodeId = s.previous?.info.episode_id ?? `ep-${s.n}`;
  return createDemonstrationRecord({
    rollout: {
      task_id: taskId,
      primitive_type: primitive,
      drift_prompt: `Target category: ${primitive}\n`,
      drift_completion: JSON.stringify({ primitive_type: primitive, params }),
      repair_prompt: `Fix the script for ${taskId}.\n\`\`\`python\nprint(${s.n})\n\`\`\``,
      repair_completion: diff,
      visible_reward: s.reward ?? (success ? 1.8 : 0),
      visible_breakdown: { script_executes: success ? 1 : 0 },
      held_out_breakdown: { executed_cleanly: success ? 1 : 0, hidden_tests_passed: success ? 1 : 0 },
      success,
      error_trace: success ? '' : 'Traceback (most recent call last):\nTypeError: boom',
      info: {
        target_category: primitive,
        ...(s.breakageFailed === undefined ? {} : { breakage_failed: s.breakageFailed }),
        // The verifier's verdict, as the environment records it: exports take only verified successes.
        ...(s.verified === false
          ? {}
          : { verification: { verified: success, loaded: success, trained: success, in_range: success, findings: [] } }),
      },
    },
    originalScript: s.script ?? `# script of ${taskId}\nprint("hello")\n`,
    episodeId,
    seed: s.seed ?? 7,
    primitive: { primitive_type: primitive, params },
    libraryVersions: versions,
    provenance: provenance(s.annotator, s.activeMs),
    previous: s.previous,
    recordId: uuidFor(s.n),
  });
}

// trl-dpo: preference pairs for TRL's DPOTrainer, `{prompt, chosen, rejected}`, where `chosen` is a
// repair that passes and `rejected` one that fails, for the same broken script (same task_hash and
// repair prompt). Candidates are every attempt the dataset holds for that script: human and model
// demonstrations (evaluate-model's attempts included), superseded revisions, records a reviewer
// rejected, and the model's suggestions kept in `info.suggestion`. Both sides are re-executed at
// export through the rescoring path (replayRepair in the recorded snapshot and mode): a chosen
// side must still pass and a rejected side still fail, or the pair is not written, and a record
// whose task changed since is left out. Rows are deduplicated like every other export.
import { dirname } from 'node:path';
import { mkdir } from 'node:fs/promises';
import type { ForgeEnvironment } from '../../env/episode/environment';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../env/episode/prompts';
import { replayRepair } from '../../env/episode/replay';
import type { ExecutionMode } from '../../env/schemas';
import { writeFileAtomic } from '../atomicWrite';
import { DatasetStore } from '../datasetStore';
import { breakageFailed } from '../demonstrationBuilder';
import { sha256Hex, taskHash } from '../hashing';
import type { DemonstrationRecord } from '../records';
import { ExportError } from './exportDataset';
import { fencedDiff, flatPrompt, type CompletionForm, type PromptStyle } from './formats';
import { verifiedSuccess } from './selection';

export type CandidateSource = 'human' | 'model' | 'suggestion';

export interface DpoCandidate {
  /** The record the attempt is stored in (a suggestion: the record that keeps it). */
  record: DemonstrationRecord;
  source: CandidateSource;
  diff: string;
  /** What the dataset says: passed (verified), failed, or not known (an unscored suggestion). */
  stored: 'pass' | 'fail' | 'unknown';
  /** Why it may not be chosen (a reviewer rejected it). */
  reviewRejected: boolean;
  superseded: boolean;
}

export interface DpoOptions {
  dir: string;
  out: string;
  style?: PromptStyle;
  completion?: CompletionForm;
  systemPrompt?: string;
  /** One environment per mode (the caller owns and disposes them), as for rescore. */
  envFor: (mode: ExecutionMode) => ForgeEnvironment;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

export interface DpoResult {
  out: string;
  rows: number;
  groups: number;
  /** Scripts with at least one stored pass and one stored failure (the only ones re-executed). */
  pairable_groups: number;
  candidates: number;
  reexecuted: number;
  /** A stored pass that failed at export, or a stored failure that passed: not used. */
  changed_at_export: number;
  task_changed: number;
  errors: number;
  deduplicated: number;
  /** The same diff stored more than once for one script (kept once as a candidate). */
  duplicate_attempts: number;
  by_source: Record<string, number>;
  cancelled: boolean;
}

/** Every attempt at each broken script, grouped by task_hash and repair prompt. */
export function dpoCandidates(
  records: readonly DemonstrationRecord[],
  superseded: ReadonlySet<string>,
  rejectedByReview: ReadonlySet<string>,
  counts = { duplicates: 0 },
): Map<string, DpoCandidate[]> {
  const groups = new Map<string, DpoCandidate[]>();
  const seen = new Set<string>();
  const add = (c: DpoCandidate) => {
    const key = `${c.record.info.task_hash}:${sha256Hex(c.record.repair_prompt)}`;
    // The same diff for the same script is one attempt, however often it was stored.
    const id = `${key}:${sha256Hex(c.diff)}`;
    if (c.diff.trim() === '') return;
    if (seen.has(id)) return void counts.duplicates++;
    seen.add(id);
    groups.set(key, [...(groups.get(key) ?? []), c]);
  };
  for (const r of records) {
    // A breakage that left the script running is no repair task (as for the other exports).
    if (breakageFailed(r) === false) continue;
    const base = { record: r, reviewRejected: rejectedByReview.has(r.info.record_id), superseded: superseded.has(r.info.record_id) };
    const agent = r.info.agent as { kind?: unknown } | undefined;
    add({
      ...base,
      source: agent?.kind === 'model' ? 'model' : 'human',
      diff: r.repair_completion,
      stored: verifiedSuccess(r) ? 'pass' : 'fail',
    });
    const s = r.info.suggestion as { diff?: unknown; score?: { success?: unknown } } | undefined;
    if (s && typeof s.diff === 'string') {
      const stored = typeof s.score?.success === 'boolean' ? (s.score.success ? 'pass' : 'fail') : 'unknown';
      add({ ...base, reviewRejected: false, superseded: false, source: 'suggestion', diff: s.diff, stored });
    }
  }
  return groups;
}

function promptOf(systemPrompt: string, repairPrompt: string, style: PromptStyle): unknown {
  return style === 'standard'
    ? flatPrompt(systemPrompt, repairPrompt)
    : [
        { role: 'system', content: systemPrompt },
        { role: 'user', content: repairPrompt },
      ];
}

function side(diff: string, style: PromptStyle, form: CompletionForm): unknown {
  const text = form === 'fenced' ? fencedDiff(diff) : diff;
  return style === 'standard' ? text : [{ role: 'assistant', content: text }];
}

export async function exportDpo(opts: DpoOptions): Promise<DpoResult> {
  const style = opts.style ?? 'standard';
  const form = opts.completion ?? 'raw';
  const systemPrompt = opts.systemPrompt ?? REPAIR_AGENT_SYSTEM_PROMPT;
  const snap = await new DatasetStore(opts.dir).readAll().catch((e: Error) => {
    throw new ExportError(`Dataset folder ${opts.dir} could not be read: ${e.message}`);
  });
  const rejected = new Set([...snap.reviews.latest].filter(([, r]) => r.verdict === 'reject').map(([id]) => id));
  const counts = { duplicates: 0 };
  const groups = dpoCandidates(snap.demonstrations.all, snap.demonstrations.superseded, rejected, counts);
  const result: DpoResult = {
    out: opts.out,
    rows: 0,
    groups: groups.size,
    pairable_groups: 0,
    candidates: 0,
    reexecuted: 0,
    changed_at_export: 0,
    task_changed: 0,
    errors: 0,
    deduplicated: 0,
    duplicate_attempts: counts.duplicates,
    by_source: {},
    cancelled: false,
  };
  const lines: string[] = [];
  const written = new Set<string>();
  for (const cands of groups.values()) {
    result.candidates += cands.length;
    // Only a script with a possible pass and a possible failure can give a pair: nothing else is run.
    const mayPass = cands.some((c) => c.stored !== 'fail' && !c.reviewRejected);
    const mayFail = cands.some((c) => c.stored !== 'pass' || c.reviewRejected);
    if (!mayPass || !mayFail) continue;
    result.pairable_groups++;
    const chosen: DpoCandidate[] = [];
    const rejectedSide: DpoCandidate[] = [];
    for (const c of cands) {
      if (opts.signal?.aborted) break;
      const rec = c.record;
      const spec = {
        taskId: rec.task_id,
        seed: rec.info.seed,
        primitive: { primitive_type: rec.info.primitive.primitive_type, params: rec.info.primitive.params },
        libraryVersions: rec.info.library_versions,
      };
      let now: boolean;
      try {
        const r = await replayRepair(opts.envFor(rec.info.mode), spec, c.diff, { signal: opts.signal });
        if (opts.signal?.aborted) break;
        result.reexecuted++;
        if (
          taskHash({ script: r.originalScript, primitive: spec.primitive, seed: spec.seed, library_versions: spec.libraryVersions }) !==
          rec.info.task_hash
        ) {
          result.task_changed++;
          continue;
        }
        now = r.evaluation.success && r.evaluation.verification?.verified !== false;
      } catch (e) {
        result.errors++;
        opts.onProgress?.(`${rec.task_id} ${rec.info.record_id} (${c.source}): not re-executed: ${(e as Error).message}`);
        continue;
      }
      if ((c.stored === 'pass' && !now) || (c.stored === 'fail' && now)) {
        result.changed_at_export++;
        opts.onProgress?.(
          `${rec.task_id} ${rec.info.record_id} (${c.source}): stored ${c.stored}, ${now ? 'passes' : 'fails'} now: left out`,
        );
        continue;
      }
      if (now && !c.reviewRejected) chosen.push(c);
      else if (!now) rejectedSide.push(c);
      opts.onProgress?.(`${rec.task_id} ${rec.info.record_id} (${c.source}): ${now ? 'passes' : 'fails'}`);
    }
    if (opts.signal?.aborted) {
      result.cancelled = true;
      break;
    }
    if (!chosen.length || !rejectedSide.length) continue;
    // The current (not superseded) human repair is the preferred chosen side; each failure is paired once.
    chosen.sort((a, b) => Number(a.superseded) - Number(b.superseded) || Number(a.source !== 'human') - Number(b.source !== 'human'));
    rejectedSide.forEach((r, i) => {
      const c = chosen[i % chosen.length];
      const row = JSON.stringify({
        prompt: promptOf(systemPrompt, c.record.repair_prompt, style),
        chosen: side(c.diff, style, form),
        rejected: side(r.diff, style, form),
      });
      const key = sha256Hex(row);
      if (written.has(key)) return void result.deduplicated++;
      written.add(key);
      lines.push(row);
      const pair = `${c.source}>${r.source}`;
      result.by_source[pair] = (result.by_source[pair] ?? 0) + 1;
    });
  }
  result.rows = lines.length;
  if (result.cancelled) return result; // nothing written: a cut export is not a dataset
  await mkdir(dirname(opts.out), { recursive: true });
  await writeFileAtomic(opts.out, lines.map((l) => `${l}\n`).join(''));
  return result;
}

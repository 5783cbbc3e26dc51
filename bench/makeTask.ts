// The figure that counts (issue 20, "Measure honestly"): `make-task` alone on every script of
// ../shared/realworld/scripts (read from there, never copied into the project), each into a fresh
// task folder, nothing hand-edited, checked in real mode. Per script: the snapshot chosen and why,
// rounds, adaptations, original runs x/3, breakages verified, the refusal's reason, seconds; then
// the totals: share of originals running, share with >= 2 verified breakages, top refusal reasons,
// time per script. Numbers, not assertions.
// `--scripts-dir DIR` measures another folder instead (scripts the project has never seen, kept outside
// the project, e.g. /work/unseen/scripts): the same pipeline, so the figure shows how general it is.
//   npm run bench:make-task -- [--only 05,21] [--jobs 1] [--snapshot auto|ID] [--timeout 180] [--json FILE]
//                              [--scripts-dir DIR] (default ../shared/realworld/scripts)
//                              [--all-snapshots] (default: only snapshots whose venv is built, so nothing installs) [--warm]
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeTask, type MakeTaskResult } from '../src/env/taskmaking/makeTask';
import { warmPool } from '../src/env/run/executor';
import { phaseTotals, type PhaseTime } from '../src/env/phaseTimes';

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    jobs: { type: 'string', default: '1' },
    snapshot: { type: 'string', default: 'auto' },
    timeout: { type: 'string', default: '180' },
    json: { type: 'string' },
    /** The folder of scripts to measure (default ../shared/realworld/scripts). */
    'scripts-dir': { type: 'string' },
    'keep-tasks': { type: 'boolean', default: false },
    /** Let inference pick snapshots whose venv is not built yet (installs them: minutes each). */
    'all-snapshots': { type: 'boolean', default: false },
    /** Runs through the warm runtime (make-task's `warm`). */
    warm: { type: 'boolean', default: false },
  },
});
const SCRIPTS = values['scripts-dir'] ? resolve(values['scripts-dir']) : resolve(__dirname, '..', '..', 'shared', 'realworld', 'scripts');
/** A script's id in progress lines: its name up to the first `_` (`05`, `012`). */
const idOf = (f: string): string => f.split('_')[0] ?? f;

interface Row {
  script: string;
  snapshot: string;
  why: string;
  rounds: number;
  adaptations: string[];
  originals: string;
  originalRuns: boolean;
  breakagesVerified: number;
  refusal?: string;
  refusalRule?: string;
  seconds: number;
  /** Where the time went (make-task's timings.phases). */
  phases: PhaseTime[];
}

function rowOf(script: string, r: MakeTaskResult | undefined, error: string | undefined, seconds: number): Row {
  const good = r?.verdict?.breakages.filter((b) => b.broke && b.names_api && b.oracle_verified).length ?? 0;
  const runs = r?.verdict?.original_runs;
  return {
    script,
    snapshot: r?.snapshot.id ?? '-',
    why: r?.snapshot.reason ?? '',
    rounds: r?.rounds ?? 0,
    adaptations: (r?.adaptations ?? []).map((a) => `${a.rule}: ${a.change}`),
    originals: runs ? `${runs.verified}/${runs.of}` : '-',
    originalRuns: !!runs && runs.of >= 3 && runs.verified === runs.of,
    breakagesVerified: good,
    ...(error
      ? { refusal: `crash: ${error}`, refusalRule: 'crash' }
      : r?.refusal
        ? { refusal: r.refusal.reason, refusalRule: r.refusal.rule }
        : {}),
    seconds,
    phases: r?.timings.phases ?? [],
  };
}

async function main(): Promise<void> {
  if (!existsSync(SCRIPTS)) return void console.log(`skipped: ${SCRIPTS} is absent`);
  const keys = values.only?.split(',').filter(Boolean);
  const files = readdirSync(SCRIPTS)
    .filter((n) => n.endsWith('.py') && (!keys || keys.some((k) => n.startsWith(k))))
    .sort();
  const rows: Row[] = [];
  // The warm pool's starts, claims and failures, beside the progress.
  if (values.warm) warmPool.setLog((line) => process.stderr.write(`  ${line}\n`));
  const t0 = performance.now();
  const queue = [...files];
  const worker = async () => {
    for (let f = queue.shift(); f; f = queue.shift()) {
      const dir = mkdtempSync(join(tmpdir(), 'forgeenv-make-task-bench-'));
      const started = performance.now();
      let result: MakeTaskResult | undefined;
      let error: string | undefined;
      try {
        result = await makeTask(
          {
            scriptPath: join(SCRIPTS, f),
            taskDir: dir,
            snapshot: values.snapshot,
            mode: 'real',
            builtSnapshotsOnly: !values['all-snapshots'],
            timeoutMs: Number(values.timeout) * 1000,
            warm: values.warm,
            // The cores shared among the jobs: each script's breakage episodes side by side on its share.
            verifyLanes: Math.max(1, Math.floor(availableParallelism() / Math.max(1, Number(values.jobs)))),
          },
          { onProgress: (m) => process.stderr.write(`  [${idOf(f)}] ${m}\n`) },
        );
      } catch (e) {
        error = (e as Error).message.split('\n')[0];
      } finally {
        if (!values['keep-tasks']) rmSync(dir, { recursive: true, force: true });
        else process.stderr.write(`  [${idOf(f)}] task folder kept: ${dir}\n`);
      }
      const row = rowOf(f, result, error, (performance.now() - started) / 1000);
      rows.push(row);
      console.log(
        `${f.slice(0, 40).padEnd(40)} ${row.seconds.toFixed(0).padStart(4)}s  snapshot ${row.snapshot.padEnd(7)} rounds ${row.rounds}  adaptations ${row.adaptations.length}  original ${row.originals.padEnd(4)} breakages ${row.breakagesVerified}` +
          (row.refusal ? `  REFUSED (${row.refusalRule}): ${row.refusal.slice(0, 200)}` : ''),
      );
      console.log(`    why: ${row.why.slice(0, 220)}`);
      for (const a of row.adaptations) console.log(`    + ${a.slice(0, 200)}`);
      const s = (ms: number) => `${(ms / 1000).toFixed(1)}s`;
      console.log(`    phases: ${row.phases.map((p) => `${p.phase} ${s(p.ms)}${p.runtime === 'warm' ? ' warm' : ''}`).join(', ')}`);
      console.log(
        `    by kind: ${phaseTotals(row.phases)
          .map((t) => `${t.phase} x${t.count} ${s(t.ms)}`)
          .join(', ')}`,
      );
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Number(values.jobs)) }, worker));
  const n = rows.length;
  const pct = (k: number) => `${k}/${n} (${n ? Math.round((100 * k) / n) : 0}%)`;
  const reasons = new Map<string, number>();
  for (const r of rows) if (r.refusalRule) reasons.set(r.refusalRule, (reasons.get(r.refusalRule) ?? 0) + 1);
  const secs = rows.map((r) => r.seconds).sort((a, b) => a - b);
  console.log(`\noriginals running 3/3 verified: ${pct(rows.filter((r) => r.originalRuns).length)}`);
  console.log(`>= 2 verified breakages: ${pct(rows.filter((r) => r.breakagesVerified >= 2).length)}`);
  console.log(
    `refused: ${pct(rows.filter((r) => r.refusal).length)}; top reasons: ${
      [...reasons]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${v}`)
        .join(', ') || 'none'
    }`,
  );
  console.log(
    `seconds per script: median ${secs[Math.floor(n / 2)]?.toFixed(0) ?? '-'}, max ${secs.at(-1)?.toFixed(0) ?? '-'}; wall ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
  if (values.json) writeFileSync(values.json, JSON.stringify(rows, null, 2));
  await warmPool.clear();
}

void main();

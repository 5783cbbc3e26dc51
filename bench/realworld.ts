// Runs the real-world corpus (../shared/realworld/scripts, never copied into the project) through the
// executor in simulated mode, unmodified, with per-script arguments and files from
// test/fixtures/realworld-tasks.json, and prints per script: ok/fail, wall time, losses, checkpoint and
// the last error line; then the overall count and the most common failure reasons.
// With --verify, each clean run's artifact also goes through the environment's verifier (docs/verifier.md),
// judged against itself: does the original's own artifact give the check something to verify?
//   node --import tsx bench/realworld.ts [--only 05,21] [--jobs 2] [--verbose] [--json] [--verify]
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { executeScript, type RunResult } from '../src/env/run/executor';
import { RunMountsSchema } from '../src/env/schemas';
import { getSnapshot } from '../src/env/snapshots/registry';
import { judgeEvidence, type Evidence } from '../src/env/verify/judge';
import { VerifySpecSchema } from '../src/env/verify/spec';
import { openForReading, readVerdict, verifierRun } from '../src/env/verify/verifier';

const root = resolve(__dirname, '..');
export const REALWORLD_DIR = join(root, '..', 'shared', 'realworld', 'scripts');
export const FIXTURES_PATH = join(root, 'test', 'fixtures', 'realworld-tasks.json');

export const RealworldTaskSchema = z.object({
  /** File name inside the corpus' scripts folder. */
  file: z.string().regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$/),
  /** Snapshot id (resources/snapshots/snapshots.json) of the script's era. */
  snapshot: z.string().regex(/^\d{4}-\d{2}$/),
  args: z.array(z.string()).default([]),
  files: z.record(z.string(), z.string()).default({}),
  /** Absolute folders the script writes to (SageMaker's /opt/ml/model), mapped into the run folder by the sandbox. */
  mounts: RunMountsSchema.default([]),
  /** Extra environment variables (e.g. SageMaker's SM_CHANNEL_TRAIN). */
  env: z.record(z.string(), z.string()).default({}),
  timeoutMs: z.number().int().positive().optional(),
  note: z.string().optional(),
  /** Why the harness leaves it out unless --include-skipped (e.g. it writes to absolute paths outside the run directory). */
  skip: z.string().optional(),
});
export type RealworldTask = z.infer<typeof RealworldTaskSchema>;

export function loadRealworldTasks(path = FIXTURES_PATH): RealworldTask[] {
  return z.array(RealworldTaskSchema).parse(JSON.parse(readFileSync(path, 'utf8')));
}

export interface RealworldOutcome {
  file: string;
  snapshot: string;
  ok: boolean;
  exitCode: number | null;
  wallMs: number;
  losses: number[];
  lossesDecrease: boolean;
  checkpoint: boolean;
  lastError: string;
  result: RunResult;
  /** With --verify: the verifier's judgement of the original's own artifact. */
  evidence?: Evidence;
}

const STEP_LOSS = /\bstep=(\d+) loss=(-?[\d.]+(?:e-?\d+)?)/g;

/** The `loss=` values of the `step=N loss=X` lines, in order. */
export function stepLosses(stdout: string): number[] {
  return [...stdout.matchAll(STEP_LOSS)].map((m) => Number(m[2]));
}

/** First loss above the last one (a run with one or no loss line does not count as decreasing). */
export function lossesDecrease(losses: number[]): boolean {
  return losses.length >= 2 && losses[losses.length - 1] < losses[0];
}

/** The last exception line of a traceback (`Type: message`), else the last non-empty stderr line. */
export function lastErrorLine(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean);
  for (let i = lines.length - 1; i >= 0; i--) {
    if (/^[A-Za-z_][\w.]*(Error|Exception|Exit|Interrupt)\b(:|$)/.test(lines[i])) return lines[i];
  }
  return lines[lines.length - 1] ?? '';
}

/** A failure reason for grouping: the exception type and message with quoted names kept, numbers folded. */
export function failureReason(line: string): string {
  return line.replace(/\d+/g, 'N').slice(0, 140);
}

export async function runRealworldTask(task: RealworldTask, dir = REALWORLD_DIR, verify = false): Promise<RealworldOutcome> {
  const script = readFileSync(join(dir, task.file), 'utf8');
  const libraryVersions = getSnapshot(task.snapshot).versions;
  const result = await executeScript({
    script,
    scriptName: task.file,
    mode: 'simulated',
    libraryVersions,
    validate: false,
    args: task.args,
    files: task.files,
    mounts: task.mounts,
    extraEnv: task.env,
    timeoutMs: task.timeoutMs ?? 120_000,
    keepRunDir: verify,
  });
  let evidence: Evidence | undefined;
  if (verify && result.run_dir) {
    try {
      if (result.exit_code === 0) {
        const spec = VerifySpecSchema.parse({});
        await openForReading(result.run_dir);
        const { nonce, ...run } = verifierRun(result.run_dir, script, { mounts: task.mounts });
        const v = readVerdict(await executeScript({ ...run, mode: 'simulated', libraryVersions, timeoutMs: 300_000 }), nonce);
        evidence = judgeEvidence(v, v, spec);
      }
    } finally {
      rmSync(result.run_dir, { recursive: true, force: true });
    }
  }
  // The Trainer's own log lines are on stdout; the simulation's per-step lines for runs whose
  // logging_steps exceed the run are on stderr.
  const losses = stepLosses(result.stdout);
  if (losses.length < 2) losses.push(...stepLosses(result.stderr));
  const decreasing = lossesDecrease(losses);
  return {
    file: task.file,
    snapshot: task.snapshot,
    ok: result.exit_code === 0 && decreasing,
    exitCode: result.exit_code,
    wallMs: result.wall_time_ms,
    losses,
    lossesDecrease: decreasing,
    checkpoint: result.checkpoint_exists,
    lastError: result.exit_code === 0 ? (decreasing ? '' : 'no decreasing step=N loss=X lines') : lastErrorLine(result.stderr),
    result,
    ...(evidence ? { evidence } : {}),
  };
}

async function pool<T, R>(items: T[], jobs: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(jobs, items.length)) }, worker));
  return out;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      only: { type: 'string' },
      jobs: { type: 'string', default: '2' },
      verbose: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'include-skipped': { type: 'boolean', default: false },
      verify: { type: 'boolean', default: false },
    },
  });
  if (!existsSync(REALWORLD_DIR)) {
    console.log(`skipped: ${REALWORLD_DIR} is absent`);
    return;
  }
  let tasks = loadRealworldTasks();
  if (values.only) {
    const keys = values.only
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    tasks = tasks.filter((t) => keys.some((k) => t.file.startsWith(k)));
  }
  const skipped = values['include-skipped'] ? [] : tasks.filter((t) => t.skip);
  tasks = tasks.filter((t) => !skipped.includes(t));
  const t0 = performance.now();
  const outcomes = await pool(tasks, Number(values.jobs), async (t) => {
    const o = await runRealworldTask(t, REALWORLD_DIR, values.verify);
    if (!values.json) {
      const l = o.losses;
      const lossText = l.length ? `${l.length} losses ${l[0]}→${l[l.length - 1]}` : 'no losses';
      console.log(
        `${o.ok ? 'ok  ' : 'FAIL'} ${t.file.padEnd(44)} ${t.snapshot} ${(o.wallMs / 1000).toFixed(1).padStart(5)}s  ${lossText}${o.checkpoint ? ', checkpoint' : ''}${o.ok ? '' : `  | ${o.lastError.slice(0, 200)}`}`,
      );
      if (o.evidence)
        console.log(
          `     verifier: ${o.evidence.verified ? `verified (${o.evidence.check})` : `NOT verified: ${o.evidence.findings[0] ?? ''}`}`,
        );
      if (values.verbose && !o.ok) console.log(o.result.stderr.split('\n').slice(-25).join('\n'));
    }
    return o;
  });
  const wall = performance.now() - t0;
  const ok = outcomes.filter((o) => o.ok).length;
  const reasons = new Map<string, string[]>();
  for (const o of outcomes.filter((x) => !x.ok)) {
    const r = failureReason(o.lastError.replace(/^.*?([A-Za-z]+Error\b)/, '$1'));
    reasons.set(r, [...(reasons.get(r) ?? []), o.file.slice(0, 2)]);
  }
  const top = [...reasons.entries()].sort((a, b) => b[1].length - a[1].length).slice(0, 5);
  if (values.json) {
    console.log(
      JSON.stringify(
        { ok, total: outcomes.length, wallMs: Math.round(wall), outcomes: outcomes.map(({ result: _r, ...o }) => o) },
        null,
        2,
      ),
    );
    return;
  }
  for (const t of skipped) console.log(`SKIP ${t.file.padEnd(44)} ${t.skip}`);
  console.log(
    `\n${ok}/${outcomes.length + skipped.length} scripts ran clean (exit 0, decreasing step=N loss=X lines); harness wall time ${(wall / 1000).toFixed(1)} s`,
  );
  console.log(`checkpoints written: ${outcomes.filter((o) => o.checkpoint).length}`);
  if (values.verify) {
    const clean = outcomes.filter((o) => o.exitCode === 0);
    console.log(
      `verifier: ${clean.filter((o) => o.evidence?.verified).length}/${clean.length} clean originals verified against their own artifact`,
    );
  }
  if (top.length) {
    console.log('most common failure reasons:');
    for (const [r, files] of top) console.log(`  ${String(files.length).padStart(2)}× ${r}  [${files.join(', ')}]`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}

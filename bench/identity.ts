// The pure parts of the warm-vs-cold identity benches (issue 18): options, which breakages a made
// task's episodes replay, how two outcomes are compared, and how two `forgeenv fidelity --json`
// reports are compared. Unit-tested (test/unit/warmIdentity.test.ts); the benches run them.
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { breakageCandidates } from '../src/env/taskmaking/verification';
import type { MakeTaskVerdict } from '../src/env/taskmaking/provenance';
import { ProbeOutcomeSchema } from '../src/env/fidelity/outcomes';
import type { LibraryVersions } from '../src/env/schemas';
import { TASK_METADATA_FILE } from '../src/env/tasks/tasks';

export interface WarmIdentityOptions {
  mode: 'simulated' | 'real';
  /** Task folders (a folder of task folders already expanded); empty: the built-in corpus. */
  taskDirs: string[];
  seeds: number[];
  task?: string;
  timeoutMs: number;
  /** Both sides cold: a difference is then the script's own, not the warm runtime's. */
  control: boolean;
}

const Positive = (what: string) =>
  z
    .string()
    .regex(/^[1-9][0-9]*$/, `${what} must be a positive whole number`)
    .transform(Number);

/**
 * `--mode real|simulated --task-dir DIR (repeatable) --seeds N --task ID --timeout S --control`. Seeds default to 3 on the
 * built-in corpus (the seed picks the drift's params there) and to 1 on task folders (their breakages' params
 * are the recorded ones and every real run seeds its RNGs with 0: another seed only repeats the runs).
 */
export function parseWarmIdentityArgs(argv: string[]): WarmIdentityOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      mode: { type: 'string', default: 'simulated' },
      'task-dir': { type: 'string', multiple: true },
      seeds: { type: 'string' },
      task: { type: 'string' },
      timeout: { type: 'string' },
      control: { type: 'boolean', default: false },
    },
  });
  const mode = z.enum(['simulated', 'real']).safeParse(values.mode);
  if (!mode.success) throw new Error(`--mode must be real or simulated, not "${values.mode}"`);
  const taskDirs = (values['task-dir'] ?? []).flatMap(expandTaskDir);
  if (mode.data === 'real' && taskDirs.length === 0) throw new Error('--mode real needs --task-dir (tasks made by forgeenv make-task)');
  const seeds = Positive('--seeds').parse(values.seeds ?? (taskDirs.length ? '1' : '3'));
  const timeoutS = Positive('--timeout').parse(values.timeout ?? (mode.data === 'real' ? '180' : '60'));
  return {
    mode: mode.data,
    taskDirs,
    seeds: Array.from({ length: seeds }, (_, i) => i + 1),
    ...(values.task ? { task: values.task } : {}),
    timeoutMs: timeoutS * 1000,
    control: values.control,
  };
}

const isTaskFolder = (dir: string): boolean => existsSync(join(dir, TASK_METADATA_FILE)) || readdirSync(dir).some((n) => n.endsWith('.py'));

/** A task folder as is; a folder of task folders (`make-task --task-dir /tmp/idt/<S>` each) as its task folders. */
export function expandTaskDir(dir: string): string[] {
  const abs = resolve(dir);
  if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new Error(`--task-dir ${dir}: not a folder`);
  if (isTaskFolder(abs)) return [abs];
  const inner = readdirSync(abs)
    .sort()
    .map((n) => join(abs, n))
    .filter((p) => statSync(p).isDirectory() && isTaskFolder(p));
  if (inner.length === 0) throw new Error(`--task-dir ${dir}: neither a task folder nor a folder of task folders`);
  return inner;
}

export interface Breakage {
  primitive_type: string;
  /** Absent: the drift generator chooses them from the episode's seed. */
  params?: Record<string, unknown>;
  drift_id?: string;
}

/**
 * The breakages make-task verified on a task (broke, named the changed API, oracle repair verified), with
 * the params its verification applied. `verifyTask` records one check per candidate, in the order of
 * `breakageCandidates`, so the i-th check is the i-th candidate recomputed from the script and its versions
 * (two candidates of one primitive included); one whose candidate is no longer there (the catalog or the
 * primitives changed since) is returned in `missing`.
 */
export function verifiedBreakages(
  verdict: MakeTaskVerdict | undefined,
  script: string,
  versions: LibraryVersions,
): { breakages: Breakage[]; missing: string[] } {
  const candidates = breakageCandidates(script, versions);
  const breakages: Breakage[] = [];
  const missing: string[] = [];
  (verdict?.breakages ?? []).forEach((b, i) => {
    if (!(b.broke && b.names_api && b.oracle_verified)) return;
    const c = candidates[i];
    if (c && c.primitive_type === b.primitive_type && c.drift_id === b.drift_id)
      breakages.push({ primitive_type: c.primitive_type, params: c.params, ...(c.drift_id ? { drift_id: c.drift_id } : {}) });
    else missing.push(b.drift_id ? `${b.primitive_type} (${b.drift_id})` : b.primitive_type);
  });
  return { breakages, missing };
}

/** What is never the same twice on a run, warm or cold: its wall time, its peak memory, which runtime ran it. */
const VOLATILE = new Set(['wall_time_ms', 'peak_memory_mb', 'runtime']);

/**
 * The wall clock a script prints itself, which differs between two cold runs as much as between cold and warm:
 * the Trainer's `train_runtime`, `*_samples_per_second`, `*_steps_per_second` (eval_ and predict_ too; a number
 * in its logged dict, `h:mm:ss.ff` in `log_metrics`' table, right-aligned: the padding goes too) and a
 * tqdm bar's elapsed/remaining time and rate, and which of its steps it drew between the first and the last (it
 * redraws every 0.1 s). Only the numbers go; the keys, the loss and everything else stay.
 */
export function maskWallClock(text: string): string {
  return (
    maskProgressBetween(text)
      .replace(
        // The value may be quoted: transformers 5 logs `{'train_runtime': '0.2892', …}`. TRL's on-policy
        // trainers log `eps`, episodes per second.
        /(\b(?:\w*(?:_runtime|_samples_per_second|_steps_per_second)|eps)['"]?\s*[:=])\s*(['"]?)(?:\d+(?::\d\d){1,2}(?:\.\d+)?|[-+]?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)/g,
        '$1 $2<wall-clock>',
      )
      // TrainingArguments' default logging_dir is named by the time it was made (`runs/Dec06_06-56-47_<host>`).
      .replace(/\b[A-Z][a-z]{2}\d\d_\d\d-\d\d-\d\d_/g, '<time-of-day>_')
      // A log record's time of day (`logging`'s asctime: `12/06/2026 06:39:50`, `2026-12-06 06:39:50,123`).
      .replace(/\b(?:\d\d\/\d\d\/\d{4}|\d{4}-\d\d-\d\d)[ T]\d\d:\d\d:\d\d(?:[.,]\d+)?/g, '<time-of-day>')
      .replace(/\[(?:\d+:)?\d\d:\d\d<(?:(?:\d+:)?\d\d:\d\d|\?)/g, '[<elapsed><<remaining>')
      // tqdm's rate in any unit (`it/s`, `s/it`, datasets' `examples/s`, a script's own `category/s`).
      .replace(/(?:\d+(?:\.\d+)?|\?)\s?(?:[A-Za-z]+\/s|s\/[A-Za-z]+)\b/g, '<rate>')
  );
}

/** A tqdm bar drawn at `n/total`, with its description before and its clock and postfix after. */
const BAR = /^[^\r\n]*?\d+%\|[^|\r\n]*\|\s*(\d+)\/(\d+)\b[^\r\n]*$/;

/**
 * A tqdm bar's draws strictly between its first step and its last, several in a row made one `<progress>` line:
 * which steps a bar draws there (`25/32` or `24/32`, one draw or two) follows the clock. Its first draw and
 * its last (`0/32`, `32/32`, with their postfix) are kept.
 */
function maskProgressBetween(text: string): string {
  const out: string[] = [];
  for (const line of text.split(/(?<=\r\n|\r|\n)/)) {
    const bar = BAR.exec(line.replace(/[\r\n]+$/, ''));
    const between = bar !== null && Number(bar[1]) > 0 && Number(bar[1]) < Number(bar[2]);
    if (!between) out.push(line);
    else if (!out.at(-1)?.startsWith('<progress>')) out.push(`<progress>${line.slice(line.search(/[\r\n]*$/))}`);
  }
  return out.join('');
}

export const stripVolatile = (o: unknown): unknown =>
  JSON.parse(JSON.stringify(o, (k, v: unknown) => (VOLATILE.has(k) ? undefined : typeof v === 'string' ? maskWallClock(v) : v)));

/** The top-level fields of two outcomes that differ (after `stripVolatile`), in the cold outcome's order. */
export function differingFields(cold: Record<string, unknown>, warm: Record<string, unknown>): string[] {
  const a = stripVolatile(cold) as Record<string, unknown>;
  const b = stripVolatile(warm) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])];
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/** The first line where a field's text differs, cold then warm (each cut to `width`): what a difference is. */
export function firstDifference(cold: unknown, warm: unknown, width = 200): string {
  const text = (x: unknown): string =>
    typeof x === 'string'
      ? maskWallClock(x)
      : Array.isArray(x)
        ? x.map(text).join('\n')
        : JSON.stringify(stripVolatile(x ?? null), null, 1);
  const lines = (x: unknown) => text(x).split('\n');
  const a = lines(cold);
  const b = lines(warm);
  const cut = (x: string | undefined) => (x === undefined ? '(none)' : x.length > width ? `${x.slice(0, width - 1)}…` : x);
  for (let i = 0; i < Math.max(a.length, b.length); i++)
    if (a[i] !== b[i]) return `line ${i + 1}: cold ${JSON.stringify(cut(a[i]))} / warm ${JSON.stringify(cut(b[i]))}`;
  return 'same text';
}

const FidelityReportSchema = z.looseObject({
  real_snapshots: z.array(z.looseObject({ id: z.string(), state: z.string(), runtime: z.string().optional() })),
  sim_snapshots: z.array(z.looseObject({ id: z.string(), state: z.string(), runtime: z.string().optional() })),
  entries: z.array(
    z.looseObject({
      id: z.string(),
      runs: z.array(
        z.looseObject({
          slot: z.string(),
          snapshot: z.string(),
          real: ProbeOutcomeSchema.optional(),
          sim: ProbeOutcomeSchema.optional(),
        }),
      ),
    }),
  ),
});

export interface FidelityIdentity {
  /** Probe outcomes present in both reports (real and simulated counted apart). */
  pairs: number;
  identical: number;
  /** `<entry> <slot> <side> @<snapshot>: <field>` for each outcome that differs. */
  differ: string[];
  /** Outcomes one report has and the other lacks. */
  unmatched: string[];
  /** Per report: how many probe runs (one per snapshot and side) ran warm, cold, or were read from the cache. */
  runtimes: [Record<string, number>, Record<string, number>];
}

/** Compares two `forgeenv fidelity --json` reports (cold, warm) outcome by outcome, exactly. */
export function compareFidelityReports(coldJson: unknown, warmJson: unknown): FidelityIdentity {
  const cold = FidelityReportSchema.parse(coldJson);
  const warm = FidelityReportSchema.parse(warmJson);
  const outcomes = (r: typeof cold) => {
    const m = new Map<string, z.infer<typeof ProbeOutcomeSchema>>();
    for (const e of r.entries)
      for (const run of e.runs)
        for (const side of ['real', 'sim'] as const) {
          const o = run[side];
          if (o) m.set(`${e.id} ${run.slot} ${side} @${run.snapshot}`, o);
        }
    return m;
  };
  const a = outcomes(cold);
  const b = outcomes(warm);
  let identical = 0;
  const differ: string[] = [];
  const unmatched: string[] = [];
  for (const [key, o] of a) {
    const w = b.get(key);
    if (!w) {
      unmatched.push(`${key}: only in the first`);
      continue;
    }
    const fields = (['status', 'exc_type', 'message', 'warnings'] as const).filter((f) => JSON.stringify(o[f]) !== JSON.stringify(w[f]));
    if (fields.length) differ.push(`${key}: ${fields.join(', ')}`);
    else identical++;
  }
  for (const key of b.keys()) if (!a.has(key)) unmatched.push(`${key}: only in the second`);
  const runtimes = (r: typeof cold): Record<string, number> => {
    const n: Record<string, number> = {};
    for (const s of [...r.real_snapshots.map((x) => ({ ...x, side: 'real' })), ...r.sim_snapshots.map((x) => ({ ...x, side: 'sim' }))]) {
      const k = `${s.side} ${s.runtime ?? s.state}`;
      n[k] = (n[k] ?? 0) + 1;
    }
    return n;
  };
  return { pairs: identical + differ.length, identical, differ, unmatched, runtimes: [runtimes(cold), runtimes(warm)] };
}

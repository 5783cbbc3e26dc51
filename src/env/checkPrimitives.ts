// For every script × breakage primitive: does it apply, does the broken script fail when run,
// does the oracle (inverse) repair give back the original exactly and make it pass, and how
// big is the diff. Any script, even one our parser or the simulated libraries cannot handle,
// gives rows with reasons: this never throws for a bad script.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { BaselineDriftGenerator } from './drift/generator';
import { applyRepairDiff, createRepairDiff, diffStats } from './diff';
import { errorTraceOf } from './environment';
import { executeScript } from './executor';
import { applySpec, breakagePrimitives } from './primitives/registry';
import { PrimitiveRefusal } from './primitives/types';
import type { ExecutionMode, ExecutionResult, LibraryVersions } from './schemas';
import { parseTraceback } from './traceback';
import { snapshotVersions } from './versions';

export const CheckRowSchema = z.object({
  script: z.string(),
  primitive: z.string(),
  applied: z.boolean(),
  original_runs: z.boolean().nullable(),
  broke: z.boolean().nullable(),
  restored: z.boolean().nullable(),
  passes_after_repair: z.boolean().nullable(),
  diff_lines: z.number().int().nullable(),
  params: z.record(z.string(), z.unknown()).nullable(),
  broken_error: z.string().nullable(),
  error: z.string().optional(),
});
export type CheckRow = z.infer<typeof CheckRowSchema>;

export interface CheckSummary {
  scripts: number;
  primitives: number;
  rows: number;
  applied: number;
  broke: number;
  restored: number;
  passes_after_repair: number;
  not_runnable: number;
  internal_errors: number;
  wall_time_ms: number;
}

export interface CheckScript {
  /** Display name (file name or task id). */
  name: string;
  script: string;
  versions?: LibraryVersions;
}

export interface CheckOptions {
  mode: ExecutionMode;
  interpreter?: string;
  timeoutMs?: number;
  /** Skip running scripts (apply/restore/diff only). */
  noRun?: boolean;
  /** Only these primitives. */
  primitives?: string[];
  concurrency?: number;
  signal?: AbortSignal;
  onRow?: (row: CheckRow, done: number, total: number) => void;
}

/** Every `.py` file in a folder (not recursive: a folder of training scripts). */
export function scriptsInFolder(dir: string): CheckScript[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.py') && statSync(join(dir, f)).isFile())
    .sort()
    .map((f) => ({ name: f, script: readFileSync(join(dir, f), 'utf8') }));
}

interface RunVerdict {
  ok: boolean | null;
  reason?: string;
  exec?: ExecutionResult;
}

/**
 * A script we cannot judge in this mode (forbidden construct, no interpreter, or, for the original
 * script, a library we do not simulate) is `null`. A broken script's ModuleNotFoundError is a real breakage.
 */
function verdictOf(exec: ExecutionResult, mode: ExecutionMode, original: boolean): RunVerdict {
  if (exec.violations.length) return { ok: null, reason: `not run: ${exec.violations.join('; ')}`, exec };
  if (exec.exit_code === null && !exec.timed_out && !exec.output_truncated) return { ok: null, reason: exec.stderr.trim() || 'could not start the interpreter', exec };
  if (original && exec.exit_code !== 0 && mode === 'simulated') {
    const tb = parseTraceback(exec.stderr);
    if (tb && tb.exception_type === 'ModuleNotFoundError') {
      return { ok: null, reason: `cannot run in simulated mode: ${tb.message} (not a simulated library)`, exec };
    }
  }
  return { ok: exec.exit_code === 0, exec };
}

export async function checkPrimitives(scripts: CheckScript[], opts: CheckOptions): Promise<{ results: CheckRow[]; summary: CheckSummary }> {
  const t0 = performance.now();
  const prims = breakagePrimitives().filter((p) => !opts.primitives || opts.primitives.includes(p.name));
  const run = async (script: string, versions: LibraryVersions, original = false): Promise<RunVerdict> => {
    if (opts.noRun) return { ok: null, reason: 'not run (--no-run)' };
    const exec = await executeScript({ script, mode: opts.mode, interpreter: opts.interpreter, libraryVersions: versions, timeoutMs: opts.timeoutMs ?? 60_000, signal: opts.signal });
    return verdictOf(exec, opts.mode, original);
  };
  const jobs: Array<() => Promise<CheckRow[]>> = scripts.map((s) => async () => {
    const versions = s.versions ?? snapshotVersions();
    const original = await run(s.script, versions, true);
    const rows: CheckRow[] = [];
    for (const p of prims) {
      if (opts.signal?.aborted) break;
      rows.push(await checkOne(s, p.name, versions, original, run));
    }
    return rows;
  });
  const results: CheckRow[] = [];
  const total = scripts.length * prims.length;
  let next = 0;
  const worker = async () => {
    while (next < jobs.length && !opts.signal?.aborted) {
      const job = jobs[next++]!;
      for (const row of await job()) {
        results.push(row);
        opts.onRow?.(row, results.length, total);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 2) }, worker));
  const order = new Map(scripts.map((s, i) => [s.name, i]));
  const pOrder = new Map(prims.map((p, i) => [p.name, i]));
  results.sort((a, b) => (order.get(a.script)! - order.get(b.script)!) || (pOrder.get(a.primitive)! - pOrder.get(b.primitive)!));
  const count = (f: (r: CheckRow) => boolean) => results.filter(f).length;
  return {
    results,
    summary: {
      scripts: scripts.length,
      primitives: prims.length,
      rows: results.length,
      applied: count((r) => r.applied),
      broke: count((r) => r.broke === true),
      restored: count((r) => r.restored === true),
      passes_after_repair: count((r) => r.passes_after_repair === true),
      not_runnable: count((r) => r.applied && r.original_runs === null),
      internal_errors: count((r) => (r.error ?? '').startsWith('internal:')),
      wall_time_ms: Math.round(performance.now() - t0),
    },
  };
}

async function checkOne(
  s: CheckScript,
  primitive: string,
  versions: LibraryVersions,
  original: RunVerdict,
  run: (script: string, versions: LibraryVersions) => Promise<RunVerdict>,
): Promise<CheckRow> {
  const row: CheckRow = {
    script: s.name,
    primitive,
    applied: false,
    original_runs: original.ok,
    broke: null,
    restored: null,
    passes_after_repair: null,
    diff_lines: null,
    params: null,
    broken_error: null,
  };
  try {
    const spec = new BaselineDriftGenerator(0).propose(primitive, s.script, versions);
    if (spec.primitive_type !== primitive) return { ...row, error: `${primitive} does not apply: no candidate in this script` };
    const result = applySpec(s.script, spec);
    row.applied = true;
    row.params = spec.params;
    const restoredText = applySpec(result.script, result.inverse).script;
    row.restored = restoredText === s.script;
    const oracle = createRepairDiff(result.script, restoredText);
    const stats = diffStats(s.script, result.script);
    row.diff_lines = stats.added + stats.removed;
    if (original.ok !== true) {
      row.error = original.ok === null ? original.reason : `original script fails: ${firstLine(original.exec)}`;
      return row;
    }
    const broken = await run(result.script, versions);
    row.broke = broken.ok === null ? null : !broken.ok;
    if (broken.exec && broken.ok === false) row.broken_error = firstLine(broken.exec);
    if (broken.ok === null) row.error = broken.reason;
    const applied = applyRepairDiff(result.script, oracle);
    if (!applied.ok) {
      row.passes_after_repair = false;
      row.error = `oracle diff did not apply: ${applied.error}`;
    } else if (applied.script === s.script) {
      // Byte-identical to the original, whose real run we already have: same input, same outcome.
      row.passes_after_repair = original.ok;
    } else {
      row.passes_after_repair = (await run(applied.script, versions)).ok;
    }
    return row;
  } catch (e) {
    if (e instanceof PrimitiveRefusal) return { ...row, error: e.reason };
    return { ...row, error: `internal: ${e instanceof Error ? e.message : String(e)}` };
  }
}

function firstLine(exec?: ExecutionResult): string {
  if (!exec) return '';
  const tb = parseTraceback(exec.stderr);
  if (tb) return `${tb.exception_type}: ${tb.message}`.slice(0, 300);
  return errorTraceOf(exec).split('\n').filter(Boolean).pop()?.slice(0, 300) ?? `exit code ${exec.exit_code}`;
}

export function renderCheckTable(results: CheckRow[], summary: CheckSummary): string {
  const mark = (v: boolean | null) => (v === null ? '—' : v ? 'yes' : 'no');
  const header = ['script', 'primitive', 'applied', 'orig runs', 'broke', 'restored', 'passes', 'diff', 'reason'];
  const rows = results.map((r) => [
    basename(r.script),
    r.primitive,
    mark(r.applied),
    mark(r.original_runs),
    mark(r.broke),
    mark(r.restored),
    mark(r.passes_after_repair),
    r.diff_lines === null ? '—' : String(r.diff_lines),
    (r.error ?? r.broken_error ?? '').replace(/\s+/g, ' ').slice(0, 80),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd();
  return [
    line(header),
    line(widths.map((w) => '-'.repeat(w))),
    ...rows.map(line),
    '',
    `${summary.rows} rows (${summary.scripts} scripts × ${summary.primitives} primitives): applied ${summary.applied}, broke ${summary.broke}, restored ${summary.restored}, passes after repair ${summary.passes_after_repair}, not runnable ${summary.not_runnable}, internal errors ${summary.internal_errors}; ${(summary.wall_time_ms / 1000).toFixed(1)} s`,
  ].join('\n');
}

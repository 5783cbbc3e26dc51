// For every script × breakage primitive: does it apply, does the broken script fail when run,
// does its error name the API the primitive changed, does the oracle (inverse) repair give back
// the original exactly and make it pass, and how big is the diff. A row is `verified` when all of
// these hold. Any script, even one our parser or the simulated libraries cannot handle, gives
// rows with reasons: this never throws for a bad script.
import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { z } from 'zod';
import { preferredCandidates } from '../drift/generator';
import { TaskRuntimeSchema, type RuntimeShim } from '../run/runtimeShims';
import { applyRepairDiff, createRepairDiff, diffStats } from '../diff/diff';
import { errorTraceOf } from '../episode/environment';
import { executeScript } from '../run/executor';
import { readFolderFile } from '../tasks/folderFile';
import { MAX_TASK_FILE_BYTES } from '../limits';
import { ScriptEnvSchema, type SandboxOptionsInput } from '../sandbox/options';
import { applySpec, breakagePrimitives, getPrimitive } from './registry';
import { PrimitiveRefusal, type PrimitiveResult } from './types';
import { prepareRealRun } from '../run/realMode';
import {
  formatZodError,
  LibraryVersionsSchema,
  RunMountsSchema,
  type ExecutionMode,
  type ExecutionResult,
  type LibraryVersions,
} from '../schemas';
import { getSnapshot } from '../snapshots/registry';
import { parseTraceback } from '../scoring/traceback';
import { snapshotVersions } from '../snapshots/versions';

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
  // Optional so rows written before these columns existed still parse; checkPrimitives always sets them.
  /** The broken run's error names an API, keyword or module the primitive changed. */
  names_changed_api: z.boolean().nullable().optional(),
  /** applied, broke, names_changed_api, restored and passes_after_repair all hold. */
  verified: z.boolean().optional(),
  provenance: z.enum(['real', 'synthetic']).nullable().optional(),
  drift_id: z.string().nullable().optional(),
  /** Whether the drift table says the broken form raises under the script's versions (null: no claim). */
  expected_break: z.boolean().nullable().optional(),
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
  // Optional for summaries saved before these counts existed; checkPrimitives always sets them.
  names_changed_api?: number;
  verified?: number;
  /** Verified rows whose drift is a real one (not synthetic). */
  verified_real?: number;
  /** Scripts whose original ran clean (run mode only). */
  original_runs?: number;
  /** Scripts with at least two verified primitives. */
  scripts_two_verified?: number;
  wall_time_ms: number;
}

export interface CheckScript {
  /** Display name (file name or task id). */
  name: string;
  script: string;
  versions?: LibraryVersions;
  /** Command-line arguments the script needs (task entries' `args`). */
  args?: string[];
  /** Files the script reads, written into the run directory (relative path -> text). */
  files?: Record<string, string>;
  /** Environment variables the script reads (e.g. SageMaker's `SM_CHANNEL_*`); manifests only. */
  env?: Record<string, string>;
  /** Absolute folders the script writes to (SageMaker's /opt/ml/model), mapped into the run folder by the sandbox. */
  mounts?: string[];
  /** Runtime shims the task records (tasks.json `runtime.shims`, runtimeShims.ts). */
  shims?: RuntimeShim[];
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
  /** Isolation and rlimits of the runs (default: the executor's). */
  sandbox?: SandboxOptionsInput;
  signal?: AbortSignal;
  onRow?: (row: CheckRow, done: number, total: number) => void;
}

/**
 * Every `.py` file in a folder (not recursive: a folder of training scripts). Symlinks (even to a
 * file inside the folder: see folderFile.ts), non-regular files and files over the task-script limit are left out and reported.
 */
export function scriptsInFolder(dir: string, onProblem: (problem: string) => void = () => undefined): CheckScript[] {
  const out: CheckScript[] = [];
  for (const f of readdirSync(dir)
    .filter((n) => n.endsWith('.py'))
    .sort()) {
    const read = readFolderFile(dir, f, MAX_TASK_FILE_BYTES);
    if (read.ok) out.push({ name: f, script: read.text });
    else onProblem(`${read.problem}; skipped`);
  }
  return out;
}

/** How to run the scripts of a folder: one entry per file (test/fixtures/realworld-tasks.json). */
export const ScriptRunManifestSchema = z.array(
  z
    .object({
      file: z.string().min(1),
      /** A snapshot id of resources/snapshots/snapshots.json. */
      snapshot: z.string().optional(),
      versions: LibraryVersionsSchema.optional(),
      args: z.array(z.string()).optional(),
      files: z.record(z.string(), z.string()).optional(),
      /** Only for the script, inside the sandbox; LD_*, PYTHON* and the like are refused (sandbox/options.ts). */
      env: ScriptEnvSchema.optional(),
      mounts: RunMountsSchema.optional(),
    })
    .passthrough(),
);

/**
 * The folder's scripts with the run inputs of `manifestPath` (args, files, snapshot versions).
 * Entries for files that are not there are ignored; an unknown snapshot id is an error.
 */
export function scriptsWithManifest(dir: string, manifestPath: string, onProblem?: (problem: string) => void): CheckScript[] {
  const parsed = ScriptRunManifestSchema.safeParse(JSON.parse(readFileSync(manifestPath, 'utf8')));
  if (!parsed.success) throw new Error(`${manifestPath}: ${formatZodError(parsed.error)}`);
  const byFile = new Map(parsed.data.map((e) => [basename(e.file), e]));
  return scriptsInFolder(dir, onProblem).map((s) => {
    const e = byFile.get(s.name);
    if (!e) return s;
    const versions = e.versions ?? (e.snapshot ? getSnapshot(e.snapshot).versions : undefined);
    return {
      ...s,
      ...(versions ? { versions } : {}),
      ...(e.args ? { args: e.args } : {}),
      ...(e.files ? { files: e.files } : {}),
      ...(e.env ? { env: e.env } : {}),
      ...(e.mounts ? { mounts: e.mounts } : {}),
    };
  });
}

/** Run inputs a task entry may carry (`args`, `files`), read defensively. */
const TaskRunInputsSchema = z.object({
  args: z.array(z.string()).optional(),
  files: z.record(z.string(), z.string()).optional(),
  mounts: RunMountsSchema.optional(),
  runtime: TaskRuntimeSchema.optional(),
});

/** A corpus task as a check script, with its snapshot and its run inputs when the entry has them. */
export function checkScriptOfTask(task: { task_id: string; script_content: string; library_versions?: LibraryVersions }): CheckScript {
  const inputs = TaskRunInputsSchema.safeParse(task);
  const extra = inputs.success ? inputs.data : {};
  return {
    name: task.task_id,
    script: task.script_content,
    ...(task.library_versions ? { versions: task.library_versions } : {}),
    ...(extra.args ? { args: extra.args } : {}),
    ...(extra.files ? { files: extra.files } : {}),
    ...(extra.mounts ? { mounts: extra.mounts } : {}),
    ...(extra.runtime ? { shims: extra.runtime.shims } : {}),
  };
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
  if (exec.exit_code === null && !exec.timed_out && !exec.output_truncated)
    return { ok: null, reason: exec.stderr.trim() || 'could not start the interpreter', exec };
  if (original && exec.exit_code !== 0 && mode === 'simulated') {
    const tb = parseTraceback(exec.stderr);
    if (tb && tb.exception_type === 'ModuleNotFoundError') {
      return { ok: null, reason: `cannot run in simulated mode: ${tb.message} (not a simulated library)`, exec };
    }
  }
  return { ok: exec.exit_code === 0, exec };
}

/** `repairOf`: the broken script a repair is judged against (validator.ts); originals and broken scripts run as they are. */
type Runner = (s: CheckScript, script: string, versions: LibraryVersions, original?: boolean, repairOf?: string) => Promise<RunVerdict>;

/** Whether a script's original runs clean, and why not. */
export interface ScriptStatus {
  script: string;
  original_runs: boolean | null;
  reason?: string;
}

export async function checkPrimitives(
  scripts: CheckScript[],
  opts: CheckOptions,
): Promise<{ results: CheckRow[]; summary: CheckSummary; scripts: ScriptStatus[] }> {
  const t0 = performance.now();
  const prims = breakagePrimitives().filter((p) => !opts.primitives || opts.primitives.includes(p.name));
  const run: Runner = async (s, script, versions, original = false, repairOf) => {
    if (opts.noRun) return { ok: null, reason: 'not run (--no-run)' };
    try {
      // Real mode without --python: the snapshot's managed venv and offline hub, as episodes get
      // (python3 on PATH has no transformers, so every original used to fail with ModuleNotFoundError).
      const real =
        opts.mode === 'real' && opts.interpreter === undefined
          ? await prepareRealRun({ libraryVersions: versions, signal: opts.signal })
          : undefined;
      const exec = await executeScript({
        script,
        mode: opts.mode,
        interpreter: real?.interpreter ?? opts.interpreter,
        ...(real ? { bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies } : {}),
        libraryVersions: versions,
        timeoutMs: opts.timeoutMs ?? 60_000,
        ...(opts.sandbox ? { sandbox: opts.sandbox } : {}),
        signal: opts.signal,
        validate: repairOf === undefined ? false : { baseline: repairOf },
        ...(s.args ? { args: s.args } : {}),
        ...(s.files ? { files: s.files } : {}),
        ...(s.env || real ? { extraEnv: { ...(s.env ?? {}), ...(real?.env ?? {}) } } : {}),
        ...(s.mounts ? { mounts: s.mounts } : {}),
        ...(s.shims ? { shims: s.shims } : {}),
      });
      return verdictOf(exec, opts.mode, original);
    } catch (e) {
      // e.g. a `files` path the executor refuses: the script needs something we cannot provide.
      return { ok: null, reason: `not run: ${e instanceof Error ? e.message : String(e)}` };
    }
  };
  const originals = new Map<string, RunVerdict>();
  const jobs: Array<() => Promise<CheckRow[]>> = scripts.map((s) => async () => {
    const versions = s.versions ?? snapshotVersions();
    const original = await run(s, s.script, versions, true);
    originals.set(s.name, original);
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
      const job = jobs[next++];
      for (const row of await job()) {
        results.push(row);
        opts.onRow?.(row, results.length, total);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, opts.concurrency ?? 2) }, worker));
  const order = new Map(scripts.map((s, i) => [s.name, i]));
  const pOrder = new Map(prims.map((p, i) => [p.name, i]));
  results.sort((a, b) => order.get(a.script)! - order.get(b.script)! || pOrder.get(a.primitive)! - pOrder.get(b.primitive)!);
  const count = (f: (r: CheckRow) => boolean) => results.filter(f).length;
  const perScript = (f: (rows: CheckRow[]) => boolean) => scripts.filter((s) => f(results.filter((r) => r.script === s.name))).length;
  const statuses = scripts.map((x): ScriptStatus => {
    const v = originals.get(x.name);
    if (!v) return { script: x.name, original_runs: null, reason: 'not checked (cancelled)' };
    const reason = v.ok === true ? undefined : v.ok === null ? v.reason : `original script fails: ${firstLine(v.exec)}`;
    return { script: x.name, original_runs: v.ok, ...(reason ? { reason } : {}) };
  });
  return {
    scripts: statuses,
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
      names_changed_api: count((r) => r.names_changed_api === true),
      verified: count((r) => r.verified === true),
      verified_real: count((r) => r.verified === true && r.provenance === 'real'),
      original_runs: scripts.filter((x) => originals.get(x.name)?.ok === true).length,
      scripts_two_verified: perScript((rows) => rows.filter((r) => r.verified).length >= 2),
      wall_time_ms: Math.round(performance.now() - t0),
    },
  };
}

/** The primitive's own best candidate: a real drift the versions reject, else any that breaks. */
function specFor(
  primitive: string,
  script: string,
  versions: LibraryVersions,
): {
  primitive_type: string;
  params: Record<string, unknown>;
  provenance: 'real' | 'synthetic';
  drift_id: string | null;
  breaks: boolean | null;
} {
  const p = getPrimitive(primitive)!;
  const chosen = preferredCandidates(p.candidates(script, versions))[0];
  if (!chosen) throw new PrimitiveRefusal(primitive, `${primitive} does not apply: no candidate in this script`);
  return {
    primitive_type: primitive,
    params: chosen.params,
    provenance: chosen.provenance,
    drift_id: chosen.drift_id ?? null,
    breaks: chosen.breaks ?? null,
  };
}

async function checkOne(
  s: CheckScript,
  primitive: string,
  versions: LibraryVersions,
  original: RunVerdict,
  run: Runner,
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
    names_changed_api: null,
    verified: false,
    provenance: null,
    drift_id: null,
    expected_break: null,
  };
  try {
    const spec = specFor(primitive, s.script, versions);
    const result = applySpec(s.script, spec);
    row.applied = true;
    row.params = spec.params;
    row.provenance = spec.provenance;
    row.drift_id = spec.drift_id;
    row.expected_break = spec.breaks;
    const restoredText = applySpec(result.script, result.inverse).script;
    row.restored = restoredText === s.script;
    const oracle = createRepairDiff(result.script, restoredText);
    const stats = diffStats(s.script, result.script);
    row.diff_lines = stats.added + stats.removed;
    if (original.ok !== true) {
      row.error = original.ok === null ? original.reason : `original script fails: ${firstLine(original.exec)}`;
      return row;
    }
    const broken = await run(s, result.script, versions);
    row.broke = broken.ok === null ? null : !broken.ok;
    if (broken.exec && broken.ok === false) {
      row.broken_error = firstLine(broken.exec);
      row.names_changed_api = mentionsChangedApi(errorText(broken.exec), changedApiNames(s.script, spec.params, result));
    }
    if (broken.ok === null) row.error = broken.reason;
    const applied = applyRepairDiff(result.script, oracle);
    if (!applied.ok) {
      row.passes_after_repair = false;
      row.error = `oracle diff did not apply: ${applied.error}`;
    } else if (applied.script === s.script) {
      // Byte-identical to the original, whose real run we already have: same input, same outcome.
      row.passes_after_repair = original.ok;
    } else {
      row.passes_after_repair = (await run(s, applied.script, versions, false, result.script)).ok;
    }
    row.verified =
      row.applied && row.broke === true && row.names_changed_api === true && row.restored === true && row.passes_after_repair === true;
    return row;
  } catch (e) {
    if (e instanceof PrimitiveRefusal) return { ...row, error: e.reason };
    return { ...row, error: `internal: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** Words too common in code and error text to count as naming the changed API. */
const NOT_API_NAMES = new Set([
  'self',
  'None',
  'True',
  'False',
  'import',
  'from',
  'and',
  'not',
  'for',
  'with',
  'def',
  'return',
  'the',
  'args',
  'kwargs',
  'model',
  'dataset',
  'data',
  'train',
  'eval',
]);

/**
 * The names the primitive changed: the whole words its edits touch, in the script before and
 * after the edit (so dropping `eval_` from `"eval_accuracy"` yields `eval_accuracy` and
 * `accuracy`), every identifier in the removed and inserted text, and the API names its params
 * give (callee, keyword, module, column, ...).
 */
export function changedApiNames(script: string, params: Record<string, unknown>, result: Pick<PrimitiveResult, 'edits'>): string[] {
  const names = new Set<string>();
  const add = (text: string) => {
    for (const m of text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) if (m[0].length >= 3 && !NOT_API_NAMES.has(m[0])) names.add(m[0]);
  };
  const isWord = (ch: string | undefined) => ch !== undefined && /[A-Za-z0-9_]/.test(ch);
  const wordAround = (text: string, from: number, to: number) => {
    let a = from;
    let b = to;
    while (isWord(text[a - 1])) a--;
    while (isWord(text[b])) b++;
    return text.slice(a, b);
  };
  const edits = [...result.edits].sort((x, y) => x.from - y.from);
  let after = '';
  let pos = 0;
  const spans: Array<{ from: number; to: number }> = [];
  for (const e of edits) {
    after += script.slice(pos, e.from);
    spans.push({ from: after.length, to: after.length + e.insert.length });
    after += e.insert;
    pos = e.to;
  }
  after += script.slice(pos);
  edits.forEach((e, i) => {
    add(script.slice(e.from, e.to));
    add(e.insert);
    add(wordAround(script, e.from, e.to));
    add(wordAround(after, spans[i].from, spans[i].to));
  });
  for (const v of Object.values(params)) {
    if (typeof v === 'string') add(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') add(x);
  }
  return [...names].sort();
}

/** Whether the error text names one of `names` as a whole word. */
export function mentionsChangedApi(errorText: string, names: readonly string[]): boolean {
  return names.some((n) => new RegExp(`(^|[^A-Za-z0-9_])${n}($|[^A-Za-z0-9_])`).test(errorText));
}

/** The exception line of a failed run (type and full message), else the end of stderr. */
function errorText(exec: ExecutionResult): string {
  const tb = parseTraceback(exec.stderr);
  if (tb) return `${tb.exception_type}: ${tb.message}`;
  return exec.stderr.split('\n').slice(-20).join('\n');
}

function firstLine(exec?: ExecutionResult): string {
  if (!exec) return '';
  const tb = parseTraceback(exec.stderr);
  if (tb) return `${tb.exception_type}: ${tb.message}`.slice(0, 300);
  return errorTraceOf(exec).split('\n').filter(Boolean).pop()?.slice(0, 300) ?? `exit code ${exec.exit_code}`;
}

/** One line: `scripts 32 · original runs 27/32 · ≥2 verified primitives 25/32 · verified 140/260 (real drifts 90)`. */
export function checkSummaryLine(summary: CheckSummary): string {
  return [
    `scripts ${summary.scripts}`,
    `original runs ${summary.original_runs ?? 0}/${summary.scripts}`,
    `≥2 verified primitives ${summary.scripts_two_verified ?? 0}/${summary.scripts}`,
    `verified ${summary.verified ?? 0}/${summary.applied} (real drifts ${summary.verified_real ?? 0})`,
  ].join(' · ');
}

export function renderCheckTable(results: CheckRow[], summary: CheckSummary, scripts?: readonly ScriptStatus[]): string {
  const mark = (v: boolean | null) => (v === null ? '—' : v ? 'yes' : 'no');
  const header = ['script', 'primitive', 'applied', 'orig runs', 'broke', 'names api', 'restored', 'passes', 'verified', 'diff', 'reason'];
  const rows = results.map((r) => [
    basename(r.script),
    r.primitive,
    r.applied ? (r.provenance === 'synthetic' ? 'yes (synthetic)' : 'yes') : 'no',
    mark(r.original_runs),
    mark(r.broke),
    mark(r.names_changed_api ?? null),
    mark(r.restored),
    mark(r.passes_after_repair),
    r.verified ? 'yes' : 'no',
    r.diff_lines === null ? '—' : String(r.diff_lines),
    (r.error ?? r.broken_error ?? '').replace(/\s+/g, ' ').slice(0, 80),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  const originals = scripts?.length
    ? [
        'original scripts:',
        ...scripts.map(
          (x) =>
            `  ${basename(x.script)}: ${x.original_runs === true ? 'runs' : x.original_runs === false ? 'fails' : 'not run'}${x.reason ? ` (${x.reason.replace(/\s+/g, ' ').slice(0, 160)})` : ''}`,
        ),
        '',
      ]
    : [];
  return [...originals, line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line), '', checkSummaryLine(summary)].join('\n');
}

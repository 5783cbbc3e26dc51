// Runs a training script with a real Python interpreter: a fresh temporary directory per run,
// an argv array (never a shell), a timeout, a per-stream output cap and a process-group kill.
//
// Isolation (sandbox/, docs/sandbox.md): on Linux with bubblewrap every run is sandboxed (own pid,
// network, mount, ipc and uts namespaces; read-only system; the run folder the only writable place;
// no home folder). Elsewhere, or when bubblewrap cannot work, the fallback is the process-group
// kill, rlimits and the clean environment, with a warning in `sandbox_warning` (unless
// forgeenv.sandbox.mode is `off`). rlimits (CPU, address space, file size, processes) apply both ways.
//
// Environment of the child: an allowlist (sandbox/cleanEnv.ts: PATH, LANG, LC_*, TZ and the names in
// `sandbox.passEnv`), HOME = the run folder, TMPDIR = a folder inside it, then `extraEnv`, then
// PYTHONHASHSEED=0, PYTHONIOENCODING=utf-8, PYTHONUNBUFFERED=1 and either PYTHONDONTWRITEBYTECODE=1
// or a shared PYTHONPYCACHEPREFIX (`bytecodeCache`, always in simulated mode; read-only inside the
// sandbox, filled by a trusted step first, see sandbox/bytecodeCache.ts). These win over `extraEnv`.
// - `simulated`: PYTHONPATH = our stand-in libraries only, FORGEENV_LIBRARY_VERSIONS = the
//   snapshot as JSON, PYTHONNOUSERSITE=1 (so a real package in ~/.local cannot shadow a stand-in).
// - `real`: PYTHONPATH = resources/shims only (its sitecustomize seeds random, numpy and torch, so a
//   run's outcome is the script's alone, warm or cold; a task's shims are named in FORGEENV_SHIMS),
//   so the interpreter's own installed libraries are what the script sees (its user site too:
//   PYTHONUSERBASE, as HOME moved).
//
// `peak_memory_mb` is best effort: on Linux the child's `VmHWM` (peak resident set of the Python
// process itself, not its children) is sampled from /proc every 50 ms while it runs; a run that
// ends between two samples reports the last sample; elsewhere it is 0.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { cacheRoot } from '../snapshots/venv';
import { cp, lstat, mkdir, mkdtemp, readdir, rm, stat, symlink, utimes, writeFile } from 'node:fs/promises';
import { availableParallelism, homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { z } from 'zod';
import { shimsDir, simlibsDir } from '../paths';
import { groupAlive, killProcessTree, signalGroup } from './processTree';
import { warmBytecodeCache } from '../sandbox/bytecodeCache';
import { cleanEnvironment } from '../sandbox/cleanEnv';
import { interpreterLayout, type InterpreterLayout } from '../sandbox/layout';
import { encodeEnv, ENV_FD, parseLaunchStatus, STATUS_FD } from '../sandbox/launcher';
import { SandboxOptionsSchema, ScriptEnvSchema, type SandboxOptionsInput } from '../sandbox/options';
import { sandboxedPid, signalFromSandboxExit, signalName } from '../sandbox/pids';
import {
  chooseIsolation,
  existingPaths,
  handOver,
  runCommand,
  runsAsOwnUid,
  trustedCacheDir,
  uidLockDir,
  type RunnablePlan,
} from '../sandbox/plan';
import { SANDBOX_RUN_DIR, SANDBOX_TMPFS_MIB } from '../sandbox/bwrap';
import { runMemory, type MemoryGrant } from '../sandbox/memory';
import { canMountQuota, mountQuota, quotaFull, releaseQuota } from '../sandbox/quota';
import { hostSeccompProgram } from '../sandbox/seccomp';
import { acquireRunUid, type RunUid } from '../sandbox/uids';
import {
  ExecutionModeSchema,
  LibraryVersionsSchema,
  RunArgsSchema,
  RunFilesSchema,
  RunFilePathSchema,
  RunMountsSchema,
  formatZodError,
  type ExecutionMode,
  type ExecutionResult,
  type LibraryVersions,
} from '../schemas';
import { RUNTIME_SHIMS, RuntimeShimSchema, SHIMS_ENV, type RuntimeShim } from './runtimeShims';
import { scrubPathsAsync } from './scrubAsync';
import type { ScrubContext } from './scrubPaths';
import { snapshotIdOf } from '../snapshots/versions';
import { validateRepair, validateScript } from '../scoring/validator';
import { Parked } from '../warm/parked';
import { WarmPool } from '../warm/pool';
import { printedStep, WARM_ATTRIBUTES, WARM_CALLS, WARM_IMPORTS, zygoteArgv } from '../warm/zygote';
import type { PhaseSink } from '../phaseTimes';

export interface RunOptions {
  script: string;
  mode: ExecutionMode;
  libraryVersions: LibraryVersions;
  /** Default 'python3'. */
  interpreter?: string;
  /** Default 60_000. */
  timeoutMs?: number;
  /** Per stream, default 1 MiB. Beyond it collection stops, `output_truncated` is set and the run is killed. */
  outputCapBytes?: number;
  /** Aborting kills the whole process tree. */
  signal?: AbortSignal;
  /** Where the per-run directory is made (default os.tmpdir()). */
  parentDir?: string;
  /** Default false: the run directory is removed after the run. */
  keepRunDir?: boolean;
  /** Default 'train.py'. */
  scriptName?: string;
  /**
   * Variables for the script only: inside the sandbox they reach the script through the launcher
   * (sandbox/launcher.ts), never bwrap's or setpriv's environment. LD_*, PYTHON* and other dangerous
   * names are refused (sandbox/options.ts DANGEROUS_ENV).
   */
  extraEnv?: Record<string, string>;
  /** Live output for the editor; errors thrown by the callback are ignored. */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /**
   * What to refuse (see validator.ts). `{ baseline }`: a repair, refused for the forbidden
   * constructs it adds to `baseline` (the broken script it repairs). `false`: run as is (a task's
   * original or broken script may contain anything). Default true: every forbidden construct.
   */
  validate?: boolean | { baseline: string };
  /** Command-line arguments after the script name (default none). */
  args?: string[];
  /** Extra files written into the run directory before the run: relative path -> text (e.g. a YAML config). */
  files?: Record<string, string>;
  /**
   * A host folder copied into the run folder as `input/` before the run (links copied as links, never
   * followed; other special files left out). The verifier reads a finished run this way instead of
   * through a bind of it, so its runs all have one shape and can be warm.
   */
  inputDir?: string;
  /**
   * Links made in the run folder before the run: relative path -> absolute target (real mode's saved
   * datasets, which live in the run's hub: hub/diskDatasets.ts). The target must be visible to the
   * run (inside the sandbox: one of `privateCopies`, bound at its own path).
   */
  links?: Record<string, string>;
  /** Isolation, network, extra environment variables and rlimits (default: sandboxed where possible, default limits). */
  sandbox?: SandboxOptionsInput;
  /** Host folders the script may read inside the sandbox, bound read-only. */
  readOnlyPaths?: string[];
  /**
   * Small host folders the script may change inside the sandbox without changing them for later
   * runs (real mode's local hub, where `datasets` writes lock files): each run gets a private copy
   * at the same path, removed with the run folder. Without the sandbox the folder itself is used.
   */
  privateCopies?: string[];
  /**
   * Absolute folders the script writes to outside the run folder (a task's `mounts`, e.g. SageMaker's
   * /opt/ml/model): inside the sandbox each is an empty writable folder kept in the run folder
   * (`.forgeenv-mounts/<i>`), so nothing is written on the host. Refused without the sandbox.
   */
  mounts?: string[];
  /**
   * A shared bytecode cache folder (PYTHONPYCACHEPREFIX), read-only inside the sandbox. Default: a
   * per-user folder in the temp folder in simulated mode, none in real mode (no .pyc is written).
   */
  bytecodeCache?: string;
  /** One-time preparation messages (filling the bytecode cache). */
  onProgress?: (message: string) => void;
  /**
   * Runtime shims of the task (runtimeShims.ts, tasks.json `runtime.shims`): real mode puts
   * resources/shims on PYTHONPATH (read-only in the sandbox; every real run) and names them in FORGEENV_SHIMS, so
   * the interpreter installs them at start-up, before the script or a warm zygote imports anything.
   * Part of the run's environment, so of the warm pool's key. Ignored in simulated mode.
   */
  shims?: RuntimeShim[];
  /**
   * Use the warm runtime (warm/, docs/sandbox.md): a zygote of this run's shape started ahead, with
   * the libraries imported; a run with none ready is cold and asks the pool for one. Sandboxed runs
   * only. `FORGEENV_WARM=0` forces the cold path, `FORGEENV_WARM=force` starts a zygote per run.
   */
  warm?: boolean;
  /**
   * Where the run's time goes, one entry per phase as it ends (phaseTimes.ts): `validate`, `sandbox
   * plan`, `bytecode cache`, `claim`, `run folder`, `process` (launch to exit), `pipes` (exit to the
   * streams' close), `scrub`, `checkpoints`, `cleanup`. For benches; nothing decides on it.
   */
  onPhase?: PhaseSink;
}

/** A checkpoint left in the run directory: a weights file or a `checkpoint-*` folder. */
export interface CheckpointInfo {
  /** Relative to the run directory, `/`-separated. */
  path: string;
  kind: 'file' | 'dir';
  /** File size, or the total size of the files in the folder (bounded walk). */
  bytes: number;
}

export interface RunResult extends ExecutionResult {
  /** The run directory (already removed unless `keepRunDir`); '' when the script was never written. */
  run_dir: string;
  checkpoints: CheckpointInfo[];
  /** Set when the run fell back to weaker isolation than asked for (`auto` without a working bubblewrap): show it once. */
  sandbox_warning?: string;
}

const OptionsSchema = z
  .object({
    script: z.string(),
    mode: ExecutionModeSchema,
    libraryVersions: LibraryVersionsSchema,
    interpreter: z.string().min(1, 'interpreter must not be empty').default('python3'),
    timeoutMs: z.number().int().positive().default(60_000),
    outputCapBytes: z.number().int().positive().default(1_048_576),
    parentDir: z.string().min(1).optional(),
    keepRunDir: z.boolean().default(false),
    scriptName: z
      .string()
      .regex(/^[A-Za-z0-9_][A-Za-z0-9_.-]*\.py$/, 'a plain file name ending in .py')
      .default('train.py'),
    extraEnv: ScriptEnvSchema.default({}),
    validate: z.union([z.boolean(), z.object({ baseline: z.string() })]).default(true),
    args: RunArgsSchema.default([]),
    files: RunFilesSchema.default({}),
    inputDir: z.string().min(1).optional(),
    links: z
      .record(
        RunFilePathSchema,
        z
          .string()
          .min(1)
          .refine((t) => isAbsolute(t), 'an absolute link target'),
      )
      .default({}),
    sandbox: SandboxOptionsSchema.prefault({}),
    readOnlyPaths: z.array(z.string().min(1)).default([]),
    privateCopies: z.array(z.string().min(1)).default([]),
    mounts: RunMountsSchema.default([]),
    bytecodeCache: z.string().min(1).optional(),
    warm: z.boolean().default(false),
    shims: z.array(RuntimeShimSchema).max(RUNTIME_SHIMS.length).default([]),
  })
  .superRefine((o, ctx) => {
    if (Object.hasOwn(o.files, o.scriptName))
      ctx.addIssue({ code: 'custom', path: ['files', o.scriptName], message: 'would overwrite the script' });
    if (o.inputDir !== undefined && Object.keys(o.files).some((f) => f === INPUT_DIR || f.startsWith(`${INPUT_DIR}/`)))
      ctx.addIssue({ code: 'custom', path: ['files'], message: `would overwrite the ${INPUT_DIR}/ folder` });
  });

const KILL_GRACE_MS = 500;
/** bwrap's fd of the seccomp filter (after the launcher's ENV_FD and STATUS_FD). */
const SECCOMP_FD = 5;
/** After the process exits, how long to wait for its pipes to close before giving up on them. */
const CLOSE_WAIT_MS = 2_000;
const MEMORY_SAMPLE_MS = 50;
const CHECKPOINT_FILE = /(\.safetensors|\.pt|\.pth|\.ckpt)$|^pytorch_model\.bin$/;
const CHECKPOINT_DIR = /^checkpoint-/;
const WALK_MAX_DEPTH = 8;
const WALK_MAX_ENTRIES = 5_000;
const DISK_SAMPLE_MS = 250;
/** More files than this in a run folder counts as past the quota (the size watch must stay cheap). */
const DISK_WALK_ENTRIES = 50_000;

type StopReason = 'timeout' | 'cap' | 'cancel' | 'deactivate' | 'disk';

interface LiveRun {
  stop(reason: StopReason): void;
  done: Promise<unknown>;
}

const liveRuns = new Set<LiveRun>();

/** Number of runs whose process has not finished yet. */
export function liveRunCount(): number {
  return liveRuns.size;
}

/** Kills every live run's process group (for extension deactivation) and waits for them to end. */
export async function killAllRuns(): Promise<void> {
  const runs = [...liveRuns];
  for (const r of runs) r.stop('deactivate');
  await Promise.allSettled(runs.map((r) => r.done));
}

function notRun(base: Omit<RunResult, 'stderr'>, stderr: string): RunResult {
  return { ...base, stderr };
}

type Options = z.infer<typeof OptionsSchema>;

/** The run's TMPDIR, inside the run folder (so temporary files go with it). */
const RUN_TMP = '.forgeenv-tmp';
/** Where `inputDir` is copied in the run folder. */
export const INPUT_DIR = 'input';
/** Where the private copies of `privateCopies` live inside the run folder. */
const RUN_COPIES = '.forgeenv-copies';
/** Where the folders of `mounts` live inside the run folder. */
const RUN_MOUNTS = '.forgeenv-mounts';
/** Variables only the executor sets: a caller's or the user's value never reaches the script. */
const OWNED = [
  'HOME',
  'TMPDIR',
  'PYTHONPATH',
  'PYTHONHOME',
  'PYTHONPYCACHEPREFIX',
  'PYTHONDONTWRITEBYTECODE',
  'PYTHONUSERBASE',
  'PYTHONNOUSERSITE',
  'FORGEENV_LIBRARY_VERSIONS',
  'FORGEENV_SNAPSHOT',
  'FORGEENV_API_DIR',
  'FORGEENV_DRIFT_CATALOG',
  SHIMS_ENV,
];

/** The default shared bytecode cache of simulated mode. */
export function simulatedBytecodeCache(): string {
  return join(tmpdir(), `forgeenv-pycache-${process.getuid?.() ?? 'user'}`);
}

function childEnv(
  o: Options,
  runDir: string,
  simlibs: string | undefined,
  cacheDir: string | undefined,
  layout: InterpreterLayout,
): NodeJS.ProcessEnv {
  const env = cleanEnvironment(process.env, { passEnv: o.sandbox.passEnv, home: runDir, tmpDir: join(runDir, RUN_TMP) });
  Object.assign(env, o.extraEnv);
  for (const k of OWNED) delete env[k];
  env.HOME = runDir;
  env.TMPDIR = join(runDir, RUN_TMP);
  env.PYTHONHASHSEED = '0';
  env.PYTHONIOENCODING = 'utf-8';
  env.PYTHONUNBUFFERED = '1';
  // A shared cache keeps compiled libraries between runs (the episode's own script, run as
  // __main__, is never cached); without one, no .pyc litter.
  if (cacheDir) env.PYTHONPYCACHEPREFIX = cacheDir;
  else env.PYTHONDONTWRITEBYTECODE = '1';
  if (o.mode === 'real' && layout.userBase) env.PYTHONUSERBASE = layout.userBase;
  // Every real run: its sitecustomize seeds the RNGs (the same outcome run after run, warm or cold), then installs the task's shims.
  if (o.mode === 'real') env.PYTHONPATH = shimsDir();
  if (o.mode === 'real' && o.shims.length) env[SHIMS_ENV] = o.shims.join(',');
  if (o.mode === 'simulated' && simlibs) {
    env.PYTHONPATH = simlibs;
    env.PYTHONNOUSERSITE = '1';
    Object.assign(env, simulatedEnv(o.libraryVersions, simlibs));
  }
  return env;
}

/** What simulated runs read of resources/: the stand-ins, the fallback packages, the snapshots' API data and list, the drift catalog. */
export function simulatedReadOnly(simlibs: string): string[] {
  const snapshots = join(dirname(simlibs), 'snapshots');
  return [simlibs, `${simlibs}-fallback`, join(snapshots, 'api'), join(snapshots, 'snapshots.json'), driftGatesFor(simlibs)];
}

let gates: { source: string; mtimeMs: number; file: string } | undefined;

/**
 * The stand-ins' version gates read their boundaries from the drift catalog (_forgeenv_sim/versions.py),
 * but the catalog itself holds each drift's fix (its `new` probe) and never enters the sandbox: runs
 * see a file of the boundaries alone (id, library, deprecated_in, changed_in), made once per catalog.
 */
function driftGatesFor(simlibs: string): string {
  const source = join(dirname(simlibs), 'drifts', 'catalog.json');
  let mtimeMs: number;
  try {
    mtimeMs = statSync(source).mtimeMs;
  } catch {
    return source; // no catalog: the stand-ins say so when a gate is asked
  }
  if (gates && gates.source === source && gates.mtimeMs === mtimeMs && existsSync(gates.file)) return gates.file;
  const text = readFileSync(source, 'utf8');
  const entries = (JSON.parse(text) as { entries: Array<Record<string, unknown>> }).entries.map((e) => ({
    id: e.id,
    library: e.library,
    deprecated_in: e.deprecated_in ?? null,
    changed_in: e.changed_in ?? null,
  }));
  const file = join(cacheRoot(), 'sim-gates', `${createHash('sha256').update(text).digest('hex').slice(0, 16)}.json`);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify({ format: 1, entries }));
    renameSync(tmp, file);
  }
  gates = { source, mtimeMs, file };
  return file;
}

/** The stand-ins' own variables: the versions, the snapshot whose recorded API they obey (resources/snapshots/api, _forgeenv_sim/surface.py), the drift catalog. */
function simulatedEnv(versions: LibraryVersions, simlibs: string): Record<string, string> {
  const snapshot = snapshotIdOf(versions);
  return {
    FORGEENV_LIBRARY_VERSIONS: JSON.stringify(versions),
    ...(snapshot ? { FORGEENV_SNAPSHOT: snapshot } : {}),
    FORGEENV_API_DIR: join(dirname(simlibs), 'snapshots', 'api'),
    FORGEENV_DRIFT_CATALOG: driftGatesFor(simlibs),
  };
}

function layoutError(interpreter: string, r: { code: string | undefined; error: string }): string {
  if (r.code === 'ENOENT') return `${interpreter} not found: set forgeenv.pythonPath\n`;
  if (r.code === 'EACCES') return `${interpreter} cannot be executed (permission denied): set forgeenv.pythonPath\n`;
  return r.code ? `ForgeEnv could not start ${interpreter}: ${r.error}\n` : `${r.error}\n`;
}

/** Runs `opts.script` and reports what happened. Never throws: every failure is in the result. */
export async function executeScript(opts: RunOptions): Promise<RunResult> {
  const started = performance.now();
  // Phase marks (onPhase): each call ends the phase begun at the previous one.
  let mark = started;
  const phase = (name: string) => {
    const now = performance.now();
    if (opts.onPhase) {
      try {
        opts.onPhase({ phase: name, ms: Math.round((now - mark) * 10) / 10 });
      } catch {
        // A faulty listener must not break the run.
      }
    }
    mark = now;
  };
  const parsed = OptionsSchema.safeParse(opts);
  const base: Omit<RunResult, 'stderr'> = {
    exit_code: null,
    stdout: '',
    wall_time_ms: 0,
    checkpoint_exists: false,
    peak_memory_mb: 0,
    script_content: typeof opts?.script === 'string' ? opts.script : '',
    timed_out: false,
    output_truncated: false,
    killed: false,
    violations: [],
    mode: opts?.mode === 'real' ? 'real' : 'simulated',
    interpreter: typeof opts?.interpreter === 'string' && opts.interpreter ? opts.interpreter : 'python3',
    run_dir: '',
    checkpoints: [],
  };
  if (!parsed.success) return notRun(base, `ForgeEnv could not run the script: invalid run options: ${formatZodError(parsed.error)}`);
  const o = parsed.data;

  if (o.validate !== false) {
    const repair = typeof o.validate === 'object';
    const violations = typeof o.validate === 'object' ? validateRepair(o.script, o.validate.baseline) : validateScript(o.script);
    // The validator is a policy on what repairs may add, and advisory as far as security goes: it
    // decides whether a repair is run and scored, never what a run can reach (the sandbox below does).
    if (violations.length) {
      const what = repair ? 'the repair adds constructs the environment forbids' : 'it uses constructs the environment forbids';
      const note = 'A policy check on repairs, not a security boundary: the sandbox is what contains a run.';
      return notRun({ ...base, violations }, `ForgeEnv did not run ${o.scriptName}: ${what}:\n${violations.join('\n')}\n${note}\n`);
    }
  }

  let simlibs: string | undefined;
  if (o.mode === 'simulated') {
    try {
      simlibs = simlibsDir();
      if (!existsSync(simlibs)) throw new Error(`${simlibs} does not exist`);
    } catch (e) {
      return notRun(
        base,
        `ForgeEnv could not run in simulated mode: the simulated libraries folder is missing (${(e as Error).message}).\n`,
      );
    }
  }

  if (opts.signal?.aborted) return notRun({ ...base, killed: true }, '[forgeenv] cancelled before the run started\n');
  phase('validate');

  const plan = await chooseIsolation(o.sandbox);
  if ('refused' in plan) return notRun(base, `ForgeEnv did not run ${o.scriptName}: ${plan.refused}.\n`);
  base.isolation = plan.isolation;
  if ('warning' in plan && plan.warning) base.sandbox_warning = plan.warning;
  const lay = await interpreterLayout(o.interpreter);
  if (!lay.ok) return notRun(base, layoutError(o.interpreter, lay));
  const layout = lay.layout;
  phase('sandbox plan');

  const cacheDir = trustedCacheDir(o.bytecodeCache ?? (o.mode === 'simulated' ? simulatedBytecodeCache() : undefined));
  const sandboxed = plan.isolation === 'bubblewrap';
  if (o.mounts.length > 0 && !sandboxed) {
    return notRun(
      base,
      `ForgeEnv did not run ${o.scriptName}: it writes to ${o.mounts.join(', ')}, outside its run folder, which only the bubblewrap sandbox can map into the run folder (isolation here: ${plan.isolation}).\n`,
    );
  }
  if (cacheDir && sandboxed) {
    await fillBytecodeCache(o, layout, simlibs, cacheDir, opts.onProgress);
    if (opts.signal?.aborted) return notRun({ ...base, killed: true }, '[forgeenv] cancelled before the run started\n');
  }
  const limits = o.sandbox.limits;
  phase('bytecode cache');

  // The warm runtime (warm/): a zygote of exactly this run's shape, started ahead in its own
  // sandbox (or, with FORGEENV_WARM=force, now). Only sandboxed runs; any doubt is a cold run.
  const warm = sandboxed ? warmModeOf(o.warm) : 'off';
  const shape = warm === 'off' ? undefined : runShape(o, plan, layout, simlibs, cacheDir);
  let parked: Parked | undefined;
  if (shape && warm === 'force') {
    const r = await startParked(shape, true, opts.signal);
    // Fail closed: a zygote that could not be made ready leaves a cold run, saying why.
    parked = r && !('error' in r) && r.alive ? r : undefined;
    if (r && !('error' in r) && !parked) r.retire();
    if (!parked && !opts.signal?.aborted) {
      const why = !r ? 'no memory for a zygote' : 'error' in r ? r.error.trim() : (r.failure ?? 'the zygote was not ready');
      warmPool.log(`[warm] ${shape.label}: ${why} (FORGEENV_WARM=force: this run is cold)`);
    }
  } else if (shape) {
    parked = claimParked(shape.key);
    if (!parked) logShapeMismatch(shape);
    // Runs that bind a per-run folder have a key of their own each time: worth no zygote (the
    // verifier copies the finished run in instead, `inputDir`, so its runs share the pool).
    if (o.readOnlyPaths.length === 0) warmPool.want(shape.key, shape, shape.label);
  }
  base.runtime = parked ? 'warm' : 'cold';
  phase('claim');

  let prepared: PreparedRun;
  if (parked) {
    const r = await claimRun(parked, o);
    if ('error' in r) return notRun(base, r.error);
    prepared = r;
  } else {
    // Memory: the run's share of the machine (sandbox/memory.ts); it waits here while other runs hold
    // the rest. Disk: as root, the run folder is a tmpfs of the quota (sandbox/quota.ts), part of the
    // run's memory footprint; elsewhere the folder's size is watched while it runs.
    const wantQuota = sandboxed && limits.diskMiB > 0 && canMountQuota();
    const memory =
      process.platform === 'win32'
        ? { addressSpaceMiB: limits.addressSpaceMiB, release: () => undefined }
        : await runMemory.acquire(
            limits.addressSpaceMiB,
            (wantQuota ? limits.diskMiB : 0) + (sandboxed ? SANDBOX_TMPFS_MIB : 0),
            opts.signal,
          );
    if (opts.signal?.aborted) {
      memory.release();
      return notRun({ ...base, killed: true }, '[forgeenv] cancelled before the run started\n');
    }
    const r = await prepareRun(o, { plan, layout, simlibs, cacheDir }, memory, wantQuota, true);
    if ('error' in r) return notRun(base, r.error);
    prepared = {
      ...r,
      launch: () =>
        spawnRun(
          o,
          r.runDir,
          r.env,
          r.command([layout.executable, '-u', o.scriptName, ...o.args]),
          sandboxed ? { seccomp: r.seccomp } : undefined,
        ),
    };
  }
  const { runDir, quota, runUid, memory } = prepared;
  phase('run folder');
  let outcome: Outcome;
  try {
    const watchDisk = !quota && limits.diskMiB > 0 ? limits.diskMiB : undefined;
    outcome = await runProcess(o, runDir, opts, prepared.launch, watchDisk, () => phase('process'));
    phase('pipes');
  } finally {
    // The run's namespace is gone with bwrap (the kernel killed what was left), so the uid is free.
    runUid?.release();
  }
  const notes: string[] = [];
  if (quota && (await quotaFull(runDir))) {
    notes.push(
      `[forgeenv] the run folder reached its disk quota of ${limits.diskMiB} MiB (forgeenv.sandbox.diskMiB): writes past it failed with "No space left on device"`,
    );
  }
  if (
    outcome.exit_code !== 0 &&
    memory.addressSpaceMiB > 0 &&
    /MemoryError|Cannot allocate memory|std::bad_alloc|out of memory/i.test(outcome.stderr)
  ) {
    notes.push(
      `[forgeenv] the run hit its memory limit: ${memory.addressSpaceMiB} MiB of address space per process (forgeenv.sandbox.addressSpaceMiB${memory.addressSpaceMiB < limits.addressSpaceMiB ? ` ${limits.addressSpaceMiB} MiB, less to share this machine's memory with concurrent runs` : ''})`,
    );
  }
  if (notes.length) outcome.stderr += (outcome.stderr && !outcome.stderr.endsWith('\n') ? '\n' : '') + notes.join('\n') + '\n';
  // No machine paths downstream (error traces, diagnostics, prompts, saved demonstrations).
  // Off the event loop when large (scrubAsync.ts): the output of a run is the user's to bloat.
  const passes = scrubPasses(runDir, simlibs, o.mode === 'real' ? shimsDir() : undefined, prepared.runAt);
  [outcome.stdout, outcome.stderr] = await Promise.all([scrubPathsAsync(outcome.stdout, passes), scrubPathsAsync(outcome.stderr, passes)]);
  phase('scrub');
  const checkpoints = await findCheckpoints(runDir);
  phase('checkpoints');
  if (quota) await releaseQuota(runDir, o.keepRunDir);
  else if (!o.keepRunDir) await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  memory.release();
  phase('cleanup');

  return {
    ...base,
    ...outcome,
    wall_time_ms: Math.round(performance.now() - started),
    checkpoint_exists: checkpoints.length > 0,
    checkpoints,
    run_dir: runDir,
  };
}

/** The trusted step that fills the shared bytecode cache before sandboxed runs read it (sandbox/bytecodeCache.ts). */
function fillBytecodeCache(
  o: Options,
  layout: InterpreterLayout,
  simlibs: string | undefined,
  cacheDir: string,
  onProgress: ((m: string) => void) | undefined,
): Promise<boolean> {
  return warmBytecodeCache({
    python: layout.executable,
    cacheDir,
    stdlib: layout.stdlib,
    libraries: simlibs ? existingPaths([simlibs, `${simlibs}-fallback`]) : layout.site,
    ...(simlibs ? { surface: { simlibs, env: simulatedEnv(o.libraryVersions, simlibs) } } : {}),
    env: { PATH: process.env.PATH ?? '', PYTHONPYCACHEPREFIX: cacheDir, PYTHONHASHSEED: '0' },
    onProgress,
  });
}

interface RunContext {
  plan: RunnablePlan;
  layout: InterpreterLayout;
  simlibs: string | undefined;
  cacheDir: string | undefined;
}

/** A run folder made ready for a process (its uid, quota, memory, environment and command line). */
interface PreparedFolder {
  runDir: string;
  /** Where the script sees it. */
  runAt: string;
  quota: boolean;
  runUid: RunUid | undefined;
  memory: MemoryGrant;
  env: NodeJS.ProcessEnv;
  seccomp: Buffer | undefined;
  command: (python: string[]) => { file: string; args: string[] };
}

interface PreparedRun extends PreparedFolder {
  launch: () => Launched | { error: string };
}

/**
 * What the sandbox shows read-only: the interpreter's folders, the stand-ins and their API data
 * (simulated), the bytecode cache and what the caller names (real mode's hub). Never the whole of
 * resources/ nor the extension's code: the tasks' unbroken originals (resources/tasks) and the drift
 * catalog would hand a repair agent the answer.
 */
function readOnlyOf(o: Options, c: RunContext): string[] {
  const shims = o.mode === 'real' ? [shimsDir()] : [];
  return c.plan.isolation === 'bubblewrap'
    ? existingPaths([
        ...c.layout.roots,
        ...(c.simlibs ? simulatedReadOnly(c.simlibs) : []),
        ...shims,
        ...(c.cacheDir ? [c.cacheDir] : []),
        ...o.readOnlyPaths,
      ])
    : [];
}

/**
 * The modification time of the script and the task's files in every run folder. A run's output may
 * depend on it (datasets names a local data file's cache folder by a fingerprint of its path and
 * time), so two runs of one task must see the same: a file written at run time would differ in every run.
 */
export const RUN_FILES_MTIME = new Date('2020-01-01T00:00:00Z');

/** Writes the script and its files into the run folder, each with `RUN_FILES_MTIME` (folders made for them too). */
async function writeRunFiles(o: Options, runDir: string): Promise<void> {
  if (o.inputDir !== undefined) {
    await cp(o.inputDir, join(runDir, INPUT_DIR), {
      recursive: true,
      verbatimSymlinks: true,
      preserveTimestamps: true,
      filter: async (src) => {
        const st = await lstat(src);
        return st.isFile() || st.isDirectory() || st.isSymbolicLink();
      },
    });
  }
  const written = [o.scriptName];
  await writeFile(join(runDir, o.scriptName), o.script, 'utf8');
  for (const [rel, text] of Object.entries(o.files)) {
    await mkdir(dirname(join(runDir, rel)), { recursive: true });
    await writeFile(join(runDir, rel), text, 'utf8');
    written.push(rel);
  }
  for (const [rel, target] of Object.entries(o.links)) {
    if (Object.hasOwn(o.files, rel)) continue; // the task's own file wins
    await mkdir(dirname(join(runDir, rel)), { recursive: true });
    await symlink(target, join(runDir, rel));
  }
  // Folders after their files and links (writing into a folder changes its time), deepest first; not the run folder.
  // A link keeps its target's time (utimes would follow it into the hub).
  const folders = new Set<string>();
  for (const rel of [...written, ...Object.keys(o.links)]) {
    for (let d = dirname(rel); d !== '.' && d !== '/' && !folders.has(d); d = dirname(d)) folders.add(d);
  }
  for (const rel of [...written, ...[...folders].sort((a, b) => b.length - a.length)]) {
    await utimes(join(runDir, rel), RUN_FILES_MTIME, RUN_FILES_MTIME);
  }
}

/**
 * A private copy with the source's modification times, folders included: the libraries print them
 * ("last modified on …" of a cached dataset or metric), and a copy's own time would make every
 * run's output differ (a warm run's copy is made when its zygote starts, a cold run's when it runs).
 */
async function copyKeepingTimes(src: string, copy: string): Promise<void> {
  await cp(src, copy, { recursive: true, verbatimSymlinks: true, preserveTimestamps: true });
  // Folders last, deepest first: filling a folder changed its time.
  const dirs: string[] = [''];
  for (let i = 0; i < dirs.length; i++) {
    for (const e of await readdir(join(src, dirs[i]), { withFileTypes: true })) if (e.isDirectory()) dirs.push(join(dirs[i], e.name));
  }
  for (const rel of dirs.reverse()) {
    const st = await stat(join(src, rel));
    await utimes(join(copy, rel), st.atime, st.mtime);
  }
}

/** Makes the run folder (quota, private copies, mounts, the run's uid); on failure gives everything back, `memory` included. */
async function prepareRun(
  o: Options,
  c: RunContext,
  memory: MemoryGrant,
  wantQuota: boolean,
  withScript: boolean,
): Promise<PreparedFolder | { error: string }> {
  const { plan, layout, simlibs, cacheDir } = c;
  const sandboxed = plan.isolation === 'bubblewrap';
  let runDir: string | undefined;
  let quota = false;
  const copies: { copy: string; at: string }[] = [];
  let runUid: RunUid | undefined;
  try {
    runDir = await mkdtemp(join(o.parentDir ?? tmpdir(), 'forgeenv-run-'));
    // A mount that fails (a container without CAP_SYS_ADMIN) leaves the size watch below.
    if (wantQuota) quota = (await mountQuota(runDir, o.sandbox.limits.diskMiB)) === undefined;
    if (withScript) await writeRunFiles(o, runDir);
    await mkdir(join(runDir, RUN_TMP));
    if (sandboxed) {
      const sources = existingPaths(o.privateCopies);
      for (const [i, src] of sources.entries()) {
        const copy = join(runDir, RUN_COPIES, String(i));
        await copyKeepingTimes(src, copy);
        copies.push({ copy, at: src });
      }
    }
    for (const [i, at] of o.mounts.entries()) {
      const copy = join(runDir, RUN_MOUNTS, String(i));
      await mkdir(copy, { recursive: true });
      copies.push({ copy, at });
    }
    if (runsAsOwnUid(plan)) {
      runUid = acquireRunUid(uidLockDir());
      await handOver(runDir, runUid.uid);
    }
  } catch (e) {
    runUid?.release();
    if (quota && runDir) await releaseQuota(runDir, false);
    else if (runDir) await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    memory.release();
    return { error: `ForgeEnv could not prepare the run directory: ${(e as Error).message}\n` };
  }
  const readOnly = readOnlyOf(o, c);
  const realRunDir = existingPaths([runDir])[0] ?? runDir;
  const realCopies = copies.map((x) => ({ copy: existingPaths([x.copy])[0] ?? x.copy, at: x.at }));
  const seccomp = sandboxed ? hostSeccompProgram() : undefined;
  const sandbox = { ...o.sandbox, limits: { ...o.sandbox.limits, addressSpaceMiB: memory.addressSpaceMiB } };
  // Sandboxed, the script sees its folder at one path every run (unless something the sandbox shows is there).
  const top = dirname(SANDBOX_RUN_DIR);
  const shown = [...readOnly, ...realCopies.map((x) => x.at)];
  const runAt = sandboxed && !shown.some((p) => p === top || p.startsWith(`${top}/`)) ? SANDBOX_RUN_DIR : realRunDir;
  const env = childEnv(o, runAt, simlibs, cacheDir, layout);
  // No account has a run's own uid: getpass.getuser() (torch's compile cache, logging) reads these first.
  if (runUid) env.USER = env.LOGNAME = 'forgeenv';
  const uid = runUid?.uid;
  const command = (python: string[]) =>
    runCommand({
      plan,
      sandbox,
      python,
      runDir: realRunDir,
      runAt,
      readOnly,
      copies: realCopies,
      ...(uid !== undefined ? { uid } : {}),
      ...(seccomp ? { seccompFd: SECCOMP_FD } : {}),
    });
  return { runDir, runAt, quota, runUid, memory, env, seccomp, command };
}

/** Gives back what prepareRun took, once the run's process is gone. */
async function releaseRun(p: PreparedFolder, keep: boolean): Promise<void> {
  p.runUid?.release();
  if (p.quota) await releaseQuota(p.runDir, keep);
  else if (!keep) await rm(p.runDir, { recursive: true, force: true }).catch(() => undefined);
  p.memory.release();
}

/** Everything that decides what a zygote imports and what sandbox it lives in: runs of one shape can share a pool. */
export interface RunShape {
  key: string;
  label: string;
  o: Options;
  c: RunContext;
}

function runShape(
  o: Options,
  plan: RunnablePlan,
  layout: InterpreterLayout,
  simlibs: string | undefined,
  cacheDir: string | undefined,
): RunShape {
  const c = { plan, layout, simlibs, cacheDir };
  const general = { ...o, script: '', files: {}, args: [], scriptName: 'train.py', validate: false as const, keepRunDir: false };
  // The environment with a stand-in run folder: equal keys mean equal environments, run folder aside.
  const env = childEnv(o, '/forgeenv-warm-run', simlibs, cacheDir, layout);
  const key = JSON.stringify({
    executable: layout.executable,
    mode: o.mode,
    versions: Object.entries(o.libraryVersions).sort(),
    sandbox: o.sandbox,
    readOnly: readOnlyOf(o, c),
    copies: existingPaths(o.privateCopies),
    mounts: o.mounts,
    parentDir: o.parentDir ?? null,
    ownUid: runsAsOwnUid(plan),
    cacheDir: cacheDir ?? null,
    env: Object.entries(env).sort(),
  });
  return { key, label: `${o.mode} ${snapshotIdOf(o.libraryVersions) ?? 'custom versions'}`, o: general, c };
}

/** `FORGEENV_WARM=0` (or false/off) forces cold runs; `force` starts a zygote for every sandboxed run (tests of the warm path). */
function warmModeOf(asked: boolean): 'off' | 'pool' | 'force' {
  const env = (process.env.FORGEENV_WARM ?? '').trim().toLowerCase();
  if (env === '0' || env === 'false' || env === 'off') return 'off';
  if (env === 'force') return 'force';
  return asked ? 'pool' : 'off';
}

/** True unless FORGEENV_WARM turns the warm runtime off. */
export const warmAllowed = (): boolean => warmModeOf(true) !== 'off';

/**
 * Spawns a zygote of `shape` in a sandbox made exactly like a cold run's. `blocking`: waits for
 * memory like a cold run and for the zygote to be ready (FORGEENV_WARM=force); otherwise it
 * reserves a parked zygote's memory (about its resident size: memory.ts `tryAcquireParked`; else
 * undefined) and returns once spawned.
 */
async function startParked(shape: RunShape, blocking: boolean, signal?: AbortSignal): Promise<Parked | { error: string } | undefined> {
  const { o, c } = shape;
  const limits = o.sandbox.limits;
  const wantQuota = limits.diskMiB > 0 && canMountQuota();
  const overhead = (wantQuota ? limits.diskMiB : 0) + SANDBOX_TMPFS_MIB;
  const memory = blocking
    ? await runMemory.acquire(limits.addressSpaceMiB, overhead, signal)
    : runMemory.tryAcquireParked(limits.addressSpaceMiB, overhead, PARKED_MIB[o.mode]);
  if (!memory) return undefined;
  const r = await prepareRun(o, c, memory, wantQuota, false);
  if ('error' in r) return r;
  const left = leftToScript.get(shape.key);
  const ahead = (steps: string[]) => steps.filter((s) => !left?.has(s));
  const launched = spawnRun(
    o,
    r.runDir,
    r.env,
    r.command(zygoteArgv(c.layout.executable, ahead(WARM_IMPORTS[o.mode]), ahead(WARM_ATTRIBUTES[o.mode]), ahead(WARM_CALLS[o.mode]))),
    { seccomp: r.seccomp },
    'pipe',
  );
  if ('error' in launched) {
    await releaseRun(r, false);
    return launched;
  }
  const parked = new Parked(
    shape.key,
    launched,
    () => releaseRun(r, false),
    () => memory.release(),
    blocking,
  );
  prepared.set(parked, r);
  void parked.settled.then(() => {
    const step = printedStep(parked.failure);
    if (step === undefined) return;
    // Added to the set as it is now: another zygote of this shape may have named a step meanwhile.
    leftToScript.set(shape.key, new Set([...(leftToScript.get(shape.key) ?? []), step]));
    warmPool.log(`[warm] ${shape.label}: ${step} prints while it loads: its zygotes leave it to the script from now on`);
  });
  if (blocking) await parked.settled;
  return parked;
}

/**
 * Per shape, the preparation steps (zygote.ts WARM_*) that printed in a zygote: later zygotes skip them, so a
 * script that needs one loads it itself and prints what a cold run prints, where it prints it.
 */
const leftToScript = new Map<string, Set<string>>();

const prepared = new WeakMap<Parked, PreparedFolder>();

/** What a parked zygote reserves while it waits: above its resident memory (docs/sandbox.md: ~30 MiB simulated, ~0.9 GiB real). */
const PARKED_MIB: Record<'simulated' | 'real', number> = { simulated: 64, real: 1280 };

/** The warm pool of this process (docs/sandbox.md, "Warm runtime"). */
export const warmPool = new WarmPool<RunShape>({
  start: (_key, shape) => startParked(shape, false),
  perKey: Math.max(1, availableParallelism()),
  idleMs: 10 * 60_000,
  busy: (shape) => shape.o.mode === 'real' && runMemory.runningCount >= availableParallelism(),
  // Simulated zygotes import in a few tenths of a second: as many may start at once as there are cores.
  concurrentStarts: (shape) => (shape.o.mode === 'simulated' ? Math.max(1, availableParallelism()) : 1),
});

/**
 * Asks the pool for zygotes of the shape of runs with these options (the editor at episode start,
 * `forgeenv serve --warm`): the same key executeScript computes. Resolves with the key, or why not.
 */
export async function prewarmRuntime(opts: Omit<RunOptions, 'script'>): Promise<{ key: string; label: string } | { error: string }> {
  if (!warmAllowed()) return { error: 'FORGEENV_WARM=0: the warm runtime is off' };
  const parsed = OptionsSchema.safeParse({ ...opts, script: '' });
  if (!parsed.success) return { error: `invalid run options: ${formatZodError(parsed.error)}` };
  const o = parsed.data;
  const simlibs = o.mode === 'simulated' ? simlibsDir() : undefined;
  const plan = await chooseIsolation(o.sandbox);
  if ('refused' in plan || plan.isolation !== 'bubblewrap')
    return { error: 'runs are not sandboxed with bubblewrap here: the warm runtime needs it' };
  const lay = await interpreterLayout(o.interpreter);
  if (!lay.ok) return { error: layoutError(o.interpreter, lay).trim() };
  const cacheDir = trustedCacheDir(o.bytecodeCache ?? (o.mode === 'simulated' ? simulatedBytecodeCache() : undefined));
  if (cacheDir) await fillBytecodeCache(o, lay.layout, simlibs, cacheDir, opts.onProgress);
  const shape = runShape(o, plan, lay.layout, simlibs, cacheDir);
  warmPool.want(shape.key, shape, shape.label);
  return { key: shape.key, label: shape.label };
}

const mismatchesLogged = new Set<string>();

/**
 * A run that found no zygote of its shape while another shape of its snapshot has ready ones: says
 * once which parts of the key differ (names only: the key holds the runs' environment).
 */
function logShapeMismatch(shape: RunShape): void {
  for (const other of warmPool.readyLookalikes(shape.key, shape.label)) {
    const a = JSON.parse(other) as Record<string, unknown>;
    const b = JSON.parse(shape.key) as Record<string, unknown>;
    const fields = Object.keys({ ...a, ...b }).filter((f) => JSON.stringify(a[f]) !== JSON.stringify(b[f]));
    const envA = new Map(a.env as [string, string][]);
    const envB = new Map(b.env as [string, string][]);
    const vars = [...new Set([...envA.keys(), ...envB.keys()])].filter((v) => envA.get(v) !== envB.get(v));
    const what = [...fields.filter((f) => f !== 'env'), ...vars.map((v) => `env.${v}`)].join(', ');
    if (mismatchesLogged.has(what)) continue;
    mismatchesLogged.add(what);
    warmPool.log(`[warm] a ${shape.label} run missed the ready zygotes: its shape differs in ${what}`);
  }
}

/**
 * A ready zygote of this key from the pool, its memory now the run's whole footprint, or undefined
 * (the run is cold: also when that footprint does not fit now, so that it waits as a cold run does).
 */
function claimParked(key: string): Parked | undefined {
  for (;;) {
    const p = warmPool.claim(key) as Parked | undefined;
    if (!p) return undefined;
    if (!p.alive) {
      p.retire();
      continue;
    }
    if (prepared.get(p)?.memory.activate?.() !== false) return p;
    p.retire();
    return undefined;
  }
}

/** Writes the script into a claimed zygote's run folder; the launch hands it the run. */
async function claimRun(parked: Parked, o: Options): Promise<PreparedRun | { error: string }> {
  const p = prepared.get(parked);
  if (!p || !parked.alive || !parked.ready) {
    parked.retire();
    return { error: `ForgeEnv could not run ${o.scriptName}: the warm runtime failed (${parked.failure ?? 'not ready'})\n` };
  }
  try {
    await writeRunFiles(o, p.runDir);
    if (p.runUid) await handOver(p.runDir, p.runUid.uid);
  } catch (e) {
    parked.retire();
    return { error: `ForgeEnv could not prepare the run directory: ${(e as Error).message}\n` };
  }
  return {
    ...p,
    launch: () =>
      parked.alive
        ? parked.adopt({ argv: [o.scriptName, ...o.args] })
        : { error: `ForgeEnv could not run ${o.scriptName}: the warm runtime failed (${parked.failure ?? 'gone'})\n` },
  };
}

/**
 * The scrubPaths passes that rewrite the run folder, the stand-ins' (and shims') folders and the home folder out
 * of a run's output (see scrubPaths.ts): the run folder's real path first when it differs.
 */
function scrubPasses(runDir: string, simlibs: string | undefined, shims?: string, runAt = runDir): ScrubContext[] {
  const real = (p: string) => {
    try {
      return realpathSync(p);
    } catch {
      return p;
    }
  };
  // The runtime shims' folder reads like an installed module's (`site-packages/_forgeenv_shims.py`).
  const standIns = [...(simlibs ? [simlibs, `${simlibs}-fallback`] : []), ...(shims ? [shims] : [])];
  const ctx = {
    runDir,
    runAt,
    standInDirs: [...new Set([...standIns, ...standIns.map(real)])],
    homeDir: homedir(),
  };
  const realRun = real(runDir);
  return realRun !== runDir ? [{ runDir: realRun }, ctx] : [ctx];
}

type Outcome = Pick<RunResult, 'exit_code' | 'stdout' | 'stderr' | 'timed_out' | 'output_truncated' | 'killed' | 'peak_memory_mb'>;

interface StreamState {
  chunks: Buffer[];
  bytes: number;
  full: boolean;
  decoder: StringDecoder;
}

/** A started run's process: `status` is the launcher's status line so far (sandboxed runs). */
export interface Launched {
  child: ChildProcess;
  sandboxed: boolean;
  status: () => string;
}

/**
 * Spawns a run's command. Sandboxed: bwrap starts with an empty environment; the script's `env`
 * goes through the launcher's pipe, the seccomp filter through bwrap's, and the exit status comes
 * back through the status pipe. `stdin: 'pipe'` for a zygote (its run request), else /dev/null.
 */
export function spawnRun(
  o: { interpreter: string },
  runDir: string,
  env: NodeJS.ProcessEnv,
  command: { file: string; args: string[] },
  sandbox: { seccomp: Buffer | undefined } | undefined,
  stdin: 'ignore' | 'pipe' = 'ignore',
): Launched | { error: string } {
  const sandboxed = sandbox !== undefined;
  let child: ChildProcess;
  let status = '';
  try {
    child = spawn(command.file, command.args, {
      cwd: runDir,
      // Nothing of the script's environment reaches bwrap, setpriv or the launcher (they run with
      // privileges); the launcher hands it to the script alone.
      env: sandboxed ? {} : env,
      detached: true,
      stdio: sandboxed ? [stdin, 'pipe', 'pipe', 'pipe', 'pipe', sandbox.seccomp ? 'pipe' : 'ignore'] : [stdin, 'pipe', 'pipe'],
      windowsHide: true,
    });
  } catch (e) {
    return { error: `ForgeEnv could not start ${o.interpreter}: ${(e as Error).message}\n` };
  }
  if (sandboxed) {
    const feed = (fd: number, data: Buffer) => {
      const s = child.stdio[fd] as (NodeJS.WritableStream & { on(e: 'error', f: () => void): void }) | null | undefined;
      // EPIPE when bwrap failed before reading: its own error message says why.
      s?.on('error', () => undefined);
      s?.end(data);
    };
    feed(ENV_FD, encodeEnv(env));
    if (sandbox.seccomp) feed(SECCOMP_FD, sandbox.seccomp);
    const st = child.stdio[STATUS_FD] as NodeJS.ReadableStream | null | undefined;
    st?.on('data', (b: Buffer) => (status = (status + b.toString('utf8')).slice(0, 64)));
    st?.on('error', () => undefined);
  }
  return { child, sandboxed, status: () => status };
}

/** Watches a launched run (spawnRun, or a claimed zygote): output, limits, timeout, cancel, memory, exit status. */
function runProcess(
  o: Options,
  runDir: string,
  opts: RunOptions,
  launch: () => Launched | { error: string },
  watchDiskMiB: number | undefined,
  onExit?: () => void,
): Promise<Outcome> {
  return new Promise<Outcome>((resolve) => {
    const notes: string[] = [];
    const streams: Record<'stdout' | 'stderr', StreamState> = {
      stdout: { chunks: [], bytes: 0, full: false, decoder: new StringDecoder('utf8') },
      stderr: { chunks: [], bytes: 0, full: false, decoder: new StringDecoder('utf8') },
    };
    let stopReason: StopReason | undefined;
    let peakKb = 0;
    let exitCode: number | null = null;
    let exitSignal: NodeJS.Signals | null = null;
    let settled = false;
    let exited = false;
    let closeTimer: NodeJS.Timeout | undefined;

    const launched = launch();
    if ('error' in launched) {
      resolve(emptyOutcome(launched.error));
      return;
    }
    const { child, sandboxed } = launched;

    const stop = (reason: StopReason) => {
      if (stopReason || settled || exited) return;
      stopReason = reason;
      if (reason === 'timeout') notes.push(`[forgeenv] timed out after ${o.timeoutMs} ms: the process group was killed`);
      else if (reason === 'cancel') notes.push('[forgeenv] cancelled: the process group was killed');
      else if (reason === 'deactivate') notes.push('[forgeenv] stopped because ForgeEnv is shutting down: the process group was killed');
      else if (reason === 'disk')
        notes.push(
          `[forgeenv] the run folder grew past its disk quota of ${watchDiskMiB} MiB (forgeenv.sandbox.diskMiB): the run was killed`,
        );
      if (child.pid !== undefined) void killProcessTree(child.pid, KILL_GRACE_MS);
    };

    let markDone: () => void = () => undefined;
    const live: LiveRun = { stop, done: new Promise<void>((r) => (markDone = r)) };
    liveRuns.add(live);

    const timeout = setTimeout(() => stop('timeout'), o.timeoutMs);
    const onAbort = () => stop('cancel');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    // An abort that came while the run folder was being written would otherwise be missed.
    if (opts.signal?.aborted) stop('cancel');

    let pythonPid = sandboxed ? undefined : child.pid;
    let lookups = 0;
    const sampleMemory = () => {
      if (process.platform !== 'linux' || child.pid === undefined) return;
      if (pythonPid === undefined && lookups < 40) pythonPid = sandboxedPid(child.pid, ++lookups % 10 === 0);
      if (pythonPid === undefined) return;
      try {
        const m = /VmHWM:\s+(\d+)\s*kB/.exec(readFileSync(`/proc/${pythonPid}/status`, 'utf8'));
        if (m) peakKb = Math.max(peakKb, Number(m[1]));
      } catch {
        // The process is gone: keep the last sample.
      }
    };
    const sampler = setInterval(sampleMemory, MEMORY_SAMPLE_MS);
    sampleMemory();
    // Without a tmpfs quota (not root): the folder's size, every DISK_SAMPLE_MS. Best effort: a
    // run can write past the quota between two looks (each file is bounded by RLIMIT_FSIZE).
    let measuring = false;
    const diskWatch =
      watchDiskMiB === undefined
        ? undefined
        : setInterval(() => {
            if (measuring || stopReason || exited) return;
            measuring = true;
            void folderBytes(runDir, DISK_WALK_ENTRIES).then((bytes) => {
              measuring = false;
              if (bytes === undefined || bytes > watchDiskMiB * 1024 * 1024) stop('disk');
            });
          }, DISK_SAMPLE_MS);

    const onData = (name: 'stdout' | 'stderr') => (buf: Buffer) => {
      const s = streams[name];
      if (s.full) return; // keep draining so the child is never blocked on a full pipe
      const room = o.outputCapBytes - s.bytes;
      const part = buf.length > room ? buf.subarray(0, room) : buf;
      s.chunks.push(part);
      s.bytes += part.length;
      if (opts.onOutput && part.length) {
        try {
          opts.onOutput(name, s.decoder.write(part));
        } catch {
          // A faulty listener must not break the run.
        }
      }
      if (buf.length > room) {
        s.full = true;
        notes.push(`[forgeenv] ${name} exceeded ${o.outputCapBytes} bytes: output collection stopped and the run was killed`);
        stop('cap');
      }
    };
    child.stdout?.on('data', onData('stdout'));
    child.stderr?.on('data', onData('stderr'));

    const finish = (startError?: string) => {
      if (settled) return;
      settled = true;
      clearTimeout(timeout);
      clearTimeout(closeTimer);
      clearInterval(sampler);
      clearInterval(diskWatch);
      opts.signal?.removeEventListener('abort', onAbort);
      liveRuns.delete(live);
      markDone();
      if (startError) {
        resolve(emptyOutcome(startError));
        return;
      }
      if (sandboxed) {
        // The launcher's word on the script's status; without it (the launcher itself was killed)
        // bwrap's 128+N is read as signal N.
        const reported = parseLaunchStatus(launched.status());
        if (reported?.signal != null) {
          exitCode = null;
          exitSignal = signalName(reported.signal) ?? null;
        } else if (reported) {
          exitCode = reported.exitCode;
          exitSignal = null;
        } else {
          const inner = signalFromSandboxExit(exitCode);
          if (inner) {
            exitCode = null;
            exitSignal = inner;
          }
        }
      }
      if (!stopReason && exitSignal) notes.push(`[forgeenv] the process was ended by signal ${exitSignal}`);
      const text = (s: StreamState) => Buffer.concat(s.chunks).toString('utf8');
      let stderr = text(streams.stderr);
      if (notes.length) stderr += (stderr && !stderr.endsWith('\n') ? '\n' : '') + notes.join('\n') + '\n';
      resolve({
        exit_code: stopReason ? null : exitCode,
        stdout: text(streams.stdout),
        stderr,
        timed_out: stopReason === 'timeout',
        output_truncated: streams.stdout.full || streams.stderr.full,
        killed: stopReason !== undefined,
        peak_memory_mb: Math.round((peakKb / 1024) * 10) / 10,
      });
    };

    child.on('error', (e: NodeJS.ErrnoException) => {
      // Spawn failures come here without an 'exit'; later errors (e.g. a failed kill) are ignored.
      if (child.pid !== undefined && e.code !== 'ENOENT' && e.code !== 'EACCES') return;
      if (e.code === 'ENOENT') finish(`${o.interpreter} not found: set forgeenv.pythonPath\n`);
      else if (e.code === 'EACCES') finish(`${o.interpreter} cannot be executed (permission denied): set forgeenv.pythonPath\n`);
      else finish(`ForgeEnv could not start ${o.interpreter}: ${e.message}\n`);
    });
    child.on('exit', (code, signal) => {
      exited = true;
      onExit?.();
      exitCode = code;
      exitSignal = signal;
      sampleMemory();
      // Children the script left behind (they may hold our pipes open): end them with the run.
      const pid = child.pid;
      if (pid !== undefined && groupAlive(pid)) void killProcessTree(pid, KILL_GRACE_MS);
      closeTimer = setTimeout(() => {
        if (pid !== undefined) signalGroup(pid, 'SIGKILL');
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, CLOSE_WAIT_MS + KILL_GRACE_MS);
    });
    child.on('close', () => finish());
  });
}

function emptyOutcome(stderr: string): Outcome {
  return { exit_code: null, stdout: '', stderr, timed_out: false, output_truncated: false, killed: false, peak_memory_mb: 0 };
}

/** Total bytes of the files under `root`, or undefined past `maxEntries` entries; never throws. */
async function folderBytes(root: string, maxEntries: number): Promise<number | undefined> {
  let total = 0;
  let entries = 0;
  const stack = [root];
  while (stack.length) {
    const dir = stack.pop()!;
    const list = await readdir(dir, { withFileTypes: true }).catch(() => []);
    for (const e of list) {
      if (++entries > maxEntries) return undefined;
      const p = join(dir, e.name);
      if (e.isDirectory()) stack.push(p);
      else if (e.isFile()) total += (await lstat(p).catch(() => undefined))?.blocks ?? 0;
    }
  }
  // st_blocks counts 512-byte units actually allocated: a sparse file costs what it uses.
  return total * 512;
}

/** Bounded walk of the run directory for weights files and `checkpoint-*` folders; never throws. */
export async function findCheckpoints(root: string): Promise<CheckpointInfo[]> {
  const found: CheckpointInfo[] = [];
  let budget = WALK_MAX_ENTRIES;
  const list = async (dir: string): Promise<string[]> => {
    try {
      return (await readdir(dir)).sort();
    } catch {
      return []; // deleted by the script, or unreadable
    }
  };
  const sizeOf = async (dir: string, depth: number): Promise<number> => {
    let total = 0;
    for (const name of await list(dir)) {
      if (--budget < 0 || depth > WALK_MAX_DEPTH) break;
      const st = await lstat(join(dir, name)).catch(() => undefined);
      if (st?.isFile()) total += st.size;
      else if (st?.isDirectory()) total += await sizeOf(join(dir, name), depth + 1);
    }
    return total;
  };
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    for (const name of await list(dir)) {
      if (--budget < 0) return;
      const full = join(dir, name);
      const relPath = rel ? `${rel}/${name}` : name;
      if (depth === 0 && (name === RUN_TMP || name === RUN_COPIES)) continue; // ours, not the run's output
      const st = await lstat(full).catch(() => undefined);
      if (!st) continue;
      if (st.isDirectory()) {
        if (CHECKPOINT_DIR.test(name)) found.push({ path: relPath, kind: 'dir', bytes: await sizeOf(full, depth + 1) });
        else if (depth < WALK_MAX_DEPTH) await walk(full, relPath, depth + 1);
      } else if (st.isFile() && CHECKPOINT_FILE.test(name)) {
        found.push({ path: relPath, kind: 'file', bytes: st.size });
      }
    }
  };
  await walk(root, '', 0);
  return found;
}

/** Checks that `interpreter` starts and reports its version (e.g. `3.11.7`). Never throws. */
export function probeInterpreter(interpreter: string): Promise<{ ok: true; version: string } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    if (typeof interpreter !== 'string' || !interpreter) {
      resolve({ ok: false, error: 'no Python interpreter configured: set forgeenv.pythonPath' });
      return;
    }
    let out = '';
    let err = '';
    let child: ChildProcess;
    try {
      child = spawn(interpreter, ['-c', 'import sys; print("%d.%d.%d" % sys.version_info[:3])'], {
        stdio: ['ignore', 'pipe', 'pipe'],
        windowsHide: true,
      });
    } catch (e) {
      resolve({ ok: false, error: `${interpreter} could not be started: ${(e as Error).message}` });
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.stdout?.on('data', (b: Buffer) => (out += b.toString('utf8')));
    child.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', (e: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolve({
        ok: false,
        error:
          e.code === 'ENOENT' ? `${interpreter} not found: set forgeenv.pythonPath` : `${interpreter} could not be started: ${e.message}`,
      });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      const version = out.trim();
      if (code === 0 && /^\d+\.\d+\.\d+$/.test(version)) resolve({ ok: true, version });
      else resolve({ ok: false, error: `${interpreter} is not a working Python (exit ${code}): ${(err || out).trim().slice(0, 300)}` });
    });
  });
}

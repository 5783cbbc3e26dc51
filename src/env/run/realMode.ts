// `real` execution mode: which interpreter runs an episode's script and with which environment.
// - No interpreter chosen: the managed venv of the episode's snapshot (src/env/snapshots/venv.ts),
//   built on first use, with progress through `onProgress`.
// - An interpreter chosen by the user: that one, after a short (cached) import probe.
// Either way the script sees the local hub (localHub.ts) as its HF_HOME, fully offline, on CPU,
// single-threaded, with no experiment trackers, and never our stand-in libraries.
// Failures are RealModeError with a message meant for the user; nothing falls back silently.
import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { ensureHubItems, HubItemsError, type HubRefusal } from '../hub/ensure';
import type { ModelArchitectures } from '../hub/modelTable';
import type { HubNeeds } from '../hub/needs';
import { ensureLocalHub, LocalHubError } from '../hub/localHub';
import type { LibraryVersions } from '../schemas';
import { allSnapshots, getSnapshot, snapshotIds, type Snapshot } from '../snapshots/registry';
import { cacheRoot, ensureSnapshotVenv, SnapshotInstallError } from '../snapshots/venv';
import { snapshotIdOf } from '../snapshots/versions';
import { interpreterMemo, lastLine, queryInterpreter } from '../sandbox/interpreterQuery';

export type RealModeErrorKind = 'unknown_snapshot' | 'venv_failed' | 'missing_libraries' | 'interpreter' | 'hub_failed' | 'aborted';

export class RealModeError extends Error {
  override readonly name = 'RealModeError';
  constructor(
    message: string,
    readonly kind: RealModeErrorKind,
  ) {
    super(message);
  }
}

const SIMULATED_HINT = 'Simulated mode (`--mode simulated`, setting forgeenv.executionMode) runs without it.';

/** The libraries a corpus script imports; the probe checks these in a user's interpreter. */
export const REQUIRED_MODULES = ['torch', 'transformers', 'datasets', 'evaluate', 'tokenizers', 'huggingface_hub'] as const;
/** Needed only by some tasks (TRL/PEFT tasks, image tasks): reported, not required. */
export const OPTIONAL_MODULES = ['trl', 'peft', 'accelerate', 'PIL'] as const;

/**
 * The snapshot an episode's versions belong to: the one with the same transformers release and the
 * most other versions equal (so `{transformers, datasets, trl}` records from older code still map).
 */
export function snapshotIdForVersions(versions: LibraryVersions): string {
  // A whole set of pins names its snapshot, or the derived environment (a snapshot with overrides) it is.
  const whole = snapshotIdOf(versions);
  if (whole) return whole;
  const tf = versions.transformers;
  const known = snapshotIds().join(', ');
  if (!tf)
    throw new RealModeError(
      `The episode's library versions name no transformers release, so no snapshot can be chosen; known snapshots: ${known}`,
      'unknown_snapshot',
    );
  // Exact transformers release first; else the same minor series, so that records made before the pins
  // were computed from cut-off dates (2025-03 had transformers 4.50.0, now 4.50.3) still find their snapshot.
  const series = (v: string | undefined): string => (v ?? '').split('.').slice(0, 2).join('.');
  const exact = allSnapshots().some((s) => s.versions.transformers === tf);
  let best: { s: Snapshot; score: number } | undefined;
  for (const s of allSnapshots()) {
    if (exact ? s.versions.transformers !== tf : series(s.versions.transformers) !== series(tf)) continue;
    const score = Object.entries(versions).filter(([k, v]) => s.versions[k] === v).length;
    if (!best || score > best.score) best = { s, score };
  }
  if (!best) {
    const wanted = Object.entries(versions)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    throw new RealModeError(
      `No library snapshot holds transformers ${tf} (the episode asks for ${wanted}); known snapshots: ${snapshotIds()
        .map((id) => `${id} (transformers ${getSnapshot(id).versions.transformers})`)
        .join(', ')}`,
      'unknown_snapshot',
    );
  }
  return best.s.id;
}

/** The child environment of a real-mode run (added to the executor's `extraEnv`). */
export function realModeEnv(hubDir: string): Record<string, string> {
  return {
    HF_HOME: hubDir,
    HF_HUB_OFFLINE: '1',
    HF_DATASETS_OFFLINE: '1',
    TRANSFORMERS_OFFLINE: '1',
    HF_EVALUATE_OFFLINE: '1',
    HF_HUB_DISABLE_TELEMETRY: '1',
    HF_HUB_DISABLE_PROGRESS_BARS: '1',
    HF_DATASETS_DISABLE_PROGRESS_BARS: '1',
    // Small datasets load into memory, so `map` never writes cache files into the shared hub.
    HF_DATASETS_IN_MEMORY_MAX_SIZE: '1000000000',
    // Metric scratch files go into the run directory (removed with it), not the shared hub.
    HF_METRICS_CACHE: './.hf-metrics',
    TQDM_DISABLE: '1',
    TOKENIZERS_PARALLELISM: 'false',
    RAYON_NUM_THREADS: '1',
    OMP_NUM_THREADS: '1',
    MKL_NUM_THREADS: '1',
    OPENBLAS_NUM_THREADS: '1',
    CUDA_VISIBLE_DEVICES: '',
    WANDB_DISABLED: 'true',
    WANDB_MODE: 'disabled',
    DISABLE_MLFLOW_INTEGRATION: 'TRUE',
    HF_HUB_DISABLE_IMPLICIT_TOKEN: '1',
  };
}

/** The shared bytecode cache of real mode (the executor's `bytecodeCache`; the hub build fills it too). */
export const realModeBytecodeCache = (): string => join(cacheRoot(), 'pycache');

export interface RealRunSetup {
  interpreter: string;
  /** Pass as the executor's `extraEnv`. */
  env: Record<string, string>;
  /** Pass as the executor's `bytecodeCache`: compiled libraries are kept between runs instead of recompiling torch each time. */
  bytecodeCache: string;
  /** Pass as the executor's `privateCopies`: each sandboxed run gets its own copy of the local hub (~2.5 MB; `datasets` writes lock files into it). */
  privateCopies: string[];
  snapshot: string;
  hubDir: string;
  source: 'snapshot-venv' | 'user';
  /** Hub items the task needs that could not be provided (derived needs only; explicit ones throw). */
  hubRefusals: HubRefusal[];
}

/** The task's hub needs beyond the base hub (src/env/hub/). */
export interface RunHubNeeds {
  needs: HubNeeds;
  /** The task's files (a user's `<model>/config.json`). */
  files?: Readonly<Record<string, string>>;
  modelArchitectures?: ModelArchitectures;
  /** Explicit needs (the task's `hub`): a refused item is an error, not a note. */
  strict?: boolean;
}

export interface PrepareOptions {
  libraryVersions: LibraryVersions;
  /** A snapshot id, instead of deriving it from the versions. */
  snapshot?: string;
  /** The user's interpreter; undefined = the snapshot's managed venv. */
  interpreter?: string;
  /** Models and datasets the task needs beyond the base hub: the run's HF_HOME then holds them too. */
  hub?: RunHubNeeds;
  onProgress?: (msg: string) => void;
  signal?: AbortSignal;
}

const reportedRefusals = new Set<string>();

/** Resolves interpreter + environment for a real-mode run, building the venv and the hub when needed. */
export async function prepareRealRun(opts: PrepareOptions): Promise<RealRunSetup> {
  let snapshot: string;
  if (opts.snapshot !== undefined) {
    try {
      snapshot = getSnapshot(opts.snapshot).id;
    } catch (e) {
      const why = opts.snapshot.includes('+') ? ` (${(e as Error).message})` : '';
      throw new RealModeError(
        `Unknown snapshot "${opts.snapshot}"${why}; known snapshots: ${snapshotIds().join(', ')}`,
        'unknown_snapshot',
      );
    }
  } else {
    snapshot = snapshotIdForVersions(opts.libraryVersions);
  }
  const progress = opts.onProgress;
  let interpreter: string;
  let hubKey: string;
  let source: RealRunSetup['source'];
  if (opts.interpreter === undefined) {
    source = 'snapshot-venv';
    hubKey = snapshot;
    try {
      interpreter = await ensureSnapshotVenv(snapshot, { onProgress: progress, signal: opts.signal });
    } catch (e) {
      if (opts.signal?.aborted) throw new RealModeError(`Preparing snapshot ${snapshot} was cancelled.`, 'aborted');
      throw venvError(snapshot, e);
    }
  } else {
    source = 'user';
    interpreter = opts.interpreter;
    const probe = await probeLibraries(interpreter);
    if (!probe.ok) throw new RealModeError(probe.error, 'interpreter');
    if (probe.missing.length) {
      const pins = getSnapshot(snapshot).versions;
      const reqs = probe.missing.map((m) => (pins[m] ? `${m.replace(/_/g, '-')}==${pins[m]}` : m));
      throw new RealModeError(
        `${interpreter} cannot import ${probe.missing.join(', ')}, which real mode needs. Install them (snapshot ${snapshot} pins: ${interpreter} -m pip install ${reqs.join(' ')}), or leave the interpreter unset so ForgeEnv uses its managed environment for snapshot ${snapshot}. ${SIMULATED_HINT}`,
        'missing_libraries',
      );
    }
    hubKey = `user-${createHash('sha256').update(resolved(interpreter)).digest('hex').slice(0, 12)}`;
  }
  let hubDir: string;
  try {
    hubDir = await ensureLocalHub(hubKey, interpreter, { onProgress: progress, signal: opts.signal });
  } catch (e) {
    if (opts.signal?.aborted) throw new RealModeError(`Building the local hub for ${snapshot} was cancelled.`, 'aborted');
    const detail = e instanceof LocalHubError ? e.message : String(e);
    throw new RealModeError(
      `ForgeEnv could not build the local hub (offline models and datasets) for snapshot ${snapshot}: ${detail}\n${SIMULATED_HINT}`,
      'hub_failed',
    );
  }
  let hubRefusals: HubRefusal[] = [];
  if (
    opts.hub &&
    (opts.hub.needs.models.length ||
      opts.hub.needs.datasets.some((d) => !d.format || d.format === 'disk' || d.format === 'parquet') ||
      opts.hub.needs.metrics?.length ||
      opts.hub.needs.files?.length)
  ) {
    try {
      const r = await ensureHubItems({
        hubKey,
        python: interpreter,
        baseHubDir: hubDir,
        needs: opts.hub.needs,
        files: opts.hub.files,
        modelArchitectures: opts.hub.modelArchitectures,
        strict: opts.hub.strict,
        onProgress: progress,
        signal: opts.signal,
      });
      hubDir = r.hubDir;
      hubRefusals = r.refusals;
      for (const x of r.refusals) {
        // Said once per process: every run of a task meets the same (cached) refusal.
        const key = `${hubKey}\0${x.kind}\0${x.id}\0${x.reason}`;
        if (reportedRefusals.has(key)) continue;
        reportedRefusals.add(key);
        progress?.(`${snapshot}: cannot provide ${x.kind} ${x.id}: ${x.reason}`);
      }
    } catch (e) {
      if (opts.signal?.aborted) throw new RealModeError(`Building the hub items for ${snapshot} was cancelled.`, 'aborted');
      const detail = e instanceof HubItemsError ? e.message : String(e);
      throw new RealModeError(
        `ForgeEnv could not provide the task's models and datasets for snapshot ${snapshot}: ${detail}\n${SIMULATED_HINT}`,
        'hub_failed',
      );
    }
  }
  return {
    interpreter,
    env: realModeEnv(hubDir),
    bytecodeCache: realModeBytecodeCache(),
    privateCopies: [hubDir],
    snapshot,
    hubDir,
    source,
    hubRefusals,
  };
}

function venvError(snapshot: string, e: unknown): RealModeError {
  if (e instanceof SnapshotInstallError) {
    const what = e.requirement ? `installing ${e.requirement} failed` : 'the installer failed';
    return new RealModeError(
      `ForgeEnv could not build the Python environment of snapshot ${snapshot}: ${what}.\n${e.message}\n${SIMULATED_HINT}`,
      'venv_failed',
    );
  }
  return new RealModeError(
    `ForgeEnv could not build the Python environment of snapshot ${snapshot}: ${(e as Error)?.message ?? String(e)}\n${SIMULATED_HINT}`,
    'venv_failed',
  );
}

function resolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

const ProbeSchema = z.object({ python: z.string(), versions: z.record(z.string(), z.string().nullable()) });
export type LibraryProbe =
  { ok: true; missing: string[]; versions: Record<string, string | null>; python: string } | { ok: false; error: string };

const probes = interpreterMemo(runProbe);

/**
 * Which of the real libraries `interpreter` can import, with their versions (one short
 * `python -c`, cached per interpreter file and modification time).
 */
export const probeLibraries = (interpreter: string): Promise<LibraryProbe> => probes.get(interpreter);

/** Forgets probe results (after the user installs packages). */
export function clearLibraryProbeCache(): void {
  probes.clear();
}

async function runProbe(interpreter: string): Promise<LibraryProbe> {
  const mods = [...REQUIRED_MODULES, ...OPTIONAL_MODULES];
  const code = [
    'import importlib.util, importlib.metadata as m, json, sys',
    'dist = {"PIL": "pillow"}',
    'out = {}',
    'for n in sys.argv[1:]:',
    '    if importlib.util.find_spec(n) is None: out[n] = None; continue',
    '    try: out[n] = m.version(dist.get(n, n))',
    '    except Exception: out[n] = "?"',
    'print(json.dumps({"python": "%d.%d.%d" % sys.version_info[:3], "versions": out}))',
  ].join('\n');
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PYTHONPATH;
  const a = await queryInterpreter(interpreter, ['-c', code, ...mods], env);
  if (!a.ok) {
    return {
      ok: false,
      error:
        a.code === 'ENOENT'
          ? `${interpreter} not found: set forgeenv.pythonPath (or --python), or leave it unset to use the managed environment`
          : `${interpreter} could not be started: ${a.error}`,
    };
  }
  try {
    const parsed = ProbeSchema.parse(JSON.parse(lastLine(a.stdout)));
    const missing = REQUIRED_MODULES.filter((m) => parsed.versions[m] == null);
    return { ok: true, missing, versions: parsed.versions, python: parsed.python };
  } catch {
    return {
      ok: false,
      error: `${interpreter} is not a working Python (exit ${a.exitCode}): ${(a.stderr || a.stdout).trim().slice(0, 300)}`,
    };
  }
}

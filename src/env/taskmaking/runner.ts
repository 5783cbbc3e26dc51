// One run of a candidate task's script, as episodes run it: through executeScript (sandbox, argv),
// real mode in the snapshot's managed venv with the offline hub, or simulated mode.
import { executeScript } from '../run/executor';
import { missingDataFiles } from '../hub/dataFiles';
import { diskDatasetLinks } from '../hub/diskDatasets';
import type { HubNeeds } from '../hub/needs';
import type { ModelArchitectures } from '../hub/modelTable';
import { prepareRealRun } from '../run/realMode';
import type { HubRunState } from './hubSupply';
import type { ExecutionMode, ExecutionResult } from '../schemas';
import type { TaskRuntime } from '../run/runtimeShims';
import { getSnapshot } from '../snapshots/registry';
import { timed, type PhaseSink } from '../phaseTimes';

export interface CandidateRun {
  script: string;
  args: string[];
  files: Record<string, string>;
  env: Record<string, string>;
  /** Hub items beyond what the script and args name (ids a run's error named). */
  hub?: HubNeeds;
  /** Runtime shims (CPU adaptations of GPU-only code, runtimeShims.ts). */
  runtime?: TaskRuntime;
  /** Absolute folders the script writes to, writable folders of the run inside the sandbox (a task's `mounts`). */
  mounts?: string[];
}

export interface RunnerOptions {
  mode: ExecutionMode;
  snapshot: string;
  timeoutMs: number;
  /** An interpreter of the user's instead of the managed venv (real mode). */
  interpreter?: string;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /**
   * Real mode: provide the models and datasets each run needs (derived from the script with its
   * args as they are now, src/env/hub) and synthesize the local data files it reads; `onHub` hears
   * what was asked and what the hub refused. Off: the base hub only.
   */
  hubNeeds?: (run: CandidateRun) => HubNeeds;
  modelArchitectures?: ModelArchitectures;
  onHub?: (state: HubRunState) => void;
  /** Each run's phases as they end: its hub items (real mode), then the run (`help run`, `adapt run N`). */
  onPhase?: PhaseSink;
  /** Through the warm runtime (executor.ts `warm`): a zygote of the run's shape started ahead, when one is ready. */
  warm?: boolean;
  /** Keep each run's folder (its `run_dir`, then the caller's to remove): the last clean run can be the verification's reference. */
  keepRunDir?: boolean;
}

/** A run's result; `run_dir` is set (and the caller's to remove) when the runner keeps run folders. */
export type CandidateResult = ExecutionResult & { run_dir?: string };

export type RunFn = (run: CandidateRun) => Promise<CandidateResult>;

/** A runner bound to a mode and snapshot. */
export function makeRunner(opts: RunnerOptions): RunFn {
  const versions = { ...getSnapshot(opts.snapshot).versions };
  let runs = 0;
  return async (run) => {
    const label = run.args[0] === '--help' ? 'help run' : `adapt run ${++runs}`;
    const needs = opts.mode === 'real' && opts.hubNeeds ? opts.hubNeeds(run) : undefined;
    const hub = needs ? { needs, files: run.files, modelArchitectures: opts.modelArchitectures, strict: false } : undefined;
    const real =
      opts.mode === 'real'
        ? await timed(opts.onPhase, `hub items (${label})`, () =>
            prepareRealRun({
              libraryVersions: versions,
              snapshot: opts.snapshot,
              interpreter: opts.interpreter,
              hub,
              onProgress: opts.onProgress,
              signal: opts.signal,
            }),
          )
        : undefined;
    if (needs) opts.onHub?.({ needs, refusals: real?.hubRefusals ?? [] });
    // Local data files the args point to and the task does not ship (`--train_file train.jsonl`), as episodes get them.
    const files = needs ? { ...dataFilesOrNone(needs), ...run.files } : run.files;
    const t = performance.now();
    const r = await executeScript({
      script: run.script,
      mode: opts.mode,
      interpreter: real?.interpreter ?? opts.interpreter,
      libraryVersions: versions,
      ...(real ? { bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies } : {}),
      extraEnv: { ...run.env, ...(real?.env ?? {}) },
      timeoutMs: opts.timeoutMs,
      signal: opts.signal,
      validate: false,
      args: run.args,
      files,
      // Saved datasets the script reads with load_from_disk: links into the run's hub.
      ...(needs && real ? { links: diskDatasetLinks(needs.datasets, real.hubDir) } : {}),
      ...(run.runtime ? { shims: run.runtime.shims } : {}),
      ...(run.mounts?.length ? { mounts: run.mounts } : {}),
      ...(opts.keepRunDir ? { keepRunDir: true } : {}),
      ...(opts.warm ? { warm: true } : {}),
    });
    opts.onPhase?.({ phase: label, ms: Math.round(performance.now() - t), ...(r.runtime ? { runtime: r.runtime } : {}) });
    return r;
  };
}

function dataFilesOrNone(needs: HubNeeds): Record<string, string> {
  try {
    return missingDataFiles(needs.datasets, {});
  } catch {
    return {}; // a data file ForgeEnv cannot write: the run's error says which
  }
}

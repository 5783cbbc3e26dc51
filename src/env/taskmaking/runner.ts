// One run of a candidate task's script, as episodes run it: through executeScript (sandbox, argv),
// real mode in the snapshot's managed venv with the offline hub, or simulated mode.
import { executeScript } from '../executor';
import { prepareRealRun } from '../realMode';
import type { ExecutionMode, ExecutionResult } from '../schemas';
import { getSnapshot } from '../snapshots/registry';

export interface CandidateRun {
  script: string;
  args: string[];
  files: Record<string, string>;
  env: Record<string, string>;
}

export interface RunnerOptions {
  mode: ExecutionMode;
  snapshot: string;
  timeoutMs: number;
  /** An interpreter of the user's instead of the managed venv (real mode). */
  interpreter?: string;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
}

export type RunFn = (run: CandidateRun) => Promise<ExecutionResult>;

/** A runner bound to a mode and snapshot. */
export function makeRunner(opts: RunnerOptions): RunFn {
  const versions = { ...getSnapshot(opts.snapshot).versions };
  return async (run) => {
    const real = opts.mode === 'real' ? await prepareRealRun({ libraryVersions: versions, snapshot: opts.snapshot, interpreter: opts.interpreter, onProgress: opts.onProgress, signal: opts.signal }) : undefined;
    return executeScript({
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
      files: run.files,
    });
  };
}

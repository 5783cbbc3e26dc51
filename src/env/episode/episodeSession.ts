// The one seam between the editor's episode code and where the environment runs. The editor
// starts, scores, submits and resumes episodes through an EpisodeSession; EmbeddedEpisodeSession
// runs the environment in-process, RemoteEpisodeSession (remoteEpisodeSession.ts) on a
// `forgeenv serve` over its WebSocket session. Both answer exactly alike, so the demonstration
// records they lead to are the same.
import type { ForgeEnvironment } from './environment';
import type { EpisodeState, RepairEvaluation, StepOptions } from './episodeTypes';
import type { ExecutionMode, Observation, ResetOptions, Task } from '../schemas';

export interface EpisodeSession {
  readonly kind: 'embedded' | 'remote';
  /** A copy of the episode as of the last answer; undefined before reset. */
  readonly state: EpisodeState | undefined;
  /** The current episode's task. */
  readonly task: Task | undefined;
  /** How the environment runs scripts, as it reports it (after reset or restore). */
  readonly runsOn: { mode: ExecutionMode; interpreter: string } | undefined;
  reset(options?: ResetOptions): Promise<Observation>;
  /** Never throws on bad input (an observation carries `info.error`); transport and server failures throw. */
  step(action: unknown, options?: StepOptions): Promise<Observation>;
  /** Scores a repair without ending the episode; `options.signal` cancels the run (its result says so). */
  evaluateRepair(unifiedDiff: string, options?: StepOptions): Promise<RepairEvaluation>;
  /** Resumes a saved episode (remote: re-created on the server before the next request needs it). */
  restore(state: EpisodeState): Promise<void>;
  /** Ends this session's runs; the episode itself stays resumable from its saved state. */
  dispose(): Promise<void>;
  /** Set once runs fall back to weaker isolation than asked for (embedded only; a server reports its own). */
  readonly sandboxWarning?: string | undefined;
  /**
   * Starts warm zygotes shaped like the open episode's runs (embedded only: a server keeps its own
   * pool). Resolves with the pool's key and label, or why not.
   */
  prewarm?(onProgress?: (message: string) => void): Promise<{ key: string; label: string } | { error: string }>;
  /**
   * Computes the band the first Run & Score is judged against (the unbroken original's own
   * verification, cached per process) ahead of it (embedded only); resolves with why it failed, if it did.
   */
  prepareReference?(): Promise<string | undefined>;
}

export class EmbeddedEpisodeSession implements EpisodeSession {
  readonly kind = 'embedded' as const;

  constructor(readonly env: ForgeEnvironment) {}

  get state(): EpisodeState | undefined {
    return this.env.state;
  }

  get task(): Task | undefined {
    return this.env.task;
  }

  get sandboxWarning(): string | undefined {
    return this.env.sandboxWarning;
  }

  get runsOn(): { mode: ExecutionMode; interpreter: string } | undefined {
    const { mode, interpreter } = this.env.config;
    return interpreter ? { mode, interpreter } : undefined;
  }

  reset(options?: ResetOptions): Promise<Observation> {
    return this.env.reset(options);
  }

  step(action: unknown, options?: StepOptions): Promise<Observation> {
    return this.env.step(action, options);
  }

  evaluateRepair(unifiedDiff: string, options?: StepOptions): Promise<RepairEvaluation> {
    return this.env.evaluateRepair(unifiedDiff, options);
  }

  async restore(state: EpisodeState): Promise<void> {
    this.env.restore(state);
  }

  dispose(): Promise<void> {
    return this.env.dispose();
  }

  prewarm(onProgress?: (message: string) => void): Promise<{ key: string; label: string } | { error: string }> {
    return this.env.prewarm(undefined, onProgress);
  }

  async prepareReference(): Promise<string | undefined> {
    const outcome = await this.env.referenceVerification();
    return outcome.ok ? undefined : outcome.reason;
  }
}

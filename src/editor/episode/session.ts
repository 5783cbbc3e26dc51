// The human repair loop, one episode at a time: start, run & score the edited script, submit or
// skip, resume after a reload. A revision (revisionStart.ts) is the same loop in another mode: its
// Submit supersedes a record, and it is discarded, not skipped. No vscode import: it talks to the
// editor through EpisodeEditor and to the rest through SessionServices (unit tests: plain objects).
import { createRepairDiff } from '../../env/diff/diff';
import type { RepairEvaluation } from '../../env/episode/episodeTypes';
import { isCancelledRemoteError } from '../../env/openenv/remoteEpisodeSession';
import { refusal, type CommandResult, type Refusal, type SkipArgs, type StartArgs, type SubmitArgs } from '../commandArgs';
import type { Action, EpisodeEditor } from './editorPort';
import type { OpenedEpisode } from './episodeStart';
import type { EpisodeSession as EnvSession } from '../../env/episode/episodeSession';
import type { PersistedEpisode } from './episodeRecord';
import { EPISODE_STATE_KEY, LiveEpisode } from './liveEpisode';
import type { PendingWrite } from './pendingWrites';
import { formatRunOutput } from './runOutput';
import { showRun, storeRunOutput } from './runViews';
import type { ScoreState } from './scoreModel';
import type { SessionServices } from './services';
import type { ScoreResult, StartResult, StoredResult } from './results';
import { resumeEpisode, type RestoreResult } from './resume';
import { retryIfBusy } from './retry';
import { startEpisode } from './starting';
import { skipEpisode, submitEpisode, type SkippedResult, type SubmittedResult } from './endings';
import { infoText } from '../../env/schemas';
import { prewarmEpisode } from './warmStart';

export class RepairSession {
  private live: LiveEpisode | undefined;
  /** An episode (or a revision) is being opened: one at a time. */
  starting = false;
  private restoring: Promise<RestoreResult> | undefined;

  constructor(
    readonly editor: EpisodeEditor,
    readonly services: SessionServices,
  ) {}

  /** The open episode, if any. */
  get current(): LiveEpisode | undefined {
    return this.live;
  }

  start(args?: StartArgs): Promise<CommandResult<StartResult>> {
    return startEpisode(this, args);
  }

  /**
   * Makes what `open` opens (an episode, or a revision: see revisionStart.ts) the live episode, then
   * `opened` shows it; one at a time, the views saying "starting" meanwhile.
   */
  async opening<T extends object>(
    open: () => Promise<OpenedEpisode | Refusal>,
    opened: (live: LiveEpisode, o: OpenedEpisode) => Promise<CommandResult<T>>,
  ): Promise<CommandResult<T>> {
    if (this.starting) return refusal('busy', 'An episode is already being started.');
    this.starting = true;
    this.editor.render('starting');
    try {
      await this.editor.episodeStarting();
      const o = await open();
      if ('ok' in o) return o;
      await this.services.state.update(EPISODE_STATE_KEY, o.persisted);
      return await opened(this.attach(o.env, o.persisted), o);
    } finally {
      this.starting = false;
      if (!this.live) this.editor.render(undefined);
    }
  }

  async runAndScore(): Promise<CommandResult<ScoreResult>> {
    const t0 = Date.now();
    const live = this.live;
    if (!live) return this.noEpisode();
    if (live.running) return refusal('busy', 'A run is already in progress.');
    const text = await this.editor.readScript(live.file);
    const diff = createRepairDiff(live.state.start.brokenScript, text);
    const cached = live.state.lastScoredText === text && live.state.lastEvaluation !== null;
    const n = live.state.runs + 1;
    live.running = true;
    live.tracker.activity();
    this.render('running', true);
    let evaluation: RepairEvaluation;
    try {
      const out = this.editor.runOutput(`run ${n} of train.py (${live.state.start.task.task_id}, ${live.state.mode})`);
      const result = await this.editor
        .withProgress(`ForgeEnv: running train.py (run ${n})…`, (signal) =>
          live.env.evaluateRepair(diff, { signal, onOutput: out.write }).finally(out.flush),
        )
        .then(
          (v) => ({ ok: true as const, v }),
          (e: unknown) => ({ ok: false as const, e }),
        );
      const cancelled = result.ok
        ? !!result.v.execution?.killed && /\bcancelled\b/.test(result.v.execution.stderr)
        : isCancelledRemoteError(result.e);
      if (!result.ok && !cancelled)
        return this.fail(
          `ForgeEnv could not score the repair: ${(result.e as Error)?.message ?? String(result.e)}`,
          result.e,
          ...retryIfBusy(this.services, result.e, 'forgeenv.runAndScore'),
        );
      if (!result.ok || cancelled) {
        // A cancelled run is not a score (no environment keeps one in its cache of scored diffs).
        live.timeline.record({ kind: 'run', n, cancelled: true });
        return refusal('cancelled', 'Run cancelled.');
      }
      evaluation = result.v;
      this.services.sandboxWarning(live.env.sandboxWarning);
    } finally {
      live.running = false;
      this.render(live.state.lastEvaluation ? 'scored' : 'idle', false);
    }
    const exit_code = evaluation.execution?.exit_code ?? null;
    live.timeline.record({
      kind: 'run',
      n,
      reward: evaluation.reward,
      exit_code,
      success: evaluation.success,
      diff_lines: diff.split('\n').length,
    });
    const summary = {
      n,
      at: new Date().toISOString(),
      reward: evaluation.reward,
      exit_code,
      success: evaluation.success,
      wall_time_ms: evaluation.execution?.wall_time_ms ?? 0,
    };
    await live.update({
      runs: n,
      runHistory: [...live.state.runHistory, summary].slice(-50),
      lastEvaluation: evaluation,
      lastScoredText: text,
      ...live.verifiedFixAfter(n, evaluation.success),
    });
    const diagnostics = showRun(this.editor, live, n).length;
    this.render('scored', true);
    const scoreMs = Date.now() - t0;
    this.services.log.info(
      `run ${n}: reward ${evaluation.reward.toFixed(2)}, success ${evaluation.success}, ${scoreMs} ms${cached ? ' (cached score)' : ''}`,
    );
    const { reward, reward_breakdown, held_out_breakdown, findings, success } = evaluation;
    return {
      ok: true,
      run: n,
      reward,
      reward_breakdown,
      held_out_breakdown,
      findings,
      success,
      exitCode: exit_code,
      diagnostics,
      scoreMs,
      cached,
      runtime: evaluation.execution?.runtime,
    };
  }

  submit(args: SubmitArgs = {}): Promise<CommandResult<SubmittedResult>> {
    return submitEpisode(this, args);
  }

  skip(args?: SkipArgs): Promise<CommandResult<SkippedResult>> {
    return skipEpisode(this, args);
  }

  /** Queues the record (persisted first: nothing is lost), ends the episode, then writes it. */
  async finish(live: LiveEpisode, kind: PendingWrite['kind'], record: unknown, state: ScoreState): Promise<StoredResult> {
    const s = this.services;
    const timeline = await live.allTimelineEvents();
    // A revision goes to its record's dataset, under its record's episode id.
    const datasetDir = live.state.revision?.datasetDir ?? s.datasetDir();
    const episodeId = live.state.revision?.previous.info.episode_id ?? live.episodeId;
    const pending = await s.pending.enqueue({ kind, datasetDir, episodeId, taskId: live.state.start.task.task_id, record, timeline });
    this.render(state, false);
    await this.end(live);
    const outcome = await s.pending.attempt(pending.id);
    s.queue.refresh();
    if (outcome.ok) return { episodeId: live.episodeId, stored: true, datasetDir: outcome.datasetDir };
    s.reportWriteFailure(outcome);
    return { episodeId: live.episodeId, stored: false, datasetDir, pendingId: pending.id, error: outcome.error };
  }

  /** Ends `live` (submitted, skipped, or a revision discarded): its editors closed, its state forgotten. */
  async end(live: LiveEpisode, opts: { discard?: boolean } = {}): Promise<void> {
    // Detached first: closing the script moves focus, and a re-render of a still-live episode would
    // replace the score view's final (submitted/skipped) state with a live one, buttons enabled.
    this.live = undefined;
    // Keep the final text in the episode folder, then close its editors without a save prompt.
    await this.editor.closeEpisodeEditors(live.episodeId, live.file, opts);
    await live.dispose();
    await this.services.state.update(EPISODE_STATE_KEY, undefined);
    this.editor.clearProblems(live.file);
    this.editor.forgetEpisode(live.episodeId);
    this.editor.render(undefined);
    this.services.queue.refresh();
  }

  /** Makes `persisted` the live episode: its documents, listeners and views. */
  attach(env: EnvSession, persisted: PersistedEpisode): LiveEpisode {
    const s = this.services;
    const live = new LiveEpisode({
      env,
      persisted,
      state: s.state,
      editor: this.editor,
      idleMs: s.settings().idleThresholdSeconds * 1000,
      warn: (m) => s.log.warn(m),
      onTick: () => this.render(),
    });
    this.live = live;
    // The warm pool for this episode's runs, in the background (its lines go to the output channel).
    live.warmReady = prewarmEpisode(env, s.settings().warmRuntime, s.log);
    this.editor.setBrokenScript(live.episodeId, persisted.start.brokenScript);
    const b = persisted.start.brokenExecution;
    const run = { mode: persisted.mode, interpreter: persisted.interpreter };
    this.editor.setRunOutput(
      live.episodeId,
      'start',
      formatRunOutput({
        title: `broken train.py of ${persisted.start.task.task_id} (before your repair)`,
        exitCode: b.exit_code,
        wallTimeMs: b.wall_time_ms,
        ...run,
        stdout: b.stdout,
        stderr: b.stderr,
      }),
    );
    if (persisted.lastEvaluation) storeRunOutput(this.editor, live, persisted.lastEvaluation, persisted.runs);
    this.render(persisted.lastEvaluation ? 'scored' : 'idle', false);
    this.services.queue.refresh();
    return live;
  }

  /** Re-renders the views; without `score` or `reveal` (the tick) the score view is left as it is. */
  render(score?: ScoreState, reveal = false): void {
    const live = this.live;
    if (!live) return this.editor.render(undefined);
    const state = score ?? (reveal ? (live.running ? 'running' : live.state.lastEvaluation ? 'scored' : 'idle') : undefined);
    this.editor.render({
      state: live.state,
      running: live.running,
      activeMs: live.tracker.activeMs,
      counting: live.tracker.isCounting,
      score: state,
      revealScore: reveal,
    });
  }

  /** Resumes the episode left open by an earlier window, once (later calls get the same answer). */
  restore(): Promise<RestoreResult> {
    this.restoring ??= resumeEpisode(this);
    return this.restoring;
  }

  /** Ends the window's use of the episode without ending the episode (it stays resumable). */
  async suspend(): Promise<void> {
    const live = this.live;
    this.live = undefined;
    if (!live) return;
    await live.dispose();
    this.editor.clearProblems(live.file);
    this.editor.render(undefined);
  }

  readonly fail = (message: string, detail?: unknown, ...actions: Action[]): Refusal => {
    if (detail !== undefined)
      this.services.log.error(`${message} ${detail instanceof Error ? (detail.stack ?? detail.message) : infoText(detail)}`);
    this.editor.error(message, ...actions);
    return refusal('error', message);
  };

  /** Cancelling a picker is said, never silent: a message and the log say why nothing started. */
  cancelled(message: string): Refusal {
    this.services.log.info(message);
    this.editor.info(message);
    return refusal('cancelled', message);
  }

  noEpisode(): Refusal {
    const msg = 'No ForgeEnv episode is open.';
    this.editor.info(`${msg} Start one?`, { title: 'Start Episode', run: () => this.services.command('forgeenv.startEpisode') });
    return refusal('no_episode', msg);
  }
}

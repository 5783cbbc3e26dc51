// One open episode: its environment, its train.py, and the bookkeeping that follows the
// annotator (active time, edit timeline, runs). It owns its listener and timer and persists
// itself to the workspace state on every change, so a reload resumes it. No vscode import: the
// editor reports typing and focus through `EpisodeEditor.watchScript`.
import { dirname, join } from 'node:path';
import type { EpisodeSession } from '../../env/episode/episodeSession';
import type { HumanEpisodeStart } from '../../env/episode/humanEpisode';
import type { TimelineEvent } from '../../store/records';
import type { KeyValueStore } from './pendingWrites';
import { ActiveTimeTracker } from './activeTime';
import type { EpisodeEditor, Disposable } from './editorPort';
import { PersistedEpisodeSchema, type PersistedEpisode } from './episodeRecord';
import { readTimelineFile, TimelineRecorder } from './timeline';
import { verifiedFixAfterRun } from '../suggest/suggestionRecord';

export const EPISODE_STATE_KEY = 'forgeenv.episode';

export interface LiveEpisodeOptions {
  env: EpisodeSession;
  persisted: PersistedEpisode;
  state: KeyValueStore;
  editor: EpisodeEditor;
  idleMs: number;
  warn: (message: string) => void;
  /** Called once a second while open, and when focus changes (for the status bar). */
  onTick: () => void;
}

export class LiveEpisode {
  readonly env: EpisodeSession;
  readonly tracker: ActiveTimeTracker;
  readonly timeline: TimelineRecorder;
  running = false;
  /** The warm pool for this episode's runs: true once a Run & Score's zygotes are ready (warmStart.ts). */
  warmReady: Promise<boolean> = Promise.resolve(false);
  private data: PersistedEpisode;
  private readonly watcher: Disposable;
  private readonly ticker: NodeJS.Timeout;
  private persistTimer: NodeJS.Timeout | undefined;
  private persisting: Promise<void> = Promise.resolve();
  private disposed = false;
  /** Events of this window's timeline, kept so Submit never reads the file back. */
  private readonly events: TimelineEvent[] = [];
  /** Events written by an earlier window (a resumed episode): read once, on the first Submit. */
  private readonly earlier: number;

  constructor(private readonly opts: LiveEpisodeOptions) {
    this.env = opts.env;
    this.data = opts.persisted;
    this.earlier = opts.persisted.timelineEvents;
    this.tracker = new ActiveTimeTracker({ idleMs: opts.idleMs, initialMs: opts.persisted.activeMs });
    this.timeline = new TimelineRecorder({
      file: timelineFileOf(opts.persisted.filePath),
      startedAtMs: Date.parse(opts.persisted.startedAt),
      written: opts.persisted.timelineEvents,
      onEvent: (e) => this.events.push(e),
      onError: (e) => opts.warn(`timeline: could not write events (kept in memory, retried): ${e.message}`),
    });
    this.watcher = opts.editor.watchScript(this.file, {
      onChange: (version, changes) => {
        this.tracker.activity();
        this.timeline.record({ kind: 'change', version, changes });
        this.persistSoon();
      },
      onSave: () => this.timeline.record({ kind: 'save' }),
      onFocus: (_inEditor, focused) => {
        const was = this.tracker.isCounting;
        this.tracker.setFocused(focused);
        if (was !== this.tracker.isCounting) this.timeline.record({ kind: focused ? 'focus' : 'blur' });
        opts.onTick();
      },
      onActivity: () => this.tracker.activity(),
    });
    this.ticker = setInterval(() => {
      opts.onTick();
      // Active time is persisted in passing, so a crash loses at most ~15 s of it.
      if (this.tracker.isCounting) this.persistSoon(15_000);
    }, 1000);
  }

  get state(): Readonly<PersistedEpisode> {
    return this.data;
  }

  get start(): HumanEpisodeStart {
    return this.data.start;
  }

  get episodeId(): string {
    return this.data.start.episodeId;
  }

  get file(): string {
    return this.data.filePath;
  }

  /** Applies a change to the persisted state and writes it out now. */
  async update(change: Partial<PersistedEpisode>): Promise<void> {
    this.data = { ...this.data, ...change };
    await this.persistNow();
  }

  /** The state change that marks run `run` as the first verified fix (time to a verified fix), or nothing. */
  verifiedFixAfter(run: number, success: boolean): Partial<PersistedEpisode> {
    const fix = verifiedFixAfterRun(this.data, run, success);
    return fix ? { verifiedFix: fix } : {};
  }

  /** The whole timeline: what an earlier window wrote (read once) and this window's events. */
  async allTimelineEvents(): Promise<TimelineEvent[]> {
    await this.timeline.flush();
    if (this.earlier === 0) return [...this.events];
    const { events } = await readTimelineFile(timelineFileOf(this.file));
    return [...events.slice(0, this.earlier), ...this.events];
  }

  persistSoon(delayMs = 1500): void {
    if (this.persistTimer || this.disposed) return;
    this.persistTimer = setTimeout(() => {
      this.persistTimer = undefined;
      void this.persistNow();
    }, delayMs);
  }

  persistNow(): Promise<void> {
    if (this.persistTimer) {
      clearTimeout(this.persistTimer);
      this.persistTimer = undefined;
    }
    this.persisting = this.persisting.then(async () => {
      if (this.disposed) return;
      await this.timeline.flush();
      this.data = {
        ...this.data,
        activeMs: Math.round(this.tracker.activeMs),
        timelineEvents: this.timeline.written,
        env: this.env.state ?? this.data.env,
      };
      const checked = PersistedEpisodeSchema.safeParse(this.data);
      if (!checked.success) {
        this.opts.warn(`episode state failed its own schema (not saved): ${checked.error.message}`);
        return;
      }
      await this.opts.state.update(EPISODE_STATE_KEY, this.data);
    });
    return this.persisting;
  }

  /** Stops listening and saves the state (the episode itself stays resumable). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    clearInterval(this.ticker);
    this.watcher.dispose();
    await this.persistNow();
    this.disposed = true;
    await this.env.dispose();
  }
}

/** The episode's local timeline, hidden beside its train.py. */
export function timelineFileOf(filePath: string): string {
  return join(dirname(filePath), '.timeline.jsonl');
}

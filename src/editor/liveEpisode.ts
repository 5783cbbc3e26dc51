// One open episode in the editor: its environment, its train.py, and the bookkeeping that
// follows the annotator (active time, edit timeline, runs). It owns every listener and timer it
// creates and persists itself to workspaceState on every change, so a reload resumes it.
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import type { EpisodeSession } from '../env/episodeSession';
import type { HumanEpisodeStart } from '../env/humanEpisode';
import { ActiveTimeTracker } from './activeTime';
import { PersistedEpisodeSchema, type PersistedEpisode } from './episodeRecord';
import { TimelineRecorder } from './timeline';

export const EPISODE_STATE_KEY = 'forgeenv.episode';

export interface LiveEpisodeOptions {
  env: EpisodeSession;
  persisted: PersistedEpisode;
  memento: vscode.Memento;
  idleMs: number;
  log: vscode.LogOutputChannel;
  /** Called (at most once a second) when the time or focus changed, for the status bar. */
  onTick: () => void;
  /** The active editor moved onto or off the episode file. */
  onFocusChange: (inEpisodeEditor: boolean) => void;
}

export class LiveEpisode implements vscode.Disposable {
  readonly env: EpisodeSession;
  readonly uri: vscode.Uri;
  readonly tracker: ActiveTimeTracker;
  readonly timeline: TimelineRecorder;
  running = false;
  private data: PersistedEpisode;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly ticker: NodeJS.Timeout;
  private persistTimer: NodeJS.Timeout | undefined;
  private persisting: Promise<void> = Promise.resolve();
  private disposed = false;
  private inEditor = false;

  constructor(private readonly opts: LiveEpisodeOptions) {
    this.env = opts.env;
    this.data = opts.persisted;
    this.uri = vscode.Uri.file(opts.persisted.filePath);
    this.tracker = new ActiveTimeTracker({ idleMs: opts.idleMs, initialMs: opts.persisted.activeMs });
    this.timeline = new TimelineRecorder({
      file: timelineFileOf(opts.persisted.filePath),
      startedAtMs: Date.parse(opts.persisted.startedAt),
      written: opts.persisted.timelineEvents,
      onError: (e) => opts.log.warn(`timeline: could not write events (kept in memory, retried): ${e.message}`),
    });
    this.listen();
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
    return this.data.start as HumanEpisodeStart;
  }

  get episodeId(): string {
    return this.data.start.episodeId;
  }

  get inEpisodeEditor(): boolean {
    return this.inEditor;
  }

  /** Applies a change to the persisted state and writes it out now. */
  async update(change: Partial<PersistedEpisode>): Promise<void> {
    this.data = { ...this.data, ...change };
    await this.persistNow();
  }

  /** The buffer if the file is open (unsaved edits included), else the file on disk. */
  async currentText(): Promise<string> {
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === this.uri.toString());
    if (open) return open.getText();
    return (await vscode.workspace.openTextDocument(this.uri)).getText();
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
      this.data = { ...this.data, activeMs: Math.round(this.tracker.activeMs), timelineEvents: this.timeline.written, env: this.env.state ?? this.data.env };
      const checked = PersistedEpisodeSchema.safeParse(this.data);
      if (!checked.success) {
        this.opts.log.error(`episode state failed its own schema (not saved): ${checked.error.message}`);
        return;
      }
      await this.opts.memento.update(EPISODE_STATE_KEY, this.data);
    });
    return this.persisting;
  }

  private listen(): void {
    const isMine = (doc: vscode.TextDocument | undefined) => !!doc && doc.uri.toString() === this.uri.toString();
    const refocus = () => {
      const inEditor = isMine(vscode.window.activeTextEditor?.document);
      const focused = vscode.window.state.focused && inEditor;
      const was = this.tracker.isCounting;
      this.tracker.setFocused(focused);
      if (inEditor !== this.inEditor) {
        this.inEditor = inEditor;
        this.opts.onFocusChange(inEditor);
      }
      if (was !== this.tracker.isCounting) this.timeline.record({ kind: focused ? 'focus' : 'blur' });
    };
    this.disposables.push(
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (!isMine(e.document) || e.contentChanges.length === 0) return;
        this.tracker.activity();
        this.timeline.record({
          kind: 'change',
          version: e.document.version,
          changes: e.contentChanges.map((c) => ({
            range: { start: { line: c.range.start.line, character: c.range.start.character }, end: { line: c.range.end.line, character: c.range.end.character } },
            text: c.text,
          })),
        });
        this.persistSoon();
      }),
      vscode.workspace.onDidSaveTextDocument((d) => {
        if (isMine(d)) this.timeline.record({ kind: 'save' });
      }),
      vscode.window.onDidChangeWindowState(refocus),
      vscode.window.onDidChangeActiveTextEditor(refocus),
      vscode.window.onDidChangeTextEditorSelection((e) => {
        if (isMine(e.textEditor.document)) this.tracker.activity();
      }),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => {
        if (isMine(e.textEditor.document)) this.tracker.activity();
      }),
    );
    refocus();
  }

  /** Stops listening and saves the state (the episode itself stays resumable). */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    clearInterval(this.ticker);
    for (const d of this.disposables.splice(0)) d.dispose();
    await this.persistNow();
    this.disposed = true;
    await this.env.dispose();
  }
}

/** The episode's local timeline, hidden beside its train.py. */
export function timelineFileOf(filePath: string): string {
  return join(dirname(filePath), '.timeline.jsonl');
}

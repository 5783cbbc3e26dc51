// The small editor interface the repair session talks to (cf. rust-analyzer's ctx): questions,
// messages, the script's editor, and what the user sees. `vscodeEditor.ts` implements it with VS
// Code; unit tests implement it with plain objects. No vscode import, so session.ts has none either.
import type { Task } from '../../env/schemas';
import type { SkipArgs } from '../commandArgs';
import type { DiagnosticSpec } from './diagnosticsModel';
import type { PersistedEpisode } from './episodeRecord';
import type { PrimitiveChoice } from '../commandArgs';
import type { ScoreState } from './scoreModel';

export interface Action {
  title: string;
  run: () => unknown;
}

export interface Disposable {
  dispose(): unknown;
}

/** What the user does in the episode's script editor (typing, saving, focus). */
export interface EditorActivity {
  onChange(
    version: number,
    changes: Array<{ range: { start: { line: number; character: number }; end: { line: number; character: number } }; text: string }>,
  ): void;
  onSave(): void;
  /** The active editor moved onto or off the script, or the window gained or lost focus. */
  onFocus(inEditor: boolean, windowFocused: boolean): void;
  /** Cursor moves and scrolling: the annotator is there. */
  onActivity(): void;
}

/** One open episode as the views show it. */
export interface EpisodeView {
  state: Readonly<PersistedEpisode>;
  running: boolean;
  activeMs: number;
  counting: boolean;
  /** Absent on the once-a-second tick: the status bar moves on, the score view keeps what it shows. */
  score?: ScoreState;
  /** Open the score view if it is closed (after a run or on request). */
  revealScore: boolean;
}

/** Which run a run-output document belongs to: the broken script's first run, or run N. */
export type RunKey = number | 'start';

export interface EpisodeEditor {
  // Questions; `undefined` means the user cancelled.
  chooseTask(): Promise<string | 'next' | undefined>;
  /** A primitive, `null` to let the Teacher choose. */
  chooseBreakage(task: Task): Promise<PrimitiveChoice | null | undefined>;
  chooseSkip(taskId: string): Promise<SkipArgs | undefined>;
  /** Asked before a repair that does not run cleanly is submitted; the default answer is no. */
  confirmFailingSubmit(reward: number): Promise<boolean>;
  /** Runs `work` under a cancellable progress notification. */
  withProgress<T>(title: string, work: (signal: AbortSignal, report: (message: string) => void) => Promise<T>): Promise<T>;

  info(message: string, ...actions: Action[]): void;
  warn(message: string, ...actions: Action[]): void;
  error(message: string, ...actions: Action[]): void;

  /** Shows the script (at `line`, 0-based, when given); `onlyIfClosed` leaves an already open tab where it is. */
  openScript(file: string, how: { focus: boolean; onlyIfClosed?: boolean; line?: number }): Promise<void>;
  /** The buffer if open (unsaved edits included), else the file on disk. */
  readScript(file: string): Promise<string>;
  /**
   * Saves the script (with `discard`: reverts unsaved edits to the file on disk instead) and closes every
   * editor of the episode (script, its diff, run output), without prompts.
   */
  closeEpisodeEditors(episodeId: string, file: string, opts?: { discard?: boolean }): Promise<void>;
  watchScript(file: string, listener: EditorActivity): Disposable;

  /** The read-only documents of an episode: the broken script and each run's output. */
  setBrokenScript(episodeId: string, text: string): void;
  setRunOutput(episodeId: string, run: RunKey, text: string): void;
  forgetEpisode(episodeId: string): void;
  /** Live output of a run in the runs channel, under a header line. */
  runOutput(header: string): { write: (stream: 'stdout' | 'stderr', chunk: string) => void; flush: () => void };

  showProblems(file: string, specs: readonly DiagnosticSpec[], episodeId: string, run: RunKey): void;
  clearProblems(file: string): void;
  /** Status bar, CodeLens, context keys and score view; `undefined` is "no episode" and `'starting'` the start in progress. */
  render(view: EpisodeView | 'starting' | undefined): void;
  /** A new episode starts: whatever lingers from the last one and from the lab goes. */
  episodeStarting(): Promise<void>;
}

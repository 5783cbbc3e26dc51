// Active time of an episode: time during which the window is focused, the episode's editor is
// the focused editor, and the annotator did something within the idle threshold. After
// `idleMs` without activity the clock stops (the first `idleMs` of a pause still count: reading
// the traceback is work) and restarts at the next activity. No vscode import: unit-tested alone.

export interface ActiveTimeOptions {
  /** Pause length after which the clock stops (default 60 s). */
  idleMs?: number;
  /** Clock (default Date.now), injectable for tests. */
  now?: () => number;
  /** Active time already accumulated (a resumed episode). */
  initialMs?: number;
}

export class ActiveTimeTracker {
  private readonly idleMs: number;
  private readonly now: () => number;
  private accumulated: number;
  private focused = false;
  /** Start of the current counted stretch (valid while focused). */
  private segmentStart = 0;
  private lastActivity = 0;

  constructor(opts: ActiveTimeOptions = {}) {
    this.idleMs = opts.idleMs ?? 60_000;
    this.now = opts.now ?? Date.now;
    this.accumulated = Math.max(0, opts.initialMs ?? 0);
  }

  /** Total active milliseconds, including the stretch in progress. */
  get activeMs(): number {
    return this.accumulated + this.openStretch(this.now());
  }

  get isCounting(): boolean {
    return this.focused && this.now() - this.lastActivity <= this.idleMs;
  }

  /** Window focus and "the episode editor is the active editor", combined by the caller. */
  setFocused(focused: boolean): void {
    const t = this.now();
    if (focused === this.focused) {
      if (focused) this.activity();
      return;
    }
    this.fold(t);
    this.focused = focused;
    if (focused) {
      // Coming back to the editor is itself activity.
      this.segmentStart = t;
      this.lastActivity = t;
    }
  }

  /** A keystroke, selection change, scroll or run. */
  activity(): void {
    if (!this.focused) return;
    const t = this.now();
    this.fold(t);
    this.segmentStart = t;
    this.lastActivity = t;
  }

  private openStretch(t: number): number {
    if (!this.focused) return 0;
    const end = Math.min(t, this.lastActivity + this.idleMs);
    return Math.max(0, end - this.segmentStart);
  }

  private fold(t: number): void {
    this.accumulated += this.openStretch(t);
    this.segmentStart = t;
  }
}

/** `1:05:09`, `5:09`, `0:42`: compact elapsed time for the status bar. */
export function formatElapsed(ms: number): string {
  const total = Math.max(0, Math.floor(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

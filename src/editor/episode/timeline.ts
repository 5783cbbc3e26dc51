// The episode's edit timeline: every document change and run, timestamped from the episode's
// start. While the episode is open the events go to a local JSONL file beside the episode's
// `train.py` (always writable storage, so typing never depends on the dataset folder); at
// Submit or Skip the whole file is appended to the dataset as `timelines/<episode_id>.jsonl`.
// Writes are batched (one append per flush), never one per keystroke. No vscode import.
import { appendFile, mkdir, readFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { TimelineEventSchema, type TimelineEvent } from '../../store/records';

export interface TimelineRecorderOptions {
  file: string;
  /** Epoch ms the episode started (t_ms is measured from it). */
  startedAtMs: number;
  /** Events already in the file (a resumed episode). */
  written?: number;
  /** Flush delay after the first buffered event (default 1000 ms). */
  flushDelayMs?: number;
  now?: () => number;
  /** Called when a flush fails; the events stay buffered and are retried on the next flush. */
  onError?: (error: Error) => void;
  /** Sees every accepted event (the episode keeps them, so Submit never reads the file back). */
  onEvent?: (event: TimelineEvent) => void;
}

export class TimelineRecorder {
  private buffer: TimelineEvent[] = [];
  private writtenCount: number;
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly opts: TimelineRecorderOptions) {
    this.writtenCount = opts.written ?? 0;
    this.now = opts.now ?? Date.now;
  }

  /** Events safely in the file. */
  get written(): number {
    return this.writtenCount;
  }

  get pending(): number {
    return this.buffer.length;
  }

  record(event: Omit<TimelineEvent, 't_ms'> & Record<string, unknown>): void {
    const parsed = TimelineEventSchema.safeParse({ ...event, t_ms: Math.max(0, this.now() - this.opts.startedAtMs) });
    if (!parsed.success) return; // a malformed event is a bug in the caller; never break typing for it
    this.buffer.push(parsed.data);
    this.opts.onEvent?.(parsed.data);
    if (!this.timer) {
      this.timer = setTimeout(() => void this.flush(), this.opts.flushDelayMs ?? 1000);
      this.timer.unref?.();
    }
  }

  /** Writes the buffered events (one append). Resolves when they are on disk or failed. */
  flush(): Promise<void> {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    this.flushing = this.flushing.then(async () => {
      if (this.buffer.length === 0) return;
      const batch = this.buffer;
      this.buffer = [];
      try {
        await mkdir(dirname(this.opts.file), { recursive: true });
        await appendFile(this.opts.file, batch.map((e) => JSON.stringify(e)).join('\n') + '\n', 'utf8');
        this.writtenCount += batch.length;
      } catch (e) {
        this.buffer = [...batch, ...this.buffer];
        this.opts.onError?.(e as Error);
      }
    });
    return this.flushing;
  }

  dispose(): Promise<void> {
    return this.flush();
  }
}

/** Every valid event of a local timeline file (missing file: none); bad lines are skipped and counted. */
export async function readTimelineFile(file: string): Promise<{ events: TimelineEvent[]; skipped: number }> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { events: [], skipped: 0 };
    throw e;
  }
  const events: TimelineEvent[] = [];
  let skipped = 0;
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    try {
      const parsed = TimelineEventSchema.safeParse(JSON.parse(line));
      if (parsed.success) events.push(parsed.data);
      else skipped++;
    } catch {
      skipped++; // a torn last line after a crash
    }
  }
  return { events, skipped };
}

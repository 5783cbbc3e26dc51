// Records on their way into a dataset folder. A submitted demonstration or a skip is first put
// in this queue (persisted in VS Code's globalState), then written; only a successful write
// removes it. So a dataset folder that is not writable (read-only, missing drive, full disk)
// loses nothing: the record waits, survives reloads, and can be retried or saved elsewhere.
// The write itself is the store's (storeEpisode: timeline first, then the record); the
// `timelineWritten` flag keeps a retry from appending the timeline twice. No vscode import.
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { storeEpisode } from '../../store/episodeWriter';
import { DatasetWriteError, RecordValidationError } from '../../store/jsonlFile';
import { TimelineEventSchema } from '../../store/records';

export const PendingWriteSchema = z.object({
  id: z.string().min(1),
  kind: z.enum(['demonstration', 'skip']),
  datasetDir: z.string().min(1),
  episodeId: z.string().min(1),
  taskId: z.string(),
  record: z.unknown(),
  timeline: z.array(TimelineEventSchema),
  timelineWritten: z.boolean(),
  createdAt: z.string(),
  lastError: z.string().optional(),
});
export type PendingWrite = z.infer<typeof PendingWriteSchema>;

/** The subset of vscode.Memento this needs (so tests pass a Map-backed object). */
export interface KeyValueStore {
  get<T>(key: string): T | undefined;
  update(key: string, value: unknown): Thenable<void> | Promise<void>;
}

export type WriteOutcome =
  | { ok: true; stored: unknown; datasetDir: string }
  | { ok: false; error: string; kind: 'not_writable' | 'invalid' | 'other'; pending?: PendingWrite };

// Shared by every PendingWrites of the process (a reloaded editor layer makes a new one).
const inFlight = new Map<string, Promise<void>>();

export class PendingWrites {
  constructor(
    private readonly store: KeyValueStore,
    private readonly key = 'forgeenv.pendingWrites',
  ) {}

  /** Every queued write that still parses (a corrupt entry is kept in storage, not dropped). */
  list(): PendingWrite[] {
    const raw = this.store.get<unknown[]>(this.key) ?? [];
    return (Array.isArray(raw) ? raw : []).flatMap((r) => {
      const p = PendingWriteSchema.safeParse(r);
      return p.success ? [p.data] : [];
    });
  }

  async enqueue(w: Omit<PendingWrite, 'id' | 'createdAt' | 'timelineWritten'>): Promise<PendingWrite> {
    const entry: PendingWrite = { ...w, id: randomUUID(), createdAt: new Date().toISOString(), timelineWritten: w.timeline.length === 0 };
    await this.save([...this.raw(), entry]);
    return entry;
  }

  async remove(id: string): Promise<void> {
    await this.save(this.raw().filter((r) => (r as { id?: unknown }).id !== id));
  }

  /**
   * Tries to write one queued entry into `datasetDir` (default: the one it was meant for).
   * Attempts on the same entry run one after another, so a retry racing the start-up retry can
   * never write the record twice.
   */
  attempt(id: string, datasetDir?: string): Promise<WriteOutcome> {
    const prev = inFlight.get(id) ?? Promise.resolve();
    const next = prev.then(() => this.attemptNow(id, datasetDir));
    const tail = next.then(() => undefined);
    inFlight.set(id, tail);
    void tail.then(() => {
      if (inFlight.get(id) === tail) inFlight.delete(id);
    });
    return next;
  }

  private async attemptNow(id: string, datasetDir?: string): Promise<WriteOutcome> {
    const found = this.list().find((p) => p.id === id);
    if (!found) return { ok: false, error: `No pending ForgeEnv record ${id}.`, kind: 'other' };
    let entry = found;
    if (datasetDir && datasetDir !== entry.datasetDir)
      entry = await this.patch(id, { datasetDir, timelineWritten: entry.timeline.length === 0 });
    try {
      const { record: stored } = await storeEpisode(entry.datasetDir, entry, async () => {
        entry = await this.patch(id, { timelineWritten: true });
      });
      await this.remove(id);
      return { ok: true, stored, datasetDir: entry.datasetDir };
    } catch (e) {
      const error = e instanceof Error ? e.message : String(e);
      const kind = e instanceof DatasetWriteError ? 'not_writable' : e instanceof RecordValidationError ? 'invalid' : 'other';
      entry = await this.patch(id, { lastError: error });
      return { ok: false, error, kind, pending: entry };
    }
  }

  private raw(): unknown[] {
    const raw = this.store.get<unknown[]>(this.key);
    return Array.isArray(raw) ? raw : [];
  }

  private async patch(id: string, change: Partial<PendingWrite>): Promise<PendingWrite> {
    let out: PendingWrite | undefined;
    const next = this.raw().map((r) => {
      if ((r as { id?: unknown }).id !== id) return r;
      out = { ...(r as PendingWrite), ...change };
      return out;
    });
    await this.save(next);
    if (!out) throw new Error(`No pending ForgeEnv record ${id}.`);
    return out;
  }

  private async save(value: unknown[]): Promise<void> {
    await this.store.update(this.key, value);
  }
}

// A per-document cache of an expensive, cancellable computation, keyed by document URI and
// version: asking again for the same version reuses the result (or the run in flight); asking
// for a newer version aborts the stale run. Bounded (least recently used out). No vscode import.

export class CancelledError extends Error {
  override readonly name = 'CancelledError';
  constructor() {
    super('cancelled: the document changed');
  }
}

interface Entry<T> {
  version: number;
  promise: Promise<T>;
  controller: AbortController;
  value?: T;
}

export class VersionedComputeCache<T> {
  private readonly entries = new Map<string, Entry<T>>();

  constructor(
    private readonly compute: (text: string, signal: AbortSignal) => Promise<T>,
    private readonly capacity = 16,
  ) {}

  /** The result for `key` at `version`; `text` is read only when a computation has to start. */
  get(key: string, version: number, text: () => string): Promise<T> {
    const hit = this.entries.get(key);
    if (hit && hit.version === version) {
      this.touch(key, hit);
      return hit.promise;
    }
    hit?.controller.abort();
    const controller = new AbortController();
    const entry: Entry<T> = { version, controller, promise: Promise.resolve() as Promise<never> };
    entry.promise = this.compute(text(), controller.signal).then(
      (value) => {
        entry.value = value;
        return value;
      },
      (err: unknown) => {
        // A failed or cancelled run must not be served to the next caller.
        if (this.entries.get(key) === entry) this.entries.delete(key);
        throw controller.signal.aborted ? new CancelledError() : err;
      },
    );
    this.touch(key, entry);
    while (this.entries.size > this.capacity) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.get(oldest)?.controller.abort();
      this.entries.delete(oldest);
    }
    return entry.promise;
  }

  /** The finished result for exactly this version, if any (never starts work). */
  peek(key: string, version: number): T | undefined {
    const e = this.entries.get(key);
    return e && e.version === version ? e.value : undefined;
  }

  delete(key: string): void {
    this.entries.get(key)?.controller.abort();
    this.entries.delete(key);
  }

  clear(): void {
    for (const e of this.entries.values()) e.controller.abort();
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }

  private touch(key: string, entry: Entry<T>): void {
    this.entries.delete(key);
    this.entries.set(key, entry);
  }
}

/** Lets queued events (keystrokes, other requests) run between chunks of synchronous work. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new CancelledError();
}

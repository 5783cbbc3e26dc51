// Bounds how many training-script runs execute at once across every session of a server, with a
// bounded FIFO queue behind them. Past the queue bound a run is refused at once ("busy") rather
// than piling up: the caller answers the client, the episode's state is untouched.

export class RunQueueFullError extends Error {
  override readonly name = 'RunQueueFullError';
  constructor(
    readonly running: number,
    readonly queued: number,
    readonly maxRunning: number,
    readonly maxQueued: number,
  ) {
    super(`Server busy: ${running}/${maxRunning} runs running and ${queued}/${maxQueued} queued; retry later.`);
  }
}

/** Gives back a slot; calling it more than once is harmless. */
export type Release = () => void;

export class RunLimiter {
  private active = 0;
  private readonly waiting: Array<{ grant: () => void }> = [];

  constructor(
    readonly maxRunning: number,
    readonly maxQueued: number,
  ) {
    if (!Number.isInteger(maxRunning) || maxRunning < 1) throw new RangeError(`maxRunning must be an integer >= 1, not ${maxRunning}`);
    if (!Number.isInteger(maxQueued) || maxQueued < 0) throw new RangeError(`maxQueued must be an integer >= 0, not ${maxQueued}`);
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Waits for a slot. Throws RunQueueFullError when the queue is full. If `signal` aborts while
   * waiting, it resolves at once with a no-op release: the caller sees its own aborted signal and
   * does not start the run, and the queue moves on.
   */
  acquire(signal?: AbortSignal): Promise<Release> {
    if (signal?.aborted) return Promise.resolve(() => undefined);
    if (this.active < this.maxRunning) {
      this.active++;
      return Promise.resolve(this.releaser());
    }
    if (this.waiting.length >= this.maxQueued) {
      return Promise.reject(new RunQueueFullError(this.active, this.waiting.length, this.maxRunning, this.maxQueued));
    }
    return new Promise<Release>((resolve) => {
      const entry = {
        grant: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.releaser());
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(() => undefined);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  private releaser(): Release {
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      // The slot passes straight to the next waiter, so `active` stays the same.
      if (next) next.grant();
      else this.active--;
    };
  }
}

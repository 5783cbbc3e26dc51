// One long-lived worker thread per kind of job, for CPU work that must not block an event loop that
// serves others (the extension host, the OpenEnv server): applying a large repair diff
// (diffAsync.ts) and scrubbing a large run output (scrubAsync.ts). Each worker file is bundled
// beside extension.js and cli.js (scripts/build.mjs) and, from source, loaded through tsx.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';

export type WorkerEntry = { code: string; eval: boolean };

const entries = new Map<string, WorkerEntry | null>();

/**
 * The worker `<dir>/<name>.js` (bundled) or `<dir>/<name>.ts` through tsx (from source); undefined
 * when neither can be loaded (a test bundle), in which case the caller does the work inline.
 */
export function workerEntry(dir: string, name: string): WorkerEntry | undefined {
  const key = join(dir, name);
  if (!entries.has(key)) {
    const js = `${key}.js`;
    const ts = `${key}.ts`;
    let entry: WorkerEntry | null = null;
    if (existsSync(js)) entry = { code: js, eval: false };
    else if (existsSync(ts)) {
      try {
        const tsx = require.resolve('tsx/cjs');
        entry = { code: `require(${JSON.stringify(tsx)}); require(${JSON.stringify(ts)});`, eval: true };
      } catch {
        entry = null;
      }
    }
    entries.set(key, entry);
  }
  return entries.get(key) ?? undefined;
}

/** Why a job got no answer from its worker; the host's `failure` turns it into the caller's result. */
export type WorkerFailure =
  | { kind: 'cancelled' }
  | { kind: 'invalid-answer' }
  | { kind: 'error'; message: string }
  | { kind: 'exit'; code: number }
  | { kind: 'timeout'; ms: number };

export interface WorkerHostOptions<R> {
  /** Heap of the worker: a job that needs more is refused, not the process. */
  heapMb: number;
  /** A job is bounded by its own work; this only catches a worker that hangs or dies silently. */
  timeoutMs: number;
  /** The worker's answer validated (zod at the thread boundary), or undefined when it is not one. */
  parse: (message: unknown) => R | undefined;
  failure: (f: WorkerFailure) => R;
}

/**
 * Started at the first job (starting a thread blocks the caller for 5–20 ms, so it is not done per
 * job) and kept only while it works: it is unref'd when idle, so it never holds a process open.
 * Jobs run one at a time; a burst queues instead of starting threads. A job that errs, times out or
 * is cancelled ends the worker (synchronous work cannot be interrupted otherwise); the next job
 * starts a new one.
 */
export class WorkerHost<J, R> {
  private worker: Worker | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: WorkerHostOptions<R>) {}

  run(entry: WorkerEntry, job: J, signal?: AbortSignal): Promise<R> {
    const next = this.tail.then(() => this.runNow(entry, job, signal));
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Starts the worker now (e.g. when a server starts), so the first job does not pay for it. */
  warm(entry: WorkerEntry): void {
    this.start(entry).unref();
  }

  private start(entry: WorkerEntry): Worker {
    this.worker ??= new Worker(entry.code, { eval: entry.eval, resourceLimits: { maxOldGenerationSizeMb: this.options.heapMb } });
    return this.worker;
  }

  private runNow(entry: WorkerEntry, job: J, signal: AbortSignal | undefined): Promise<R> {
    const { parse, failure, timeoutMs } = this.options;
    if (signal?.aborted) return Promise.resolve(failure({ kind: 'cancelled' }));
    const worker = this.start(entry);
    worker.ref();
    return new Promise<R>((resolve) => {
      const finish = (r: R, healthy: boolean) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        worker.off('message', onMessage).off('error', onError).off('exit', onExit);
        if (healthy) worker.unref();
        else {
          if (this.worker === worker) this.worker = undefined;
          void worker.terminate();
        }
        resolve(r);
      };
      const onMessage = (m: unknown) => {
        const parsed = parse(m);
        finish(parsed ?? failure({ kind: 'invalid-answer' }), parsed !== undefined);
      };
      const onError = (e: Error) => finish(failure({ kind: 'error', message: e.message.slice(0, 200) }), false);
      const onExit = (code: number) => finish(failure({ kind: 'exit', code }), false);
      const onAbort = () => finish(failure({ kind: 'cancelled' }), false);
      const timer = setTimeout(() => finish(failure({ kind: 'timeout', ms: timeoutMs }), false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(job);
    });
  }
}

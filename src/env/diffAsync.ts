// Applying a repair submission without blocking the event loop (the extension host, the OpenEnv
// server). A small submission is applied inline under a small step budget: at most INLINE_STEPS
// placement steps per stage (exact, then tolerant) plus a few linear passes over at most
// INLINE_CHARS characters, a millisecond or two (bench/diff.bench.ts). A larger one, or a small
// one that needs more search than that, is applied by the same code in a worker thread with the
// full budget. The answer is the same either way: a run that never reached its budget gives the
// same result under any larger budget.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { applyRepairDiff, applyRepairDiffCounted, DIFF_WORK_BUDGET, refuseOversized, type ApplyOptions, type ApplyResult } from './diff';
import { ApplyResultSchema, type DiffJob } from './diffJob';

/** Submissions up to this many characters may be applied on the calling thread. */
export const INLINE_CHARS = 16 * 1024;
/** Placement steps per stage allowed on the calling thread (roughly 10–40 ns each). */
export const INLINE_STEPS = 50_000;
/** A worker job is bounded by the work budget; this only catches a worker that hangs or dies silently. */
const WORKER_TIMEOUT_MS = 60_000;
/** Enough for a 64 MiB submission's line arrays; a job that needs more is refused, not the process. */
const WORKER_HEAP_MB = 512;

export interface AsyncApplyOptions extends ApplyOptions {
  signal?: AbortSignal;
}

/** How the last call ran (tests and the benchmark read it). */
export interface AsyncApplyInfo {
  where: 'refused' | 'inline' | 'worker' | 'inline-fallback';
}

/** applyRepairDiff without blocking the event loop for more than about a millisecond. Never rejects. */
export async function applyRepairDiffAsync(script: string, submission: string, options: AsyncApplyOptions = {}, info?: AsyncApplyInfo): Promise<ApplyResult> {
  const { signal, ...opts } = options;
  const note = (where: AsyncApplyInfo['where']) => info && (info.where = where);
  if (typeof submission !== 'string' || typeof script !== 'string') return { ok: false, error: 'the submission is not text' };
  const oversized = refuseOversized(submission, opts.maxBytes);
  if (oversized) {
    note('refused');
    return oversized;
  }
  const full = opts.workBudget ?? DIFF_WORK_BUDGET;
  if (submission.length <= INLINE_CHARS) {
    const { result, cost } = applyRepairDiffCounted(script, submission, { ...opts, workBudget: Math.min(full, INLINE_STEPS) }, { stopAtBudget: full > INLINE_STEPS });
    if (!cost.budgetHit || full <= INLINE_STEPS) {
      note('inline');
      return result;
    }
  }
  const entry = workerEntry();
  if (!entry) {
    // No worker file beside this module (a test bundle): still bounded by the budget, only not off-thread.
    note('inline-fallback');
    return applyRepairDiff(script, submission, { ...opts, workBudget: full });
  }
  note('worker');
  return host.run(entry, { script, submission, options: { ...opts, workBudget: full } }, signal);
}

type WorkerEntry = { code: string; eval: boolean };
let cachedEntry: WorkerEntry | null | undefined;

/** The bundled worker (dist/diffWorker.js) or, from source, diffWorker.ts loaded through tsx. */
function workerEntry(): WorkerEntry | undefined {
  if (cachedEntry !== undefined) return cachedEntry ?? undefined;
  const js = join(__dirname, 'diffWorker.js');
  const ts = join(__dirname, 'diffWorker.ts');
  cachedEntry = null;
  if (existsSync(js)) cachedEntry = { code: js, eval: false };
  else if (existsSync(ts)) {
    try {
      const tsx = require.resolve('tsx/cjs');
      cachedEntry = { code: `require(${JSON.stringify(tsx)}); require(${JSON.stringify(ts)});`, eval: true };
    } catch {
      cachedEntry = null;
    }
  }
  return cachedEntry ?? undefined;
}

/**
 * One long-lived worker, started at the first large submission (starting a thread blocks the
 * caller for 5–20 ms, so it is not done per job) and kept only while it works: it is unref'd
 * when idle, so it never holds a process open. Jobs run one at a time; a burst of large
 * submissions queues instead of starting threads. A job that errs, times out or is cancelled
 * ends the worker (synchronous work cannot be interrupted otherwise); the next job starts a new one.
 */
class DiffWorkerHost {
  private worker: Worker | undefined;
  private tail: Promise<unknown> = Promise.resolve();

  run(entry: WorkerEntry, job: DiffJob, signal: AbortSignal | undefined): Promise<ApplyResult> {
    const next = this.tail.then(() => this.runNow(entry, job, signal));
    this.tail = next.catch(() => undefined);
    return next;
  }

  /** Starts the worker now (e.g. when a server starts), so the first large submission does not pay for it. */
  warm(entry: WorkerEntry): void {
    this.start(entry).unref();
  }

  private start(entry: WorkerEntry): Worker {
    this.worker ??= new Worker(entry.code, { eval: entry.eval, resourceLimits: { maxOldGenerationSizeMb: WORKER_HEAP_MB } });
    return this.worker;
  }

  private runNow(entry: WorkerEntry, job: DiffJob, signal: AbortSignal | undefined): Promise<ApplyResult> {
    if (signal?.aborted) return Promise.resolve({ ok: false, error: 'the diff application was cancelled' });
    const worker = this.start(entry);
    worker.ref();
    return new Promise<ApplyResult>((resolve) => {
      const finish = (r: ApplyResult, healthy: boolean) => {
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
        const parsed = ApplyResultSchema.safeParse(m);
        finish(parsed.success ? parsed.data : { ok: false, error: 'the diff worker sent an invalid answer' }, parsed.success);
      };
      const onError = (e: Error) => finish({ ok: false, error: `the diff could not be applied: ${e.message.slice(0, 200)}` }, false);
      const onExit = (code: number) => finish({ ok: false, error: `the diff worker stopped (exit code ${code})` }, false);
      const onAbort = () => finish({ ok: false, error: 'the diff application was cancelled' }, false);
      const timer = setTimeout(() => finish({ ok: false, error: `the diff application did not finish within ${WORKER_TIMEOUT_MS / 1000} s` }, false), WORKER_TIMEOUT_MS);
      signal?.addEventListener('abort', onAbort, { once: true });
      worker.on('message', onMessage).on('error', onError).on('exit', onExit);
      worker.postMessage(job);
    });
  }
}
const host = new DiffWorkerHost();

/** Starts the diff worker ahead of need (a long-running server calls this at start); a no-op without a worker file. */
export function prewarmDiffWorker(): void {
  const entry = workerEntry();
  if (entry) host.warm(entry);
}

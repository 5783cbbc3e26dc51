// Applying a repair submission without blocking the event loop (the extension host, the OpenEnv
// server). A small submission is applied inline under a small step budget: at most INLINE_STEPS
// placement steps per stage (exact, then tolerant) plus a few linear passes over at most
// INLINE_CHARS characters, a millisecond or two (bench/diff.bench.ts). A larger one, or a small
// one that needs more search than that, is applied by the same code in a worker thread with the
// full budget. The answer is the same either way: a run that never reached its budget gives the
// same result under any larger budget.
import { applyRepairDiff, applyRepairDiffCounted, DIFF_WORK_BUDGET, refuseOversized, type ApplyOptions, type ApplyResult } from './diff';
import { ApplyResultSchema, type DiffJob } from './diffJob';
import { WorkerHost, workerEntry as resolveWorkerEntry } from '../workerHost';

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
export async function applyRepairDiffAsync(
  script: string,
  submission: string,
  options: AsyncApplyOptions = {},
  info?: AsyncApplyInfo,
): Promise<ApplyResult> {
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
    const { result, cost } = applyRepairDiffCounted(
      script,
      submission,
      { ...opts, workBudget: Math.min(full, INLINE_STEPS) },
      { stopAtBudget: full > INLINE_STEPS },
    );
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

const host = new WorkerHost<DiffJob, ApplyResult>({
  heapMb: WORKER_HEAP_MB,
  timeoutMs: WORKER_TIMEOUT_MS,
  parse: (m) => {
    const parsed = ApplyResultSchema.safeParse(m);
    return parsed.success ? parsed.data : undefined;
  },
  failure: (f): ApplyResult => {
    switch (f.kind) {
      case 'cancelled':
        return { ok: false, error: 'the diff application was cancelled' };
      case 'invalid-answer':
        return { ok: false, error: 'the diff worker sent an invalid answer' };
      case 'error':
        return { ok: false, error: `the diff could not be applied: ${f.message}` };
      case 'exit':
        return { ok: false, error: `the diff worker stopped (exit code ${f.code})` };
      case 'timeout':
        return { ok: false, error: `the diff application did not finish within ${f.ms / 1000} s` };
    }
  },
});

/** The bundled worker (dist/diffWorker.js) or, from source, diffWorker.ts loaded through tsx. */
const workerEntry = () => resolveWorkerEntry(__dirname, 'diffWorker');

/** Starts the diff worker ahead of need (a long-running server calls this at start); a no-op without a worker file. */
export function prewarmDiffWorker(): void {
  const entry = workerEntry();
  if (entry) host.warm(entry);
}

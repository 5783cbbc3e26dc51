// Worker-thread entry for applyRepairDiffAsync (diffAsync.ts): applies one submission per message
// with the same bounded code as the main thread, so the answer is identical, only off the event loop.
import { parentPort } from 'node:worker_threads';
import { applyRepairDiff } from './diff';
import { DiffJobSchema } from './diffJob';

parentPort?.on('message', (raw: unknown) => {
  const job = DiffJobSchema.safeParse(raw);
  parentPort?.postMessage(
    job.success ? applyRepairDiff(job.data.script, job.data.submission, job.data.options) : { ok: false, error: 'invalid diff job' },
  );
});

// Worker-thread entry for scrubPathsAsync (scrubAsync.ts): scrubs one output per message with the
// same code as the main thread, so the answer is identical, only off the event loop.
import { parentPort } from 'node:worker_threads';
import { ScrubJobSchema, type ScrubAnswer } from './scrubJob';
import { scrubPathsInPasses } from './scrubPaths';

parentPort?.on('message', (raw: unknown) => {
  const job = ScrubJobSchema.safeParse(raw);
  const answer: ScrubAnswer = job.success
    ? { ok: true, text: scrubPathsInPasses(job.data.text, job.data.passes) }
    : { ok: false, error: 'invalid scrub job' };
  parentPort?.postMessage(answer);
});

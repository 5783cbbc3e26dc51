// Scrubbing a run's output (scrubPaths.ts) without blocking the event loop that serves others (the
// OpenEnv server, the extension host). Scrubbing is linear, but a run may print up to its output cap
// per stream (1 MiB by default, 256 MiB at most): tens of milliseconds per MiB that every other
// session would wait for. Outputs up to INLINE_SCRUB_CHARS are scrubbed on the calling thread (well
// under a millisecond); larger ones in a worker thread (workerHost.ts). The answer is the same
// either way. If the worker cannot answer, the output is scrubbed inline all the same: a machine
// path must never get through because a thread failed.
import { ScrubAnswerSchema, type ScrubJob } from './scrubJob';
import { scrubPathsInPasses, type ScrubContext } from './scrubPaths';
import { WorkerHost, workerEntry } from '../workerHost';

/** Outputs up to this many characters are scrubbed on the calling thread. */
export const INLINE_SCRUB_CHARS = 64 * 1024;

/** How the last call ran (tests and benchmarks read it). */
export interface ScrubAsyncInfo {
  where: 'inline' | 'worker' | 'inline-fallback';
}

const host = new WorkerHost<ScrubJob, string | undefined>({
  // Room for a 256 MiB output (the largest output cap) and its scrubbed copy.
  heapMb: 2048,
  timeoutMs: 60_000,
  parse: (m) => {
    const parsed = ScrubAnswerSchema.safeParse(m);
    return parsed.success && parsed.data.ok ? parsed.data.text : undefined;
  },
  failure: () => undefined,
});

const entry = () => workerEntry(__dirname, 'scrubWorker');

/** scrubPaths applied once per context in `passes`, off the event loop when the text is large. Never rejects. */
export async function scrubPathsAsync(text: string, passes: readonly ScrubContext[], info?: ScrubAsyncInfo): Promise<string> {
  const note = (where: ScrubAsyncInfo['where']) => info && (info.where = where);
  const e = text.length > INLINE_SCRUB_CHARS ? entry() : undefined;
  if (e) {
    const scrubbed = await host.run(e, {
      text,
      passes: passes.map((p) => ({ ...p, standInDirs: p.standInDirs ? [...p.standInDirs] : undefined })),
    });
    if (scrubbed !== undefined) {
      note('worker');
      return scrubbed;
    }
  }
  note(text.length > INLINE_SCRUB_CHARS ? 'inline-fallback' : 'inline');
  return scrubPathsInPasses(text, passes);
}

/** Starts the scrub worker ahead of need (a long-running server calls this at start); a no-op without a worker file. */
export function prewarmScrubWorker(): void {
  const e = entry();
  if (e) host.warm(e);
}

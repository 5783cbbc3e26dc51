// The messages between scrubPathsAsync (scrubAsync.ts) and its worker thread (scrubWorker.ts).
import { z } from 'zod';

export const ScrubContextSchema = z.object({
  runDir: z.string().optional(),
  runAt: z.string().optional(),
  standInDirs: z.array(z.string()).optional(),
  homeDir: z.string().optional(),
});

/** `passes`: scrubPaths applied once per context, in order. */
export const ScrubJobSchema = z.object({ text: z.string(), passes: z.array(ScrubContextSchema) });
export type ScrubJob = z.infer<typeof ScrubJobSchema>;

export const ScrubAnswerSchema = z.union([
  z.object({ ok: z.literal(true), text: z.string() }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);
export type ScrubAnswer = z.infer<typeof ScrubAnswerSchema>;

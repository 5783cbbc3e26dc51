// The messages between applyRepairDiffAsync and its worker thread (diffWorker.ts).
import { z } from 'zod';

export const DiffJobSchema = z.object({
  script: z.string(),
  submission: z.string(),
  options: z.object({
    fileName: z.string().optional(),
    maxBytes: z.number().int().positive().optional(),
    workBudget: z.number().int().positive().optional(),
  }),
});
export type DiffJob = z.infer<typeof DiffJobSchema>;

export const ApplyResultSchema = z.union([
  z.object({
    ok: z.literal(true),
    script: z.string(),
    mode: z.enum(['empty', 'strict', 'lenient', 'whole_script']),
    warnings: z.array(z.string()),
  }),
  z.object({ ok: z.literal(false), error: z.string() }),
]);

// Optional argument objects of the ForgeEnv commands (tests and other extensions pass them to
// skip the pickers; validated with zod), and the uniform result every command returns.
import { z } from 'zod';
import { DifficultySchema, ExecutionModeSchema } from '../env/schemas';
import { SkipReasonSchema } from '../store/records';

export const PrimitiveChoiceSchema = z.union([
  z
    .string()
    .min(1)
    .transform((primitive_type) => ({ primitive_type })),
  z.object({ primitive_type: z.string().min(1), params: z.record(z.string(), z.unknown()).optional() }).strict(),
]);
export type PrimitiveChoice = z.output<typeof PrimitiveChoiceSchema>;

export const StartArgsSchema = z
  .object({
    taskId: z.string().min(1).optional(),
    /** Start the queue's next task (ignored when taskId is given). */
    next: z.boolean().optional(),
    difficulty: DifficultySchema.optional(),
    seed: z.number().int().nonnegative().optional(),
    /** Omitted: the Teacher and the baseline drift generator choose. */
    primitive: PrimitiveChoiceSchema.optional(),
    /** The library snapshot to run under (an id of resources/snapshots/snapshots.json, or a derived environment's); omitted: the task's own. */
    snapshot: z.string().min(1).max(200).optional(),
  })
  .strict();
export type StartArgs = z.infer<typeof StartArgsSchema>;

export const SubmitArgsSchema = z
  .object({
    /** Submit even when the repair does not run cleanly (no confirmation). */
    force: z.boolean().optional(),
  })
  .strict();
export type SubmitArgs = z.infer<typeof SubmitArgsSchema>;

export const SkipArgsSchema = z.object({ reason: SkipReasonSchema, note: z.string().max(4000).optional() }).strict();
export type SkipArgs = z.infer<typeof SkipArgsSchema>;

export const ConfigureArgsSchema = z
  .object({
    mode: ExecutionModeSchema.optional(),
    /** '' clears the setting (back to the Python extension's interpreter or python3). */
    pythonPath: z.string().optional(),
  })
  .strict();
export type ConfigureArgs = z.infer<typeof ConfigureArgsSchema>;

export type RefusalReason =
  'untrusted' | 'no_episode' | 'no_model' | 'episode_open' | 'cancelled' | 'busy' | 'invalid_args' | 'unchanged' | 'error';
export type Refusal = { ok: false; reason: RefusalReason; message: string };
export type CommandResult<T extends object = object> = ({ ok: true } & T) | Refusal;

export function refusal(reason: RefusalReason, message: string): Refusal {
  return { ok: false, reason, message };
}

// The environment's data model, names kept from the original ForgeEnv so that data and prompts
// stay compatible. Every boundary (actions from a model or a webview, files read, remote
// responses) is parsed with these schemas.
import { z } from 'zod';

export const DifficultySchema = z.enum(['easy', 'medium', 'hard']);
export type Difficulty = z.infer<typeof DifficultySchema>;

export const PhaseSchema = z.enum(['drift_gen', 'repair', 'verify', 'done']);
export type Phase = z.infer<typeof PhaseSchema>;

export const TaskCategorySchema = z.enum([
  'text_classification',
  'ner',
  'seq2seq',
  'text_generation',
  'image_classification',
  'qa',
  'tabular',
  'regression',
  'general',
]);
export type TaskCategory = z.infer<typeof TaskCategorySchema>;

/** Library name -> version, e.g. `{transformers: "4.50.0", datasets: "3.2.0", trl: "0.12.0"}`. */
export const LibraryVersionsSchema = z.record(z.string().min(1), z.string().regex(/^\d+(\.\d+)*$/, 'a dotted version such as 4.36.0'));
export type LibraryVersions = z.infer<typeof LibraryVersionsSchema>;

export const ExecutionModeSchema = z.enum(['simulated', 'real']);
export type ExecutionMode = z.infer<typeof ExecutionModeSchema>;

const Range01 = z.tuple([z.number().min(0).max(1), z.number().min(0).max(1)]);

export const TaskSchema = z.object({
  task_id: z.string().regex(/^[A-Za-z0-9_.-]+$/, 'letters, digits, _ . - only'),
  description: z.string(),
  script_content: z.string(),
  difficulty: DifficultySchema,
  category: TaskCategorySchema,
  expected_loss_range: z.tuple([z.number().min(0).max(5), z.number().min(0).max(5)]),
  expected_accuracy_range: Range01,
  /** Snapshot the script is written against (defaults to the latest snapshot). */
  library_versions: LibraryVersionsSchema.optional(),
  /** Free-form tags, e.g. `trainer`, `custom_loop`, `trl`, `peft`. */
  tags: z.array(z.string()).default([]),
  /** Where the script came from: the built-in corpus or a user folder. */
  source: z.string().default('builtin'),
});
export type Task = z.infer<typeof TaskSchema>;

/** A primitive spec as the drift generator proposes it and as rollouts record it. */
export const PrimitiveSpecSchema = z.object({
  primitive_type: z.string().min(1),
  category: z.string().optional(),
  params: z.record(z.string(), z.unknown()).default({}),
});
export type PrimitiveSpec = z.infer<typeof PrimitiveSpecSchema>;

export const BreakageActionSchema = z
  .object({
    primitive_type: z.string().min(1, 'primitive_type is required'),
    params: z.record(z.string(), z.unknown()).default({}),
  })
  .strict();
export type BreakageAction = z.infer<typeof BreakageActionSchema>;

export const RepairActionSchema = z.object({ unified_diff: z.string() }).strict();
export type RepairAction = z.infer<typeof RepairActionSchema>;

/** Exactly one of `breakage` or `repair`. */
export const ForgeActionSchema = z.union([
  z.object({ breakage: BreakageActionSchema }).strict(),
  z.object({ repair: RepairActionSchema }).strict(),
]);
export type ForgeAction = z.infer<typeof ForgeActionSchema>;

export const ExecutionResultSchema = z.object({
  exit_code: z.number().int().nullable(),
  stdout: z.string(),
  stderr: z.string(),
  wall_time_ms: z.number().nonnegative(),
  checkpoint_exists: z.boolean(),
  peak_memory_mb: z.number().nonnegative(),
  script_content: z.string(),
  /** ours: why the run ended abnormally, if it did. */
  timed_out: z.boolean().default(false),
  output_truncated: z.boolean().default(false),
  killed: z.boolean().default(false),
  /** Validator findings (forbidden constructs); a violation means the script was not run. */
  violations: z.array(z.string()).default([]),
  /** ours: what ran (for provenance). */
  mode: ExecutionModeSchema.default('simulated'),
  interpreter: z.string().default('python3'),
});
export type ExecutionResult = z.infer<typeof ExecutionResultSchema>;

export const BreakdownSchema = z.record(z.string(), z.number());
export type Breakdown = z.infer<typeof BreakdownSchema>;

export const ObservationSchema = z.object({
  current_phase: PhaseSchema,
  task_id: z.string(),
  task_description: z.string(),
  target_category: z.string(),
  script_content: z.string(),
  error_trace: z.string().nullable(),
  library_versions: LibraryVersionsSchema,
  reward: z.number().nullable(),
  reward_breakdown: BreakdownSchema,
  held_out_breakdown: BreakdownSchema,
  episode_step: z.number().int().nonnegative(),
  info: z.record(z.string(), z.unknown()),
  done: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
});
export type Observation = z.infer<typeof ObservationSchema>;

export const ResetOptionsSchema = z
  .object({
    difficulty: DifficultySchema.optional(),
    taskId: z.string().optional(),
    seed: z.number().int().nonnegative().optional(),
    /** Pin the snapshot instead of the task's own. */
    library_versions: LibraryVersionsSchema.optional(),
    /** Pin the Teacher's target category (a primitive class name). */
    target_category: z.string().optional(),
    options: z.object({ difficulty: DifficultySchema.optional() }).partial().optional(),
  })
  .strict();
export type ResetOptions = z.infer<typeof ResetOptionsSchema>;

/** One episode as saved for training (reference: forgeenv/training/rollout.py). */
export const RolloutResultSchema = z.object({
  task_id: z.string(),
  primitive_type: z.string(),
  drift_prompt: z.string(),
  drift_completion: z.string(),
  repair_prompt: z.string(),
  repair_completion: z.string(),
  visible_reward: z.number(),
  visible_breakdown: BreakdownSchema,
  held_out_breakdown: BreakdownSchema,
  success: z.boolean(),
  error_trace: z.string().default(''),
  info: z.record(z.string(), z.unknown()).default({}),
});
export type RolloutResult = z.infer<typeof RolloutResultSchema>;

/** Turns a zod error into one readable line per issue, e.g. `params.old_name: Required`. */
export function formatZodError(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`)
    .join('; ');
}

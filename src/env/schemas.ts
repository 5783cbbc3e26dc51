// The environment's data model, names kept from the original ForgeEnv so that data and prompts
// stay compatible. Every boundary (actions from a model or a webview, files read, remote
// responses) is parsed with these schemas.
import { z } from 'zod';
import { ScriptEnvSchema } from './sandbox/options';
import { TaskRuntimeSchema } from './run/runtimeShims';
import { VerifySpecSchema } from './verify/spec';
import { HubNeedsSchema } from './hub/needs';
import { NaturalDriftSchema } from './taskmaking/provenance';

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

/** Limits on a task's run files: per file, in total, and how many. */
export const RUN_FILE_LIMITS = { fileBytes: 1_048_576, totalBytes: 4_194_304, count: 64, pathLength: 200 } as const;

/**
 * A file written into the run folder before the run: a relative `/`-separated path with no `.`,
 * `..` or empty segment, no absolute, drive or backslash path.
 */
export const RunFilePathSchema = z
  .string()
  .min(1, 'an empty path')
  .max(RUN_FILE_LIMITS.pathLength, `a path longer than ${RUN_FILE_LIMITS.pathLength} characters`)
  .refine((p) => !p.startsWith('/') && !/^[A-Za-z]:/.test(p), 'an absolute path (must be relative to the run folder)')
  .refine((p) => !p.includes('\\') && !p.includes('\0'), 'a backslash or NUL in the path (use / between folders)')
  .refine(
    (p) => p.split('/').every((seg) => seg !== '' && seg !== '.' && seg !== '..'),
    "a '..', '.' or empty segment (the file must stay inside the run folder)",
  );

const utf8Bytes = (s: string) => Buffer.byteLength(s, 'utf8');

/** Relative path -> text content, written into the run folder (e.g. a YAML config the script reads). */
export const RunFilesSchema = z
  .record(
    z.string(),
    z.string().refine((t) => utf8Bytes(t) <= RUN_FILE_LIMITS.fileBytes, `larger than ${RUN_FILE_LIMITS.fileBytes} bytes`),
  )
  .superRefine((files, ctx) => {
    const names = Object.keys(files);
    // Keys are checked here rather than by the record's key schema, whose error names no reason.
    for (const k of names) {
      const key = RunFilePathSchema.safeParse(k);
      if (!key.success)
        ctx.addIssue({ code: 'custom', path: [k], message: `invalid path: ${key.error.issues[0]?.message ?? 'not allowed'}` });
    }
    if (names.length > RUN_FILE_LIMITS.count) ctx.addIssue({ code: 'custom', message: `more than ${RUN_FILE_LIMITS.count} files` });
    const total = names.reduce((n, k) => n + utf8Bytes(files[k]), 0);
    if (total > RUN_FILE_LIMITS.totalBytes)
      ctx.addIssue({ code: 'custom', message: `${total} bytes in all (at most ${RUN_FILE_LIMITS.totalBytes})` });
    const dirs = new Set(
      names.flatMap((k) =>
        k
          .split('/')
          .slice(0, -1)
          .map((_, i, segs) => segs.slice(0, i + 1).join('/')),
      ),
    );
    for (const k of names)
      if (dirs.has(k)) ctx.addIssue({ code: 'custom', path: [k], message: 'is both a file and a folder of another file' });
  });
export type RunFiles = z.infer<typeof RunFilesSchema>;

/** Command-line arguments after the script name. */
/** System folders a mount may not shadow (the sandbox shows them read-only). */
const SYSTEM_DIRS = [
  '/usr',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/etc',
  '/proc',
  '/dev',
  '/sys',
  '/run',
  '/boot',
  '/root',
  '/home',
];

/**
 * Absolute folders a script writes to outside its run folder (SageMaker's `/opt/ml/model`): inside the
 * sandbox each is an empty writable folder kept in the run folder, so the script runs unmodified and
 * writes nothing on the host. Needs the bubblewrap sandbox; elsewhere the run is refused.
 */
export const RunMountsSchema = z
  .array(
    z
      .string()
      .regex(/^\/[A-Za-z0-9_./-]+$/, 'an absolute folder path (letters, digits, _ . - /)')
      .refine((p) => !p.split('/').some((part) => part === '..' || part === '.'), 'no "." or ".." parts')
      .refine((p) => p !== '/' && !SYSTEM_DIRS.some((d) => p === d || p.startsWith(`${d}/`)), `not /, nor under ${SYSTEM_DIRS.join(', ')}`),
  )
  .max(16, 'more than 16 mounts');

export const RunArgsSchema = z.array(z.string().max(4096, 'an argument longer than 4096 characters')).max(256, 'more than 256 arguments');

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
  /** Command-line arguments the script is run with (`python train.py ARGS`); tasks.json's, else derived from the script. */
  args: RunArgsSchema.optional(),
  /** Files written into the run folder before every run of the task (relative path -> text). */
  files: RunFilesSchema.optional(),
  /** Absolute folders the script writes to, shown inside the sandbox as writable folders of the run (see RunMountsSchema). */
  mounts: RunMountsSchema.optional(),
  /** Environment variables the script reads (SageMaker's `SM_*`, …), set for every run of the task (tasks.json `env`). */
  env: ScriptEnvSchema.optional(),
  /** Runtime shims loaded into every real-mode run of the task (tasks.json `runtime`, recorded by make-task; runtimeShims.ts). */
  runtime: TaskRuntimeSchema.optional(),
  /** The evidence its training must leave (tasks.json `verify`; absent: everything read from the original). */
  verify: VerifySpecSchema.optional(),
  /** The hub models and datasets real mode provides (tasks.json `hub`, recorded by make-task; absent: derived from the script and its args). */
  hub: HubNeedsSchema.optional(),
  /** A natural-drift task (make-task --upgrade-to): its episodes' breakage is the real one (naturalDriftEpisode.ts). */
  natural_drift: NaturalDriftSchema.optional(),
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
  /** ours: whether the spec reproduces a real release's drift or a made-up one (drift generator). */
  provenance: z.enum(['real', 'synthetic']).optional(),
  /** ours: the entry of resources/drifts/catalog.json the spec reproduces, when there is one. */
  drift_id: z.string().optional(),
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

/**
 * How a run was isolated (sandbox/): `bubblewrap` = own pid, network, mount, ipc and uts namespaces
 * with a read-only system; `process-group` = no namespaces, only the process-group kill, rlimits and
 * the clean environment; `none` = Windows (no process groups, no rlimits, clean environment only).
 */
export const IsolationSchema = z.enum(['bubblewrap', 'process-group', 'none']);
export type Isolation = z.infer<typeof IsolationSchema>;

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
  /** ours: how the run was isolated; absent in results recorded before the sandbox existed. */
  isolation: IsolationSchema.optional(),
  /** ours: `warm` when a zygote started ahead ran it (warm/, docs/sandbox.md), `cold` otherwise; absent in older results. */
  runtime: z.enum(['warm', 'cold']).optional(),
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

/** The observation of an environment with no episode (before reset): phase `done`, empty fields, `info` as given. */
export function emptyObservation(info: Record<string, unknown>): Observation {
  return {
    current_phase: 'done',
    task_id: '',
    task_description: '',
    target_category: '',
    script_content: '',
    error_trace: null,
    library_versions: {},
    reward: null,
    reward_breakdown: {},
    held_out_breakdown: {},
    episode_step: 0,
    info,
    done: false,
    metadata: {},
  };
}

export const ResetOptionsSchema = z
  .object({
    difficulty: DifficultySchema.optional(),
    /** The task to run (snake_case as on the OpenEnv wire); `taskId` is the same, for callers in TypeScript. */
    task_id: z.string().optional(),
    taskId: z.string().optional(),
    seed: z.number().int().nonnegative().optional(),
    /** OpenEnv's custom episode identifier; a fresh UUID when absent. */
    episode_id: z.string().min(1).max(255).optional(),
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
  return error.issues.map((i) => `${i.path.length ? i.path.join('.') : '(root)'}: ${i.message}`).join('; ');
}

/** A free-form value (an `info` entry, an error's detail) as text: strings as they are, anything else as JSON. */
export function infoText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.message;
  return JSON.stringify(value) ?? 'undefined';
}

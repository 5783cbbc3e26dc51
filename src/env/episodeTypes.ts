// Types shared by the embedded environment, the remote backend and the editor.
// The embedded implementation is `ForgeEnvironment` (environment.ts); the editor talks to
// either backend through `EnvironmentBackend` so it never depends on where the env runs.
import { z } from 'zod';
import { SandboxOptionsSchema } from './sandbox/options';
import {
  BreakdownSchema,
  ExecutionModeSchema,
  ExecutionResultSchema,
  LibraryVersionsSchema,
  PhaseSchema,
  PrimitiveSpecSchema,
  type ForgeAction,
  type Observation,
  type ResetOptions,
} from './schemas';

export const EnvironmentConfigSchema = z.object({
  mode: ExecutionModeSchema.default('simulated'),
  /**
   * The user's interpreter. Unset: `python3` in simulated mode; in real mode the managed venv of the
   * episode's snapshot (realMode.ts).
   */
  interpreter: z.string().min(1).optional(),
  timeoutMs: z.number().int().min(1000).max(3_600_000).default(60_000),
  outputCapBytes: z.number().int().min(1024).max(256 * 1024 * 1024).default(1024 * 1024),
  /** Parent folder for per-run temporary directories (default: the OS temp folder). */
  parentDir: z.string().optional(),
  /** Extra folders of user task scripts (`.py` + optional `tasks.json`). */
  taskDirs: z.array(z.string()).default([]),
  /** Isolation of every run (sandbox/options.ts): default sandboxed where possible, default rlimits. */
  sandbox: SandboxOptionsSchema.prefault({}),
});
export type EnvironmentConfig = z.infer<typeof EnvironmentConfigSchema>;
/** What the constructor accepts: every field optional (defaults above). */
export type EnvironmentConfigInput = z.input<typeof EnvironmentConfigSchema>;

/** How a submitted diff went onto the broken script. */
export const DiffApplicationSchema = z.object({
  ok: z.boolean(),
  mode: z.enum(['empty', 'strict', 'lenient', 'whole_script']).optional(),
  error: z.string().optional(),
  warnings: z.array(z.string()).default([]),
});
export type DiffApplication = z.infer<typeof DiffApplicationSchema>;

/** A scored repair: what `step({repair})` computes, also available without ending the episode. */
export const RepairEvaluationSchema = z.object({
  unified_diff: z.string(),
  apply: DiffApplicationSchema,
  repaired_script: z.string(),
  reward: z.number(),
  reward_breakdown: BreakdownSchema,
  held_out_breakdown: BreakdownSchema,
  success: z.boolean(),
  error_trace: z.string(),
  findings: z.array(z.string()).default([]),
  execution: ExecutionResultSchema.nullable(),
});
export type RepairEvaluation = z.infer<typeof RepairEvaluationSchema>;

/** Everything needed to resume an episode (e.g. after a window reload). JSON-serialisable. */
export const EpisodeStateSchema = z.object({
  episode_id: z.string(),
  seed: z.number().int().nonnegative(),
  phase: PhaseSchema,
  episode_step: z.number().int().nonnegative(),
  task_id: z.string(),
  target_category: z.string(),
  library_versions: LibraryVersionsSchema,
  original_script: z.string(),
  broken_script: z.string().nullable(),
  breakage_spec: PrimitiveSpecSchema.nullable(),
  inverse_spec: PrimitiveSpecSchema.nullable(),
  broken_execution: ExecutionResultSchema.nullable(),
  final: RepairEvaluationSchema.nullable(),
  started_at: z.string(),
});
export type EpisodeState = z.infer<typeof EpisodeStateSchema>;

export interface StepOptions {
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /** Real mode: progress of building the snapshot's venv and local hub (first use only). */
  onProgress?: (message: string) => void;
}

export interface EnvironmentBackend {
  readonly kind: 'embedded' | 'remote';
  reset(options?: ResetOptions): Promise<Observation>;
  /** Never throws on bad input: a wrong-phase or invalid action yields an observation with `info.error`, state unchanged. */
  step(action: ForgeAction | unknown, options?: StepOptions): Promise<Observation>;
  dispose(): Promise<void>;
}

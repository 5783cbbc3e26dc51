// Types shared by the embedded environment, the remote backend and the editor.
// `EnvironmentBackend` is the OpenEnv-level contract (reset/step) of `ForgeEnvironment` and
// `RemoteBackend`; the editor's episodes go through `EpisodeSession` (episodeSession.ts), built on them.
import type { PhaseSink } from '../phaseTimes';
import { z } from 'zod';
import { ModelArchitecturesSchema } from '../hub/modelTable';
import { DEFAULT_MAX_DIFF_BYTES, MAX_MAX_DIFF_BYTES, MIN_MAX_DIFF_BYTES } from '../limits';
import { SandboxOptionsSchema } from '../sandbox/options';
import { VerificationSchema } from '../verify/judge';
import {
  BreakageActionSchema,
  BreakdownSchema,
  ExecutionModeSchema,
  ExecutionResultSchema,
  LibraryVersionsSchema,
  PhaseSchema,
  PrimitiveSpecSchema,
  type ForgeAction,
  type LibraryVersions,
  type PrimitiveSpec,
  type Observation,
  type ResetOptions,
} from '../schemas';

export const EnvironmentConfigSchema = z.object({
  mode: ExecutionModeSchema.default('simulated'),
  /**
   * The user's interpreter. Unset: `python3` in simulated mode; in real mode the managed venv of the
   * episode's snapshot (realMode.ts).
   */
  interpreter: z.string().min(1).optional(),
  timeoutMs: z.number().int().min(1000).max(3_600_000).default(60_000),
  outputCapBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(1024 * 1024),
  /** Parent folder for per-run temporary directories (default: the OS temp folder). */
  parentDir: z.string().optional(),
  /** Extra folders of user task scripts (`.py` + optional `tasks.json`). */
  taskDirs: z.array(z.string()).default([]),
  /** Repair submissions larger than this (UTF-8 bytes) are refused unapplied (`forgeenv.maxDiffBytes`). */
  maxDiffBytes: z.number().int().min(MIN_MAX_DIFF_BYTES).max(MAX_MAX_DIFF_BYTES).default(DEFAULT_MAX_DIFF_BYTES),
  /** Isolation of every run (sandbox/options.ts): default sandboxed where possible, default rlimits. */
  sandbox: SandboxOptionsSchema.prefault({}),
  /**
   * Refuse repairs that add constructs the static validator forbids (validator.ts), before they run.
   * The validator is advisory: the sandbox and the verifier are the boundary, and `false` runs such
   * repairs so that those alone judge them (the adversarial suite measures the verifier this way).
   */
  validateRepairs: z.boolean().default(true),
  /** Real mode: hub model id -> transformers model_type or a well-known id, for ids ForgeEnv cannot place (`forgeenv.real.modelArchitectures`). */
  modelArchitectures: ModelArchitecturesSchema.default({}),
  /**
   * Run through the warm runtime (executor.ts `warm`, docs/sandbox.md): zygotes of this
   * environment's run shape are started ahead at reset; a run with none ready is cold.
   */
  warm: z.boolean().default(false),
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
  /** What the environment's verifier found in the run's artifact (absent in states saved before it existed). */
  verification: VerificationSchema.optional(),
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

const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest');

/**
 * What defines an episode, so an environment can re-create it deterministically (e.g. after the
 * client that held it reloaded, or on another session of a server): the task, seed, snapshot and
 * target pin the reset; the breakage is re-applied to the task's own script. The digests make sure
 * the scripts are the ones the episode started on (another version of the task is refused).
 * The broken script always runs again: its first run becomes the observation's error trace and the
 * demonstration record's "did the breakage break" (`info.broken_execution`), so a run result sent
 * by a client (a forged exit code, a made-up traceback) must never stand in for it.
 * `broken_execution` is still accepted, unread, so that recipes saved by older versions (and older
 * clients, which sent it) keep restoring.
 */
export const EpisodeRecipeSchema = z
  .object({
    episode_id: z.string().min(1).max(255),
    seed: z.number().int().nonnegative(),
    task_id: z.string().min(1),
    library_versions: LibraryVersionsSchema,
    target_category: z.string().min(1),
    started_at: z.string().min(1).max(64).optional(),
    breakage: BreakageActionSchema.optional(),
    original_sha256: Sha256Hex.optional(),
    broken_sha256: Sha256Hex.optional(),
    /** Ignored: accepted from older clients and saved recipes; the broken script runs again on every restore. */
    broken_execution: z.unknown().optional(),
  })
  .strict();
export type EpisodeRecipe = z.input<typeof EpisodeRecipeSchema>;

export interface StepOptions {
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /** Real mode: progress of building the snapshot's venv and local hub (first use only). */
  onProgress?: (message: string) => void;
  /**
   * Where the step's time goes (phaseTimes.ts), for benches: each run's phases prefixed with its role
   * (`broken run: process`, `repair run: scrub`, `verifier run: run folder`), and the episode's own
   * (`repair: diff apply`, `repair: reward`, `<role>: run slot`, `<role>: run options`).
   */
  onPhase?: PhaseSink;
}

export interface EnvironmentBackend {
  readonly kind: 'embedded' | 'remote';
  reset(options?: ResetOptions): Promise<Observation>;
  /** Never throws on bad input: a wrong-phase or invalid action yields an observation with `info.error`, state unchanged. */
  step(action: ForgeAction | unknown, options?: StepOptions): Promise<Observation>;
  dispose(): Promise<void>;
}

/** What an episode was, independent of who repaired it (HumanEpisodeStart has these fields). */
export interface EpisodeFacts {
  episodeId: string;
  seed: number;
  task: { task_id: string };
  libraryVersions: LibraryVersions;
  targetCategory: string;
  breakageSpec: PrimitiveSpec;
  originalScript: string;
  /** The broken script's run: whether the breakage made it fail is recorded with the demonstration. */
  brokenExecution: { exit_code: number | null; timed_out: boolean; isolation?: string };
  driftPrompt: string;
  driftCompletion: string;
  repairPrompt: string;
  migrationHint?: { shown: boolean; drift_id?: string };
}

/** A repair that never ran (its diff did not apply, or nothing runnable was submitted): zero everywhere, saying why. */
export function unrunEvaluation(o: {
  unifiedDiff: string;
  brokenScript: string;
  error: string;
  trace: string;
  finding: string;
}): RepairEvaluation {
  return {
    unified_diff: o.unifiedDiff,
    apply: { ok: false, error: o.error, warnings: [] },
    repaired_script: o.brokenScript,
    reward: 0,
    reward_breakdown: { script_executes: 0, loss_decreased: 0, checkpoint_appeared: 0, diff_size_penalty: 0 },
    held_out_breakdown: {
      executed_cleanly: 0,
      checkpoint_valid: 0,
      loss_decreased: 0,
      metrics_in_range: 0,
      no_forbidden_workarounds: 0,
      intent_preserved: 0,
      hidden_tests_passed: 0,
    },
    success: false,
    error_trace: o.trace,
    findings: [o.finding],
    execution: null,
  };
}

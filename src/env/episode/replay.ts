// Rebuilds a recorded episode (task, seed, breakage, snapshot) and scores a diff in it, as the
// final step of the original episode did. Used by `forgeenv rescore` (stored demonstrations) and
// `forgeenv evaluate` (SWE-bench-style predictions against our instances file).
import type { ForgeEnvironment } from './environment';
import { EnvironmentError } from './environment';
import type { RepairEvaluation, StepOptions } from './episodeTypes';
import type { LibraryVersions } from '../schemas';

export interface ReplaySpec {
  taskId: string;
  seed: number;
  primitive: { primitive_type: string; params: Record<string, unknown> };
  libraryVersions: LibraryVersions;
}

export interface Replayed {
  evaluation: RepairEvaluation;
  /** The task's script now (to check it is still the one recorded: the task hash). */
  originalScript: string;
  /** Whether the breakage made the broken script fail, now. */
  breakageFailed: boolean;
}

export async function replayRepair(env: ForgeEnvironment, spec: ReplaySpec, diff: string, options: StepOptions = {}): Promise<Replayed> {
  // The target category is pinned so the Teacher's state neither matters nor changes.
  await env.reset({
    taskId: spec.taskId,
    seed: spec.seed,
    library_versions: spec.libraryVersions,
    target_category: spec.primitive.primitive_type,
  });
  const obs = await env.step({ breakage: { primitive_type: spec.primitive.primitive_type, params: spec.primitive.params } }, options);
  if (typeof obs.info.error === 'string') throw new EnvironmentError(`the breakage could not be replayed: ${obs.info.error}`);
  const state = env.state;
  if (!state?.broken_execution) throw new EnvironmentError('the drift phase did not complete');
  const done = await env.step({ repair: { unified_diff: diff } }, options);
  if (typeof done.info.error === 'string') throw new EnvironmentError(`the repair could not be scored: ${done.info.error}`);
  const final = env.state?.final;
  if (!final) throw new EnvironmentError('the environment did not record the final repair');
  return { evaluation: final, originalScript: state.original_script, breakageFailed: state.broken_execution.exit_code !== 0 };
}

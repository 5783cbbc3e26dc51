// A human in the repair agent's seat: the drift phase is played by the Teacher and the baseline
// drift generator (or the user's own primitive choice), the repair phase by the person.
// The prompts a model would have seen are rendered too, so the demonstration trains a model
// on exactly the layout the environment shows it.
import { BaselineDriftGenerator } from '../drift/generator';
import type { EpisodeSession } from './episodeSession';
import { EnvironmentError } from './environment';
import { migrationHint, type MigrationHint } from './migrationHint';
import { NATURAL_DRIFT_CATEGORY, NATURAL_DRIFT_PRIMITIVE } from './naturalDriftEpisode';
import { primitiveCatalog, getPrimitive } from '../primitives/registry';
import { renderDriftGeneratorPrompt, renderRepairAgentPrompt } from './prompts';
import { type Difficulty, type ExecutionResult, type LibraryVersions, type Observation, type PrimitiveSpec, type Task } from '../schemas';

export interface HumanEpisodeStart {
  episodeId: string;
  seed: number;
  task: Task;
  libraryVersions: LibraryVersions;
  targetCategory: string;
  breakageSpec: PrimitiveSpec;
  inverseSpec: PrimitiveSpec;
  driftPrompt: string;
  driftCompletion: string;
  repairPrompt: string;
  originalScript: string;
  brokenScript: string;
  brokenExecution: ExecutionResult;
  errorTrace: string;
  observation: Observation;
  /** Whether the repair prompt carried the release's migration note (absent in episodes saved before hints existed). */
  migrationHint?: MigrationHint;
}

export interface HumanEpisodeOptions {
  taskId?: string;
  difficulty?: Difficulty;
  seed?: number;
  /** The user's own choice; omitted: the Teacher picks a category and the baseline generator a spec. */
  primitive?: { primitive_type: string; params?: Record<string, unknown> };
  targetCategory?: string;
  signal?: AbortSignal;
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
  /** Put the release's migration note for the drift in the repair prompt (default false). */
  migrationHints?: boolean;
  /** Pin the snapshot instead of the task's own. */
  libraryVersions?: LibraryVersions;
}

/** What starting a human episode needs of an environment: ForgeEnvironment and every EpisodeSession have it. */
export type HumanEpisodeEnv = Pick<EpisodeSession, 'reset' | 'step' | 'state' | 'task'>;

export async function startHumanEpisode(env: HumanEpisodeEnv, opts: HumanEpisodeOptions = {}): Promise<HumanEpisodeStart> {
  const target = opts.targetCategory ?? opts.primitive?.primitive_type;
  const obs = await env.reset({
    taskId: opts.taskId,
    difficulty: opts.difficulty,
    seed: opts.seed,
    target_category: target,
    ...(opts.libraryVersions ? { library_versions: opts.libraryVersions } : {}),
  });
  const state = env.state;
  if (!state) throw new EnvironmentError('reset() did not start an episode');
  const driftPrompt = renderDriftGeneratorPrompt({
    script: obs.script_content,
    target_category: obs.target_category,
    library_versions: obs.library_versions,
    primitives: primitiveCatalog().filter((p) => p.kind === 'breakage'),
  });
  let spec: PrimitiveSpec;
  // A natural-drift task's breakage is the real one: nothing to choose (another primitive is refused by the environment).
  if (opts.primitive?.primitive_type === NATURAL_DRIFT_PRIMITIVE || (!opts.primitive && env.task?.natural_drift)) {
    spec = { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} };
  } else if (opts.primitive?.params) {
    spec = { primitive_type: opts.primitive.primitive_type, params: opts.primitive.params };
  } else {
    if (opts.primitive && !getPrimitive(opts.primitive.primitive_type)) {
      throw new EnvironmentError(`Unknown primitive "${opts.primitive.primitive_type}".`);
    }
    spec = new BaselineDriftGenerator(state.seed).propose(obs.target_category, obs.script_content, obs.library_versions);
    if (opts.primitive && spec.primitive_type !== opts.primitive.primitive_type) {
      throw new EnvironmentError(`${opts.primitive.primitive_type} has nothing to break in task ${obs.task_id}.`);
    }
  }
  const driftCompletion = JSON.stringify({ primitive_type: spec.primitive_type, params: spec.params });
  const obs2 = await env.step(
    { breakage: { primitive_type: spec.primitive_type, params: spec.params } },
    { signal: opts.signal, onOutput: opts.onOutput },
  );
  if (typeof obs2.info.error === 'string') throw new EnvironmentError(obs2.info.error);
  const after = env.state;
  const natural = after?.breakage_spec?.primitive_type === NATURAL_DRIFT_PRIMITIVE;
  if (!after || after.broken_script === null || !after.broken_execution || (!after.inverse_spec && !natural) || !after.breakage_spec) {
    throw new EnvironmentError('The drift phase did not complete.');
  }
  const task = env.task;
  if (!task || task.task_id !== obs.task_id) throw new EnvironmentError(`Unknown task ${obs.task_id}`);
  const errorTrace = obs2.error_trace ?? '';
  const hint = migrationHint(after.breakage_spec, opts.migrationHints ?? false);
  return {
    episodeId: after.episode_id,
    seed: after.seed,
    task,
    libraryVersions: after.library_versions,
    targetCategory: after.target_category,
    breakageSpec: after.breakage_spec,
    // A natural drift has no inverse primitive: the record names NaturalDrift (the repair is the person's).
    inverseSpec: after.inverse_spec ?? { primitive_type: NATURAL_DRIFT_PRIMITIVE, category: NATURAL_DRIFT_CATEGORY, params: {} },
    driftPrompt,
    driftCompletion,
    repairPrompt: renderRepairAgentPrompt({
      broken_script: after.broken_script,
      error_trace: errorTrace,
      library_versions: after.library_versions,
      target_category: after.target_category,
      migration_hint: hint.shown ? hint.text : undefined,
    }),
    originalScript: after.original_script,
    brokenScript: after.broken_script,
    brokenExecution: after.broken_execution,
    errorTrace,
    observation: obs2,
    migrationHint: { shown: hint.shown, ...(hint.drift_id ? { drift_id: hint.drift_id } : {}) },
  };
}

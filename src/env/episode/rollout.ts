// One full episode driven by generate functions, as the original's
// forgeenv/training/rollout.py does for GRPO: the policy is asked twice with role-switched prompts.
import { BaselineDriftGenerator, parseDriftOutput } from '../drift/generator';
import type { ForgeEnvironment } from './environment';
import { EnvironmentError } from './environment';
import {
  DRIFT_GENERATOR_SYSTEM_PROMPT,
  REPAIR_AGENT_SYSTEM_PROMPT,
  extractDiff,
  renderDriftGeneratorPrompt,
  renderRepairAgentPrompt,
} from './prompts';
import { migrationHint, type MigrationHint } from './migrationHint';
import { NATURAL_DRIFT_PRIMITIVE } from './naturalDriftEpisode';
import { primitiveCatalog } from '../primitives/registry';
import { isSuccess } from '../scoring/reward';
import { RolloutResultSchema, type Difficulty, type Observation, type RolloutResult } from '../schemas';

/** A (system, user) prompt pair in, the assistant's completion out. */
export type GenerateFn = (system: string, user: string) => string | Promise<string>;

export interface RolloutOptions {
  driftGenerate?: GenerateFn;
  repairGenerate?: GenerateFn;
  /** Default `easy` when no task is named (the original ForgeEnv rollout's default); `any` samples the whole corpus. */
  difficulty?: Difficulty | 'any';
  taskId?: string;
  seed?: number;
  signal?: AbortSignal;
  /** Put the release's migration note for the drift in the repair prompt (default false). */
  migrationHints?: boolean;
}

/** The script in a prompt's ```python fence (both renderers put it there), or '' if none. */
function scriptFromPrompt(user: string): string {
  return /```python\n([\s\S]*?)```/.exec(user)?.[1] ?? '';
}

/** The seeded baseline drift generator, reading the target category and script from the prompt. */
export function baselineDriftGenerate(seed = 0): GenerateFn {
  const gen = new BaselineDriftGenerator(seed);
  return (_system, user) => {
    const target = /^target category:\s*(.+)$/im.exec(user)?.[1]?.trim() ?? 'RenameApiCall';
    const script = scriptFromPrompt(user);
    const versions: Record<string, string> = {};
    for (const m of user.matchAll(/^([A-Za-z][\w-]*)=(\d+(?:\.\d+)*)\s*$/gm)) versions[m[1]] = m[2]!;
    return JSON.stringify(gen.propose(target, script, versions));
  };
}

/** The intentional negative baseline: an empty diff. */
export const noopRepairGenerate: GenerateFn = () => '';

/** The upper-bound baseline: the inverse primitive's diff, read from the environment's state. */
export function oracleRepairGenerate(env: ForgeEnvironment): GenerateFn {
  return () => '```diff\n' + env.oracleDiff() + '```\n';
}

/** A generator that always answers with one fixed primitive spec (the CLI's --primitive). */
export function fixedDriftGenerate(primitiveType: string, params?: Record<string, unknown>, seed = 0): GenerateFn {
  if (params) return () => JSON.stringify({ primitive_type: primitiveType, params });
  const gen = new BaselineDriftGenerator(seed);
  return (_system, user) => {
    const script = scriptFromPrompt(user);
    const spec = gen.propose(primitiveType, script);
    if (spec.primitive_type !== primitiveType) throw new EnvironmentError(`${primitiveType} has nothing to break in this script.`);
    return JSON.stringify(spec);
  };
}

/** An episode past its drift phase, ready for repairs: what `rolloutOneEpisode` and `evaluate-model` share. */
export interface RepairPhase {
  /** The reset's observation. */
  start: Observation;
  /** The observation after the breakage (its `info.error` when the drift was refused). */
  broken: Observation;
  spec: { primitive_type: string; params?: Record<string, unknown> };
  driftPrompt: string;
  driftCompletion: string;
  /** Why the drift phase did not reach a repair (the primitive refused); undefined when it did. */
  driftError: string | undefined;
  /** The environment's own repair prompt ('' when the drift was refused). */
  repairPrompt: string;
  hint: MigrationHint;
}

/** Reset and the drift phase: the broken script and the repair prompt the agent is to answer. */
export async function prepareRepairPhase(env: ForgeEnvironment, opts: Omit<RolloutOptions, 'repairGenerate'> = {}): Promise<RepairPhase> {
  const wanted = opts.difficulty ?? (opts.taskId ? undefined : 'easy');
  const obs = await env.reset({ difficulty: wanted === 'any' ? undefined : wanted, taskId: opts.taskId, seed: opts.seed });
  const seed = env.state?.seed ?? 0;
  const driftGenerate = opts.driftGenerate ?? baselineDriftGenerate(seed);
  const driftPrompt = renderDriftGeneratorPrompt({
    script: obs.script_content,
    target_category: obs.target_category,
    library_versions: obs.library_versions,
    primitives: primitiveCatalog().filter((p) => p.kind === 'breakage'),
  });
  // A natural-drift task's breakage is the real one: the drift phase has nothing to generate.
  const driftRaw = env.task?.natural_drift
    ? JSON.stringify({ primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} })
    : await driftGenerate(DRIFT_GENERATOR_SYSTEM_PROMPT, driftPrompt);
  const spec = parseDriftOutput(driftRaw) ?? { primitive_type: 'RenameApiCall', params: {} };
  const obs2 = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params ?? {} } }, { signal: opts.signal });
  const driftError = typeof obs2.info.error === 'string' ? obs2.info.error : undefined;
  let repairPrompt = '';
  let hint: MigrationHint = { shown: false };
  if (!driftError) {
    const spec2 = env.state?.breakage_spec;
    hint = spec2 ? migrationHint(spec2, opts.migrationHints ?? false) : hint;
    repairPrompt = renderRepairAgentPrompt({
      broken_script: obs2.script_content,
      error_trace: obs2.error_trace ?? '',
      library_versions: obs2.library_versions,
      target_category: obs2.target_category,
      migration_hint: hint.shown ? hint.text : undefined,
    });
  }
  return { start: obs, broken: obs2, spec, driftPrompt, driftCompletion: driftRaw, driftError, repairPrompt, hint };
}

export async function rolloutOneEpisode(env: ForgeEnvironment, opts: RolloutOptions = {}): Promise<RolloutResult> {
  const phase = await prepareRepairPhase(env, opts);
  const { start: obs, spec, driftError, repairPrompt, hint } = phase;
  const repairGenerate = opts.repairGenerate ?? noopRepairGenerate;

  // Phase 2: repair agent (skipped when the drift was refused: the episode never left drift_gen).
  let repairRaw = '';
  let final = phase.broken;
  if (!driftError) {
    repairRaw = await repairGenerate(REPAIR_AGENT_SYSTEM_PROMPT, repairPrompt);
    const diff = repairRaw ? extractDiff(repairRaw) : '';
    final = await env.step({ repair: { unified_diff: diff } }, { signal: opts.signal });
  }
  const held = final.held_out_breakdown;
  return RolloutResultSchema.parse({
    task_id: obs.task_id,
    primitive_type: spec.primitive_type,
    drift_prompt: phase.driftPrompt,
    drift_completion: phase.driftCompletion,
    repair_prompt: repairPrompt,
    repair_completion: repairRaw,
    visible_reward: final.reward ?? 0,
    visible_breakdown: final.reward_breakdown,
    held_out_breakdown: held,
    success: isSuccess(held),
    error_trace: driftError ?? final.error_trace ?? '',
    info: {
      // The fallback warning is for the person at the machine, not for every record of the dataset
      // (`isolation` stays: it is the provenance).
      ...withoutKey(final.info, 'sandbox_warning'),
      primitive: { primitive_type: spec.primitive_type, params: spec.params ?? {} },
      library_versions: obs.library_versions,
      migration_hint: { shown: hint.shown, ...(hint.drift_id ? { drift_id: hint.drift_id } : {}) },
    },
  });
}

function withoutKey(info: Record<string, unknown>, key: string): Record<string, unknown> {
  const { [key]: _dropped, ...rest } = info;
  return rest;
}

// `forgeenv evaluate-model`'s core, free of the editor and of files: a model is the repair agent.
// Per problem (a task and a seed, so the breakage is the environment's own, deterministic), the
// drift phase runs once and the model answers the environment's repair prompt n times; each answer
// is parsed (repairAnswer.ts) and scored by the environment (evaluateRepair: apply, run, verify) in
// the environment's mode. Every attempt is handed to `onAttempt` with its episode facts, its
// evaluation and `agent` provenance; the report gives pass@k per problem, primitive and snapshot
// with the visible check (exit 0 and a verified artifact: what the agent is shown) and the
// held-out check (`success`) kept apart, and counts requests, retries, timeouts and parse failures.
import type { ForgeEnvironment } from '../episode/environment';
import { unrunEvaluation, type EpisodeFacts, type RepairEvaluation } from '../episode/episodeTypes';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../episode/prompts';
import { isSuccess } from '../scoring/reward';
import { prepareRepairPhase } from '../episode/rollout';
import { RolloutResultSchema, type RolloutResult } from '../schemas';
import { snapshotIdOf } from '../snapshots/versions';
import type { RequestStats, Sampling } from './chatEndpoint';
import { meanPassAt, passAtKs, reportedKs, type PassAt } from './passAtK';
import { parseRepairAnswer } from './repairAnswer';

/** One problem: the episode `reset({task_id, seed})` plus the seeded baseline drift makes. */
export interface Problem {
  task_id: string;
  seed: number;
}

/** GitChameleon-style example id of a problem: `task_id@seed`. */
export function exampleIdOf(p: Problem): string {
  return `${p.task_id}@${p.seed}`;
}

/** The problem an example id names, or undefined when it is not `task_id@seed`. */
export function problemOf(exampleId: string): Problem | undefined {
  const at = exampleId.lastIndexOf('@');
  if (at <= 0) return undefined;
  const seed = Number(exampleId.slice(at + 1));
  if (!/^\d+$/.test(exampleId.slice(at + 1)) || !Number.isSafeInteger(seed)) return undefined;
  return { task_id: exampleId.slice(0, at), seed };
}

/** A model's answer to one repair prompt, or why there is none. */
export type Answer =
  | {
      ok: true;
      text: string;
      finish_reason?: string | null;
      usage?: { prompt_tokens?: number; completion_tokens?: number };
      stats?: RequestStats;
    }
  | { ok: false; error: string; stats?: RequestStats };

/** Asks for attempt `index` (0-based) of a problem; `sampling` is what this attempt is sampled with. */
export type AnswerFn = (prompt: { system: string; user: string }, problem: Problem, index: number) => Promise<Answer>;

/** Who answered: kept in every attempt's `info.agent`. */
export interface AgentIdentity {
  /** The endpoint's URL, or null when answers came from a file. */
  endpoint: string | null;
  model: string;
  sampling: Sampling;
  source: 'endpoint' | 'answers-file';
}

export interface Attempt {
  example_id: string;
  /** 1-based. */
  attempt: number;
  facts: EpisodeFacts;
  evaluation: RepairEvaluation;
  /** `info.agent` of the attempt's record. */
  agent: Record<string, unknown>;
  /** The model's text as it came (the record's completion is the submission scored). */
  completion: string;
}

export interface ProblemOutcome {
  example_id: string;
  task_id: string;
  seed: number;
  primitive_type: string | null;
  snapshot: string | null;
  n: number;
  visible_passes: number;
  held_out_passes: number;
  visible: PassAt;
  held_out: PassAt;
  /** Why the problem has no attempts (the drift was refused, the task is unknown, …). */
  refused?: string;
}

export interface GroupPassAt {
  problems: number;
  visible: PassAt;
  held_out: PassAt;
}

export interface ModelEvaluationReport {
  agent: AgentIdentity;
  mode: string;
  n: number;
  k: number;
  problems: ProblemOutcome[];
  overall: GroupPassAt;
  by_primitive: Record<string, GroupPassAt>;
  by_snapshot: Record<string, GroupPassAt>;
  attempts: number;
  /** Attempts whose answer could not be read as a repair, by reason. */
  unparseable: number;
  unparseable_reasons: Record<string, number>;
  /** Attempts the endpoint gave no answer for (after its retries), by error. */
  endpoint_failures: number;
  endpoint_errors: Record<string, number>;
  requests: { total: number; retries: number; timeouts: number; latency_ms_total: number };
  cancelled: boolean;
}

export interface EvaluateModelOptions {
  problems: readonly Problem[];
  /** Samples per problem. */
  n: number;
  /** The k of pass@k (at most n). */
  k: number;
  agent: AgentIdentity;
  answer: AnswerFn;
  migrationHints?: boolean;
  signal?: AbortSignal;
  onAttempt?: (a: Attempt) => Promise<void> | void;
  onProgress?: (message: string) => void;
}

/** The evaluation of an attempt that submitted nothing runnable: a failure that says why, nothing run. */
export function unscoredFailure(brokenScript: string, reason: string): RepairEvaluation {
  return unrunEvaluation({
    unifiedDiff: '',
    brokenScript,
    error: reason,
    trace: `No repair was scored: ${reason}`,
    finding: `no repair: ${reason}`,
  });
}

/** The visible check: the script exits 0 and leaves a verified artifact (script_executes > 0). */
export function visiblePass(e: RepairEvaluation): boolean {
  return (e.reward_breakdown.script_executes ?? 0) > 0;
}

export async function evaluateModel(env: ForgeEnvironment, opts: EvaluateModelOptions): Promise<ModelEvaluationReport> {
  if (!(Number.isInteger(opts.n) && opts.n >= 1)) throw new RangeError('n must be a positive integer');
  if (!(Number.isInteger(opts.k) && opts.k >= 1 && opts.k <= opts.n)) throw new RangeError(`k must be between 1 and n (${opts.n})`);
  const ks = reportedKs(opts.n, opts.k);
  const report: ModelEvaluationReport = {
    agent: opts.agent,
    mode: env.config.mode,
    n: opts.n,
    k: opts.k,
    problems: [],
    overall: { problems: 0, visible: {}, held_out: {} },
    by_primitive: {},
    by_snapshot: {},
    attempts: 0,
    unparseable: 0,
    unparseable_reasons: {},
    endpoint_failures: 0,
    endpoint_errors: {},
    requests: { total: 0, retries: 0, timeouts: 0, latency_ms_total: 0 },
    cancelled: false,
  };
  for (const problem of opts.problems) {
    if (opts.signal?.aborted) break;
    const example_id = exampleIdOf(problem);
    const outcome: ProblemOutcome = {
      example_id,
      task_id: problem.task_id,
      seed: problem.seed,
      primitive_type: null,
      snapshot: null,
      n: 0,
      visible_passes: 0,
      held_out_passes: 0,
      visible: {},
      held_out: {},
    };
    report.problems.push(outcome);
    let phase;
    try {
      phase = await prepareRepairPhase(env, {
        taskId: problem.task_id,
        seed: problem.seed,
        migrationHints: opts.migrationHints,
        signal: opts.signal,
      });
    } catch (e) {
      outcome.refused = (e as Error).message;
      opts.onProgress?.(`${example_id}: no episode (${outcome.refused})`);
      continue;
    }
    outcome.primitive_type = phase.spec.primitive_type;
    outcome.snapshot = snapshotIdOf(phase.start.library_versions) ?? null;
    const state = env.state;
    if (phase.driftError || !state?.breakage_spec || !state.broken_execution || state.broken_script === null) {
      outcome.refused = `the drift phase did not reach a repair: ${phase.driftError ?? 'no broken script'}`;
      opts.onProgress?.(`${example_id}: ${outcome.refused}`);
      continue;
    }
    const facts = (i: number): EpisodeFacts => ({
      // One record per attempt, so each needs its own timeline file: the attempt number is part of the id.
      episodeId: `${state.episode_id}.a${i}`,
      seed: state.seed,
      task: { task_id: state.task_id },
      libraryVersions: state.library_versions,
      targetCategory: state.target_category,
      breakageSpec: state.breakage_spec!,
      originalScript: state.original_script,
      brokenExecution: {
        exit_code: state.broken_execution!.exit_code,
        timed_out: state.broken_execution!.timed_out,
        ...(state.broken_execution!.isolation ? { isolation: state.broken_execution!.isolation } : {}),
      },
      driftPrompt: phase.driftPrompt,
      driftCompletion: phase.driftCompletion,
      repairPrompt: phase.repairPrompt,
      migrationHint: { shown: phase.hint.shown, ...(phase.hint.drift_id ? { drift_id: phase.hint.drift_id } : {}) },
    });
    for (let i = 0; i < opts.n; i++) {
      if (opts.signal?.aborted) break;
      const answer = await opts.answer({ system: REPAIR_AGENT_SYSTEM_PROMPT, user: phase.repairPrompt }, problem, i);
      if (answer.stats) {
        report.requests.total += answer.stats.requests;
        report.requests.retries += answer.stats.retries;
        report.requests.timeouts += answer.stats.timeouts;
        report.requests.latency_ms_total += answer.stats.latency_ms;
      }
      let evaluation: RepairEvaluation;
      let parse: Record<string, unknown>;
      if (!answer.ok) {
        report.endpoint_failures++;
        report.endpoint_errors[answer.error] = (report.endpoint_errors[answer.error] ?? 0) + 1;
        evaluation = unscoredFailure(state.broken_script, `the model gave no answer: ${answer.error}`);
        parse = { ok: false, reason: 'no answer' };
      } else {
        const parsed = parseRepairAnswer(answer.text);
        if (!parsed.ok) {
          report.unparseable++;
          const key = parsed.reason.replace(/ \(\d+ characters, starting .*\)$/, '');
          report.unparseable_reasons[key] = (report.unparseable_reasons[key] ?? 0) + 1;
          evaluation = unscoredFailure(state.broken_script, `the completion could not be read as a repair: ${parsed.reason}`);
          parse = { ok: false, reason: parsed.reason };
        } else {
          evaluation = await env.evaluateRepair(parsed.submission, { signal: opts.signal });
          parse = { ok: true, kind: parsed.kind };
        }
      }
      if (opts.signal?.aborted && evaluation.execution?.killed) break; // a cancelled run is no outcome
      const sampling =
        opts.agent.sampling.seed === undefined ? opts.agent.sampling : { ...opts.agent.sampling, seed: opts.agent.sampling.seed + i };
      const agent: Record<string, unknown> = {
        kind: 'model',
        source: opts.agent.source,
        endpoint: opts.agent.endpoint,
        model: opts.agent.model,
        sampling,
        example_id,
        attempt: i + 1,
        of: opts.n,
        parse,
        // What the model said, as it said it (the record's completion is the submission that was scored).
        completion: answer.ok ? answer.text : '',
        ...(answer.ok
          ? { finish_reason: answer.finish_reason ?? null, ...(answer.usage ? { usage: answer.usage } : {}) }
          : { error: answer.error }),
        ...(answer.stats ? { request: answer.stats } : {}),
      };
      const attempt: Attempt = {
        example_id,
        attempt: i + 1,
        facts: facts(i + 1),
        evaluation,
        agent,
        completion: answer.ok ? answer.text : '',
      };
      report.attempts++;
      outcome.n++;
      if (visiblePass(evaluation)) outcome.visible_passes++;
      if (isSuccess(evaluation.held_out_breakdown)) outcome.held_out_passes++;
      opts.onProgress?.(`${example_id} attempt ${i + 1}/${opts.n}: ${describeAttempt(evaluation, parse)}`);
      await opts.onAttempt?.(attempt);
    }
    if (outcome.n > 0) {
      const oks = ks.filter((x) => x <= outcome.n);
      outcome.visible = passAtKs(outcome.n, outcome.visible_passes, oks);
      outcome.held_out = passAtKs(outcome.n, outcome.held_out_passes, oks);
    }
  }
  report.cancelled = !!opts.signal?.aborted;
  const scored = report.problems.filter((p) => p.n > 0);
  report.overall = group(scored);
  for (const [key, pick] of [
    ['by_primitive', (p: ProblemOutcome) => p.primitive_type ?? 'unknown'],
    ['by_snapshot', (p: ProblemOutcome) => p.snapshot ?? 'custom'],
  ] as const) {
    const buckets = new Map<string, ProblemOutcome[]>();
    for (const p of scored) buckets.set(pick(p), [...(buckets.get(pick(p)) ?? []), p]);
    report[key] = Object.fromEntries([...buckets].sort(([a], [b]) => a.localeCompare(b)).map(([name, ps]) => [name, group(ps)]));
  }
  return report;
}

function group(ps: readonly ProblemOutcome[]): GroupPassAt {
  return { problems: ps.length, visible: meanPassAt(ps.map((p) => p.visible)), held_out: meanPassAt(ps.map((p) => p.held_out)) };
}

function describeAttempt(e: RepairEvaluation, parse: Record<string, unknown>): string {
  if (parse.ok !== true) return `failure (${e.apply.ok ? '' : e.apply.error})`;
  return `${isSuccess(e.held_out_breakdown) ? 'success' : 'failure'}, visible reward ${e.reward.toFixed(3)}${e.apply.ok ? '' : ` (diff did not apply: ${e.apply.error})`}`;
}

/** The attempt as a plain RolloutResult line (what the dataset's demonstrations extend). */
export function attemptRollout(a: Attempt): RolloutResult {
  const e = a.evaluation;
  return RolloutResultSchema.parse({
    task_id: a.facts.task.task_id,
    primitive_type: a.facts.breakageSpec.primitive_type,
    drift_prompt: a.facts.driftPrompt,
    drift_completion: a.facts.driftCompletion,
    repair_prompt: a.facts.repairPrompt,
    repair_completion: e.unified_diff,
    visible_reward: e.reward,
    visible_breakdown: e.reward_breakdown,
    held_out_breakdown: e.held_out_breakdown,
    success: isSuccess(e.held_out_breakdown),
    error_trace: e.error_trace,
    info: {
      primitive: { primitive_type: a.facts.breakageSpec.primitive_type, params: a.facts.breakageSpec.params ?? {} },
      library_versions: a.facts.libraryVersions,
      repair_apply: e.apply,
      findings: e.findings,
      agent: a.agent,
    },
  });
}

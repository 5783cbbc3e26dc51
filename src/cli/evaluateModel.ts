// `forgeenv evaluate-model`: any OpenAI-compatible chat endpoint as the repair agent (or the
// answers of a GitChameleon-style file), scored by the environment; pass@k per problem, primitive
// and snapshot. The loop is src/env/agent/modelEvaluation.ts; this file reads the command line,
// stores every attempt as a demonstration (RolloutResult + provenance + `info.agent`) and prints.
import { randomUUID } from 'node:crypto';
import { join, resolve } from 'node:path';
import { ENV_VERSION, ForgeEnvironment } from '../env/episode/environment';
import { chatComplete, chatCompletionsUrl, SamplingSchema } from '../env/agent/chatEndpoint';
import {
  evaluateModel,
  exampleIdOf,
  problemOf,
  type AgentIdentity,
  type Answer,
  type AnswerFn,
  type Attempt,
  type ModelEvaluationReport,
  type Problem,
} from '../env/agent/modelEvaluation';
import { ExecutionModeSchema, formatZodError } from '../env/schemas';
import { snapshotIdOf } from '../env/snapshots/versions';
import { groupAnswers, readAnswersFile, writeAnswersFile, type AnswerRow } from '../store/answersFile';
import { writeFileAtomic } from '../store/atomicWrite';
import { buildDemonstration, type DemonstrationProvenance } from '../store/demonstrationBuilder';
import { storeEpisode } from '../store/episodeWriter';
import { parseCommandLine } from './commandLine';
import { cliVersion, outFolderProblem } from './episodeOut';

type Out = (s: string) => void;

export const EVALUATE_MODEL_USAGE = `Usage: forgeenv evaluate-model --endpoint URL --model NAME [--tasks IDS] [--k N] [--n N]
         [--temperature T] [--top-p P] [--max-tokens N] [--sampling-seed N] [--seed N]
         [--request-timeout S] [--retries N] [--out DIR] [--export-answers FILE] [--json]
         [--mode simulated|real] [--python PATH] [--timeout S] [--task-dir DIR]... [--hints]
       forgeenv evaluate-model --import-answers FILE [--model NAME] [--tasks IDS] [--k N] [--out DIR] [--json] …
A model as the repair agent: for each task (the episode of --seed, default 0), the environment's
repair prompt is sent to the OpenAI-compatible chat endpoint --n times (default --k); each answer's
unified diff (or whole script in a fenced block) is scored by the environment (--mode, default
simulated); an answer with neither is a failure with its reason. Reports pass@k (unbiased
estimator) per task, primitive and snapshot, the visible check (exit 0 and a verified model) and
the held-out check (success) apart, with requests, retries and timeouts.
  --endpoint URL          base URL (http://127.0.0.1:8089/v1) or the full …/chat/completions URL;
                          FORGEENV_MODEL_API_KEY, when set, is sent as the bearer token
  --tasks IDS             comma-separated task ids (repeatable; default: every task)
  --k N                   pass@k's k (default 1); pass@1 is always reported
  --n N                   samples per task (default k; at least k)
  --temperature T         default 0.2 with --k 1, else 0.8;  --top-p P  --max-tokens N (default 1024)
  --sampling-seed N       sent as the request's seed (attempt i gets N+i)
  --request-timeout S     per request (default 120); --retries N: extra tries on timeouts,
                          network errors and HTTP 408/429/5xx (default 2)
  --out DIR               dataset folder: every attempt is stored as a demonstration with info.agent,
                          and the report as DIR/model-evaluations/<time>.json (without --out nothing is saved)
  --export-answers FILE   the raw completions as GitChameleon-style {example_id, answer} JSONL
  --import-answers FILE   score {example_id, answer} rows (example_id = task_id@seed) instead of calling a model
  --json                  print the report as JSON`;

const options = {
  endpoint: { type: 'string' },
  model: { type: 'string' },
  tasks: { type: 'string', multiple: true, default: [] as string[] },
  k: { type: 'string', default: '1' },
  n: { type: 'string' },
  temperature: { type: 'string' },
  'top-p': { type: 'string' },
  'max-tokens': { type: 'string', default: '1024' },
  'sampling-seed': { type: 'string' },
  seed: { type: 'string', default: '0' },
  'request-timeout': { type: 'string', default: '120' },
  retries: { type: 'string', default: '2' },
  out: { type: 'string' },
  'export-answers': { type: 'string' },
  'import-answers': { type: 'string' },
  json: { type: 'boolean', default: false },
  hints: { type: 'boolean', default: false },
  mode: { type: 'string', default: 'simulated' },
  python: { type: 'string' },
  timeout: { type: 'string', default: '60' },
  'task-dir': { type: 'string', multiple: true, default: [] as string[] },
  help: { type: 'boolean', short: 'h' },
} as const;

class UsageProblem extends Error {}

function int(name: string, value: string | undefined, min: number): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new UsageProblem(`--${name} must be an integer >= ${min}, not "${value}"`);
  return n;
}

function num(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isFinite(n)) throw new UsageProblem(`--${name} must be a number, not "${value}"`);
  return n;
}

/** One id per CLI process, like the editor's per-window session id. */
const SESSION_ID = `cli-${randomUUID()}`;

export async function runEvaluateModelCommand(args: string[], out: Out, err: Out): Promise<number> {
  const parsed = parseCommandLine('evaluate-model', EVALUATE_MODEL_USAGE, args, options, out);
  if (!parsed.ok) return parsed.exit;
  const v = parsed.values;
  let setup;
  try {
    setup = readSetup(v);
  } catch (e) {
    if (e instanceof UsageProblem) {
      out(`forgeenv evaluate-model: ${e.message}\n${EVALUATE_MODEL_USAGE}`);
      return 2;
    }
    out(`forgeenv evaluate-model: ${(e as Error).message}`);
    return 1;
  }
  const env = new ForgeEnvironment(
    { mode: setup.mode, interpreter: v.python, timeoutMs: setup.timeoutMs, taskDirs: v['task-dir'] ?? [] },
    { onProgress: (m) => err(`[real mode] ${m}`) },
  );
  for (const p of env.taskProblems) err(`warning: ${p}`);
  const problems = problemsFor(env, v.tasks ?? [], setup.seed, setup.imported);
  if (typeof problems === 'string') {
    out(`forgeenv evaluate-model: ${problems}`);
    await env.dispose();
    return 1;
  }
  const n = setup.imported ? Math.max(1, ...[...setup.imported.values()].map((a) => a.length)) : setup.n;
  if (setup.k > n) {
    out(`forgeenv evaluate-model: --k ${setup.k} needs at least ${setup.k} samples per task, the answers file has at most ${n}`);
    await env.dispose();
    return 2;
  }
  const answer: AnswerFn = setup.imported
    ? async (_prompt, problem, i): Promise<Answer> => {
        const text = setup.imported!.get(exampleIdOf(problem))?.[i];
        return text === undefined ? { ok: false, error: `the answers file has no answer #${i + 1} for this example` } : { ok: true, text };
      }
    : (prompt, _problem, i) =>
        chatComplete(
          {
            endpoint: setup.agent.endpoint!,
            model: setup.agent.model,
            timeoutMs: setup.requestTimeoutMs,
            retries: setup.retries,
            apiKey: process.env.FORGEENV_MODEL_API_KEY || undefined,
            signal: cancel.signal,
          },
          prompt.system,
          prompt.user,
          setup.agent.sampling.seed === undefined ? setup.agent.sampling : { ...setup.agent.sampling, seed: setup.agent.sampling.seed + i },
        );
  const cancel = new AbortController();
  const onSig = () => {
    err('\ncancelling: the current request or run is stopped, finished attempts are reported');
    cancel.abort();
    process.off('SIGINT', onSig);
  };
  process.on('SIGINT', onSig);
  const exported: AnswerRow[] = [];
  let stored = 0;
  const dir = v.out ? resolve(v.out) : undefined;
  try {
    const report = await evaluateModel(env, {
      problems,
      n,
      k: setup.k,
      agent: setup.agent,
      answer,
      migrationHints: v.hints,
      signal: cancel.signal,
      onProgress: (m) => err(m),
      onAttempt: async (a) => {
        exported.push({ example_id: a.example_id, answer: a.completion });
        if (dir) {
          await storeAttempt(dir, a, env);
          stored++;
        }
      },
    });
    if (dir)
      await writeFileAtomic(
        join(dir, 'model-evaluations', `${new Date().toISOString().replace(/[:.]/g, '-')}.json`),
        JSON.stringify(report, null, 2) + '\n',
      );
    if (v['export-answers']) await writeAnswersFile(resolve(v['export-answers']), exported);
    out(v.json ? JSON.stringify(report, null, 2) : renderReport(report));
    err(dir ? `${stored} attempt(s) stored as demonstrations in ${dir}` : 'attempts not saved (no --out DIR)');
    return report.cancelled || report.attempts === 0 ? 1 : 0;
  } finally {
    process.off('SIGINT', onSig);
    await env.dispose();
  }
}

interface Setup {
  mode: 'simulated' | 'real';
  timeoutMs: number;
  seed: number;
  n: number;
  k: number;
  requestTimeoutMs: number;
  retries: number;
  agent: AgentIdentity;
  imported?: Map<string, string[]>;
}

function readSetup(v: Record<string, unknown> & { [K in keyof typeof options]?: unknown }): Setup {
  const s = v as Record<string, string | undefined>;
  const mode = ExecutionModeSchema.safeParse(s.mode);
  if (!mode.success) throw new UsageProblem(`--mode must be simulated or real, not "${s.mode}"`);
  const timeout = num('timeout', s.timeout)!;
  if (timeout <= 0) throw new UsageProblem('--timeout must be a positive number of seconds');
  const k = int('k', s.k, 1)!;
  const n = int('n', s.n, 1) ?? k;
  if (n < k) throw new UsageProblem(`--n ${n} is below --k ${k}: pass@k needs at least k samples`);
  const requestTimeout = num('request-timeout', s['request-timeout'])!;
  if (requestTimeout <= 0) throw new UsageProblem('--request-timeout must be a positive number of seconds');
  const retries = int('retries', s.retries, 0)!;
  if (retries > 10) throw new UsageProblem('--retries is at most 10');
  const importFile = s['import-answers'];
  if (importFile && s.endpoint) throw new UsageProblem('--import-answers scores a file: leave out --endpoint');
  if (!importFile && (!s.endpoint || !s.model)) throw new UsageProblem('--endpoint and --model are required (or --import-answers FILE)');
  if (s.endpoint) {
    try {
      chatCompletionsUrl(s.endpoint);
    } catch (e) {
      throw new UsageProblem((e as Error).message);
    }
  }
  const sampling = SamplingSchema.safeParse({
    temperature: num('temperature', s.temperature) ?? (k === 1 ? 0.2 : 0.8),
    ...(s['top-p'] !== undefined ? { top_p: num('top-p', s['top-p']) } : {}),
    max_tokens: int('max-tokens', s['max-tokens'], 1),
    ...(s['sampling-seed'] !== undefined ? { seed: int('sampling-seed', s['sampling-seed'], 0) } : {}),
  });
  if (!sampling.success) throw new UsageProblem(`sampling options: ${formatZodError(sampling.error)}`);
  if (s.out) {
    const problem = outFolderProblem(resolve(s.out));
    if (problem) throw new UsageProblem(problem);
  }
  const imported = importFile ? groupAnswers(readAnswersFile(resolve(importFile))) : undefined;
  return {
    mode: mode.data,
    timeoutMs: Math.round(timeout * 1000),
    seed: int('seed', s.seed, 0)!,
    n,
    k,
    requestTimeoutMs: Math.round(requestTimeout * 1000),
    retries,
    agent: {
      endpoint: s.endpoint ?? null,
      model: s.model ?? 'imported-answers',
      sampling: sampling.data,
      source: importFile ? 'answers-file' : 'endpoint',
    },
    imported,
  };
}

/** The problems to run: the --tasks (or every task) at --seed, or the answers file's examples. */
function problemsFor(
  env: ForgeEnvironment,
  tasksOpt: readonly string[],
  seed: number,
  imported: Map<string, string[]> | undefined,
): Problem[] | string {
  const wanted = tasksOpt
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter(Boolean);
  const unknown = wanted.filter((t) => !env.tasks.getById(t));
  if (unknown.length) return `unknown task(s) ${unknown.join(', ')}; see forgeenv tasks`;
  if (imported) {
    const problems: Problem[] = [];
    for (const id of imported.keys()) {
      const p = problemOf(id);
      if (!p) return `example_id "${id}" is not task_id@seed`;
      if (!env.tasks.getById(p.task_id)) return `example_id "${id}" names an unknown task`;
      if (!wanted.length || wanted.includes(p.task_id)) problems.push(p);
    }
    return problems.length ? problems : 'no example of the answers file is among --tasks';
  }
  const ids = wanted.length ? wanted : env.tasks.all.map((t) => t.task_id);
  return ids.map((task_id) => ({ task_id, seed }));
}

async function storeAttempt(dir: string, a: Attempt, env: ForgeEnvironment): Promise<void> {
  const now = new Date();
  const wall =
    a.agent.request && typeof (a.agent.request as { latency_ms?: unknown }).latency_ms === 'number'
      ? (a.agent.request as { latency_ms: number }).latency_ms
      : 0;
  const snapshot = snapshotIdOf(a.facts.libraryVersions) ?? null;
  const provenance: DemonstrationProvenance = {
    session_id: SESSION_ID,
    annotator_id: `model:${String(a.agent.model)}`,
    mode: env.config.mode,
    interpreter: env.config.interpreter ?? (env.config.mode === 'real' ? `snapshot-venv:${snapshot ?? 'unknown'}` : 'python3'),
    extension_version: cliVersion(),
    env_version: ENV_VERSION,
    started_at: new Date(now.getTime() - wall).toISOString(),
    submitted_at: now.toISOString(),
    active_ms: 0,
    wall_ms: wall,
    runs: a.evaluation.execution ? 1 : 0,
  };
  const record = buildDemonstration({
    start: a.facts,
    final: a.evaluation,
    provenance,
    info: { library_snapshot: snapshot, client: { app: 'forgeenv-cli', command: 'evaluate-model' }, agent: a.agent },
  });
  const timeline = [
    { t_ms: 0, kind: 'focus' as const, event: 'episode_start', task_id: a.facts.task.task_id, source: 'model' },
    { t_ms: wall, kind: 'run' as const, n: provenance.runs, reward: a.evaluation.reward, success: a.evaluation.success },
    { t_ms: wall, kind: 'save' as const, event: 'submit', reward: a.evaluation.reward, success: a.evaluation.success },
  ];
  await storeEpisode(dir, { kind: 'demonstration', record, timeline });
}

const fmt = (p: Record<string, number>) =>
  Object.entries(p)
    .map(([key, x]) => `${key} ${x.toFixed(3)}`)
    .join('  ') || '-';

export function renderReport(r: ModelEvaluationReport): string {
  const lines: string[] = [];
  const who = r.agent.endpoint ? `${r.agent.model} at ${r.agent.endpoint}` : `${r.agent.model} (answers file)`;
  lines.push(`evaluate-model: ${who}, ${r.mode} mode, n=${r.n} sample(s) per task, k=${r.k}, temperature ${r.agent.sampling.temperature}`);
  const w = Math.max(10, ...r.problems.map((p) => p.example_id.length));
  lines.push(`${'example'.padEnd(w)}  ${'primitive'.padEnd(26)}  snapshot  passes(vis/held)  held-out`);
  for (const p of r.problems) {
    if (p.refused)
      lines.push(
        `${p.example_id.padEnd(w)}  ${(p.primitive_type ?? '-').padEnd(26)}  ${(p.snapshot ?? '-').padEnd(8)}  refused: ${p.refused}`,
      );
    else
      lines.push(
        `${p.example_id.padEnd(w)}  ${(p.primitive_type ?? '-').padEnd(26)}  ${(p.snapshot ?? '-').padEnd(8)}  ${`${p.visible_passes}/${p.held_out_passes} of ${p.n}`.padEnd(16)}  ${fmt(p.held_out)}`,
      );
  }
  lines.push('');
  lines.push(`overall (${r.overall.problems} task(s)):  visible ${fmt(r.overall.visible)}  |  held-out ${fmt(r.overall.held_out)}`);
  for (const [title, groups] of [
    ['by primitive', r.by_primitive],
    ['by snapshot', r.by_snapshot],
  ] as const) {
    lines.push(`${title}:`);
    for (const [name, g] of Object.entries(groups))
      lines.push(
        `  ${name.padEnd(24)} ${String(g.problems).padStart(3)} task(s)  visible ${fmt(g.visible)}  |  held-out ${fmt(g.held_out)}`,
      );
  }
  lines.push(
    `attempts ${r.attempts}; unparseable ${r.unparseable}; no answer ${r.endpoint_failures}; requests ${r.requests.total} (retries ${r.requests.retries}, timeouts ${r.requests.timeouts})${r.cancelled ? '; CANCELLED' : ''}`,
  );
  for (const [reason, count] of Object.entries(r.unparseable_reasons)) lines.push(`  unparseable ×${count}: ${reason}`);
  for (const [e, count] of Object.entries(r.endpoint_errors)) lines.push(`  no answer ×${count}: ${e}`);
  return lines.join('\n');
}

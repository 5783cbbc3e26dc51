// `forgeenv` command line: episodes, primitive checks, the corpus, dataset summary and exports.
// Exit codes: 0 ok, 1 the command ran but failed (e.g. bad input), 2 usage error, 3 internal error.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import {
  checkPrimitives,
  checkScriptOfTask,
  renderCheckTable,
  scriptsInFolder,
  scriptsWithManifest,
  type CheckScript,
} from '../env/primitives/checkPrimitives';
import { ForgeEnvironment } from '../env/episode/environment';
import { JsonFileTeacherStore } from '../env/episode/teacher';
import { breakagePrimitives, primitiveCatalog } from '../env/primitives/registry';
import { parsePython } from '../env/python/parse';
import { tasksDir } from '../env/paths';
import type { Task } from '../env/schemas';
import {
  baselineDriftGenerate,
  fixedDriftGenerate,
  noopRepairGenerate,
  oracleRepairGenerate,
  rolloutOneEpisode,
  type GenerateFn,
} from '../env/episode/rollout';
import { DifficultySchema, ExecutionModeSchema, formatZodError, RolloutResultSchema, infoText } from '../env/schemas';
import { ModelArchitecturesSchema, type ModelArchitectures } from '../env/hub/modelTable';
import { outFolderProblem, storeCliEpisode } from './episodeOut';
import { EXPORT_FORMATS } from '../store/export/formats';
import { runExportCommand } from './export';
import { runFidelityCommand } from './fidelity';
import { runMakeTaskCommand } from './makeTask';
import { runEvaluateCommand, runRescoreCommand } from './rescore';
import { runEvaluateModelCommand } from './evaluateModel';
import { runSnapshotsCommand } from './snapshots';
import { runServeCommand } from './serve';
import { runSummaryCommand } from './summary';

const USAGE = `forgeenv — the ForgeEnv drift/repair environment on the command line

Usage:
  forgeenv episode [--task ID] [--difficulty easy|medium|hard] [--primitive NAME] [--params JSON]
                   [--repair oracle|none|FILE.diff] [--seed N] [--out DATASET_DIR [--annotator NAME]]
                   [--teacher-state FILE.json] [--hints] [common options]
  forgeenv check-primitives [--scripts DIR [--manifest FILE]] [--primitive NAME]... [--json] [--no-run] [common options]
  forgeenv tasks [--json] [--task-dir DIR]...
  forgeenv primitives [--json]
  forgeenv summary DIR [--json]
  forgeenv export --format ${EXPORT_FORMATS.join('|')} DIR --out FILE [filters]
  forgeenv rescore DIR [--json]
  forgeenv evaluate --instances FILE --predictions FILE [--json]
  forgeenv evaluate-model --endpoint URL --model NAME [--tasks IDS] [--k N] [--temperature T] [--out DIR] [--json]
                   (forgeenv evaluate-model --help for every option)
  forgeenv serve [--port 7860] [--host 127.0.0.1] [--max-sessions 64] [--max-runs CORES]
                 [--max-queued-runs N] [--session-idle-timeout S] [--mode M] [--python PATH] [--task-dir DIR]...
  forgeenv snapshots list [--json] | build [NAME...] [--all] [--no-api] | pin [--id ID] [--write] | dating [--refresh]
  forgeenv fidelity [--library L] [--ids ID,...] [--snapshots A,B] [--no-real] [--no-sim] [--json]
  forgeenv make-task SCRIPT [--task-dir DIR] [--snapshot auto|ID] [--mode real|simulated] [--upgrade-to ID] [--json]
                   (forgeenv make-task --help for every option)

Common options:
  --mode simulated|real   simulated (default): our pure-Python stand-ins, held to the snapshot's real API;
                          real: the snapshot's real releases in a managed venv (built on first use), offline
  --python PATH           interpreter (default: python3; real mode: the snapshot's managed venv)
  --timeout SECONDS       per run (default 60)
  --task-dir DIR          add a folder of your own task scripts (repeatable)
  --model-architectures FILE.json
                          real mode: {"hub/model-id": "model_type or a well-known id"} for model ids ForgeEnv
                          cannot place (the same map as the setting forgeenv.real.modelArchitectures)
`;

class UsageError extends Error {}
/** The command ran but the input was bad (exit 1), e.g. a task script that does not parse. */
class CommandError extends Error {}

/** A usage error unless every name is a breakage primitive; the message lists the valid names. */
function checkPrimitiveNames(names: readonly string[]): void {
  const valid = breakagePrimitives().map((p) => p.name);
  const unknown = names.filter((n) => !valid.includes(n));
  if (unknown.length)
    throw new UsageError(`unknown primitive ${unknown.map((n) => `"${n}"`).join(', ')}; the breakage primitives are: ${valid.join(', ')}`);
}

/** Where a task's script lives, for file:line messages. */
function taskFile(task: Task): string {
  return join(task.source === 'builtin' ? tasksDir() : task.source, `${task.task_id}.py`);
}

type Out = (s: string) => void;

export async function main(
  argv: string[],
  out: Out = (s) => process.stdout.write(s + '\n'),
  err: Out = (s) => process.stderr.write(s + '\n'),
): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case 'episode':
        return await episodeCommand(rest, out, err);
      case 'check-primitives':
        return await checkCommand(rest, out, err);
      case 'tasks':
        return tasksCommand(rest, out, err);
      case 'primitives':
        return primitivesCommand(rest, out);
      case 'summary':
        return await runSummaryCommand(rest, out);
      case 'export':
        return await runExportCommand(rest, out);
      case 'rescore':
        return await runRescoreCommand(rest, out, err);
      case 'evaluate':
        return await runEvaluateCommand(rest, out, err);
      case 'evaluate-model':
        return await runEvaluateModelCommand(rest, out, err);
      case 'serve':
        return await runServeCommand(rest, out, err);
      case 'snapshots':
        return await runSnapshotsCommand(rest, out, err);
      case 'fidelity':
        return await runFidelityCommand(rest, out, err);
      case 'make-task':
        return await runMakeTaskCommand(rest, out, err);
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        out(USAGE);
        return command === undefined ? 2 : 0;
      default:
        throw new UsageError(`unknown command "${command}"`);
    }
  } catch (e) {
    if (e instanceof UsageError || (e instanceof TypeError && 'code' in e && String(e.code).startsWith('ERR_PARSE_ARGS'))) {
      err(`forgeenv: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    err(`forgeenv: ${e instanceof Error ? e.message : String(e)}`);
    return e instanceof CommandError || (e instanceof Error && e.name === 'EnvironmentError') ? 1 : 3;
  }
}

const commonOptions = {
  mode: { type: 'string', default: 'simulated' },
  python: { type: 'string' },
  timeout: { type: 'string', default: '60' },
  'task-dir': { type: 'string', multiple: true, default: [] as string[] },
  'model-architectures': { type: 'string' },
} as const;

/** The --model-architectures file: a JSON object id -> model_type or well-known id. */
function readModelArchitectures(file: string | undefined): ModelArchitectures {
  if (!file) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(resolve(file), 'utf8'));
  } catch (e) {
    throw new UsageError(`--model-architectures ${file}: ${(e as Error).message}`);
  }
  const parsed = ModelArchitecturesSchema.safeParse(raw);
  if (!parsed.success)
    throw new UsageError(
      `--model-architectures ${file}: expected a JSON object of model id -> model_type or model id (${formatZodError(parsed.error)})`,
    );
  return parsed.data;
}

function envFrom(values: {
  mode?: string;
  python?: string;
  timeout?: string;
  'task-dir'?: string[];
  'teacher-state'?: string;
  'model-architectures'?: string;
}): ForgeEnvironment {
  const mode = ExecutionModeSchema.safeParse(values.mode);
  if (!mode.success) throw new UsageError(`--mode must be simulated or real, not "${values.mode}"`);
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError(`--timeout must be a positive number of seconds`);
  const teacher = values['teacher-state']
    ? { teacherStore: new JsonFileTeacherStore(resolve(values['teacher-state']), (m) => process.stderr.write(`warning: ${m}\n`)) }
    : {};
  const onProgress = (m: string) => void process.stderr.write(`[real mode] ${m}\n`);
  const modelArchitectures = readModelArchitectures(values['model-architectures']);
  const env = new ForgeEnvironment(
    {
      mode: mode.data,
      interpreter: values.python,
      timeoutMs: Math.round(timeout * 1000),
      taskDirs: values['task-dir'] ?? [],
      modelArchitectures,
    },
    { ...teacher, onProgress },
  );
  return env;
}

async function episodeCommand(args: string[], out: Out, err: Out): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...commonOptions,
      task: { type: 'string' },
      difficulty: { type: 'string' },
      primitive: { type: 'string' },
      params: { type: 'string' },
      repair: { type: 'string', default: 'oracle' },
      seed: { type: 'string' },
      out: { type: 'string' },
      annotator: { type: 'string' },
      'teacher-state': { type: 'string' },
      hints: { type: 'boolean', default: false },
    },
  });
  if (values.out) {
    const problem = outFolderProblem(resolve(values.out));
    if (problem) throw new UsageError(problem);
  } else if (values.annotator) throw new UsageError('--annotator needs --out DATASET_DIR');
  const env = envFrom(values);
  for (const p of env.taskProblems) err(`warning: ${p}`);
  const seed = values.seed === undefined ? undefined : Number(values.seed);
  if (seed !== undefined && !(Number.isInteger(seed) && seed >= 0)) throw new UsageError('--seed must be a non-negative integer');
  const difficulty = values.difficulty === undefined ? undefined : DifficultySchema.parse(values.difficulty);
  if (values.primitive !== undefined) checkPrimitiveNames([values.primitive]);
  let params: Record<string, unknown> | undefined;
  if (values.params !== undefined) {
    if (!values.primitive) throw new UsageError('--params needs --primitive');
    try {
      params = JSON.parse(values.params) as Record<string, unknown>;
    } catch (e) {
      throw new UsageError(`--params is not valid JSON: ${(e as Error).message}`);
    }
  }
  let repairGenerate: GenerateFn;
  if (values.repair === 'oracle') repairGenerate = oracleRepairGenerate(env);
  else if (values.repair === 'none') repairGenerate = noopRepairGenerate;
  else {
    const file = resolve(values.repair);
    if (!existsSync(file)) throw new UsageError(`--repair: ${file} does not exist (use oracle, none, or a .diff file)`);
    // Refused before reading: the environment would refuse it anyway (forgeenv.maxDiffBytes).
    const size = statSync(file).size;
    if (size > env.config.maxDiffBytes)
      throw new CommandError(`--repair: ${file} is ${size} bytes, over the ${env.config.maxDiffBytes}-byte limit for a repair`);
    const diff = readFileSync(file, 'utf8');
    repairGenerate = () => diff;
  }
  const startedAt = new Date();
  try {
    const result = await rolloutOneEpisode(env, {
      taskId: values.task,
      // Without --difficulty the CLI samples the whole corpus: the rollout's `easy` default left
      // two tasks, so seeds 1-5 all drew the same task and breakage.
      difficulty: difficulty ?? 'any',
      seed,
      driftGenerate: values.primitive
        ? fixedDriftGenerate(values.primitive, params, seed ?? 0)
        : seed !== undefined
          ? baselineDriftGenerate(seed)
          : undefined,
      repairGenerate,
      migrationHints: values.hints,
    }).catch((e: unknown) => {
      // A task script with a syntax error makes every primitive refuse: say where the error is.
      const task = env.task;
      const problem = task && parsePython(task.script_content).problem;
      if (problem)
        throw new CommandError(
          `${taskFile(task)}:${problem.line}:${problem.column}: the task script does not parse (${problem.message}); fix it first`,
        );
      throw e;
    });
    const line = JSON.stringify(RolloutResultSchema.parse(result));
    if (values.out) {
      const dir = resolve(values.out);
      const annotator = values.annotator ?? (values.repair === 'oracle' || values.repair === 'none' ? values.repair : 'cli');
      const rec = await storeCliEpisode(env, result, dir, {
        annotator,
        startedAt,
        interpreter: infoText(result.info.interpreter ?? values.python ?? 'python3'),
      });
      const flag =
        rec.info.breakage_failed === false ? ' (the breakage did not make the script fail: flagged, left out of training exports)' : '';
      err(
        `${result.task_id} ${result.primitive_type}: reward ${result.visible_reward.toFixed(3)}, success ${result.success} → demonstration ${rec.info.record_id} in ${dir}${flag}`,
      );
    } else {
      out(line);
    }
    return 0;
  } finally {
    await env.dispose();
  }
}

async function checkCommand(args: string[], out: Out, err: Out): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      ...commonOptions,
      scripts: { type: 'string' },
      manifest: { type: 'string' },
      primitive: { type: 'string', multiple: true },
      json: { type: 'boolean', default: false },
      'no-run': { type: 'boolean', default: false },
    },
  });
  let scripts: CheckScript[];
  if (values.scripts) {
    const dir = resolve(values.scripts);
    if (!existsSync(dir)) throw new UsageError(`--scripts: ${dir} does not exist`);
    if (values.manifest && !existsSync(resolve(values.manifest)))
      throw new UsageError(`--manifest: ${resolve(values.manifest)} does not exist`);
    const warn = (p: string) => err(`warning: ${p}`);
    scripts = values.manifest ? scriptsWithManifest(dir, resolve(values.manifest), warn) : scriptsInFolder(dir, warn);
    if (scripts.length === 0) err(`warning: no .py files in ${dir}`);
  } else {
    if (values.manifest) throw new UsageError('--manifest needs --scripts DIR');
    const env = envFrom(values);
    scripts = env.tasks.all.map(checkScriptOfTask);
  }
  checkPrimitiveNames(values.primitive ?? []);
  const mode = ExecutionModeSchema.safeParse(values.mode);
  if (!mode.success) throw new UsageError(`--mode must be simulated or real`);
  const report = await checkPrimitives(scripts, {
    mode: mode.data,
    interpreter: values.python,
    timeoutMs: Number(values.timeout) * 1000,
    noRun: values['no-run'],
    primitives: values.primitive,
    onRow: values.json ? undefined : (_r, done, total) => process.stderr.isTTY && process.stderr.write(`\r${done}/${total}`),
  });
  if (!values.json && process.stderr.isTTY) process.stderr.write('\r');
  out(values.json ? JSON.stringify(report, null, 2) : renderCheckTable(report.results, report.summary, report.scripts));
  return report.summary.internal_errors > 0 ? 3 : 0;
}

function tasksCommand(args: string[], out: Out, err: Out): number {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false }, 'task-dir': commonOptions['task-dir'] } });
  const env = new ForgeEnvironment({ taskDirs: values['task-dir'] });
  for (const p of env.taskProblems) err(`warning: ${p}`);
  const tasks = env.tasks.all;
  if (values.json) {
    out(
      JSON.stringify(
        tasks.map(({ script_content, ...t }) => ({ ...t, lines: script_content.split('\n').length })),
        null,
        2,
      ),
    );
    return 0;
  }
  const w = Math.max(...tasks.map((t) => t.task_id.length), 7);
  out(`${'task_id'.padEnd(w)}  difficulty  category              lines  description`);
  for (const t of tasks) {
    out(
      `${t.task_id.padEnd(w)}  ${t.difficulty.padEnd(10)}  ${t.category.padEnd(20)}  ${String(t.script_content.split('\n').length).padStart(5)}  ${t.description}`,
    );
  }
  out(`${tasks.length} tasks`);
  return 0;
}

function primitivesCommand(args: string[], out: Out): number {
  const { values } = parseArgs({ args, options: { json: { type: 'boolean', default: false } } });
  const catalog = primitiveCatalog();
  if (values.json) {
    out(JSON.stringify(catalog, null, 2));
    return 0;
  }
  for (const p of catalog) out(`${p.name.padEnd(26)} ${p.kind.padEnd(8)} ${p.category.padEnd(16)} ${p.description}`);
  return 0;
}

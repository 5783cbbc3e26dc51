// `forgeenv rescore DIR`: re-runs every stored demonstration in its recorded snapshot and mode.
// `forgeenv evaluate --instances FILE --predictions FILE`: scores SWE-bench-style predictions
// against our instances export, the way the harness pairs predictions with instances.
// Progress goes to stderr; Ctrl-C cancels and reports what was done.
import { readFileSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ForgeEnvironment } from '../env/episode/environment';
import { replayRepair } from '../env/episode/replay';
import type { ExecutionMode } from '../env/schemas';
import { rawCompletion } from '../store/completion';
import { INSTANCE_FAIL_TO_PASS } from '../store/export/formats';
import { renderRescoreText, rescoreDataset } from '../store/rescore';
import { parseCommandLine } from './commandLine';

type Out = (s: string) => void;

export const RESCORE_USAGE = `Usage: forgeenv rescore DIR [--json] [--python PATH] [--timeout SECONDS] [--task-dir DIR]...
Re-runs every demonstration of the dataset folder DIR in its recorded snapshot and mode and lists
any whose reward or success differs. Exit 0: all identical; 1: some differ, failed or were cancelled.`;

export const EVALUATE_USAGE = `Usage: forgeenv evaluate --instances FILE.jsonl --predictions FILE.jsonl [--json] [--python PATH] [--timeout SECONDS] [--task-dir DIR]...
Scores each prediction (instance_id, model_name_or_path, model_patch) in the ForgeEnv episode its
instance names (an instances file is written by forgeenv export --format swebench-instances).`;

const envOptions = {
  python: { type: 'string' },
  timeout: { type: 'string', default: '60' },
  'task-dir': { type: 'string', multiple: true, default: [] as string[] },
  json: { type: 'boolean', default: false },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Environments made on first use, one per mode, disposed together. */
export class EnvPool {
  private readonly envs = new Map<ExecutionMode, ForgeEnvironment>();
  constructor(private readonly cfg: { interpreter?: string; timeoutMs: number; taskDirs: string[] }) {}
  get = (mode: ExecutionMode): ForgeEnvironment => {
    let env = this.envs.get(mode);
    if (!env) {
      env = new ForgeEnvironment(
        { mode, interpreter: this.cfg.interpreter, timeoutMs: this.cfg.timeoutMs, taskDirs: this.cfg.taskDirs },
        { onProgress: (m) => void process.stderr.write(`[real mode] ${m}\n`) },
      );
      this.envs.set(mode, env);
    }
    return env;
  };
  async dispose(): Promise<void> {
    for (const env of this.envs.values()) await env.dispose();
  }
}

function poolFrom(values: { python?: string; timeout?: string; 'task-dir'?: string[] }): EnvPool | string {
  const timeout = Number(values.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) return '--timeout must be a positive number of seconds';
  return new EnvPool({ interpreter: values.python, timeoutMs: Math.round(timeout * 1000), taskDirs: values['task-dir'] ?? [] });
}

/** Ctrl-C aborts the controller once (a second Ctrl-C exits as usual). */
function cancelOnSigint(): { signal: AbortSignal; done: () => void } {
  const controller = new AbortController();
  const onSig = () => {
    process.stderr.write('\ncancelling: the current run is stopped, finished results are reported\n');
    controller.abort();
    process.off('SIGINT', onSig);
  };
  process.on('SIGINT', onSig);
  return { signal: controller.signal, done: () => process.off('SIGINT', onSig) };
}

export async function runRescoreCommand(args: string[], out: Out, err: Out): Promise<number> {
  const parsed = parseCommandLine('rescore', RESCORE_USAGE, args, envOptions, out, { oneFolder: true });
  if (!parsed.ok) return parsed.exit;
  const dir = parsed.positionals[0];
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) {
    out(`forgeenv rescore: dataset folder ${dir} does not exist`);
    return 1;
  }
  const pool = poolFrom(parsed.values);
  if (typeof pool === 'string') {
    out(`forgeenv rescore: ${pool}`);
    return 2;
  }
  const cancel = cancelOnSigint();
  try {
    const report = await rescoreDataset(dir, {
      envFor: pool.get,
      signal: cancel.signal,
      onProgress: (done, total, e) =>
        err(`[${done}/${total}] ${e.task_id} ${e.primitive_type}: ${e.status}${e.detail ? ` (${e.detail})` : ''}`),
    });
    out(parsed.values.json ? JSON.stringify(report, null, 2) : renderRescoreText(report));
    return report.cancelled || report.counts.same !== report.done ? 1 : 0;
  } finally {
    cancel.done();
    await pool.dispose();
  }
}

const InstanceSchema = z.looseObject({
  instance_id: z.string().min(1),
  task_id: z.string().min(1),
  primitive_type: z.string().min(1),
  primitive_params: z.string(),
  seed: z.number().int().nonnegative(),
  library_versions: z.string(),
  mode: z.enum(['simulated', 'real']),
  FAIL_TO_PASS: z.string(),
});
const PredictionSchema = z.looseObject({
  instance_id: z.string().min(1),
  model_patch: z.string().nullable().optional(),
  model_name_or_path: z.string().optional(),
});

function readJsonlRows<T>(file: string, schema: z.ZodType<T>, what: string): T[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .map((l, i) => [l, i + 1] as const)
    .filter(([l]) => l.trim() !== '')
    .map(([l, n]) => {
      const r = schema.safeParse(JSON.parse(l));
      if (!r.success) throw new Error(`${file}:${n}: not a valid ${what}: ${r.error.issues[0]?.message ?? ''}`);
      return r.data;
    });
}

/** The harness's report shape (resolved_ids, unresolved_ids, error_ids, …). */
export interface EvaluationReport {
  total_instances: number;
  submitted_instances: number;
  completed_instances: number;
  resolved_instances: number;
  unresolved_instances: number;
  empty_patch_instances: number;
  error_instances: number;
  resolved_ids: string[];
  unresolved_ids: string[];
  empty_patch_ids: string[];
  error_ids: string[];
  details: Record<string, { resolved: boolean; reward?: number; error?: string }>;
}

export async function runEvaluateCommand(args: string[], out: Out, err: Out): Promise<number> {
  const parsed = parseCommandLine(
    'evaluate',
    EVALUATE_USAGE,
    args,
    { ...envOptions, instances: { type: 'string' }, predictions: { type: 'string' } } as const,
    out,
  );
  if (!parsed.ok) return parsed.exit;
  const { instances: instFile, predictions: predFile } = parsed.values;
  if (!instFile || !predFile) {
    out(`forgeenv evaluate: --instances and --predictions are required\n${EVALUATE_USAGE}`);
    return 2;
  }
  let instances, predictions;
  try {
    instances = new Map(readJsonlRows(instFile, InstanceSchema, 'instance').map((i) => [i.instance_id, i]));
    predictions = readJsonlRows(predFile, PredictionSchema, 'prediction');
  } catch (e) {
    out(`forgeenv evaluate: ${(e as Error).message}`);
    return 1;
  }
  // As the harness does: every prediction must name an instance of the dataset.
  const unknown = predictions.filter((p) => !instances.has(p.instance_id)).map((p) => p.instance_id);
  if (unknown.length) {
    out(`forgeenv evaluate: some prediction ids are not in ${instFile}: ${unknown.join(' ')}`);
    return 1;
  }
  const pool = poolFrom(parsed.values);
  if (typeof pool === 'string') {
    out(`forgeenv evaluate: ${pool}`);
    return 2;
  }
  const report: EvaluationReport = {
    total_instances: instances.size,
    submitted_instances: predictions.length,
    completed_instances: 0,
    resolved_instances: 0,
    unresolved_instances: 0,
    empty_patch_instances: 0,
    error_instances: 0,
    resolved_ids: [],
    unresolved_ids: [],
    empty_patch_ids: [],
    error_ids: [],
    details: {},
  };
  const cancel = cancelOnSigint();
  try {
    let n = 0;
    for (const p of predictions) {
      if (cancel.signal.aborted) break;
      const inst = instances.get(p.instance_id)!;
      const patch = rawCompletion(p.model_patch ?? '');
      if (patch.trim() === '') {
        report.empty_patch_ids.push(p.instance_id);
        report.details[p.instance_id] = { resolved: false };
        continue;
      }
      try {
        const spec = {
          taskId: inst.task_id,
          seed: inst.seed,
          primitive: { primitive_type: inst.primitive_type, params: JSON.parse(inst.primitive_params) as Record<string, unknown> },
          libraryVersions: JSON.parse(inst.library_versions) as Record<string, string>,
        };
        const r = await replayRepair(pool.get(inst.mode), spec, patch, { signal: cancel.signal });
        if (cancel.signal.aborted) break;
        // FAIL_TO_PASS names held-out checks that must pass (1) after the patch.
        const checks = (JSON.parse(inst.FAIL_TO_PASS) as string[]).length
          ? (JSON.parse(inst.FAIL_TO_PASS) as string[])
          : [...INSTANCE_FAIL_TO_PASS];
        const resolved = checks.every((c) => (r.evaluation.held_out_breakdown[c] ?? 0) > 0.5);
        report.completed_instances++;
        (resolved ? report.resolved_ids : report.unresolved_ids).push(p.instance_id);
        report.details[p.instance_id] = { resolved, reward: r.evaluation.reward };
      } catch (e) {
        report.error_ids.push(p.instance_id);
        report.details[p.instance_id] = { resolved: false, error: (e as Error).message };
      }
      err(`[${++n}/${predictions.length}] ${p.instance_id}: ${report.details[p.instance_id].resolved ? 'resolved' : 'unresolved'}`);
    }
  } finally {
    cancel.done();
    await pool.dispose();
  }
  report.resolved_instances = report.resolved_ids.length;
  report.unresolved_instances = report.unresolved_ids.length;
  report.empty_patch_instances = report.empty_patch_ids.length;
  report.error_instances = report.error_ids.length;
  out(
    parsed.values.json
      ? JSON.stringify(report, null, 2)
      : `${report.resolved_instances} of ${report.submitted_instances} prediction(s) resolved; ${report.unresolved_instances} unresolved, ${report.empty_patch_instances} empty, ${report.error_instances} error(s)${cancel.signal.aborted ? ' (cancelled)' : ''}`,
  );
  return cancel.signal.aborted || report.error_instances ? 1 : 0;
}

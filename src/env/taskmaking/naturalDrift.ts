// Natural drift (make-task --upgrade-to): the script, which runs at its own era's snapshot, is run
// unchanged at a later snapshot. When it fails there with a real library error, that failure is the
// task: the real migration. Failures that come from this machine rather than the libraries (a
// model missing offline, no GPU, a launcher) are not drift and are refused with their reason.
import { getSnapshot } from '../snapshots/registry';
import type { ExecutionMode } from '../schemas';
import { INFERENCE_LIBRARIES } from './snapshotInference';
import type { TaskMetadata } from '../tasks/tasks';
import type { Adaptation, NaturalDrift } from './provenance';
import { diagnose, lastErrorLine } from './rules';
import type { HubNeeds } from '../hub/needs';
import type { TaskRuntime } from '../run/runtimeShims';
import { makeRunner, type RunnerOptions } from './runner';
import { readEntries, TaskWriteError, writeTask } from './writeTask';
import { readFolderFile } from '../tasks/folderFile';
import { MAX_TASK_FILE_BYTES } from '../limits';

/** Rules whose errors come from the machine, not from the libraries' change. */
const MACHINE_RULES = new Set([
  'hub-item-unavailable',
  'cpu-bf16-off',
  'cpu-fp16-off',
  'cpu-tf32-off',
  'no-flash-attention',
  'no-deepspeed',
  'no-fsdp',
  'no-quantized-loading',
  'multi-node-launch',
  'cpu-device',
  'missing-environment-variable',
]);
const HF_LIBS = [...INFERENCE_LIBRARIES, 'evaluate', 'tokenizers', 'huggingface_hub'];

export interface NaturalDriftInput {
  script: string;
  args: string[];
  files: Record<string, string>;
  env: Record<string, string>;
  /** The task's runtime shims (its era's runs had them). */
  runtime?: TaskRuntime;
  /** The task's mounts (absolute output folders, a folder of the run inside the sandbox). */
  mounts?: string[];
  from: string;
  to: string;
  mode: ExecutionMode;
  timeoutMs: number;
  interpreter?: string;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /** The hub items each run needs (as make-task's adaptation runs had them). */
  hubNeeds?: RunnerOptions['hubNeeds'];
  hubExtra?: HubNeeds;
}

/** Machine adaptations tried at the later snapshot at most (each one more run). */
const MAX_MACHINE_ADAPTATIONS = 2;

/** What the later snapshot's runs needed of this machine (the same CPU adaptations make-task makes at the era). */
export interface MachineAdapted {
  args: string[];
  env: Record<string, string>;
  runtime?: TaskRuntime;
  adaptations: Adaptation[];
}

export async function naturalDriftAt(
  i: NaturalDriftInput,
): Promise<{ drift?: NaturalDrift; refusal?: { rule: string; reason: string }; adapted?: MachineAdapted }> {
  if (getSnapshot(i.to).date <= getSnapshot(i.from).date)
    return { refusal: { rule: 'natural-drift', reason: `--upgrade-to ${i.to} is not later than the script's snapshot ${i.from}` } };
  i.onProgress?.(`natural drift: running the script unchanged at ${i.to}`);
  const run = makeRunner({
    mode: i.mode,
    snapshot: i.to,
    timeoutMs: i.timeoutMs,
    interpreter: i.interpreter,
    signal: i.signal,
    onProgress: i.onProgress,
    hubNeeds: i.hubNeeds,
  });
  let args = i.args;
  let env = i.env;
  let runtime = i.runtime;
  const adaptations: Adaptation[] = [];
  const tried = new Set<string>();
  for (let round = 1; ; round++) {
    const exec = await run({
      script: i.script,
      args,
      files: i.files,
      env,
      hub: i.hubExtra,
      ...(runtime ? { runtime } : {}),
      ...(i.mounts?.length ? { mounts: i.mounts } : {}),
    });
    const adapted = adaptations.length ? { args, env, ...(runtime ? { runtime } : {}), adaptations } : undefined;
    const after = adaptations.length ? ` (after ${adaptations.map((a) => a.change).join('; ')})` : '';
    if (exec.exit_code === 0)
      return {
        refusal: {
          rule: 'natural-drift',
          reason: `the script runs at ${i.to} as well${after}: no natural drift between ${i.from} and ${i.to}`,
        },
      };
    if (exec.timed_out || exec.killed)
      return {
        refusal: {
          rule: 'natural-drift',
          reason: `the run at ${i.to} ${exec.timed_out ? 'timed out' : 'was cancelled'}; no error to make a task of`,
        },
      };
    const output = `${exec.stderr}\n${exec.stdout.split('\n').slice(-20).join('\n')}`;
    const d = diagnose(output, { script: i.script, args, env, options: undefined, ...(runtime ? { runtime } : {}) });
    const machine =
      d &&
      (MACHINE_RULES.has(d.outcome.kind === 'refuse' ? d.outcome.rule : d.outcome.adaptation.rule) ||
        (d.outcome.kind === 'refuse' && d.outcome.rule === 'module-not-installed' && !HF_LIBS.some((l) => d.error.includes(`'${l}`))));
    if (d && machine) {
      // A machine reason (a later release turning bf16 on by default, on a CPU) is adapted as make-task
      // adapts the era's runs, then the script runs again: what it meets next may be the libraries' change.
      const key = d.outcome.kind === 'adapt' ? `${d.outcome.adaptation.rule}:${d.outcome.adaptation.change}` : '';
      if (d.outcome.kind === 'adapt' && !tried.has(key) && adaptations.length < MAX_MACHINE_ADAPTATIONS) {
        tried.add(key);
        adaptations.push({
          round,
          error: d.error.slice(0, 1000),
          ...d.outcome.adaptation,
          change: `${d.outcome.adaptation.change} (at ${i.to})`,
        });
        i.onProgress?.(`natural drift: adapted at ${i.to} (${d.outcome.adaptation.rule}): ${d.outcome.adaptation.change}`);
        args = d.outcome.args ?? args;
        env = d.outcome.env ?? env;
        runtime = d.outcome.runtime ?? runtime;
        continue;
      }
      return {
        refusal: {
          rule: 'natural-drift',
          reason: `the script fails at ${i.to} for a reason of this machine, not of the libraries${after}: ${d.error}`,
        },
      };
    }
    const error = lastErrorLine(output) || `exit code ${exec.exit_code}`;
    // Verified only against the real releases: a simulated failure is the stand-ins' opinion.
    return {
      drift: { from_snapshot: i.from, to_snapshot: i.to, error, verified: i.mode === 'real', solved: false },
      ...(adapted ? { adapted } : {}),
    };
  }
}

/** The task entry of a natural-drift task: the era's entry, run at the later snapshot, the real error its breakage. */
export function naturalDriftEntry(entry: TaskMetadata, drift: NaturalDrift, scriptName: string, adapted?: MachineAdapted): TaskMetadata {
  return {
    ...entry,
    ...(adapted
      ? {
          args: adapted.args,
          env: adapted.env,
          ...(adapted.runtime ? { runtime: adapted.runtime } : {}),
          adaptations: [...(entry.adaptations ?? []), ...adapted.adaptations],
        }
      : {}),
    natural_drift: drift,
    library_versions: { ...getSnapshot(drift.to_snapshot).versions },
    tags: ['make-task', 'natural-drift', `snapshot:${drift.to_snapshot}`, `from-snapshot:${drift.from_snapshot}`],
    description: `${scriptName} written for snapshot ${drift.from_snapshot}, failing at ${drift.to_snapshot}: ${drift.error}`,
  };
}

/**
 * Marks a natural-drift task solved: a repair made it run and train at its snapshot (a human's
 * demonstration or a reference repair). The repair is kept as the task's `reference_repair`, which
 * episodes then use as their oracle. Only a successful evaluation of this task counts.
 */
export async function markNaturalDriftSolved(
  taskDir: string,
  taskId: string,
  repair: { unified_diff: string; success: boolean },
  solvedBy: 'human' | 'reference',
): Promise<TaskMetadata> {
  const entry = readEntries(taskDir).find((e) => e.task_id === taskId);
  if (!entry) throw new TaskWriteError(`${taskDir} has no task "${taskId}"`);
  if (!entry.natural_drift) throw new TaskWriteError(`"${taskId}" is not a natural-drift task`);
  if (!repair.success)
    throw new TaskWriteError(
      `the repair did not make "${taskId}" run and train at ${entry.natural_drift.to_snapshot}; the task stays unsolved`,
    );
  const read = readFolderFile(taskDir, `${taskId}.py`, MAX_TASK_FILE_BYTES);
  if (!read.ok) throw new TaskWriteError(read.problem);
  const solved: TaskMetadata = {
    ...entry,
    natural_drift: { ...entry.natural_drift, solved: true, solved_by: solvedBy, reference_repair: repair.unified_diff },
  };
  await writeTask(taskDir, solved, read.text);
  return solved;
}

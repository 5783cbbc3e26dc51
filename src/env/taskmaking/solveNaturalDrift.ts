// Is a natural-drift task solvable? A known repair (driftRepair.ts: the catalog's fix for the drift
// the real error names) goes through the environment's own path: a NaturalDrift episode at the
// task's snapshot, the repair as a unified diff, applied, run and judged by the verifier ("runs and
// trains"). A repair that uncovers the next drift (the same migration often has two) is extended and
// scored again, bounded. A repaired run stopped by this machine rather than the libraries (bf16 on a
// CPU, which a later release turns on by default) gets the CPU runtime shim make-task would add, as a
// recorded adaptation of the task, and is scored again; so is a repair the verifier cannot check until
// the task declares a `verify` field (its era task was not verified), answered as make-task answers it. Success is recorded with markNaturalDriftSolved
// (`solved_by: 'reference'`, the diff as the task's reference repair); anything else says why not.
import { createRepairDiff } from '../diff/diff';
import type { ForgeEnvironment } from '../episode/environment';
import { NATURAL_DRIFT_PRIMITIVE } from '../episode/naturalDriftEpisode';
import type { RepairEvaluation } from '../episode/episodeTypes';
import { driftRepairStep, type DriftRepairStep } from './driftRepair';
import { markNaturalDriftSolved } from './naturalDrift';
import { diagnose, lastErrorLine } from './rules';
import { readEntries, writeTask } from './writeTask';
import { readFolderFile } from '../tasks/folderFile';
import { MAX_TASK_FILE_BYTES } from '../limits';
import { infoText } from '../schemas';
import { verifySpecFor } from './verifySpecRules';
import { VerifySpecSchema } from '../verify/spec';

export interface SolveOutcome {
  taskId: string;
  solved: boolean;
  /** The repair's steps (catalog ids and changes), in order. */
  steps: Array<Pick<DriftRepairStep, 'drift_id' | 'change'>>;
  /** Why it stays unsolved. */
  reason?: string;
  reward?: number;
  /** The verifier's check ("held_out_loss", "weights_moved"). */
  check?: string;
  /** Repaired runs made. */
  runs: number;
}

export interface SolveOptions {
  /** A fresh environment over `taskDir` (one per attempt: a runtime adaptation rewrites the task). */
  environment: () => ForgeEnvironment;
  taskDir: string;
  taskId: string;
  /** Repair steps at most (each one more repaired run). */
  maxSteps?: number;
  onProgress?: (message: string) => void;
}

/** The parser rejects the task's own arguments (an option a release removed from its config). */
const ARGS_DRIFT = /not used by the HfArgumentParser|unrecognized arguments/;
const errorOf = (trace: string | null | undefined) => lastErrorLine(trace ?? '') || (trace ?? '');

export async function solveNaturalDrift(o: SolveOptions): Promise<SolveOutcome> {
  const steps: SolveOutcome['steps'] = [];
  let runs = 0;
  const adapted = new Set<'runtime' | 'verify'>();
  const maxSteps = o.maxSteps ?? 3;
  for (;;) {
    const env = o.environment();
    try {
      await env.reset({ taskId: o.taskId, seed: 1 });
      const obs = await env.step({ breakage: { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} } });
      if (obs.info.error || obs.current_phase !== 'repair')
        return {
          taskId: o.taskId,
          solved: false,
          steps,
          runs,
          reason: `the NaturalDrift episode did not start: ${infoText(obs.info.error ?? obs.current_phase)}`,
        };
      const broken = obs.script_content;
      let script = broken;
      let error = errorOf(obs.error_trace);
      steps.length = 0;
      let retry = false;
      for (let i = 0; i < maxSteps && !retry; i++) {
        const step = driftRepairStep(script, error);
        if (!step)
          return {
            taskId: o.taskId,
            solved: false,
            steps,
            runs,
            reason: `${ARGS_DRIFT.test(error) ? "the drift is in the task's arguments (options the release no longer has), which a repair of the script does not change; " : ''}no known repair of: ${error.slice(0, 200)}`,
          };
        steps.push({ drift_id: step.drift_id, change: step.change });
        o.onProgress?.(`repair step ${i + 1}: ${step.change}`);
        script = step.script;
        const evaluation: RepairEvaluation = await env.evaluateRepair(createRepairDiff(broken, script));
        runs++;
        if (evaluation.success) {
          await markNaturalDriftSolved(o.taskDir, o.taskId, evaluation, 'reference');
          return { taskId: o.taskId, solved: true, steps, runs, reward: evaluation.reward, check: evaluation.verification?.check };
        }
        error = errorOf(evaluation.error_trace);
        if (evaluation.execution?.exit_code === 0 || !error) {
          // The verifier may name the `verify` field it needs (the era's task was not verified): answered as make-task answers it.
          const spec = !adapted.has('verify') ? await verifyAdaptation(o, script, evaluation.findings ?? []) : false;
          if (spec) {
            adapted.add('verify');
            retry = true;
            o.onProgress?.(`the verifier asked for the task's verify fields: ${spec}; scored again with them`);
            continue;
          }
          return {
            taskId: o.taskId,
            solved: false,
            steps,
            runs,
            reason: `the repaired script runs but the verifier rejects it: ${(evaluation.findings ?? []).join('; ').slice(0, 600)}`,
          };
        }
        const shim = !adapted.has('runtime') ? await runtimeAdaptation(o, error) : false;
        if (shim) {
          adapted.add('runtime');
          retry = true; // a new environment reads the adapted task
          o.onProgress?.(`the repaired run met this machine: ${shim}; scored again with it`);
        }
      }
      if (!retry)
        return {
          taskId: o.taskId,
          solved: false,
          steps,
          runs,
          reason: `still failing after ${steps.length} repair step(s): ${error.slice(0, 200)}`,
        };
    } finally {
      await env.dispose();
    }
  }
}

/** The `verify` fields a verifier finding asks for (verifySpecRules.ts), recorded in the task as an adaptation. */
async function verifyAdaptation(o: SolveOptions, repaired: string, findings: string[]): Promise<string | false> {
  const entry = readEntries(o.taskDir).find((e) => e.task_id === o.taskId);
  const finding = findings.find((f) => /set verify\./.test(f));
  if (!entry || !finding) return false;
  const fix = verifySpecFor(finding, repaired, entry.args ?? [], entry.verify);
  const read = readFolderFile(o.taskDir, `${o.taskId}.py`, MAX_TASK_FILE_BYTES);
  if (!fix || !read.ok) return false;
  const adaptation = { round: (entry.adaptations?.length ?? 0) + 1, ...fix.adaptation };
  await writeTask(
    o.taskDir,
    { ...entry, verify: VerifySpecSchema.parse(fix.spec), adaptations: [...(entry.adaptations ?? []), adaptation] },
    read.text,
  );
  return fix.adaptation.change;
}

/**
 * A repaired run's machine error (bf16/fp16/tf32 on the CPU) that a runtime shim answers: the task gets
 * the shim, recorded as an adaptation (as make-task records its own). Returns the change, or false.
 */
async function runtimeAdaptation(o: SolveOptions, error: string): Promise<string | false> {
  const entry = readEntries(o.taskDir).find((e) => e.task_id === o.taskId);
  if (!entry) return false;
  const runtime = entry.runtime;
  // No parser options: only the script's code is adaptable, so the rule answers with a shim or not at all.
  const d = diagnose(error, {
    script: '',
    args: entry.args ?? [],
    env: entry.env ?? {},
    options: undefined,
    ...(runtime ? { runtime } : {}),
  });
  if (!d || d.outcome.kind !== 'adapt' || d.outcome.adaptation.kind !== 'runtime' || !d.outcome.runtime) return false;
  const read = readFolderFile(o.taskDir, `${o.taskId}.py`, MAX_TASK_FILE_BYTES);
  if (!read.ok) return false;
  const adaptation = { round: (entry.adaptations?.length ?? 0) + 1, error: error.slice(0, 1000), ...d.outcome.adaptation };
  await writeTask(o.taskDir, { ...entry, runtime: d.outcome.runtime, adaptations: [...(entry.adaptations ?? []), adaptation] }, read.text);
  return d.outcome.adaptation.change;
}

/** The drift an error names, whatever a release's wording of paths and valid choices (to count distinct drifts). */
export const driftKey = (error: string): string =>
  error
    .replace(/\s*\([^)]*site-packages[^)]*\)/g, '')
    .replace(/, please select one of .*$/, '')
    .trim();

// The one seam between the editor's Make Task and the pipeline that makes the task: the command
// asks its questions, then calls `prepareTask` under a cancellable progress, shows what comes back
// (adaptations, verdict) and saves only once the user confirms. No vscode import.
//
// `prepareTask` is make-task's own pipeline (src/env/taskmaking/makeTask.ts, as `forgeenv make-task`
// runs it) with nothing written (`write: false`): run → diagnose → adapt from the user's args and
// files, then verification in the mode asked. Its entry (args, files, env, adaptations, verdict,
// hub, …) and script come back in the proposal, and that is what gets saved.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SandboxOptions } from '../../../env/sandbox/options';
import type { ExecutionMode, LibraryVersions } from '../../../env/schemas';
import type { TaskMetadata } from '../../../env/tasks/tasks';
import { makeTask, type MakeTaskResult } from '../../../env/taskmaking/makeTask';
import type { MakeTaskVerdict } from '../../../env/taskmaking/provenance';

export interface TaskDraft {
  script: string;
  /** The script's file (its folder holds the modules it imports); undefined for an unsaved editor. */
  scriptPath: string | undefined;
  /** The task folder the task will be saved in (only read here: ids taken). */
  taskDir: string;
  taskId: string;
  args: string[];
  files: Record<string, string>;
  snapshot: string;
  versions: LibraryVersions;
  mode: ExecutionMode;
  /** Simulated mode: the Python that runs the stand-ins. Real mode: undefined = the snapshot's managed environment. */
  interpreter: string | undefined;
  timeoutMs: number;
  sandbox: SandboxOptions;
}

/** One change made to get the script running (the shape of taskmaking/provenance.ts's Adaptation). */
export interface TaskAdaptation {
  rule: string;
  /** The recognised error (or what prompted the change). */
  error: string;
  /** What changed, in words (`--bf16 false`). */
  change: string;
}

export interface TaskVerdict {
  /** The task is verified (original runs; breakages checked), not just saved. */
  verified: boolean;
  /** The original ran cleanly in `mode`. */
  originalRuns: boolean;
  mode: ExecutionMode;
  snapshot: string;
  /** One line per fact, in the order to show. */
  lines: string[];
}

export interface TaskProposal {
  /** The args and files to save (the draft's, or the pipeline's adapted ones). */
  args: string[];
  files: Record<string, string>;
  adaptations: TaskAdaptation[];
  verdict: TaskVerdict;
  /** Why the script cannot be made into a task (a GPU-only kernel, …); nothing is saved. */
  refusal?: string;
  /** The pipeline's tasks.json entry and script: saved as they are (the user's id, difficulty and description on top). */
  entry?: TaskMetadata;
  script?: string;
}

export interface PipelineHooks {
  onProgress: (message: string) => void;
  signal: AbortSignal;
}

export type TaskPipeline = (draft: TaskDraft, hooks: PipelineHooks) => Promise<TaskProposal>;

/** make-task's pipeline on the draft, nothing written; an unsaved script is run from a scratch folder. */
export const runMakeTask: TaskPipeline = async (draft, hooks) => {
  const scratch = draft.scriptPath ? undefined : await mkdtemp(join(tmpdir(), 'forgeenv-make-task-'));
  try {
    const scriptPath = draft.scriptPath ?? join(scratch!, `${draft.taskId}.py`);
    if (scratch) await writeFile(scriptPath, draft.script);
    const r = await makeTask(
      {
        scriptPath,
        source: draft.script,
        taskDir: draft.taskDir,
        taskId: draft.taskId,
        snapshot: draft.snapshot,
        mode: draft.mode,
        args: draft.args,
        files: draft.files,
        interpreter: draft.interpreter,
        timeoutMs: draft.timeoutMs,
        write: false,
      },
      hooks,
    );
    if (hooks.signal.aborted) throw new Error('cancelled');
    return proposalOf(draft, r);
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
};

/** The proposal shown and saved: the pipeline's entry as it is, its adaptations and verdict in words. */
export function proposalOf(draft: Pick<TaskDraft, 'args' | 'files' | 'mode' | 'snapshot'>, r: MakeTaskResult): TaskProposal {
  const adaptations = r.adaptations.map((a) => ({ rule: a.rule, error: a.error, change: a.change }));
  const ranClean = !r.refusal || r.refusal.rule === 'not-verified';
  const verdict: TaskVerdict = {
    verified: r.verdict?.verified ?? false,
    originalRuns: ranClean && (!r.verdict || r.verdict.original_runs.verified > 0),
    mode: r.verdict?.mode ?? draft.mode,
    snapshot: r.snapshot.id || draft.snapshot,
    lines: [
      `Snapshot ${r.snapshot.id || draft.snapshot}: ${r.snapshot.reason}`,
      ...(r.verdict ? verdictLines(r.verdict) : ranClean ? [`The original runs (${draft.mode}); not verified.`] : []),
      ...(r.naturalDrift ? [`Natural drift ${r.naturalDrift.from_snapshot} → ${r.naturalDrift.to_snapshot}: ${r.naturalDrift.error}`] : []),
    ],
  };
  if (r.refusal)
    return {
      args: r.entry.args ?? draft.args,
      files: r.entry.files ?? draft.files,
      adaptations,
      verdict,
      refusal: `${r.refusal.reason} (${r.refusal.rule})`,
    };
  return {
    args: r.entry.args ?? [],
    files: r.entry.files ?? {},
    adaptations,
    verdict,
    entry: r.entry,
    ...(r.script !== undefined ? { script: r.script } : {}),
  };
}

/** make-task's verdict, one fact a line. */
export function verdictLines(v: MakeTaskVerdict): string[] {
  const good = v.breakages.filter((b) => b.broke && b.names_api && b.oracle_verified);
  return [
    `${v.verified ? 'Verified' : 'Not verified'} (${v.mode}, snapshot ${v.snapshot}): the original ran clean with a verified model ${v.original_runs.verified}/${v.original_runs.of} times; ${good.length} of ${v.breakages.length} breakages verified (need 3/3 and 2).`,
    ...(v.reference_note ? [`The original's own verification failed, so no breakage ran: ${v.reference_note}`] : []),
    ...v.breakages.map(
      (b) =>
        `${b.primitive_type}${b.drift_id ? ` (${b.drift_id})` : ''}: ${b.broke ? 'breaks' : 'does not break'}${b.broke ? `, ${b.names_api ? 'its error names the API' : 'its error does not name the API'}, oracle repair ${b.oracle_verified ? 'passes' : 'fails'}` : ''}${b.note ? ` — ${b.note}` : ''}`,
    ),
  ];
}

/** THE seam: the pipeline Make Task calls. */
export let prepareTask: TaskPipeline = runMakeTask;

/** For tests: another pipeline (returns a function that puts the previous one back). */
export function usePipeline(p: TaskPipeline): () => void {
  const previous = prepareTask;
  prepareTask = p;
  return () => {
    prepareTask = previous;
  };
}

/** The preview shown before saving: verdict first, then each adaptation, then the args that will be saved. */
export function proposalPreview(
  taskId: string,
  p: TaskProposal,
  joinArgs: (args: string[]) => string,
): { message: string; detail: string } {
  const headline = p.refusal
    ? `ForgeEnv cannot make ${taskId} a task`
    : p.verdict.verified
      ? `${taskId}: verified task, ready to save`
      : p.verdict.originalRuns
        ? `${taskId}: the original runs; save the task?`
        : `${taskId}: the original does not run; save the task anyway?`;
  const detail: string[] = [];
  if (p.refusal) detail.push(`Why: ${p.refusal}`, '');
  detail.push(`Verdict (${p.verdict.mode}, snapshot ${p.verdict.snapshot}):`, ...p.verdict.lines.map((l) => `• ${l}`), '');
  if (p.adaptations.length) {
    detail.push(`Adaptations (${p.adaptations.length}):`);
    for (const a of p.adaptations) detail.push(`• ${a.change} — ${a.rule}, after: ${a.error}`);
  } else detail.push('Adaptations: none (the script runs with the arguments as given).');
  detail.push('', `Arguments: ${p.args.length ? joinArgs(p.args) : '(none)'}`);
  if (Object.keys(p.files).length) detail.push(`Files: ${Object.keys(p.files).join(', ')}`);
  return { message: headline, detail: detail.join('\n') };
}

/** The snapshot Make Task proposes (highlighted in its question); the pipeline's inference replaces it. */
export function proposeSnapshot(_script: string, defaultId: string): { id: string; why: string } {
  return { id: defaultId, why: "ForgeEnv's default snapshot" };
}

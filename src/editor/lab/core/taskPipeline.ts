// The one seam between the editor's Make Task and the pipeline that makes the task: the command
// asks its questions, then calls `prepareTask` under a cancellable progress, shows what comes back
// (adaptations, verdict) and saves only once the user confirms. No vscode import.
//
// Today `prepareTask` is `runOriginalOnce`: it runs the unbroken script once with the chosen args
// and files (the stand-ins in simulated mode, the snapshot's managed environment in real mode) and
// reports whether it ran. When src/env/taskmaking/ lands (run → diagnose → adapt, verification in
// real mode), `prepareTask` becomes a call to its `makeTask(options, { onProgress, signal })`
// mapped onto `TaskProposal` (its adaptations as they are; its verdict through `verdictLines`).
import { executeScript } from '../../../env/executor';
import { prepareRealRun, RealModeError } from '../../../env/realMode';
import type { SandboxOptions } from '../../../env/sandbox/options';
import type { ExecutionMode, LibraryVersions } from '../../../env/schemas';
import { runOutcome } from './runDiagnostics';

export interface TaskDraft {
  script: string;
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
}

export interface PipelineHooks {
  onProgress: (message: string) => void;
  signal: AbortSignal;
}

export type TaskPipeline = (draft: TaskDraft, hooks: PipelineHooks) => Promise<TaskProposal>;

/** Today's logic: the original runs once, as it is; nothing is adapted, no breakage is checked. */
export const runOriginalOnce: TaskPipeline = async (draft, hooks) => {
  const base = { args: draft.args, files: draft.files, adaptations: [] };
  let real: Awaited<ReturnType<typeof prepareRealRun>> | undefined;
  if (draft.mode === 'real') {
    try {
      real = await prepareRealRun({ libraryVersions: draft.versions, snapshot: draft.snapshot, interpreter: draft.interpreter, onProgress: hooks.onProgress, signal: hooks.signal });
    } catch (e) {
      const msg = e instanceof RealModeError ? e.message : String((e as Error)?.message ?? e);
      return { ...base, verdict: verdictOf(draft, false, [`The original was not run: ${msg}`]) };
    }
  }
  hooks.onProgress(`running ${draft.taskId}.py once (${draft.mode}, snapshot ${draft.snapshot})…`);
  const exec = await executeScript({
    script: draft.script,
    mode: draft.mode,
    libraryVersions: draft.versions,
    interpreter: real?.interpreter ?? draft.interpreter,
    timeoutMs: draft.timeoutMs,
    sandbox: draft.sandbox,
    signal: hooks.signal,
    validate: false,
    args: draft.args,
    files: draft.files,
    ...(real ? { extraEnv: real.env, bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies } : {}),
  });
  if (hooks.signal.aborted) throw new Error('cancelled');
  const outcome = runOutcome(exec, draft.script);
  const secs = (exec.wall_time_ms / 1000).toFixed(1);
  const lines = outcome.ok
    ? [`The original runs cleanly (${draft.mode}, snapshot ${draft.snapshot}, ${secs} s).`]
    : [`The original does not run (${draft.mode}, snapshot ${draft.snapshot}): ${outcome.headline ?? `exit ${exec.exit_code}`}`, 'Fix the arguments or files, or save it anyway: an episode on it starts from a script that already fails.'];
  return { ...base, verdict: verdictOf(draft, outcome.ok, lines) };
};

function verdictOf(draft: TaskDraft, originalRuns: boolean, lines: string[]): TaskVerdict {
  return {
    verified: false,
    originalRuns,
    mode: draft.mode,
    snapshot: draft.snapshot,
    lines: [...lines, 'Breakages are not verified before saving yet: an episode shows whether its breakage makes the script fail.'],
  };
}

/** THE seam: the pipeline Make Task calls (swap it here when src/env/taskmaking/ lands). */
export let prepareTask: TaskPipeline = runOriginalOnce;

/** For tests: another pipeline (returns a function that puts the previous one back). */
export function usePipeline(p: TaskPipeline): () => void {
  const previous = prepareTask;
  prepareTask = p;
  return () => {
    prepareTask = previous;
  };
}

/** The preview shown before saving: verdict first, then each adaptation, then the args that will be saved. */
export function proposalPreview(taskId: string, p: TaskProposal, joinArgs: (args: string[]) => string): { message: string; detail: string } {
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

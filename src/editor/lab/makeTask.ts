// "Make Task from This Script": any working Python file becomes a task of a task folder, with the
// arguments the script needs (prefilled from its parser), extra files beside it (configs, data),
// a difficulty and a library snapshot. Then the task-making pipeline runs under a cancellable
// progress (core/taskPipeline.ts, the one seam), its adaptations and verdict are shown, and the
// task is saved only once confirmed; on request an episode starts on it. Every question can be
// answered by command arguments instead (tests, keybindings); the files go through
// core/taskWriter.ts (validated, atomic).
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { readFolderFile } from '../../env/tasks/folderFile';
import { deriveScriptArgs } from '../../env/tasks/scriptArgs';
import { DifficultySchema, RunFilesSchema, type Difficulty } from '../../env/schemas';
import { allSnapshots } from '../../env/snapshots/registry';
import { deriveDifficulty } from '../../env/tasks/tasks';
import { CORPUS_SNAPSHOT } from '../../env/snapshots/versions';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { interpreterForMode } from '../environmentFactory';
import { argumentHint } from './core/argumentHint';
import { prepareTask, proposalPreview, proposeSnapshot, type TaskProposal } from './core/taskPipeline';
import { joinArgsLine, saveScriptTask, splitArgsLine, taskIdProblem, TaskSaveError, type SavedScriptTask } from './core/taskWriter';
import { candidateFiles, EXTRA_FILE_MAX, suggestId } from './core/scriptNeighbours';
import { pickWithDefault } from './quickPickDefault';
import { chooseTaskFolder, ensureTaskFolderSetting } from './taskFolderChoice';

export const MakeTaskArgsSchema = z
  .object({
    uri: z.string().optional(),
    folder: z.string().min(1).optional(),
    taskId: z.string().min(1).optional(),
    description: z.string().optional(),
    args: z.array(z.string()).optional(),
    /** Paths relative to the script's folder. */
    files: z.array(z.string()).optional(),
    difficulty: DifficultySchema.optional(),
    snapshot: z.string().optional(),
    /** Start an episode on the new task right away (default: ask). */
    start: z.boolean().optional(),
    /** Save without showing the pipeline's verdict and adaptations first (default: show them and ask). */
    confirm: z.boolean().optional(),
    quiet: z.boolean().optional(),
  })
  .strict();

export type MadeTask = SavedScriptTask & {
  started: boolean;
  episodeId?: string;
  verdict: TaskProposal['verdict'];
  adaptations: TaskProposal['adaptations'];
};

export async function makeTaskCommand(ctx: ForgeContext, rawArgs: unknown): Promise<CommandResult<MadeTask>> {
  const parsed = MakeTaskArgsSchema.safeParse(rawArgs instanceof vscode.Uri ? { uri: rawArgs.toString() } : (rawArgs ?? {}));
  if (!parsed.success)
    return refusal('invalid_args', `Invalid arguments for ForgeEnv: Make Task from This Script: ${parsed.error.message}`);
  const a = parsed.data;
  const uri = a.uri ? vscode.Uri.parse(a.uri) : vscode.window.activeTextEditor?.document.uri;
  const doc = uri
    ? await vscode.workspace.openTextDocument(uri).then(
        (d) => d,
        () => undefined,
      )
    : undefined;
  if (!doc || doc.languageId !== 'python') {
    const msg = 'Open a Python training script first: the task is made from the file in the editor.';
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`);
    return refusal('no_episode', msg);
  }
  const script = doc.getText();
  const scriptPath = doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
  const fileName = basename(doc.uri.path) || 'script.py';

  const configured = ctx.taskDirs();
  const dir =
    a.folder ??
    (await chooseTaskFolder({
      configured,
      memory: ctx.extension.workspaceState,
      onQuestion: ctx.noteQuestion,
      title: 'Make task: save it in…',
    }));
  if (!dir) return refusal('cancelled', 'No folder chosen; no task was made.');
  const taken = ctx.takenTaskIds(dir);

  let taskId = a.taskId;
  if (!taskId) {
    taskId = (
      await vscode.window.showInputBox({
        title: 'Make task (1/5): task id',
        value: suggestId(fileName, taken),
        prompt: `Saved in ${dir} as <id>.py plus an entry in tasks.json`,
        validateInput: (v) => taskIdProblem(v.trim(), dir, taken),
        ignoreFocusOut: true,
      })
    )?.trim();
    if (!taskId) return refusal('cancelled', 'No task id given; no task was made.');
  }

  let args = a.args;
  if (!args) {
    const derived = deriveScriptArgs(script);
    const line = await vscode.window.showInputBox({
      title: 'Make task (2/5): arguments after train.py',
      value: joinArgsLine(derived.args),
      prompt: argumentHint(derived),
      validateInput: (v) => {
        try {
          splitArgsLine(v);
          return undefined;
        } catch (e) {
          return (e as Error).message;
        }
      },
      ignoreFocusOut: true,
    });
    if (line === undefined) return refusal('cancelled', 'Arguments not confirmed; no task was made.');
    args = splitArgsLine(line);
  }

  let fileNames = a.files;
  if (!fileNames && scriptPath) {
    const candidates = candidateFiles(scriptPath);
    if (candidates.length) {
      const picked = await vscode.window.showQuickPick(
        candidates.map((n) => ({ label: n, picked: args.some((x) => x === n || x.endsWith(`/${n}`)) })),
        { title: 'Make task (3/5): extra files the run needs (copied into every run folder)', canPickMany: true, ignoreFocusOut: true },
      );
      if (!picked) return refusal('cancelled', 'Extra files not confirmed; no task was made.');
      fileNames = picked.map((p) => p.label);
    }
  }
  const files: Record<string, string> = {};
  for (const name of fileNames ?? []) {
    if (!scriptPath) return refusal('invalid_args', 'Extra files need a script saved on disk.');
    const abs = join(dirname(scriptPath), name);
    const rel = relative(dirname(scriptPath), abs).split('\\').join('/');
    // Through readFolderFile: the script's folder may be a cloned repository; an extra file that is
    // a link (say to ~/.ssh/id_rsa), a fifo or too big is refused, not copied into every run folder.
    const read = readFolderFile(dirname(scriptPath), rel, EXTRA_FILE_MAX);
    if (!read.ok) return refusal('invalid_args', `Cannot read the extra file ${name}: ${read.problem}`);
    files[rel] = read.text;
  }
  const filesOk = RunFilesSchema.safeParse(files);
  if (!filesOk.success)
    return refusal('invalid_args', `Extra files: ${filesOk.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);

  let difficulty: Difficulty | undefined = a.difficulty;
  if (!difficulty) {
    const derivedDifficulty = deriveDifficulty(script);
    const items = DifficultySchema.options.map((d) => ({
      label: d,
      description: d === derivedDifficulty ? 'from the line count' : undefined,
    }));
    // The derived difficulty is highlighted, so Enter keeps it.
    const picked = await pickWithDefault(
      items,
      items.find((i) => i.label === derivedDifficulty),
      { title: 'Make task (4/5): difficulty', placeholder: `proposed: ${derivedDifficulty}`, onQuestion: ctx.noteQuestion },
    );
    if (!picked) return refusal('cancelled', 'No difficulty chosen; no task was made.');
    difficulty = picked.label;
  }

  const snapshots = allSnapshots();
  let snapshotId = a.snapshot;
  if (!snapshotId) {
    const proposed = proposeSnapshot(script, CORPUS_SNAPSHOT);
    const items = snapshots.map((s) => ({
      label: s.id,
      description: `${s.id === proposed.id ? `proposed (${proposed.why}) · ` : ''}transformers ${s.versions.transformers ?? '?'}, datasets ${s.versions.datasets ?? '?'}, trl ${s.versions.trl ?? '?'}`,
      detail: s.note,
    }));
    const picked = await pickWithDefault(
      items,
      items.find((i) => i.label === proposed.id),
      { title: 'Make task (5/5): the library snapshot the script works with', onQuestion: ctx.noteQuestion },
    );
    if (!picked) return refusal('cancelled', 'No snapshot chosen; no task was made.');
    snapshotId = picked.label;
  }
  const snapshot = snapshots.find((s) => s.id === snapshotId);
  if (!snapshot) return refusal('invalid_args', `Unknown snapshot "${snapshotId}"; known: ${snapshots.map((s) => s.id).join(', ')}`);

  // make-task's pipeline (adapt, verify; nothing written), cancellable, then its verdict and adaptations before anything is saved.
  const resolved = await ctx.resolvedInterpreter();
  const mode = ctx.settings().executionMode;
  let proposal: TaskProposal;
  try {
    proposal = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: making ${taskId} (${mode})`, cancellable: true },
      async (progress, token) => {
        const ac = new AbortController();
        const sub = token.onCancellationRequested(() => ac.abort());
        try {
          return await prepareTask(
            {
              script,
              scriptPath,
              taskDir: dir,
              taskId: taskId,
              args,
              files,
              snapshot: snapshot.id,
              versions: { ...snapshot.versions },
              mode,
              // Real mode: the snapshot's managed environment unless forgeenv.pythonPath names one.
              interpreter: interpreterForMode(mode, resolved),
              ...ctx.runOptions(),
            },
            { onProgress: (message) => progress.report({ message }), signal: ac.signal },
          );
        } finally {
          sub.dispose();
          // A cancelled run's own error gives way to VS Code's cancellation, on purpose.
          // eslint-disable-next-line no-unsafe-finally
          if (ac.signal.aborted) throw new vscode.CancellationError();
        }
      },
    );
  } catch (e) {
    if (e instanceof vscode.CancellationError) return refusal('cancelled', 'Make Task cancelled; no task was made.');
    const msg = `Could not make the task: ${(e as Error)?.message ?? String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  const preview = proposalPreview(taskId, proposal, joinArgsLine);
  ctx.log.info(`make task ${taskId}: ${preview.message}\n${preview.detail}`);
  if (proposal.refusal) {
    if (!a.quiet)
      void vscode.window.showErrorMessage(`ForgeEnv: ${preview.message}: ${proposal.refusal}`, { modal: true, detail: preview.detail });
    return refusal('error', `${taskId} cannot be made a task: ${proposal.refusal}`);
  }
  if (!a.confirm && !a.quiet) {
    const choice = await vscode.window.showInformationMessage(preview.message, { modal: true, detail: preview.detail }, 'Save Task');
    if (choice !== 'Save Task') return refusal('cancelled', 'Not confirmed; no task was made.');
  }

  let saved: SavedScriptTask;
  try {
    // Only now: a cancelled Make Task leaves no empty folder behind.
    await mkdir(dir, { recursive: true });
    saved = await saveScriptTask({
      dir,
      taskId,
      // What the pipeline decided: its script (relative imports laid out) and its whole entry.
      script: proposal.script ?? script,
      description: a.description ?? `${fileName} (made from a user script, snapshot ${snapshot.id}).`,
      args: proposal.args,
      files: proposal.files,
      difficulty,
      versions: { ...(proposal.entry?.library_versions ?? snapshot.versions) },
      tags: [`snapshot:${snapshot.id}`],
      taken,
      ...(proposal.entry ? { pipelineEntry: proposal.entry } : {}),
    });
  } catch (e) {
    const msg = e instanceof TaskSaveError ? e.message : `Could not save the task: ${(e as Error).message}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  await ensureTaskFolderSetting(dir, configured);
  // Known at once (the folder watcher would also see it, a moment later): an episode may start right away.
  ctx.invalidateTasks();
  const made = { ...saved, verdict: proposal.verdict, adaptations: proposal.adaptations };
  let start = a.start;
  if (start === undefined && !a.quiet) {
    const choice = await vscode.window.showInformationMessage(
      `ForgeEnv: task ${saved.taskId} saved in ${dir}.`,
      'Start Episode',
      'Open Task Script',
    );
    if (choice === 'Open Task Script') await vscode.window.showTextDocument(vscode.Uri.file(saved.scriptPath));
    start = choice === 'Start Episode';
  }
  if (!start) return { ok: true, ...made, started: false };
  const episode = await vscode.commands.executeCommand<CommandResult<{ episodeId: string; taskId: string }>>('forgeenv.startEpisode', {
    taskId: saved.taskId,
  });
  return { ok: true, ...made, started: Boolean(episode?.ok), ...(episode?.ok ? { episodeId: episode.episodeId } : {}) };
}

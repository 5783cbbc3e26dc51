// "Save as task" from a lab diff: folder (asked as Make Task asks it: the last one highlighted,
// forgeenv-tasks/ proposed, stray scripts warned about), task id (suggested, validated), then the
// files (see core/taskWriter.ts).
import { mkdir } from 'node:fs/promises';
import * as vscode from 'vscode';
import { z } from 'zod';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { saveLabTask, suggestTaskId, taskIdProblem, TaskSaveError, type SavedTask } from './core/taskWriter';
import type { LabSession } from './labDocuments';
import { chooseTaskFolder, ensureTaskFolderSetting, type FolderQuestion } from './taskFolderChoice';

export const SaveTaskArgsSchema = z
  .object({
    session: z.string().optional(),
    uri: z.string().optional(),
    folder: z.string().min(1).optional(),
    taskId: z.string().min(1).optional(),
    description: z.string().optional(),
    quiet: z.boolean().optional(),
  })
  .strict();

export async function saveAsTaskCommand(
  forge: ForgeContext,
  session: LabSession | undefined,
  rawArgs: unknown,
): Promise<CommandResult<SavedTask> | undefined> {
  const parsed = SaveTaskArgsSchema.safeParse(rawArgs instanceof vscode.Uri || rawArgs === undefined ? {} : rawArgs);
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Save as Task: ${parsed.error.message}`);
  const args = parsed.data;
  if (!session) {
    void vscode.window.showWarningMessage('ForgeEnv: apply a primitive first (ForgeEnv: Apply a Drift Primitive).');
    return refusal('no_episode', 'No lab result to save.');
  }
  const configured = forge.taskDirs();
  const ask: Omit<FolderQuestion, 'configured' | 'title'> = { memory: forge.extension.workspaceState, onQuestion: forge.noteQuestion };
  const dir = args.folder ?? (await chooseTaskFolder({ ...ask, configured, title: 'Save the task in…' }));
  if (!dir) return refusal('cancelled', 'No folder chosen.');
  await mkdir(dir, { recursive: true });
  const taken = forge.takenTaskIds(dir);
  let taskId = args.taskId;
  if (!taskId) {
    taskId = await vscode.window.showInputBox({
      ignoreFocusOut: true,
      title: 'Task id for the new task',
      value: suggestTaskId(session.fileName, session.spec.primitive_type, taken),
      prompt: `Saved in ${dir} as <id>.py, a tasks.json entry and <id>.breakage.json`,
      validateInput: (v) => taskIdProblem(v.trim(), dir, taken),
    });
    if (!taskId) return refusal('cancelled', 'No task id given.');
    taskId = taskId.trim();
  }
  const description =
    args.description ??
    `${session.fileName} broken with ${session.spec.primitive_type} ${JSON.stringify(session.spec.params)} (saved from the ForgeEnv lab).`;
  try {
    const saved = await saveLabTask({
      dir,
      taskId,
      script: session.original,
      spec: session.spec,
      description,
      versions: session.versions,
      taken,
    });
    // So episodes find it (the folder may be the proposed forgeenv-tasks/, not configured yet).
    await ensureTaskFolderSetting(dir, configured);
    if (!args.quiet) {
      void vscode.window.showInformationMessage(`ForgeEnv: saved task ${saved.taskId} in ${dir}.`, 'Open Script').then((c) => {
        if (c) void vscode.window.showTextDocument(vscode.Uri.file(saved.scriptPath));
      });
    }
    return { ok: true, ...saved };
  } catch (e) {
    const msg = e instanceof TaskSaveError ? e.message : `Could not save the task: ${(e as Error).message}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
}

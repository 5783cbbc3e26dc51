// Which folder a new task goes to. Every `.py` of a task folder is a task, so the workspace root
// (or any folder of other scripts) is a bad answer: a dedicated `forgeenv-tasks/` is proposed, a
// folder holding other scripts is warned about, and the last answer is remembered as the default
// of the next question, never as a silent answer.
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as vscode from 'vscode';
import { strayScripts } from './core/strayScripts';
import { pickWithDefault, type QuestionListener } from './quickPickDefault';

export const DEDICATED_TASK_FOLDER = 'forgeenv-tasks';
export const LAST_TASK_FOLDER_KEY = 'forgeenv.makeTask.lastFolder';

type FolderItem = vscode.QuickPickItem & { dir?: string };

export interface FolderQuestion {
  configured: string[];
  memory: vscode.Memento;
  onQuestion?: QuestionListener;
  title: string;
}

/** Asks where the task goes (the last answer highlighted); undefined when cancelled. */
export async function chooseTaskFolder(q: FolderQuestion): Promise<string | undefined> {
  const root = vscode.workspace.workspaceFolders?.find((f) => f.uri.scheme === 'file')?.uri.fsPath;
  const dedicated = root ? join(root, DEDICATED_TASK_FOLDER) : undefined;
  const last = q.memory.get<string>(LAST_TASK_FOLDER_KEY);
  const items: FolderItem[] = [];
  const seen = new Set<string>();
  const add = (dir: string, description: string, icon: string) => {
    const key = resolve(dir);
    if (seen.has(key)) return;
    seen.add(key);
    items.push({ label: `$(${icon}) ${dir}`, description, dir });
  };
  if (last) add(last, 'last used', 'history');
  for (const d of q.configured) add(d, 'forgeenv.taskFolders', 'folder');
  if (dedicated) add(dedicated, existsSync(dedicated) ? 'a folder for tasks only' : 'a folder for tasks only (created)', 'new-folder');
  items.push({ label: '$(folder-opened) Choose a folder…' });
  const withDir = (d: string | undefined) => (d ? items.find((i) => i.dir === d) : undefined);
  const active = withDir(last) ?? withDir(dedicated) ?? items[0];
  const picked = await pickWithDefault(items, active, {
    title: q.title,
    placeholder: 'Every .py file in a task folder is a task',
    onQuestion: q.onQuestion,
  });
  if (!picked) return undefined;
  let dir: string;
  if (picked.dir) dir = picked.dir;
  else {
    const chosen = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      canSelectMany: false,
      openLabel: 'Save task here',
      defaultUri: dedicated ? vscode.Uri.file(dedicated) : undefined,
    });
    const fsPath = chosen?.[0]?.fsPath;
    if (!fsPath) return undefined;
    dir = fsPath;
  }
  // A folder that is already a task folder holds tasks, not stray scripts.
  const isTaskFolder = q.configured.some((d) => resolve(d) === resolve(dir));
  const stray = isTaskFolder ? [] : strayScripts(dir);
  if (stray.length) {
    const shown = stray.slice(0, 5).join(', ') + (stray.length > 5 ? `, … (${stray.length} in all)` : '');
    const useDedicated = dedicated && resolve(dedicated) !== resolve(dir) ? `Use ${DEDICATED_TASK_FOLDER}/ Instead` : undefined;
    const choice = await vscode.window.showWarningMessage(
      `${dir} holds ${stray.length} other Python script${stray.length === 1 ? '' : 's'}.`,
      {
        modal: true,
        detail: `Every .py file in a task folder becomes a task, so ${shown} would become tasks too. A folder for tasks only keeps them apart.`,
      },
      ...(useDedicated ? [useDedicated] : []),
      'Save Here Anyway',
    );
    if (!choice) return undefined;
    if (choice === useDedicated) dir = dedicated!;
  }
  await q.memory.update(LAST_TASK_FOLDER_KEY, dir);
  return dir;
}

/** Adds `dir` to forgeenv.taskFolders (workspace when one is open) so the episode picker finds the task. */
export async function ensureTaskFolderSetting(dir: string, configured: string[]): Promise<void> {
  if (configured.includes(dir)) return;
  const config = vscode.workspace.getConfiguration('forgeenv');
  const current = config.get<string[]>('taskFolders') ?? [];
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update('taskFolders', [...current, dir], target);
}

// "Make Task from This Script": any working Python file becomes a task of a task folder, with the
// arguments the script needs (prefilled from its parser), extra files beside it (configs, data),
// a difficulty and a library snapshot; then, on request, an episode starts on it. Every question
// can be answered by command arguments instead (tests, keybindings); the files go through
// core/taskWriter.ts (validated, atomic).
import { lstatSync, readdirSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { basename, dirname, join, relative } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { readFolderFile } from '../../env/folderFile';
import { deriveScriptArgs } from '../../env/scriptArgs';
import { DifficultySchema, RunFilesSchema, type Difficulty } from '../../env/schemas';
import { allSnapshots } from '../../env/snapshots/registry';
import { deriveDifficulty, loadCorpus } from '../../env/tasks';
import { LATEST_SNAPSHOT } from '../../env/versions';
import { refusal, type CommandResult } from '../commandArgs';
import { readSettings, resolveAgainstWorkspace } from '../settings';
import { joinArgsLine, saveScriptTask, splitArgsLine, taskIdProblem, TaskSaveError, type SavedScriptTask } from './core/taskWriter';

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
    quiet: z.boolean().optional(),
  })
  .strict();

/** Text files beside a script that a run may need (configs, small data), newest first. */
const EXTRA_FILE = /\.(ya?ml|json|jsonl|txt|csv|tsv|cfg|ini|toml|md)$/i;
const EXTRA_FILE_MAX = 1_048_576;

function candidateFiles(scriptPath: string): string[] {
  const dir = dirname(scriptPath);
  try {
    return readdirSync(dir)
      .filter((n) => EXTRA_FILE.test(n) && n !== 'tasks.json')
      .filter((n) => {
        // lstat: a link is not offered (readFolderFile would refuse it when the task is made).
        const st = lstatSync(join(dir, n));
        return st.isFile() && st.size <= EXTRA_FILE_MAX;
      })
      .sort();
  } catch {
    return [];
  }
}

async function chooseFolder(configured: string[]): Promise<string | undefined> {
  if (configured.length === 1) return configured[0];
  const items: Array<vscode.QuickPickItem & { dir?: string }> = [
    ...configured.map((d) => ({ label: `$(folder) ${d}`, description: 'forgeenv.taskFolders', dir: d })),
    { label: '$(folder-opened) Choose a folder…' },
  ];
  const picked = configured.length ? await vscode.window.showQuickPick(items, { title: 'Make task: save it in…', ignoreFocusOut: true }) : items[items.length - 1];
  if (!picked) return undefined;
  if (picked.dir) return picked.dir;
  const dir = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, canSelectMany: false, openLabel: 'Save task here' });
  return dir?.[0]?.fsPath;
}

/** Adds `dir` to forgeenv.taskFolders (workspace when one is open) so the episode picker finds the task. */
async function ensureTaskFolderSetting(dir: string, configured: string[]): Promise<void> {
  if (configured.includes(dir)) return;
  const config = vscode.workspace.getConfiguration('forgeenv');
  const current = config.get<string[]>('taskFolders') ?? [];
  const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
  await config.update('taskFolders', [...current, dir], target);
}

function suggestId(fileName: string, taken: ReadonlySet<string>): string {
  const base = fileName.replace(/\.py$/, '').replace(/[^A-Za-z0-9_.-]+/g, '_').replace(/^[._-]+/, '') || 'task';
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

export async function makeTaskCommand(rawArgs: unknown): Promise<CommandResult<SavedScriptTask & { started: boolean; episodeId?: string }>> {
  const parsed = MakeTaskArgsSchema.safeParse(rawArgs instanceof vscode.Uri ? { uri: rawArgs.toString() } : (rawArgs ?? {}));
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Make Task from This Script: ${parsed.error.message}`);
  const a = parsed.data;
  const uri = a.uri ? vscode.Uri.parse(a.uri) : vscode.window.activeTextEditor?.document.uri;
  const doc = uri ? await vscode.workspace.openTextDocument(uri).then((d) => d, () => undefined) : undefined;
  if (!doc || doc.languageId !== 'python') {
    const msg = 'Open a Python training script first: the task is made from the file in the editor.';
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`);
    return refusal('no_episode', msg);
  }
  const script = doc.getText();
  const scriptPath = doc.uri.scheme === 'file' ? doc.uri.fsPath : undefined;
  const fileName = basename(doc.uri.path) || 'script.py';

  const configured = readSettings().settings.taskFolders.map(resolveAgainstWorkspace);
  const dir = a.folder ?? (await chooseFolder(configured));
  if (!dir) return refusal('cancelled', 'No folder chosen; no task was made.');
  await mkdir(dir, { recursive: true });
  const taken = new Set(loadCorpus({ extraDirs: [...new Set([...configured, dir])] }).tasks.map((t) => t.task_id));

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
      prompt: derived.required.length
        ? `Prefilled with what the script requires (${derived.style}: ${derived.required.map((r) => r.name).join(', ')}). Empty: none.`
        : 'The script requires no arguments; add any it should run with.',
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
        candidates.map((n) => ({ label: n, picked: args!.some((x) => x === n || x.endsWith(`/${n}`)) })),
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
  if (!filesOk.success) return refusal('invalid_args', `Extra files: ${filesOk.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);

  let difficulty: Difficulty | undefined = a.difficulty;
  if (!difficulty) {
    const derivedDifficulty = deriveDifficulty(script);
    const picked = await vscode.window.showQuickPick(
      DifficultySchema.options.map((d) => ({ label: d, description: d === derivedDifficulty ? 'from the line count' : undefined })),
      { title: 'Make task (4/5): difficulty', placeHolder: derivedDifficulty, ignoreFocusOut: true },
    );
    if (!picked) return refusal('cancelled', 'No difficulty chosen; no task was made.');
    difficulty = picked.label as Difficulty;
  }

  const snapshots = allSnapshots();
  let snapshotId = a.snapshot;
  if (!snapshotId) {
    const picked = await vscode.window.showQuickPick(
      snapshots.map((s) => ({
        label: s.id,
        description: `transformers ${s.versions.transformers ?? '?'}, datasets ${s.versions.datasets ?? '?'}, trl ${s.versions.trl ?? '?'}`,
        detail: s.note,
        picked: s.id === LATEST_SNAPSHOT,
      })),
      { title: 'Make task (5/5): the library snapshot the script works with', ignoreFocusOut: true },
    );
    if (!picked) return refusal('cancelled', 'No snapshot chosen; no task was made.');
    snapshotId = picked.label;
  }
  const snapshot = snapshots.find((s) => s.id === snapshotId);
  if (!snapshot) return refusal('invalid_args', `Unknown snapshot "${snapshotId}"; known: ${snapshots.map((s) => s.id).join(', ')}`);

  let saved: SavedScriptTask;
  try {
    saved = await saveScriptTask({
      dir,
      taskId,
      script,
      description: a.description ?? `${fileName} (made from a user script, snapshot ${snapshot.id}).`,
      args,
      files,
      difficulty,
      versions: { ...snapshot.versions },
      tags: [`snapshot:${snapshot.id}`],
      taken,
    });
  } catch (e) {
    const msg = e instanceof TaskSaveError ? e.message : `Could not save the task: ${(e as Error).message}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  await ensureTaskFolderSetting(dir, configured);
  let start = a.start;
  if (start === undefined && !a.quiet) {
    const choice = await vscode.window.showInformationMessage(`ForgeEnv: task ${saved.taskId} saved in ${dir}.`, 'Start Episode', 'Open Task Script');
    if (choice === 'Open Task Script') await vscode.window.showTextDocument(vscode.Uri.file(saved.scriptPath));
    start = choice === 'Start Episode';
  }
  if (!start) return { ok: true, ...saved, started: false };
  const episode = await vscode.commands.executeCommand<CommandResult<{ episodeId: string; taskId: string }>>('forgeenv.startEpisode', { taskId: saved.taskId });
  return { ok: true, ...saved, started: Boolean(episode?.ok), ...(episode?.ok ? { episodeId: episode.episodeId } : {}) };
}

// The human repair loop as a feature: builds the session (vscode-free), its editor and views, the
// task queue and the write queue, keeps the queue in step with the dataset folder, and registers
// the episode commands. src/extension.ts calls registerEpisode once.
import { randomUUID } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { probeInterpreter } from '../../env/run/executor';
import { JsonFileTeacherStore } from '../../env/episode/teacher';
import { DatasetStore } from '../../store/datasetStore';
import { formatProblem } from '../../store/jsonlFile';
import type { ForgeContext } from '../context';
import { toDisposable } from '../lifecycle';
import { showSandboxWarningOnce } from '../sandboxWarning';
import { resolveInterpreter } from '../settings';
import { registerEpisodeCommands } from './commands';
import { DatasetWriter } from './datasetWriter';
import { PendingWrites } from './pendingWrites';
import { RepairSession } from './session';
import { TaskQueueProvider } from './taskQueue';
import { EpisodeViews } from './ui';
import { VsCodeEpisodeEditor } from './vscodeEditor';

export interface EpisodeFeature {
  session: RepairSession;
  queue: TaskQueueProvider;
  writer: DatasetWriter;
  views: EpisodeViews;
}

export function registerEpisode(ctx: ForgeContext): EpisodeFeature {
  const ext = ctx.extension;
  const views = new EpisodeViews(ctx.lifecycle, ext.extensionUri, ctx.log);
  // Assigned once below; the queue built first reads it (through a closure) only later.
  // eslint-disable-next-line prefer-const
  let session: RepairSession | undefined;
  const queue = ctx.lifecycle.add(
    new TaskQueueProvider({
      tasks: () => ctx.tasks().all,
      dataset: async () => {
        const snap = await new DatasetStore(ctx.datasetDir()).readAll();
        const problems = snap.problems.map(formatProblem);
        for (const p of problems) ctx.log.warn(`dataset: ${p}`);
        return {
          demonstrations: snap.demonstrations.current.map((d) => ({ task_id: d.task_id, visible_reward: d.visible_reward })),
          skips: snap.skips.map((s) => ({ task_id: s.task_id })),
          problems,
        };
      },
      inProgressTaskId: () => session?.current?.state.start.task.task_id,
    }),
  );
  const pending = new PendingWrites(ext.globalState);
  const writer = new DatasetWriter(
    pending,
    ctx.log,
    () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir(),
    () => queue.refresh(),
  );
  const editor = new VsCodeEpisodeEditor(ctx, views, queue);
  ctx.lifecycle.add(editor.picker);
  session = new RepairSession(editor, {
    settings: () => ctx.settings(),
    tasks: () => ctx.tasks(),
    taskDirs: () => ctx.taskDirs(),
    datasetDir: () => ctx.datasetDir(),
    episodesDir: () => ctx.episodesDir(),
    state: ext.workspaceState,
    pending,
    reportWriteFailure: (o) => writer.reportFailure(o),
    queue,
    resolveInterpreter: (s) => resolveInterpreter(s),
    probeInterpreter,
    teacherStore: () =>
      new JsonFileTeacherStore(join(ext.globalStorageUri.fsPath, 'teacher-history.json'), (m: string) => ctx.log.warn(`Teacher: ${m}`)),
    command: (id, ...args) => void vscode.commands.executeCommand(id, ...args),
    sandboxWarning: (text) => showSandboxWarningOnce(text, (l) => ctx.runs.appendLine(l)),
    log: ctx.log,
    sessionId: randomUUID(),
    extensionVersion: ctx.extensionVersion,
    client: {
      app: vscode.env.appName,
      vscode_version: vscode.version,
      ui_kind: vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop',
    },
  });
  const live = session;
  // The episode is suspended (not ended) with the window: it resumes after a reload.
  ctx.lifecycle.add(toDisposable(() => live.suspend()));
  watchDataset(ctx, queue);
  ctx.lifecycle.add(ctx.onDidChangeTasks(() => queue.refresh()));
  ctx.lifecycle.add(
    vscode.workspace.onDidGrantWorkspaceTrust(() => {
      queue.refresh();
      void writer.retryWaiting();
    }),
  );
  const feature = { session: live, queue, writer, views };
  registerEpisodeCommands(ctx, feature);
  void writer.retryWaiting();
  void live.restore();
  return feature;
}

/** Refreshes the task queue when the dataset folder's JSONL files change (debounced), following the setting. */
function watchDataset(ctx: ForgeContext, queue: TaskQueueProvider): void {
  let current: vscode.Disposable | undefined;
  const watch = () => {
    current?.dispose();
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(ctx.datasetDir()), '*.jsonl'));
    let timer: NodeJS.Timeout | undefined;
    const refresh = () => {
      clearTimeout(timer);
      timer = setTimeout(() => queue.refresh(), 300);
    };
    watcher.onDidCreate(refresh);
    watcher.onDidChange(refresh);
    watcher.onDidDelete(refresh);
    current = {
      dispose: () => {
        clearTimeout(timer);
        watcher.dispose();
      },
    };
  };
  watch();
  ctx.lifecycle.add(toDisposable(() => current?.dispose()));
  ctx.lifecycle.add(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration('forgeenv.datasetFolder') || e.affectsConfiguration('forgeenv.taskFolders')) {
        watch();
        queue.refresh();
      }
    }),
  );
}

// The editor layer's context (cf. rust-analyzer's ctx.ts): the extension context, the one log
// channel, the runs channel (live script output), the command registry, the one disposable
// owner, and the facts every feature reads (settings, task corpus, dataset folder, trust). Lab and
// review read them here only (a unit test checks that they never read settings, trust or the
// corpus by hand).
import * as vscode from 'vscode';
import { infoText, type Task } from '../env/schemas';
import { loadCorpus, TaskSampler } from '../env/tasks/tasks';
import { refusal, type Refusal } from './commandArgs';
import { CommandRegistry } from './commandRegistry';
import { scriptRunOptionsFrom } from './environmentFactory';
import { DisposableStore } from './lifecycle';
import { tagsFromSetting } from './review/core/labelForm';
import {
  datasetFolder,
  episodesFolder,
  readSettings,
  resolveAgainstWorkspace,
  resolveInterpreter,
  type ResolvedInterpreter,
} from './settings';
import { annotatorId, type ForgeSettings } from './settingsSchema';
import { UNTRUSTED_MESSAGE } from './trust';

type ManifestCommand = { command: string; title: string; category?: string };

export class ForgeContext {
  readonly lifecycle = new DisposableStore();
  readonly log: vscode.LogOutputChannel;
  /** What training scripts print, as they print it (episodes and the lab). */
  readonly runs: vscode.OutputChannel;
  readonly commands: CommandRegistry;
  private readonly episodeStarting = this.lifecycle.add(new vscode.EventEmitter<void>());
  /** A repair episode is about to open: features clear what would linger beside it. */
  readonly onWillStartEpisode = this.episodeStarting.event;
  private catalog: { key: string; sampler: TaskSampler } | undefined;
  private readonly shownSettingProblems = new Set<string>();
  private readonly tasksChanged = this.lifecycle.add(new vscode.EventEmitter<void>());
  /** The task list was reloaded or will be on next read (a task folder changed, a refresh). */
  readonly onDidChangeTasks = this.tasksChanged.event;
  private folderWatchers: vscode.Disposable | undefined;
  /** The last question asked with a proposed answer (title, highlighted label, a counter): integration tests wait on it. */
  lastQuestion: { title: string; active: string | undefined; items: Array<{ label: string; detail?: string }>; seq: number } | undefined;
  readonly noteQuestion = (q: { title: string; active: string | undefined; items: Array<{ label: string; detail?: string }> }): void => {
    this.lastQuestion = { ...q, seq: (this.lastQuestion?.seq ?? 0) + 1 };
  };
  private watchedKey = '';

  constructor(readonly extension: vscode.ExtensionContext) {
    this.log = this.lifecycle.add(vscode.window.createOutputChannel('ForgeEnv', { log: true }));
    this.runs = this.lifecycle.add(vscode.window.createOutputChannel('ForgeEnv Runs', 'log'));
    const manifest = (extension.extension.packageJSON as { contributes?: { commands?: ManifestCommand[] } }).contributes?.commands ?? [];
    this.commands = new CommandRegistry(this.log, this.lifecycle, manifest);
    this.lifecycle.add(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('forgeenv.taskFolders')) this.invalidateTasks();
      }),
    );
    // Restricted settings (task folders) apply once the workspace is trusted.
    this.lifecycle.add(vscode.workspace.onDidGrantWorkspaceTrust(() => this.invalidateTasks()));
    this.lifecycle.add({
      dispose: () => {
        this.folderWatchers?.dispose();
      },
    });
  }

  /** Forgets the loaded task list: the next read loads the task folders again. */
  invalidateTasks(): void {
    this.catalog = undefined;
    this.tasksChanged.fire();
  }

  /**
   * Watches each task folder's scripts and tasks.json (a task made or edited there, by this window
   * or another, is known at once); re-done when the folder list changes.
   */
  private watchTaskFolders(dirs: readonly string[]): void {
    const key = JSON.stringify(dirs);
    if (key === this.watchedKey) return;
    this.watchedKey = key;
    this.folderWatchers?.dispose();
    let timer: NodeJS.Timeout | undefined;
    // Debounced: saving a task writes <id>.py and tasks.json one after the other.
    const changed = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.invalidateTasks(), 200);
    };
    const watchers = dirs.map((d) => {
      const w = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(d), '{*.py,tasks.json}'));
      w.onDidCreate(changed);
      w.onDidChange(changed);
      w.onDidDelete(changed);
      return w;
    });
    this.folderWatchers = {
      dispose: () => {
        clearTimeout(timer);
        for (const w of watchers) w.dispose();
      },
    };
  }

  /** The settings, validated; each problem is shown once per window. */
  settings(): ForgeSettings {
    const { settings, problems } = readSettings();
    for (const p of problems) {
      if (this.shownSettingProblems.has(p)) continue;
      this.shownSettingProblems.add(p);
      this.log.warn(p);
      void vscode.window.showWarningMessage(`ForgeEnv: ${p}`, 'Open Settings').then((c) => {
        if (c) void vscode.commands.executeCommand('workbench.action.openSettings', 'forgeenv.');
      });
    }
    return settings;
  }

  /** The task corpus (built-in tasks and forgeenv.taskFolders), loaded again when a folder or the setting changes. */
  tasks(): TaskSampler {
    // Relative entries are relative to the workspace (as Make Task writes them), not to the extension host's cwd.
    const dirs = this.taskDirs();
    const key = JSON.stringify(dirs);
    this.watchTaskFolders(dirs);
    if (this.catalog?.key !== key) {
      const { tasks, problems } = loadCorpus({ extraDirs: dirs });
      this.catalog = { key, sampler: new TaskSampler(tasks) };
      for (const p of problems) this.log.warn(`task corpus: ${p}`);
    }
    return this.catalog.sampler;
  }

  /** forgeenv.taskFolders, relative entries resolved against the workspace. */
  taskDirs(): string[] {
    return this.settings().taskFolders.map(resolveAgainstWorkspace);
  }

  datasetDir(): string {
    return datasetFolder(this.settings(), this.extension);
  }

  episodesDir(): string {
    return episodesFolder(this.settings(), this.extension);
  }

  /** The built-in tasks alone (Check All on the corpus): task folders are checked as folders. */
  builtinTasks(): Task[] {
    return loadCorpus({ extraDirs: [] }).tasks.filter((t) => t.source === 'builtin');
  }

  /**
   * Task ids already taken by the corpus, the task folders and `targetDir` (a folder about to get
   * a task, maybe not configured yet): a new task must not reuse one.
   */
  takenTaskIds(targetDir?: string): Set<string> {
    const dirs = [...new Set([...this.taskDirs(), ...(targetDir ? [targetDir] : [])])];
    return new Set(loadCorpus({ extraDirs: dirs }).tasks.map((t) => t.task_id));
  }

  /** Limits, sandbox and warm runtime of a single script run (lab, Make Task): what every episode gets. */
  runOptions(): ReturnType<typeof scriptRunOptionsFrom> {
    return scriptRunOptionsFrom(this.settings());
  }

  /** forgeenv.pythonPath, else the Python extension's interpreter, else python3, with where it came from. */
  resolvedInterpreter(): Promise<ResolvedInterpreter> {
    return resolveInterpreter(this.settings());
  }

  async interpreter(): Promise<string> {
    return (await this.resolvedInterpreter()).interpreter;
  }

  /** Reviewer / labeler / annotator id: forgeenv.annotatorId, else the OS user name. */
  annotatorId(): string {
    return annotatorId(this.settings());
  }

  /** The label tag taxonomy (forgeenv.labels.tags, validated; the default taxonomy when unset or invalid). */
  labelTags(): string[] {
    return tagsFromSetting(vscode.workspace.getConfiguration('forgeenv.labels').get('tags'));
  }

  /** Workspace Trust: scripts run only in a trusted workspace. */
  get trusted(): boolean {
    return vscode.workspace.isTrusted;
  }

  get extensionVersion(): string {
    return infoText((this.extension.extension.packageJSON as { version?: unknown }).version ?? '0.0.0');
  }

  /** A refusal (after saying why, with a way to trust) when the workspace is not trusted. */
  refuseUntrusted(): Refusal | undefined {
    if (this.trusted) return undefined;
    void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE, 'Manage Workspace Trust').then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
    });
    return refusal('untrusted', UNTRUSTED_MESSAGE);
  }

  willStartEpisode(): void {
    this.episodeStarting.fire();
  }

  dispose(): Promise<void> {
    return this.lifecycle.dispose();
  }
}

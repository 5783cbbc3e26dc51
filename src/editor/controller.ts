// The human repair loop: start an episode, run & score the edited buffer, submit or skip, and
// resume after a reload. Owns every view and listener of the editor layer (one disposable).
// Every command returns a CommandResult so tests (and other extensions) can drive it headless.
import { randomUUID } from 'node:crypto';
import { mkdir, writeFile, access } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { createRepairDiff } from '../env/diff';
import { snapshotIdForVersions } from '../env/realMode';
import { snapshotPython } from '../env/snapshots/venv';
import { JsonFileTeacherStore } from '../env/teacher';
import { ENV_VERSION, ForgeEnvironment } from '../env/environment';
import type { RepairEvaluation } from '../env/episodeTypes';
import { probeInterpreter } from '../env/executor';
import { EmbeddedEpisodeSession, type EpisodeSession } from '../env/episodeSession';
import { startHumanEpisode, type HumanEpisodeStart } from '../env/humanEpisode';
import { RemoteEnvironmentError } from '../env/remoteBackend';
import { isCancelledRemoteError, RemoteEpisodeSession } from '../env/remoteEpisodeSession';
import { loadCorpus, TaskSampler } from '../env/tasks';
import { snapshotIdOf } from '../env/versions';
import { buildDemonstration } from '../store/demonstrationBuilder';
import { DatasetStore } from '../store/datasetStore';
import { formatProblem } from '../store/jsonlFile';
import type { SkipReason } from '../store/records';
import { EpisodeCodeLens } from './codeLens';
import {
  refusal,
  SkipArgsSchema,
  StartArgsSchema,
  SubmitArgsSchema,
  type CommandResult,
  type SkipArgs,
  type StartArgs,
  type SubmitArgs,
} from './commandArgs';
import { EpisodeDiagnostics } from './diagnostics';
import { diagnosticsForRun, lineSpan, type DiagnosticSpec } from './diagnosticsModel';
import { PersistedEpisodeSchema, type PersistedEpisode, type RunSummary } from './episodeRecord';
import { EPISODE_STATE_KEY, LiveEpisode, timelineFileOf } from './liveEpisode';
import { DatasetWriter } from './datasetWriter';
import { PendingWrites, type PendingWrite } from './pendingWrites';
import { pickPrimitive, pickSkip, pickTask, SKIP_LABELS } from './pickers';
import { widenScriptColumn } from './scoreLayout';
import { scoreModel, type ScoreState } from './scoreModel';
import { ScoreView } from './scoreView';
import { annotatorId, datasetFolder, episodesFolder, readSettings, resolveInterpreter } from './settings';
import { sandboxOptionsOf, type ForgeSettings } from './settingsSchema';
import { EpisodeStatusBar } from './statusBar';
import { TaskQueueProvider, type QueueNode } from './taskQueue';
import { RunStream } from './runStream';
import { showSandboxWarningOnce } from './sandboxWarning';
import { readTimelineFile } from './timeline';
import { UNTRUSTED_MESSAGE } from './trust';
import { brokenScriptUri, formatRunOutput, runOutputUri, VirtualDocuments } from './virtualDocuments';

const UNUSABLE_STATE_KEY = 'forgeenv.episode.unrestorable';

export interface StartResult {
  episodeId: string;
  taskId: string;
  seed: number;
  primitive: HumanEpisodeStart['breakageSpec'];
  filePath: string;
  broke: boolean;
  diagnostics: number;
  /** From the command to the editor showing train.py with its diagnostics. */
  openMs: number;
}

export interface ScoreResult {
  run: number;
  reward: number;
  reward_breakdown: Record<string, number>;
  held_out_breakdown: Record<string, number>;
  findings: string[];
  success: boolean;
  exitCode: number | null;
  diagnostics: number;
  /** From the command to the score being shown. */
  scoreMs: number;
  cached: boolean;
}

export interface StoredResult {
  episodeId: string;
  /** True when the record is in the dataset; false when it waits in the pending queue. */
  stored: boolean;
  datasetDir: string;
  pendingId?: string;
  error?: string;
}

export class ForgeEnvController implements vscode.Disposable {
  readonly log: vscode.LogOutputChannel;
  private readonly runs: vscode.OutputChannel;
  private readonly sessionId = randomUUID();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly docs: VirtualDocuments;
  private readonly diagnostics: EpisodeDiagnostics;
  private readonly status: EpisodeStatusBar;
  private readonly lens: EpisodeCodeLens;
  private readonly score: ScoreView;
  readonly queue: TaskQueueProvider;
  readonly writer: DatasetWriter;
  private episode: LiveEpisode | undefined;
  private starting = false;
  private restoring: Promise<CommandResult<{ episodeId: string | null; restoreMs?: number }>> | undefined;
  private catalog: { key: string; sampler: TaskSampler; problems: string[] } | undefined;
  private datasetWatcher: vscode.Disposable | undefined;
  private shownSettingProblems = new Set<string>();

  constructor(private readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('ForgeEnv', { log: true });
    this.runs = vscode.window.createOutputChannel('ForgeEnv Runs', 'log');
    this.docs = new VirtualDocuments();
    this.diagnostics = new EpisodeDiagnostics();
    this.status = new EpisodeStatusBar();
    this.lens = new EpisodeCodeLens();
    this.score = new ScoreView(context.extensionUri, (m) => {
      if (m.type !== 'ready') void this.onWebviewMessage(m.type);
    }, this.log);
    this.writer = new DatasetWriter(new PendingWrites(context.globalState), this.log, () => vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? homedir(), () => this.queue.refresh());
    this.queue = new TaskQueueProvider({
      tasks: () => this.tasks().all,
      dataset: () => this.datasetFacts(),
      inProgressTaskId: () => this.episode?.state.start.task.task_id,
    });
    this.disposables.push(this.log, this.runs, this.docs, this.diagnostics, this.status, this.lens, this.score, this.queue);
    this.disposables.push(
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (!e.affectsConfiguration('forgeenv')) return;
        if (e.affectsConfiguration('forgeenv.taskFolders')) this.catalog = undefined;
        if (e.affectsConfiguration('forgeenv.datasetFolder') || e.affectsConfiguration('forgeenv.taskFolders')) {
          this.watchDataset();
          this.queue.refresh();
        }
      }),
      vscode.workspace.onDidGrantWorkspaceTrust(() => {
        this.catalog = undefined; // restricted settings (task folders) now apply
        this.queue.refresh();
        void this.writer.retryWaiting();
      }),
    );
    void this.setContext('forgeenv.episodeActive', false);
    void this.setContext('forgeenv.running', false);
    void this.setContext('forgeenv.hasScore', false);
    void this.setContext('forgeenv.inEpisodeEditor', false);
    this.watchDataset();
  }

  // ---------------------------------------------------------------- settings, corpus, dataset

  private settings(): ForgeSettings {
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

  private tasks(): TaskSampler {
    const dirs = this.settings().taskFolders;
    const key = JSON.stringify(dirs);
    if (this.catalog?.key !== key) {
      const { tasks, problems } = loadCorpus({ extraDirs: dirs });
      this.catalog = { key, sampler: new TaskSampler(tasks), problems };
      for (const p of problems) this.log.warn(`task corpus: ${p}`);
    }
    return this.catalog.sampler;
  }

  datasetDir(): string {
    return datasetFolder(this.settings(), this.context);
  }

  private async datasetFacts() {
    const snap = await new DatasetStore(this.datasetDir()).readAll();
    const problems = snap.problems.map(formatProblem);
    for (const p of problems) this.log.warn(`dataset: ${p}`);
    return {
      demonstrations: snap.demonstrations.current.map((d) => ({ task_id: d.task_id, visible_reward: d.visible_reward })),
      skips: snap.skips.map((s) => ({ task_id: s.task_id })),
      problems,
    };
  }

  private watchDataset(): void {
    this.datasetWatcher?.dispose();
    const dir = this.datasetDir();
    const watcher = vscode.workspace.createFileSystemWatcher(new vscode.RelativePattern(vscode.Uri.file(dir), '*.jsonl'));
    let timer: NodeJS.Timeout | undefined;
    const refresh = () => {
      clearTimeout(timer);
      timer = setTimeout(() => this.queue.refresh(), 300);
    };
    watcher.onDidCreate(refresh);
    watcher.onDidChange(refresh);
    watcher.onDidDelete(refresh);
    this.datasetWatcher = { dispose: () => (clearTimeout(timer), watcher.dispose()) };
  }

  private setContext(key: string, value: unknown): Thenable<unknown> {
    return vscode.commands.executeCommand('setContext', key, value);
  }

  private refuseUntrusted(): CommandResult | undefined {
    if (vscode.workspace.isTrusted) return undefined;
    void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE, 'Manage Workspace Trust').then((choice) => {
      if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
    });
    return refusal('untrusted', UNTRUSTED_MESSAGE);
  }

  private fail(message: string, detail?: unknown, ...actions: Array<{ title: string; run: () => unknown }>): CommandResult<never> {
    if (detail !== undefined) this.log.error(`${message} ${detail instanceof Error ? (detail.stack ?? detail.message) : String(detail)}`);
    void vscode.window.showErrorMessage(message, ...actions.map((a) => a.title)).then((choice) => actions.find((a) => a.title === choice)?.run());
    return refusal('error', message);
  }

  // ---------------------------------------------------------------- start

  async startEpisode(rawArgs?: unknown): Promise<CommandResult<StartResult>> {
    const t0 = Date.now();
    const untrusted = this.refuseUntrusted();
    if (untrusted) return untrusted as CommandResult<StartResult>;
    let args: StartArgs | undefined;
    if (rawArgs !== undefined) {
      const parsed = StartArgsSchema.safeParse(rawArgs);
      if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Start Episode: ${parsed.error.message}`);
      args = parsed.data;
    }
    if (this.episode) {
      const msg = `An episode is open (task ${this.episode.state.start.task.task_id}): submit or skip it before starting another.`;
      if (!args) {
        void vscode.window.showWarningMessage(msg, 'Open It', 'Skip It…').then((c) => {
          if (c === 'Open It') void this.openEpisodeFile();
          else if (c === 'Skip It…') void this.skipEpisode();
        });
      }
      return refusal('episode_open', msg);
    }
    if (this.starting) return refusal('busy', 'An episode is already being started.');
    const settings = this.settings();
    if (settings.backend === 'remote' && !settings.remoteUrl) {
      const msg = 'ForgeEnv: forgeenv.backend is "remote" but no server is configured: set forgeenv.remoteUrl, or set forgeenv.backend to "embedded".';
      return this.fail(msg, undefined, { title: 'Open Settings', run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'forgeenv.backend') });
    }

    let tasks: TaskSampler;
    try {
      tasks = this.tasks();
    } catch (e) {
      return this.fail(`ForgeEnv could not load the task corpus: ${(e as Error).message}`, e);
    }
    // Which task, and which breakage.
    let taskId = args?.taskId;
    if (!taskId && args?.next) taskId = await this.queue.nextTaskId();
    if (!args) {
      const picked = await pickTask(tasks, await this.queue.current().catch(() => undefined));
      if (!picked) return refusal('cancelled', 'No task chosen.');
      taskId = picked === 'next' ? await this.queue.nextTaskId() : picked;
    }
    if (!taskId && args?.next) return this.fail('ForgeEnv: every task has a demonstration; there is no next task.');
    const task = taskId ? tasks.getById(taskId) : undefined;
    if (taskId && !task) return this.fail(`ForgeEnv: unknown task "${taskId}".`);
    let primitive = args?.primitive;
    if (!args && task) {
      const choice = await pickPrimitive(task, this.log);
      if (choice === undefined) return refusal('cancelled', 'No breakage chosen.');
      primitive = choice ?? undefined;
    }

    this.starting = true;
    this.status.update({ kind: 'starting' });
    try {
      const remote = settings.backend === 'remote';
      const resolved = await resolveInterpreter(settings);
      const { source } = resolved;
      // Real mode without an explicit forgeenv.pythonPath runs the snapshot's managed venv (built on first use).
      const managed = settings.executionMode === 'real' && source !== 'setting';
      const interpreter = managed ? undefined : resolved.interpreter;
      // A remote server runs the scripts with its own Python: none is needed here.
      const probe = interpreter === undefined || remote ? { ok: true as const } : await probeInterpreter(interpreter);
      if (!probe.ok) {
        return this.fail(`ForgeEnv cannot run Python with "${interpreter}" (${source === 'setting' ? 'forgeenv.pythonPath' : source === 'python-extension' ? "the Python extension's interpreter" : 'default'}): ${probe.error}`, undefined, {
          title: 'Choose Interpreter',
          run: () => vscode.commands.executeCommand('forgeenv.configureExecution'),
        });
      }
      let reportProgress: ((m: string) => void) | undefined;
      const env: EpisodeSession = remote
        ? new RemoteEpisodeSession(settings.remoteUrl, { tasks })
        : new EmbeddedEpisodeSession(
            new ForgeEnvironment(
              {
                mode: settings.executionMode,
                interpreter,
                timeoutMs: settings.runTimeoutSeconds * 1000,
                outputCapBytes: settings.outputCapKiB * 1024,
                taskDirs: settings.taskFolders,
                maxDiffBytes: settings.maxDiffBytes,
                sandbox: sandboxOptionsOf(settings),
              },
              // The Teacher's history outlives the window, so its least-asked category really cycles across episodes.
              {
                tasks,
                teacherStore: new JsonFileTeacherStore(join(this.context.globalStorageUri.fsPath, 'teacher-history.json'), (m: string) => this.log.warn(`Teacher: ${m}`)),
                // Real mode: building the snapshot venv and the local hub takes minutes the first time; say so.
                onProgress: (m: string) => {
                  this.runs.appendLine(`[real mode] ${m}`);
                  reportProgress?.(m);
                },
              },
            ),
          );
      const where = remote ? `on the ForgeEnv server at ${settings.remoteUrl}` : `${settings.executionMode}, ${interpreter ?? 'the snapshot venv'}`;
      this.runs.appendLine(`\n── ${new Date().toLocaleTimeString()} · breaking ${task?.task_id ?? 'a sampled task'} and running it once (${where}) ──`);
      const started = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'ForgeEnv: breaking the script and running it once…', cancellable: true },
        async (progress, token) => {
          reportProgress = (m) => progress.report({ message: m });
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          const stream = new RunStream(this.runs);
          try {
            return await startHumanEpisode(env, {
              taskId: task?.task_id,
              difficulty: args?.difficulty,
              seed: args?.seed,
              primitive,
              signal: abort.signal,
              onOutput: stream.write,
              migrationHints: settings.migrationHints,
            });
          } finally {
            stream.flush();
            sub.dispose();
            if (abort.signal.aborted) await env.dispose();
          }
        },
      ).then(
        (v) => ({ ok: true as const, value: v }),
        (e: unknown) => ({ ok: false as const, error: e }),
      );
      if (!started.ok) {
        await env.dispose();
        if (isCancelledRemoteError(started.error)) return refusal('cancelled', 'Episode start cancelled.');
        return this.fail(`ForgeEnv could not start the episode: ${(started.error as Error)?.message ?? String(started.error)}`, started.error);
      }
      const start = started.value;
      showSandboxWarningOnce(env.sandboxWarning, (l) => this.runs.appendLine(l));
      if (start.brokenExecution.killed && /cancelled/.test(start.brokenExecution.stderr)) {
        await env.dispose();
        return refusal('cancelled', 'Episode start cancelled.');
      }

      const dir = join(episodesFolder(settings, this.context), `${start.task.task_id}-${start.episodeId.slice(0, 8)}`);
      const filePath = join(dir, 'train.py');
      try {
        await mkdir(dir, { recursive: true });
        await writeFile(filePath, start.brokenScript, 'utf8');
      } catch (e) {
        await env.dispose();
        return this.fail(`ForgeEnv could not write the episode script to ${filePath}: ${(e as Error).message}`, e, {
          title: 'Open Settings',
          run: () => vscode.commands.executeCommand('workbench.action.openSettings', 'forgeenv.episodesFolder'),
        });
      }
      // The dataset folder exists from the first episode on: with the default location this puts
      // `.forgeenv/` in the workspace, which activates the extension after a reload (resume).
      await mkdir(this.datasetDir(), { recursive: true }).catch(() => undefined);
      const envState = env.state;
      if (!envState) {
        await env.dispose();
        return this.fail('ForgeEnv: the environment lost the episode it just started.');
      }
      const persisted: PersistedEpisode = {
        version: 1,
        backend: remote ? { kind: 'remote', url: settings.remoteUrl } : { kind: 'embedded' },
        env: envState,
        start,
        filePath,
        // Remote: how the server says it runs them.
        mode: env.runsOn && remote ? env.runsOn.mode : settings.executionMode,
        // The managed venv is recorded by its path, so provenance and a resumed episode name the interpreter that ran.
        interpreter: env.runsOn && remote ? env.runsOn.interpreter : (interpreter ?? snapshotPython(snapshotIdForVersions(start.libraryVersions))),
        startedAt: new Date().toISOString(),
        activeMs: 0,
        runs: 0,
        runHistory: [],
        timelineEvents: 0,
        lastEvaluation: null,
        lastScoredText: null,
      };
      await this.context.workspaceState.update(EPISODE_STATE_KEY, persisted);
      const live = await this.attach(env, persisted);
      live.timeline.record({ kind: 'focus', event: 'episode_start', task_id: start.task.task_id });
      await vscode.window.showTextDocument(live.uri, { preview: false });
      void widenScriptColumn().catch(() => undefined);
      const diagnostics = this.showDiagnostics(live, start.brokenExecution, start.brokenScript, runOutputUri(start.episodeId, 'start'));
      const broke = start.brokenExecution.exit_code !== 0;
      if (!broke) {
        void vscode.window.showInformationMessage(
          `ForgeEnv: the ${start.breakageSpec.primitive_type} breakage did not make train.py fail under this library snapshot. Repair it anyway: the diff is scored against the intended API.`,
        );
      }
      const openMs = Date.now() - t0;
      this.log.info(`episode ${start.episodeId} started: task ${start.task.task_id}, ${start.breakageSpec.primitive_type}, seed ${start.seed}, opened in ${openMs} ms`);
      return {
        ok: true,
        episodeId: start.episodeId,
        taskId: start.task.task_id,
        seed: start.seed,
        primitive: start.breakageSpec,
        filePath,
        broke,
        diagnostics,
        openMs,
      };
    } finally {
      this.starting = false;
      if (!this.episode) this.status.update({ kind: 'idle' });
    }
  }

  /** Makes `persisted` the live episode: listeners, views, context keys. */
  private async attach(env: EpisodeSession, persisted: PersistedEpisode): Promise<LiveEpisode> {
    const settings = this.settings();
    const live = new LiveEpisode({
      env,
      persisted,
      memento: this.context.workspaceState,
      idleMs: settings.idleThresholdSeconds * 1000,
      log: this.log,
      onTick: () => this.refreshStatus(),
      onFocusChange: (inEditor) => void this.setContext('forgeenv.inEpisodeEditor', inEditor),
    });
    this.episode = live;
    this.docs.set(brokenScriptUri(persisted.start.episodeId), persisted.start.brokenScript);
    const b = persisted.start.brokenExecution;
    this.docs.set(
      runOutputUri(persisted.start.episodeId, 'start'),
      formatRunOutput({ title: `broken train.py of ${persisted.start.task.task_id} (before your repair)`, exitCode: b.exit_code, wallTimeMs: b.wall_time_ms, mode: persisted.mode, interpreter: persisted.interpreter, stdout: b.stdout, stderr: b.stderr }),
    );
    if (persisted.lastEvaluation?.execution) this.storeRunOutput(live, persisted.lastEvaluation, persisted.runs);
    await this.setContext('forgeenv.episodeActive', true);
    await this.setContext('forgeenv.hasScore', persisted.lastEvaluation !== null);
    this.lens.update({ uri: live.uri, lastReward: persisted.lastEvaluation?.reward ?? null, running: false });
    this.refreshStatus();
    this.updateScore(persisted.lastEvaluation ? 'scored' : 'idle', false);
    this.queue.refresh();
    return live;
  }

  private refreshStatus(): void {
    const live = this.episode;
    if (!live) return this.status.update({ kind: 'idle' });
    const s = live.state;
    if (live.running) return this.status.update({ kind: 'running', taskId: s.start.task.task_id, activeMs: live.tracker.activeMs, what: 'running' });
    this.status.update({
      kind: 'active',
      taskId: s.start.task.task_id,
      activeMs: live.tracker.activeMs,
      lastReward: s.lastEvaluation?.reward ?? null,
      runs: s.runs,
      primitive: s.start.breakageSpec.primitive_type,
      counting: live.tracker.isCounting,
    });
  }

  private updateScore(state: ScoreState, reveal: boolean): void {
    const live = this.episode;
    if (!live) return;
    const s = live.state;
    this.score.show(
      scoreModel({
        state,
        taskId: s.start.task.task_id,
        taskDescription: s.start.task.description,
        primitive: s.start.breakageSpec.primitive_type,
        mode: s.mode,
        evaluation: s.lastEvaluation,
        runNumber: s.runs,
        history: s.runHistory,
      }),
      reveal || this.score.visible,
    );
  }

  private showDiagnostics(live: LiveEpisode, exec: NonNullable<RepairEvaluation['execution']>, script: string, outputUri: vscode.Uri): number {
    const specs = diagnosticsForRun(exec, script);
    this.diagnostics.show(live.uri, specs, outputUri);
    return specs.length;
  }

  private storeRunOutput(live: LiveEpisode, ev: RepairEvaluation, n: number): vscode.Uri {
    const uri = runOutputUri(live.episodeId, n);
    const exec = ev.execution;
    this.docs.set(
      uri,
      exec
        ? formatRunOutput({ title: `run ${n} of train.py (${live.state.start.task.task_id}) · reward ${ev.reward.toFixed(2)}`, exitCode: exec.exit_code, wallTimeMs: exec.wall_time_ms, mode: live.state.mode, interpreter: live.state.interpreter, stdout: exec.stdout, stderr: exec.stderr })
        : `# run ${n}: not run\n\n${ev.error_trace}\n`,
    );
    return uri;
  }

  // ---------------------------------------------------------------- run & score

  async runAndScore(): Promise<CommandResult<ScoreResult>> {
    const t0 = Date.now();
    const untrusted = this.refuseUntrusted();
    if (untrusted) return untrusted as CommandResult<ScoreResult>;
    const live = this.episode;
    if (!live) return this.noEpisode();
    if (live.running) return refusal('busy', 'A run is already in progress.');
    const text = await live.currentText();
    const diff = createRepairDiff(live.state.start.brokenScript, text);
    const cached = live.state.lastScoredText === text && live.state.lastEvaluation !== null;
    live.running = true;
    live.tracker.activity();
    await this.setContext('forgeenv.running', true);
    this.lens.update({ uri: live.uri, lastReward: live.state.lastEvaluation?.reward ?? null, running: true });
    this.refreshStatus();
    this.updateScore('running', true);
    const n = live.state.runs + 1;
    let evaluation: RepairEvaluation;
    try {
      this.runs.appendLine(`\n── ${new Date().toLocaleTimeString()} · run ${n} of train.py (${live.state.start.task.task_id}, ${live.state.mode}) ──`);
      const result = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: running train.py (run ${n})…`, cancellable: true },
        async (_p, token) => {
          const abort = new AbortController();
          const sub = token.onCancellationRequested(() => abort.abort());
          const stream = new RunStream(this.runs);
          try {
            return await live.env.evaluateRepair(diff, { signal: abort.signal, onOutput: stream.write });
          } finally {
            stream.flush();
            sub.dispose();
          }
        },
      ).then(
        (v) => ({ ok: true as const, v }),
        (e: unknown) => ({ ok: false as const, e }),
      );
      const cancelled = result.ok ? !!result.v.execution?.killed && /\bcancelled\b/.test(result.v.execution.stderr) : isCancelledRemoteError(result.e);
      if (!result.ok && !cancelled) {
        return this.fail(`ForgeEnv could not score the repair: ${(result.e as Error)?.message ?? String(result.e)}`, result.e, ...this.retryIfBusy(result.e, 'forgeenv.runAndScore'));
      }
      if (!result.ok || cancelled) {
        // A cancelled run is not a score (no environment keeps one in its cache of scored diffs).
        live.timeline.record({ kind: 'run', n, cancelled: true });
        this.updateScore(live.state.lastEvaluation ? 'scored' : 'idle', false);
        return refusal('cancelled', 'Run cancelled.');
      }
      evaluation = result.v;
      showSandboxWarningOnce(live.env.sandboxWarning, (l) => this.runs.appendLine(l));
    } finally {
      live.running = false;
      await this.setContext('forgeenv.running', false);
    }
    const summary: RunSummary = {
      n,
      at: new Date().toISOString(),
      reward: evaluation.reward,
      exit_code: evaluation.execution?.exit_code ?? null,
      success: evaluation.success,
      wall_time_ms: evaluation.execution?.wall_time_ms ?? 0,
    };
    live.timeline.record({ kind: 'run', n, reward: evaluation.reward, exit_code: summary.exit_code, success: evaluation.success, diff_lines: diff.split('\n').length });
    await live.update({ runs: n, runHistory: [...live.state.runHistory, summary].slice(-50), lastEvaluation: evaluation, lastScoredText: text });
    const outputUri = this.storeRunOutput(live, evaluation, n);
    let diagnostics = 0;
    if (evaluation.execution) diagnostics = this.showDiagnostics(live, evaluation.execution, evaluation.repaired_script, outputUri);
    else {
      const spec: DiagnosticSpec = { ...lineSpan(text.split(/\r?\n/), 0), severity: 'error', code: 'diff', message: evaluation.error_trace || 'The repair diff did not apply.', related: [] };
      this.diagnostics.show(live.uri, [spec], outputUri);
      diagnostics = 1;
    }
    await this.setContext('forgeenv.hasScore', true);
    this.lens.update({ uri: live.uri, lastReward: evaluation.reward, running: false });
    this.refreshStatus();
    this.updateScore('scored', true);
    const scoreMs = Date.now() - t0;
    this.log.info(`run ${n}: reward ${evaluation.reward.toFixed(2)}, success ${evaluation.success}, ${scoreMs} ms${cached ? ' (cached score)' : ''}`);
    return {
      ok: true,
      run: n,
      reward: evaluation.reward,
      reward_breakdown: evaluation.reward_breakdown,
      held_out_breakdown: evaluation.held_out_breakdown,
      findings: evaluation.findings,
      success: evaluation.success,
      exitCode: evaluation.execution?.exit_code ?? null,
      diagnostics,
      scoreMs,
      cached,
    };
  }

  /** A "Retry" action when a remote server was only busy. */
  private retryIfBusy(e: unknown, command: string): Array<{ title: string; run: () => unknown }> {
    const busy = e instanceof RemoteEnvironmentError && e.code === 'CAPACITY_REACHED' && e.data.busy === true;
    return busy ? [{ title: 'Retry', run: () => vscode.commands.executeCommand(command) }] : [];
  }

  private noEpisode(): CommandResult<never> {
    const msg = 'No ForgeEnv episode is open.';
    void vscode.window.showInformationMessage(`${msg} Start one?`, 'Start Episode').then((c) => {
      if (c) void vscode.commands.executeCommand('forgeenv.startEpisode');
    });
    return refusal('no_episode', msg);
  }

  // ---------------------------------------------------------------- submit / skip

  async submitEpisode(rawArgs?: unknown): Promise<CommandResult<StoredResult & { recordId: string; reward: number; success: boolean }>> {
    const untrusted = this.refuseUntrusted();
    if (untrusted) return untrusted as never;
    let args: SubmitArgs = {};
    if (rawArgs !== undefined) {
      const parsed = SubmitArgsSchema.safeParse(rawArgs);
      if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Submit Repair: ${parsed.error.message}`);
      args = parsed.data;
    }
    const live = this.episode;
    if (!live) return this.noEpisode();
    if (live.running) return refusal('busy', 'A run is in progress; submit when it has finished.');
    const text = await live.currentText();
    if (live.state.lastScoredText !== text || !live.state.lastEvaluation) {
      // The buffer changed since the last score: what is submitted is always what was scored.
      const r = await this.runAndScore();
      if (!r.ok) return r;
    }
    const last = live.state.lastEvaluation;
    if (!last) return this.fail('ForgeEnv: the repair has no score to submit.');
    if (!last.success && !args.force) {
      const choice = await vscode.window.showWarningMessage(
        `The repaired script does not run cleanly (reward ${last.reward.toFixed(2)}). Submit it as a demonstration anyway?`,
        { modal: true, detail: 'Failed repairs are recorded too (success: false), which is useful data, but usually you want to keep editing.' },
        // The first button is the default: going back to editing, never submitting a failed repair by Enter.
        'Keep Editing',
        'Submit Anyway',
      );
      if (choice !== 'Submit Anyway') return refusal('cancelled', 'Submit cancelled.');
    }
    let obs;
    try {
      obs = await live.env.step({ repair: { unified_diff: last.unified_diff } });
    } catch (e) {
      return this.fail(`ForgeEnv could not submit: ${(e as Error)?.message ?? String(e)}`, e, ...this.retryIfBusy(e, 'forgeenv.submitEpisode'));
    }
    if (typeof obs.info.error === 'string') return this.fail(`ForgeEnv could not submit: ${obs.info.error}`);
    const final = live.env.state?.final;
    if (!final) return this.fail('ForgeEnv: the environment did not record the final repair.');

    const settings = this.settings();
    const start = live.state.start as HumanEpisodeStart;
    const submittedAt = new Date();
    const provenance = {
      session_id: this.sessionId,
      annotator_id: annotatorId(settings),
      mode: live.state.mode,
      interpreter: live.state.interpreter,
      extension_version: String((this.context.extension.packageJSON as { version?: unknown }).version ?? '0.0.0'),
      env_version: ENV_VERSION,
      started_at: live.state.startedAt,
      submitted_at: submittedAt.toISOString(),
      active_ms: Math.round(live.tracker.activeMs),
      wall_ms: Math.max(0, submittedAt.getTime() - Date.parse(live.state.startedAt)),
      runs: live.state.runs,
    };
    let recordId: string;
    let record: unknown;
    try {
      const rec = buildDemonstration({
        start,
        final,
        provenance,
        info: {
          library_snapshot: snapshotIdOf(start.libraryVersions) ?? null,
          backend: live.state.backend.kind,
          client: { app: vscode.env.appName, vscode_version: vscode.version, ui_kind: vscode.env.uiKind === vscode.UIKind.Web ? 'web' : 'desktop' },
        },
      });
      recordId = rec.info.record_id;
      record = rec;
    } catch (e) {
      return this.fail(`ForgeEnv could not build the demonstration record: ${(e as Error).message}`, e);
    }
    live.timeline.record({ kind: 'save', event: 'submit', reward: final.reward, success: final.success });
    const stored = await this.finishEpisode(live, 'demonstration', record, 'submitted');
    if (stored.stored) {
      void vscode.window.showInformationMessage(`ForgeEnv: demonstration saved (reward ${final.reward.toFixed(2)}${final.success ? '' : ', not successful'}).`, 'Next Task', 'Reveal Dataset').then((c) => {
        if (c === 'Next Task') void vscode.commands.executeCommand('forgeenv.nextTask');
        else if (c === 'Reveal Dataset') void this.openDatasetFolder();
      });
    }
    return { ok: true, ...stored, recordId, reward: final.reward, success: final.success };
  }

  async skipEpisode(rawArgs?: unknown): Promise<CommandResult<StoredResult & { reason: SkipReason }>> {
    let args: SkipArgs | undefined;
    if (rawArgs !== undefined) {
      const parsed = SkipArgsSchema.safeParse(rawArgs);
      if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Skip Episode: ${parsed.error.message}`);
      args = parsed.data;
    }
    const live = this.episode;
    if (!live) return this.noEpisode();
    if (live.running) return refusal('busy', 'A run is in progress; skip when it has finished.');
    if (!args) {
      args = await pickSkip(live.state.start.task.task_id);
      if (!args) return refusal('cancelled', 'Skip cancelled.');
    }
    const start = live.state.start;
    const skip = {
      episode_id: start.episodeId,
      task_id: start.task.task_id,
      primitive: start.breakageSpec,
      reason: args.reason,
      note: args.note ?? '',
      annotator_id: annotatorId(this.settings()),
      session_id: this.sessionId,
      seed: start.seed,
    };
    live.timeline.record({ kind: 'save', event: 'skip', reason: args.reason });
    const stored = await this.finishEpisode(live, 'skip', skip, 'skipped');
    if (stored.stored) void vscode.window.showInformationMessage(`ForgeEnv: skipped ${start.task.task_id} (${SKIP_LABELS[args.reason].replace(/…$/, '')}).`);
    return { ok: true, ...stored, reason: args.reason };
  }

  /** Queues the record (persisted first: nothing is lost), ends the episode, then writes it. */
  private async finishEpisode(live: LiveEpisode, kind: PendingWrite['kind'], record: unknown, state: ScoreState): Promise<StoredResult> {
    await live.timeline.flush();
    const { events } = await readTimelineFile(timelineFileOf(live.state.filePath));
    const datasetDir = this.datasetDir();
    const pending = await this.writer.pending.enqueue({ kind, datasetDir, episodeId: live.episodeId, taskId: live.state.start.task.task_id, record, timeline: events });
    this.updateScore(state, false);
    await this.endEpisode(live);
    const outcome = await this.writer.pending.attempt(pending.id);
    this.queue.refresh();
    if (outcome.ok) return { episodeId: live.episodeId, stored: true, datasetDir: outcome.datasetDir };
    this.writer.reportFailure(outcome);
    return { episodeId: live.episodeId, stored: false, datasetDir, pendingId: pending.id, error: outcome.error };
  }

  private async endEpisode(live: LiveEpisode): Promise<void> {
    // Keep the final text in the episode folder, then close its editor without a save prompt.
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === live.uri.toString());
    if (doc?.isDirty) await doc.save().then(undefined, () => false);
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === live.uri.toString());
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => false);
    this.episode = undefined;
    await live.dispose();
    await this.context.workspaceState.update(EPISODE_STATE_KEY, undefined);
    this.diagnostics.clear(live.uri);
    this.docs.forgetEpisode(live.episodeId);
    this.lens.update(undefined);
    await this.setContext('forgeenv.episodeActive', false);
    await this.setContext('forgeenv.running', false);
    await this.setContext('forgeenv.hasScore', false);
    await this.setContext('forgeenv.inEpisodeEditor', false);
    this.refreshStatus();
    this.queue.refresh();
  }

  // ---------------------------------------------------------------- review, output, misc

  async reviewChanges(): Promise<CommandResult<{ left: string; right: string }>> {
    const live = this.episode;
    if (!live) return this.noEpisode();
    const left = brokenScriptUri(live.episodeId);
    this.docs.set(left, live.state.start.brokenScript);
    await vscode.commands.executeCommand('vscode.diff', left, live.uri, `train.py: broken ↔ your repair (${live.state.start.task.task_id})`, { preview: true });
    return { ok: true, left: left.toString(), right: live.uri.toString() };
  }

  async showRunOutput(): Promise<CommandResult<{ uri: string }>> {
    const live = this.episode;
    if (!live) return this.noEpisode();
    const uri = live.state.runs > 0 && this.docs.has(runOutputUri(live.episodeId, live.state.runs)) ? runOutputUri(live.episodeId, live.state.runs) : runOutputUri(live.episodeId, 'start');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'log').then(undefined, () => doc);
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    return { ok: true, uri: uri.toString() };
  }

  async showScore(): Promise<CommandResult> {
    if (!this.episode) return this.noEpisode();
    this.updateScore(this.episode.state.lastEvaluation ? 'scored' : 'idle', true);
    return { ok: true };
  }

  async openEpisodeFile(): Promise<CommandResult<{ uri: string }>> {
    const live = this.episode;
    if (!live) return this.noEpisode();
    await vscode.window.showTextDocument(live.uri, { preview: false });
    return { ok: true, uri: live.uri.toString() };
  }

  async openDatasetFolder(): Promise<CommandResult<{ dir: string }>> {
    const dir = this.datasetDir();
    const uri = vscode.Uri.file(dir);
    const inWorkspace = vscode.workspace.getWorkspaceFolder(uri);
    await mkdir(dir, { recursive: true }).catch(() => undefined);
    if (inWorkspace) await vscode.commands.executeCommand('revealInExplorer', uri);
    else {
      const demos = vscode.Uri.file(join(dir, 'demonstrations.jsonl'));
      const exists = await access(demos.fsPath).then(() => true, () => false);
      if (exists) await vscode.window.showTextDocument(demos, { preview: true });
      else void vscode.window.showInformationMessage(`ForgeEnv dataset folder: ${dir} (no demonstrations yet).`);
    }
    return { ok: true, dir };
  }

  async startTaskFromQueue(node?: QueueNode): Promise<CommandResult<StartResult>> {
    if (!node || node.kind !== 'task') return this.startEpisode();
    const task = this.tasks().getById(node.entry.task.task_id);
    if (!task) return this.fail(`ForgeEnv: unknown task "${node.entry.task.task_id}".`);
    const untrusted = this.refuseUntrusted();
    if (untrusted) return untrusted as never;
    const choice = await pickPrimitive(task, this.log);
    if (choice === undefined) return refusal('cancelled', 'No breakage chosen.');
    return this.startEpisode(choice ? { taskId: task.task_id, primitive: choice } : { taskId: task.task_id });
  }

  private async onWebviewMessage(type: 'runAndScore' | 'submit' | 'skip' | 'reviewChanges' | 'showOutput'): Promise<void> {
    const run = { runAndScore: 'forgeenv.runAndScore', submit: 'forgeenv.submitEpisode', skip: 'forgeenv.skipEpisode', reviewChanges: 'forgeenv.reviewChanges', showOutput: 'forgeenv.showRunOutput' }[type];
    await vscode.commands.executeCommand(run);
  }

  // ---------------------------------------------------------------- resume

  /** Restores the persisted episode (after a reload or restart) and retries waiting writes. Idempotent. */
  restore(): Promise<CommandResult<{ episodeId: string | null; restoreMs?: number }>> {
    this.restoring ??= this.restoreOnce();
    return this.restoring;
  }

  private async restoreOnce(): Promise<CommandResult<{ episodeId: string | null; restoreMs?: number }>> {
    const t0 = Date.now();
    void this.writer.retryWaiting();
    const raw = this.context.workspaceState.get<unknown>(EPISODE_STATE_KEY);
    if (raw === undefined || this.episode) return { ok: true, episodeId: this.episode?.episodeId ?? null };
    const parsed = PersistedEpisodeSchema.safeParse(raw);
    const keepAside = async (why: string, filePath?: string) => {
      // Never throw the saved episode away: it moves aside, and the script stays on disk.
      await this.context.workspaceState.update(UNUSABLE_STATE_KEY, raw);
      await this.context.workspaceState.update(EPISODE_STATE_KEY, undefined);
      return this.fail(`ForgeEnv could not resume the open episode: ${why}${filePath ? ` Your script is still at ${filePath}.` : ''}`);
    };
    if (!parsed.success) return keepAside(`its saved state is invalid (${parsed.error.issues.length} problem(s)).`);
    const p = parsed.data;
    const settings = this.settings();
    let env: EpisodeSession;
    try {
      // A remote episode resumes on its server: re-created there when the next run needs it.
      env =
        p.backend.kind === 'remote'
          ? new RemoteEpisodeSession(p.backend.url, { tasks: this.tasks() })
          : new EmbeddedEpisodeSession(
              new ForgeEnvironment(
                { mode: p.mode, interpreter: p.interpreter, timeoutMs: settings.runTimeoutSeconds * 1000, outputCapBytes: settings.outputCapKiB * 1024, taskDirs: settings.taskFolders, maxDiffBytes: settings.maxDiffBytes, sandbox: sandboxOptionsOf(settings) },
                { tasks: this.tasks() },
              ),
            );
      await env.restore(p.env);
    } catch (e) {
      return keepAside((e as Error).message, p.filePath);
    }
    const exists = await access(p.filePath).then(() => true, () => false);
    if (!exists) {
      await mkdir(dirname(p.filePath), { recursive: true });
      await writeFile(p.filePath, p.lastScoredText ?? p.start.brokenScript, 'utf8');
      void vscode.window.showWarningMessage(`ForgeEnv: the episode's train.py was missing; it was recreated from the ${p.lastScoredText !== null ? 'last scored version' : 'broken script'}.`);
    }
    const live = await this.attach(env, p);
    const alreadyOpen = vscode.window.tabGroups.all.some((g) => g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === live.uri.toString()));
    if (!alreadyOpen) await vscode.window.showTextDocument(live.uri, { preview: false, preserveFocus: true });
    const last = p.lastEvaluation;
    if (last?.execution) this.showDiagnostics(live, last.execution, last.repaired_script, runOutputUri(live.episodeId, p.runs));
    else this.showDiagnostics(live, p.start.brokenExecution, p.start.brokenScript, runOutputUri(live.episodeId, 'start'));
    const restoreMs = Date.now() - t0;
    this.log.info(`episode ${live.episodeId} resumed in ${restoreMs} ms (task ${p.start.task.task_id}, ${p.runs} runs, ${Math.round(p.activeMs / 1000)} s active)`);
    return { ok: true, episodeId: live.episodeId, restoreMs };
  }

  /** Ends the window's use of the episode without ending the episode (it stays resumable). */
  async suspend(): Promise<void> {
    const live = this.episode;
    this.episode = undefined;
    if (live) {
      await live.dispose();
      this.diagnostics.clear(live.uri);
      this.lens.update(undefined);
    }
  }

  /** For tests and diagnostics: the open episode's id, file and persisted state. */
  get currentEpisode(): { episodeId: string; filePath: string; state: Readonly<PersistedEpisode> } | undefined {
    const e = this.episode;
    return e ? { episodeId: e.episodeId, filePath: e.state.filePath, state: e.state } : undefined;
  }

  async dispose(): Promise<void> {
    this.datasetWatcher?.dispose();
    await this.suspend();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}


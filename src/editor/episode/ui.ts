// What the user sees of the episode: the status bar item, the CodeLens over train.py, the
// diagnostics, the score view, the read-only documents and the context keys that drive menus.
// One render(view) call keeps them all in step with the session.
import * as vscode from 'vscode';
import type { DisposableStore } from '../lifecycle';
import { EpisodeCodeLens } from './codeLens';
import { EpisodeDiagnostics } from './diagnostics';
import type { DiagnosticSpec } from './diagnosticsModel';
import type { EpisodeView, RunKey } from './editorPort';
import { scoreModel } from './scoreModel';
import { ScoreView } from './scoreView';
import { EpisodeStatusBar } from './statusBar';
import { brokenScriptUri, runOutputUri, VirtualDocuments } from './virtualDocuments';

const SCORE_BUTTONS = {
  runAndScore: 'forgeenv.runAndScore',
  submit: 'forgeenv.submitEpisode',
  skip: 'forgeenv.skipEpisode',
  reviewChanges: 'forgeenv.reviewChanges',
  showOutput: 'forgeenv.showRunOutput',
} as const;

export class EpisodeViews {
  readonly docs: VirtualDocuments;
  readonly score: ScoreView;
  private readonly diagnostics: EpisodeDiagnostics;
  private readonly status: EpisodeStatusBar;
  private readonly lens: EpisodeCodeLens;
  private readonly contextKeys = new Map<string, unknown>();

  constructor(owner: DisposableStore, extensionUri: vscode.Uri, log: vscode.LogOutputChannel) {
    this.docs = owner.add(new VirtualDocuments());
    this.diagnostics = owner.add(new EpisodeDiagnostics());
    this.status = owner.add(new EpisodeStatusBar());
    this.lens = owner.add(new EpisodeCodeLens());
    this.score = owner.add(
      new ScoreView(
        extensionUri,
        (m) => {
          if (m.type !== 'ready') void vscode.commands.executeCommand(SCORE_BUTTONS[m.type]);
        },
        log,
      ),
    );
    for (const key of ['episodeActive', 'revisionActive', 'running', 'hasScore', 'inEpisodeEditor']) this.setContext(key, false);
  }

  render(view: EpisodeView | 'starting' | undefined): void {
    if (view === 'starting') return this.status.update({ kind: 'starting' });
    if (!view) {
      this.status.update({ kind: 'idle' });
      this.lens.update(undefined);
      for (const key of ['episodeActive', 'revisionActive', 'running', 'hasScore', 'inEpisodeEditor']) this.setContext(key, false);
      return;
    }
    const s = view.state;
    const taskId = s.start.task.task_id;
    const uri = vscode.Uri.file(s.filePath);
    const lastReward = s.lastEvaluation?.reward ?? null;
    this.setContext('episodeActive', true);
    // Revision mode: Submit Revision shows on its train.py.
    this.setContext('revisionActive', s.revision !== undefined);
    this.setContext('running', view.running);
    this.setContext('hasScore', s.lastEvaluation !== null);
    this.setContext('inEpisodeEditor', vscode.window.activeTextEditor?.document.uri.toString() === uri.toString());
    this.lens.update({ uri, lastReward, running: view.running });
    if (view.running) this.status.update({ kind: 'running', taskId, activeMs: view.activeMs, what: 'running' });
    else
      this.status.update({
        kind: 'active',
        taskId,
        activeMs: view.activeMs,
        lastReward,
        runs: s.runs,
        primitive: s.start.breakageSpec.primitive_type,
        counting: view.counting,
      });
    // The once-a-second tick carries no score: the score view changes only with the score.
    if (view.score === undefined) return;
    const model = scoreModel({
      state: view.score,
      taskId,
      taskDescription: s.start.task.description,
      primitive: s.start.breakageSpec.primitive_type,
      mode: s.mode,
      evaluation: s.lastEvaluation,
      runNumber: s.runs,
      history: s.runHistory,
    });
    this.score.show(model, view.revealScore || this.score.visible);
  }

  showProblems(file: string, specs: readonly DiagnosticSpec[], episodeId: string, run: RunKey): void {
    this.diagnostics.show(vscode.Uri.file(file), specs, runOutputUri(episodeId, run));
  }

  clearProblems(file: string): void {
    this.diagnostics.clear(vscode.Uri.file(file));
  }

  setBrokenScript(episodeId: string, text: string): void {
    this.docs.set(brokenScriptUri(episodeId), text);
  }

  setRunOutput(episodeId: string, run: RunKey, text: string): void {
    this.docs.set(runOutputUri(episodeId, run), text);
  }

  /** Context keys are set only when they change (each set is a round trip to the workbench). */
  private setContext(key: string, value: unknown): void {
    if (this.contextKeys.has(key) && this.contextKeys.get(key) === value) return;
    this.contextKeys.set(key, value);
    void vscode.commands.executeCommand('setContext', `forgeenv.${key}`, value);
  }
}

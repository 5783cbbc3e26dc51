// EpisodeEditor implemented with VS Code: quick picks, notifications, progress, the script's
// editor and its listeners. Every window call of the repair loop is here or in ui.ts.
import * as vscode from 'vscode';
import type { Task } from '../../env/schemas';
import type { ForgeContext } from '../context';
import type { Action, Disposable, EditorActivity, EpisodeEditor, EpisodeView, RunKey } from './editorPort';
import type { DiagnosticSpec } from './diagnosticsModel';
import { EpisodePicker, pickSkip } from './pickers';
import { RunStream } from './runStream';
import { widenScriptColumn } from './scoreLayout';
import type { TaskQueueProvider } from './taskQueue';
import type { EpisodeViews } from './ui';
import { BROKEN_SCHEME, OUTPUT_SCHEME } from './virtualDocuments';
import { SUGGESTION_SCHEME } from '../suggest/suggestionDocuments';

export class VsCodeEpisodeEditor implements EpisodeEditor {
  /** One quick pick through the task and breakage steps (owned by the feature's lifecycle). */
  readonly picker = new EpisodePicker();

  constructor(
    private readonly ctx: ForgeContext,
    private readonly views: EpisodeViews,
    private readonly queue: TaskQueueProvider,
  ) {}

  async chooseTask() {
    return this.picker.task(await this.queue.current());
  }

  chooseBreakage(task: Task) {
    return this.picker.breakage(task, this.ctx.log);
  }

  chooseSkip(taskId: string) {
    return pickSkip(taskId);
  }

  async confirmFailingSubmit(reward: number): Promise<boolean> {
    const choice = await vscode.window.showWarningMessage(
      `train.py does not run cleanly yet (reward ${reward.toFixed(2)}). Submit it as a demonstration anyway?`,
      {
        modal: true,
        detail: 'Failed repairs are recorded too (success: false), which is useful data, but usually you want to keep editing.',
      },
      // The first button is the default: going back to editing, never submitting a failed repair by Enter.
      'Keep Editing',
      'Submit Anyway',
    );
    return choice === 'Submit Anyway';
  }

  withProgress<T>(title: string, work: (signal: AbortSignal, report: (message: string) => void) => Promise<T>): Promise<T> {
    this.picker.closeIfWaiting();
    return Promise.resolve(
      vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, async (progress, token) => {
        const abort = new AbortController();
        const sub = token.onCancellationRequested(() => abort.abort());
        try {
          return await work(abort.signal, (message) => progress.report({ message }));
        } finally {
          sub.dispose();
        }
      }),
    );
  }

  info(message: string, ...actions: Action[]): void {
    this.message(vscode.window.showInformationMessage, message, actions);
  }

  warn(message: string, ...actions: Action[]): void {
    this.message(vscode.window.showWarningMessage, message, actions);
  }

  error(message: string, ...actions: Action[]): void {
    this.message(vscode.window.showErrorMessage, message, actions);
  }

  private message(show: (m: string, ...items: string[]) => Thenable<string | undefined>, message: string, actions: Action[]): void {
    this.picker.closeIfWaiting(); // a pick left open after the task step (the session stopped there)
    void show(message, ...actions.map((a) => a.title)).then((choice) => actions.find((a) => a.title === choice)?.run());
  }

  async openScript(file: string, how: { focus: boolean; onlyIfClosed?: boolean; line?: number }): Promise<void> {
    const uri = vscode.Uri.file(file);
    const open = this.tabsOf((u) => u.toString() === uri.toString());
    if (how.onlyIfClosed && open.length) return;
    // An open script is shown where it is; a closed one goes to the first column even when another
    // group has focus (the walkthrough's, the score view's), so that it is the column widened below
    // and the score view opens beside it instead of in a third column or behind it.
    const viewColumn = open[0]?.group.viewColumn ?? vscode.ViewColumn.One;
    const at = how.line === undefined ? undefined : new vscode.Range(how.line, 0, how.line, 0);
    await vscode.window.showTextDocument(uri, { preview: false, preserveFocus: !how.focus, viewColumn, selection: at });
    // Whatever sits beside a newly opened script (the walkthrough, the score view) takes the smaller share.
    if (how.focus) await widenScriptColumn().catch((e: unknown) => this.ctx.log.warn(`layout unchanged (${String(e)})`));
  }

  async readScript(file: string): Promise<string> {
    const uri = vscode.Uri.file(file).toString();
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
    return (open ?? (await vscode.workspace.openTextDocument(vscode.Uri.file(file)))).getText();
  }

  async closeEpisodeEditors(episodeId: string, file: string, opts: { discard?: boolean } = {}): Promise<void> {
    const script = vscode.Uri.file(file).toString();
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === script);
    // Discarded edits are reverted to the file (a reopened revision rewrites it; a saved stale buffer would conflict).
    const onDisk =
      doc?.isDirty && opts.discard
        ? await vscode.workspace.fs.readFile(doc.uri).then(
            (b) => new TextDecoder().decode(b),
            () => undefined,
          )
        : undefined;
    if (doc && onDisk !== undefined) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(doc.uri, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), onDisk);
      await vscode.workspace.applyEdit(edit);
    }
    if (doc?.isDirty) await doc.save().then(undefined, () => false);
    await this.closeTabs((u) => u.toString() === script || (isEpisodeDocument(u) && u.path.startsWith(`/${episodeId}/`)));
  }

  /** Before a new episode: editors left from earlier episodes (their run output, diffs) and the lab's diagnostics go. */
  async episodeStarting(): Promise<void> {
    this.ctx.willStartEpisode();
    await this.closeTabs(isEpisodeDocument);
  }

  watchScript(file: string, l: EditorActivity): Disposable {
    const uri = vscode.Uri.file(file).toString();
    const isMine = (doc: vscode.TextDocument | undefined) => !!doc && doc.uri.toString() === uri;
    const refocus = () =>
      l.onFocus(
        isMine(vscode.window.activeTextEditor?.document),
        vscode.window.state.focused && isMine(vscode.window.activeTextEditor?.document),
      );
    const subs = [
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (!isMine(e.document) || e.contentChanges.length === 0) return;
        const at = (p: vscode.Position) => ({ line: p.line, character: p.character });
        l.onChange(
          e.document.version,
          e.contentChanges.map((c) => ({ range: { start: at(c.range.start), end: at(c.range.end) }, text: c.text })),
        );
      }),
      vscode.workspace.onDidSaveTextDocument((d) => isMine(d) && l.onSave()),
      vscode.window.onDidChangeWindowState(refocus),
      vscode.window.onDidChangeActiveTextEditor(refocus),
      vscode.window.onDidChangeTextEditorSelection((e) => isMine(e.textEditor.document) && l.onActivity()),
      vscode.window.onDidChangeTextEditorVisibleRanges((e) => isMine(e.textEditor.document) && l.onActivity()),
    ];
    refocus();
    return vscode.Disposable.from(...subs);
  }

  setBrokenScript(episodeId: string, text: string): void {
    this.views.setBrokenScript(episodeId, text);
  }

  setRunOutput(episodeId: string, run: RunKey, text: string): void {
    this.views.setRunOutput(episodeId, run, text);
  }

  forgetEpisode(episodeId: string): void {
    this.views.docs.forgetEpisode(episodeId);
  }

  runOutput(header: string) {
    this.ctx.runs.appendLine(`\n── ${new Date().toLocaleTimeString()} · ${header} ──`);
    const stream = new RunStream(this.ctx.runs);
    return { write: stream.write, flush: () => stream.flush() };
  }

  showProblems(file: string, specs: readonly DiagnosticSpec[], episodeId: string, run: RunKey): void {
    this.views.showProblems(file, specs, episodeId, run);
  }

  clearProblems(file: string): void {
    this.views.clearProblems(file);
  }

  render(view: EpisodeView | 'starting' | undefined): void {
    this.views.render(view);
  }

  private tabsOf(match: (uri: vscode.Uri) => boolean): vscode.Tab[] {
    return vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => {
        const input = t.input;
        if (input instanceof vscode.TabInputText) return match(input.uri);
        if (input instanceof vscode.TabInputTextDiff) return match(input.original) || match(input.modified);
        return false;
      });
  }

  private async closeTabs(match: (uri: vscode.Uri) => boolean): Promise<void> {
    const tabs = this.tabsOf(match);
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true).then(undefined, () => false);
  }
}

/** The read-only documents of an episode: its broken script, its run output and the model's suggestions. */
function isEpisodeDocument(uri: vscode.Uri): boolean {
  return uri.scheme === OUTPUT_SCHEME || uri.scheme === BROKEN_SCHEME || uri.scheme === SUGGESTION_SCHEME;
}

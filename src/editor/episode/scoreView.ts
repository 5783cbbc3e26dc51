// The score view: a webview panel beside the episode editor. It renders a ScoreModel with a
// strict CSP and forwards the buttons' messages (validated with zod) to the controller.
import { newNonce } from '../webviewHtml';
import * as vscode from 'vscode';
import { renderScoreBody, renderScoreHtml, WebviewMessageSchema, type WebviewMessage } from './scoreHtml';
import type { ScoreModel } from './scoreModel';
import { widenScriptBeside } from './scoreLayout';

export const SCORE_VIEW_TYPE = 'forgeenv.score';

export class ScoreView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private model: ScoreModel | undefined;
  /** The panel's page is loaded (its script said `ready`): updates can go by message. */
  private pageReady = false;
  private pageHasHtml = false;
  private readonly panelDisposables: vscode.Disposable[] = [];
  private readonly serializer: vscode.Disposable;
  /** Messages that failed validation (kept for diagnosis, never acted on). */
  rejectedMessages = 0;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly onMessage: (m: WebviewMessage) => void,
    private readonly log: vscode.LogOutputChannel,
  ) {
    // After a reload VS Code hands back the panel; the controller fills it once the episode is restored.
    this.serializer = vscode.window.registerWebviewPanelSerializer(SCORE_VIEW_TYPE, {
      deserializeWebviewPanel: async (panel) => {
        this.adopt(panel);
        this.render();
      },
    });
  }

  get visible(): boolean {
    return !!this.panel?.visible;
  }

  get current(): ScoreModel | undefined {
    return this.model;
  }

  /** Updates the view; opens it beside the editor when `reveal` (never stealing focus). */
  show(model: ScoreModel, reveal: boolean): void {
    this.model = model;
    if (!this.panel && reveal) {
      const panel = vscode.window.createWebviewPanel(
        SCORE_VIEW_TYPE,
        'ForgeEnv Score',
        { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
        {},
      );
      this.adopt(panel);
      void widenScriptBeside(panel).catch((e: unknown) => this.log.warn(`score view: layout unchanged (${String(e)})`));
    } else if (this.panel && reveal && !this.panel.visible) this.panel.reveal(vscode.ViewColumn.Beside, true);
    this.render();
  }

  /** The episode ended: a final render, then the panel stays until the user closes it. */
  close(): void {
    this.panel?.dispose();
  }

  private adopt(panel: vscode.WebviewPanel): void {
    this.panel?.dispose();
    this.panel = panel;
    this.pageReady = false;
    this.pageHasHtml = false;
    panel.iconPath = vscode.Uri.joinPath(this.extensionUri, 'media', 'forgeenv.svg');
    panel.webview.options = { enableScripts: true, localResourceRoots: [vscode.Uri.joinPath(this.extensionUri, 'media')] };
    this.panelDisposables.push(
      panel.webview.onDidReceiveMessage((raw: unknown) => {
        const parsed = WebviewMessageSchema.safeParse(raw);
        if (!parsed.success) {
          this.rejectedMessages++;
          this.log.warn(`score view: ignored an invalid message ${JSON.stringify(raw)?.slice(0, 200)}`);
          return;
        }
        if (parsed.data.type === 'ready') {
          this.pageReady = true;
          this.render(); // anything that changed while the page loaded
        } else this.onMessage(parsed.data);
      }),
      panel.onDidDispose(() => {
        if (this.panel === panel) this.panel = undefined;
        for (const d of this.panelDisposables.splice(0)) d.dispose();
      }),
    );
  }

  private render(): void {
    const panel = this.panel;
    if (!panel) return;
    const model: ScoreModel = this.model ?? {
      state: 'idle',
      taskId: 'No episode',
      taskDescription: 'Start an episode to see its score here.',
      primitive: '—',
      mode: '—',
      history: [],
    };
    panel.title = this.model ? `Score: ${model.taskId}` : 'ForgeEnv Score';
    if (!this.pageHasHtml) {
      // The page is set once; replacing it mid-load races the webview's frame swap.
      this.pageHasHtml = true;
      panel.webview.html = renderScoreHtml(model, this.resources(panel));
      return;
    }
    if (this.pageReady) void panel.webview.postMessage({ type: 'render', body: renderScoreBody(model), busy: model.state === 'running' });
  }

  private resources(panel: vscode.WebviewPanel) {
    const media = (f: string) => panel.webview.asWebviewUri(vscode.Uri.joinPath(this.extensionUri, 'media', f)).toString();
    return { cspSource: panel.webview.cspSource, nonce: newNonce(), styleUri: media('score.css'), scriptUri: media('score.js') };
  }

  dispose(): void {
    this.serializer.dispose();
    this.panel?.dispose();
    for (const d of this.panelDisposables.splice(0)) d.dispose();
  }
}

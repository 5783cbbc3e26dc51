// The dataset summary webview: one panel, re-rendered on Refresh or when reviews/labels change.
import { randomBytes } from 'node:crypto';
import * as vscode from 'vscode';
import { DatasetStore } from '../../store/datasetStore';
import { summarizeDataset } from '../../store/summary';
import { renderSummaryHtml, SummaryMessageSchema } from './core/summaryHtml';
import { datasetFolderSetting } from './reviewSettings';

export const SUMMARY_VIEW_TYPE = 'forgeenv.review.summary';

export class SummaryPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private dir: string | undefined;
  /** Messages from the page that failed validation (tests read it). */
  rejectedMessages = 0;

  constructor(private readonly extensionUri: vscode.Uri) {}

  async open(rawArgs: unknown): Promise<{ dir: string; submitted: number } | undefined> {
    const arg = rawArgs && typeof rawArgs === 'object' && 'dataset' in rawArgs && typeof (rawArgs as { dataset: unknown }).dataset === 'string' ? (rawArgs as { dataset: string }).dataset : undefined;
    const dir = arg ?? datasetFolderSetting();
    if (!dir) {
      void vscode.window.showWarningMessage('ForgeEnv: set forgeenv.datasetFolder (or open a folder) to summarise a dataset.');
      return undefined;
    }
    this.dir = dir;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media', 'review');
    if (!this.panel) {
      this.panel = vscode.window.createWebviewPanel(SUMMARY_VIEW_TYPE, 'ForgeEnv dataset summary', vscode.ViewColumn.Active, {
        enableScripts: true,
        localResourceRoots: [media],
        retainContextWhenHidden: false,
      });
      this.panel.onDidDispose(() => (this.panel = undefined));
      this.panel.webview.onDidReceiveMessage((m: unknown) => this.onMessage(m));
    } else this.panel.reveal();
    return this.render();
  }

  get isOpen(): boolean {
    return this.panel !== undefined;
  }

  /** The current page's HTML (tests check structure and CSP). */
  get html(): string | undefined {
    return this.panel?.webview.html;
  }

  async render(): Promise<{ dir: string; submitted: number } | undefined> {
    if (!this.panel || !this.dir) return undefined;
    const dir = this.dir;
    let summary;
    try {
      summary = await summarizeDataset(dir);
    } catch (e) {
      void vscode.window.showErrorMessage(`ForgeEnv: cannot summarise ${dir}: ${e instanceof Error ? e.message : String(e)}`);
      return undefined;
    }
    const labels = (await new DatasetStore(dir).readAll()).labels.latest;
    const byTag: Record<string, number> = {};
    for (const l of labels.values()) for (const t of l.tags) byTag[t] = (byTag[t] ?? 0) + 1;
    const webview = this.panel.webview;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media', 'review');
    webview.html = renderSummaryHtml(summary, {
      cspSource: webview.cspSource,
      nonce: randomBytes(16).toString('base64'),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'summary.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'summary.css')).toString(),
      labels: { total: labels.size, byTag },
    });
    return { dir, submitted: summary.counts.submitted };
  }

  private async onMessage(raw: unknown): Promise<void> {
    const m = SummaryMessageSchema.safeParse(raw);
    if (!m.success) {
      this.rejectedMessages++;
      return;
    }
    if (m.data.type === 'refresh') await this.render();
    else if (m.data.type === 'startReview') await vscode.commands.executeCommand('forgeenv.review.start', this.dir ? { dataset: this.dir } : undefined);
    else if (m.data.type === 'export') await vscode.commands.executeCommand('forgeenv.review.export', { format: m.data.format, dataset: this.dir });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

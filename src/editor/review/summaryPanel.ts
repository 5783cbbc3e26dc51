// The dataset summary webview: one panel, re-rendered on Refresh or when reviews/labels change.
import { newNonce } from '../webviewHtml';
import * as vscode from 'vscode';
import { z } from 'zod';
import { DatasetStore } from '../../store/datasetStore';
import { summarizeDataset } from '../../store/summary';
import { renderSummaryHtml, SummaryMessageSchema } from './core/summaryHtml';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';

export const SUMMARY_VIEW_TYPE = 'forgeenv.review.summary';

export class SummaryPanel implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private dir: string | undefined;
  /** Messages from the page that failed validation (tests read it). */
  rejectedMessages = 0;

  private readonly extensionUri: vscode.Uri;

  constructor(private readonly forge: ForgeContext) {
    this.extensionUri = forge.extension.extensionUri;
  }

  async open(rawArgs: unknown): Promise<CommandResult<{ dir: string; submitted: number }>> {
    const args = z
      .object({ dataset: z.string().min(1).optional() })
      .strict()
      .safeParse(rawArgs ?? {});
    if (!args.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Show Dataset Summary: ${args.error.message}`);
    const dir = args.data.dataset ?? this.forge.datasetDir();
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

  async render(): Promise<CommandResult<{ dir: string; submitted: number }>> {
    if (!this.panel || !this.dir) return refusal('error', 'The summary panel is not open.');
    const dir = this.dir;
    let summary;
    try {
      summary = await summarizeDataset(dir);
    } catch (e) {
      const msg = `Cannot summarise ${dir}: ${e instanceof Error ? e.message : String(e)}`;
      this.panel.webview.html = `<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="default-src 'none'"></head><body><p>${msg.replace(/[&<>]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;' })[c]!)}</p></body></html>`;
      void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
      return refusal('error', msg);
    }
    const labels = (await new DatasetStore(dir).readAll()).labels.latest;
    const byTag: Record<string, number> = {};
    for (const l of labels.values()) for (const t of l.tags) byTag[t] = (byTag[t] ?? 0) + 1;
    const webview = this.panel.webview;
    const media = vscode.Uri.joinPath(this.extensionUri, 'media', 'review');
    webview.html = renderSummaryHtml(summary, {
      cspSource: webview.cspSource,
      nonce: newNonce(),
      scriptUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'summary.js')).toString(),
      styleUri: webview.asWebviewUri(vscode.Uri.joinPath(media, 'summary.css')).toString(),
      labels: { total: labels.size, byTag },
    });
    return { ok: true, dir, submitted: summary.counts.submitted };
  }

  private async onMessage(raw: unknown): Promise<void> {
    const m = SummaryMessageSchema.safeParse(raw);
    if (!m.success) {
      this.rejectedMessages++;
      return;
    }
    if (m.data.type === 'refresh') await this.render();
    else if (m.data.type === 'startReview')
      await vscode.commands.executeCommand('forgeenv.review.start', this.dir ? { dataset: this.dir } : undefined);
    else if (m.data.type === 'export')
      await vscode.commands.executeCommand('forgeenv.review.export', { format: m.data.format, dataset: this.dir });
  }

  dispose(): void {
    this.panel?.dispose();
  }
}

// Read-only virtual documents: run output (`forgeenv-output:`) and the broken script the
// episode started from (`forgeenv-broken:`, the left side of "Review My Changes"). The original
// unbroken script is never exposed: it stays in extension state.
import * as vscode from 'vscode';

export const OUTPUT_SCHEME = 'forgeenv-output';
export const BROKEN_SCHEME = 'forgeenv-broken';

export class VirtualDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registrations: vscode.Disposable[];

  constructor() {
    this.registrations = [
      vscode.workspace.registerTextDocumentContentProvider(OUTPUT_SCHEME, this),
      vscode.workspace.registerTextDocumentContentProvider(BROKEN_SCHEME, this),
    ];
  }

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changed.fire(uri);
  }

  has(uri: vscode.Uri): boolean {
    return this.contents.has(uri.toString());
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? `ForgeEnv has nothing to show for ${uri.path}: the episode it belonged to has ended.`;
  }

  /** Forgets everything of one episode (its URIs all start with /<episodeId>/). */
  forgetEpisode(episodeId: string): void {
    for (const key of [...this.contents.keys()]) if (vscode.Uri.parse(key).path.startsWith(`/${episodeId}/`)) this.contents.delete(key);
  }

  dispose(): void {
    for (const r of this.registrations) r.dispose();
    this.changed.dispose();
    this.contents.clear();
  }
}

export function runOutputUri(episodeId: string, run: number | 'start'): vscode.Uri {
  const name = run === 'start' ? 'broken-run.log' : `run-${run}.log`;
  return vscode.Uri.from({ scheme: OUTPUT_SCHEME, path: `/${episodeId}/${name}` });
}

export function brokenScriptUri(episodeId: string): vscode.Uri {
  return vscode.Uri.from({ scheme: BROKEN_SCHEME, path: `/${episodeId}/train.py` });
}

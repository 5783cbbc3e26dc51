// Read-only virtual documents: run output (`forgeenv-output:`) and the broken script the
// episode started from (`forgeenv-broken:`, the left side of "Review My Changes"). The original
// unbroken script is never exposed: it stays in extension state.
import * as vscode from 'vscode';

export const OUTPUT_SCHEME = 'forgeenv-output';
export const BROKEN_SCHEME = 'forgeenv-broken';

export class VirtualDocuments implements vscode.Disposable {
  private readonly contents = new Map<string, string>();
  /** One change event per scheme: VS Code ignores (and warns about) an event for another scheme. */
  private readonly changed = new Map([OUTPUT_SCHEME, BROKEN_SCHEME].map((scheme) => [scheme, new vscode.EventEmitter<vscode.Uri>()]));
  private readonly registrations: vscode.Disposable[];

  constructor() {
    this.registrations = [...this.changed].map(([scheme, emitter]) =>
      vscode.workspace.registerTextDocumentContentProvider(scheme, {
        onDidChange: emitter.event,
        provideTextDocumentContent: (uri) => this.provideTextDocumentContent(uri),
      }),
    );
  }

  set(uri: vscode.Uri, content: string): void {
    this.contents.set(uri.toString(), content);
    this.changed.get(uri.scheme)?.fire(uri);
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
    for (const e of this.changed.values()) e.dispose();
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

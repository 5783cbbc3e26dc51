// The right side of the suggestion's diff view: a read-only `forgeenv-suggestion:` document
// holding the broken script with the model's proposal applied (the left side is the episode's
// `forgeenv-broken:` document). One proposal at a time; a stale URI says the proposal is gone.
import * as vscode from 'vscode';

export const SUGGESTION_SCHEME = 'forgeenv-suggestion';

export function suggestionUri(episodeId: string, n: number): vscode.Uri {
  return vscode.Uri.from({ scheme: SUGGESTION_SCHEME, path: `/${episodeId}/suggestion-${n}/train.py` });
}

export class SuggestionDocuments implements vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  private readonly registration: vscode.Disposable;

  constructor() {
    this.registration = vscode.workspace.registerTextDocumentContentProvider(SUGGESTION_SCHEME, {
      onDidChange: this.changed.event,
      provideTextDocumentContent: (uri) =>
        this.contents.get(uri.toString()) ?? 'ForgeEnv: this suggestion was accepted, discarded or belongs to an episode that has ended.',
    });
  }

  set(uri: vscode.Uri, text: string): void {
    this.contents.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  forget(uri: vscode.Uri): void {
    if (this.contents.delete(uri.toString())) this.changed.fire(uri);
  }

  clear(): void {
    const uris = [...this.contents.keys()];
    this.contents.clear();
    for (const u of uris) this.changed.fire(vscode.Uri.parse(u));
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
    this.contents.clear();
  }
}

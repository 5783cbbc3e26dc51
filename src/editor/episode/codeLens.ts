// CodeLens at the top of the episode's train.py: Run & Score (with the last reward), Review,
// Submit, Skip.
import * as vscode from 'vscode';

export interface EpisodeLensInfo {
  uri: vscode.Uri;
  lastReward: number | null;
  running: boolean;
}

export class EpisodeCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private info: EpisodeLensInfo | undefined;
  private readonly registration = vscode.languages.registerCodeLensProvider({ scheme: 'file' }, this);

  update(info: EpisodeLensInfo | undefined): void {
    this.info = info;
    this.changed.fire();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const info = this.info;
    if (!info || document.uri.toString() !== info.uri.toString()) return [];
    const top = new vscode.Range(0, 0, 0, 0);
    const score = info.running
      ? '$(sync~spin) Running…'
      : `$(beaker) Run & Score${info.lastReward === null ? '' : ` (last ${info.lastReward.toFixed(2)})`}`;
    return [
      new vscode.CodeLens(top, {
        title: score,
        command: info.running ? '' : 'forgeenv.runAndScore',
        tooltip: 'Run the edited script and score the repair (unsaved edits included)',
      }),
      new vscode.CodeLens(top, {
        title: '$(diff) Review Changes',
        command: 'forgeenv.reviewChanges',
        tooltip: 'Compare the broken script with your repair',
      }),
      new vscode.CodeLens(top, {
        title: '$(check) Submit',
        command: 'forgeenv.submitEpisode',
        tooltip: 'Save the repair as a demonstration',
      }),
      new vscode.CodeLens(top, {
        title: '$(debug-step-over) Skip',
        command: 'forgeenv.skipEpisode',
        tooltip: 'Skip this episode and say why',
      }),
    ];
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}

// Review mode's CodeLens header above the repaired script: the record's scores, then the actions
// with their shortcuts.
import * as vscode from 'vscode';
import { firstChangedLine, scoreHeader, scoreTooltip } from './core/reviewItems';
import { REVIEW_KEYS, type ReviewController } from './reviewMode';

/**
 * The header in the repaired script, right above its first change (where the diff editor opens
 * scrolled to): the scores from the record, then the actions with their shortcuts. VS Code shows
 * CodeLens in the side-by-side diff only; in its narrow inline layout the status bar has the scores.
 */
export class ReviewCodeLens implements vscode.CodeLensProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.changed.event;
  private readonly sub: vscode.Disposable;

  constructor(private readonly controller: ReviewController) {
    this.sub = controller.onDidChangeItem(() => this.changed.fire());
  }

  dispose(): void {
    this.sub.dispose();
    this.changed.dispose();
  }

  provideCodeLenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const item = this.controller.current();
    if (!item || document.uri.toString() !== this.controller.uriFor(item, 'repaired').toString()) return [];
    const line = firstChangedLine(item.broken ?? '', document.getText());
    const top = new vscode.Range(line, 0, line, 0);
    const lens = (title: string, command: string, tooltip?: string) => new vscode.CodeLens(top, { title, command, tooltip });
    // An empty command id renders as plain text: the scores are information, not buttons.
    const tooltip = scoreTooltip(item);
    // Previous / Next are left to their keys and the editor-title arrows: a CodeLens row does not wrap.
    return [
      ...scoreHeader(item).map((title) => lens(title, '', tooltip)),
      lens(`$(check) Approve (${REVIEW_KEYS.approve})`, 'forgeenv.review.approve'),
      lens(`$(close) Reject (${REVIEW_KEYS.reject})`, 'forgeenv.review.reject'),
      lens(`$(tag) Label (${REVIEW_KEYS.label})`, 'forgeenv.review.label'),
    ];
  }
}

// Turns the diagnostics model (diagnosticsModel.ts) into VS Code problems on the episode file.
import * as vscode from 'vscode';
import type { DiagnosticSpec } from './diagnosticsModel';

const SEVERITY: Record<DiagnosticSpec['severity'], vscode.DiagnosticSeverity> = {
  error: vscode.DiagnosticSeverity.Error,
  warning: vscode.DiagnosticSeverity.Warning,
  information: vscode.DiagnosticSeverity.Information,
};

export class EpisodeDiagnostics implements vscode.Disposable {
  private readonly collection = vscode.languages.createDiagnosticCollection('forgeenv');

  show(uri: vscode.Uri, specs: readonly DiagnosticSpec[], outputUri?: vscode.Uri): void {
    this.collection.set(
      uri,
      specs.map((s) => {
        const d = new vscode.Diagnostic(
          new vscode.Range(s.line, s.startCharacter, s.line, s.endCharacter),
          s.message,
          SEVERITY[s.severity],
        );
        d.source = 'forgeenv';
        // The code links to the full run output (one click from the Problems panel or the hover).
        d.code = outputUri ? { value: s.code, target: outputUri } : s.code;
        if (s.related.length) {
          d.relatedInformation = s.related.map(
            (r) =>
              new vscode.DiagnosticRelatedInformation(
                new vscode.Location(uri, new vscode.Range(r.line, r.startCharacter, r.line, r.endCharacter)),
                r.message,
              ),
          );
        }
        return d;
      }),
    );
  }

  clear(uri?: vscode.Uri): void {
    if (uri) this.collection.delete(uri);
    else this.collection.clear();
  }

  dispose(): void {
    this.collection.dispose();
  }
}

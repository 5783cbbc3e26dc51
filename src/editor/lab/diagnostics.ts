// Converts the vscode-free run problems into Diagnostics.
import * as vscode from 'vscode';
import type { RunProblem } from './core/runDiagnostics';

export function toDiagnostics(
  problems: readonly RunProblem[],
  source: string,
  extra?: (p: RunProblem) => string | undefined,
): vscode.Diagnostic[] {
  return problems.map((p) => {
    const range = new vscode.Range(p.line, p.startCharacter, p.line, Math.max(p.startCharacter, p.endCharacter));
    const more = extra?.(p);
    const severity =
      p.severity === 'error'
        ? vscode.DiagnosticSeverity.Error
        : p.severity === 'warning'
          ? vscode.DiagnosticSeverity.Warning
          : vscode.DiagnosticSeverity.Information;
    const d = new vscode.Diagnostic(range, more ? `${p.message}\n${more}` : p.message, severity);
    d.source = source;
    d.code = p.code;
    return d;
  });
}

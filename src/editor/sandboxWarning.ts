// The one-time warning that runs are not sandboxed (forgeenv.sandbox.mode `auto` on a machine where
// bubblewrap is missing or cannot work): once per window, however many runs fall back.
import * as vscode from 'vscode';

let shown = false;

export function showSandboxWarningOnce(text: string | undefined, log?: (line: string) => void): void {
  if (!text || shown) return;
  shown = true;
  log?.(`[sandbox] ${text}`);
  void vscode.window.showWarningMessage(`ForgeEnv: ${text}`, 'Sandbox Settings').then((c) => {
    if (c) void vscode.commands.executeCommand('workbench.action.openSettings', 'forgeenv.sandbox');
  });
}

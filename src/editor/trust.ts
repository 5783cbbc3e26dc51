// Workspace Trust: ForgeEnv runs Python scripts, so in Restricted Mode nothing runs; browsing
// (the task queue, the dataset, the score of a resumed episode) still works.
import * as vscode from 'vscode';

export const UNTRUSTED_MESSAGE = 'ForgeEnv runs Python scripts; trust this workspace to run episodes.';

/** True when scripts may run; otherwise tells the user why not and offers to manage trust. */
export function ensureTrusted(): boolean {
  if (vscode.workspace.isTrusted) return true;
  void vscode.window.showWarningMessage(UNTRUSTED_MESSAGE, 'Manage Workspace Trust').then((choice) => {
    if (choice) void vscode.commands.executeCommand('workbench.trust.manage');
  });
  return false;
}

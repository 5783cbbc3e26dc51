// Command handlers never crash the editor: an unexpected error is logged, shown as a clear
// message, and returned as a refusal (the same CommandResult shape as every ForgeEnv command).
import * as vscode from 'vscode';
import { refusal, type Refusal } from '../commandArgs';

export function guarded<T>(id: string, fn: (args: unknown) => Promise<T>, log: vscode.OutputChannel): (args?: unknown) => Promise<T | Refusal> {
  return async (args?: unknown) => {
    try {
      return await fn(args);
    } catch (e) {
      const msg = e instanceof Error ? e.message : String(e);
      log.appendLine(`${id} failed: ${e instanceof Error && e.stack ? e.stack : msg}`);
      void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
      return refusal('error', msg);
    }
  };
}

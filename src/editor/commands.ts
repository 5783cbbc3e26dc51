// Registers every `forgeenv.*` command declared in package.json (and no other). Each returns
// the controller's CommandResult, so tests and other extensions can drive the loop headless.
import * as vscode from 'vscode';
import { configureExecution } from './configureExecution';
import type { ForgeEnvController } from './controller';
import type { QueueNode } from './taskQueue';

export function registerCommands(c: ForgeEnvController): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) =>
    vscode.commands.registerCommand(id, async (...args: unknown[]) => {
      try {
        return await fn(...args);
      } catch (e) {
        // Last line of defence: a bug shows as a message, never as an unhandled rejection.
        c.log.error(`${id} failed: ${(e as Error)?.stack ?? String(e)}`);
        void vscode.window.showErrorMessage(`ForgeEnv: ${id.replace('forgeenv.', '')} failed: ${(e as Error)?.message ?? String(e)}`);
        return { ok: false, reason: 'error', message: String((e as Error)?.message ?? e) };
      }
    });
  return [
    reg('forgeenv.startEpisode', (args) => c.startEpisode(args)),
    reg('forgeenv.nextTask', () => c.startEpisode({ next: true })),
    reg('forgeenv.startTask', (node) => c.startTaskFromQueue(node as QueueNode | undefined)),
    reg('forgeenv.runAndScore', () => c.runAndScore()),
    reg('forgeenv.submitEpisode', (args) => c.submitEpisode(args)),
    reg('forgeenv.skipEpisode', (args) => c.skipEpisode(args)),
    reg('forgeenv.reviewChanges', () => c.reviewChanges()),
    reg('forgeenv.showScore', () => c.showScore()),
    reg('forgeenv.showRunOutput', () => c.showRunOutput()),
    reg('forgeenv.openEpisodeFile', () => c.openEpisodeFile()),
    reg('forgeenv.refreshTaskQueue', () => {
      c.queue.refresh();
      return { ok: true };
    }),
    reg('forgeenv.openDatasetFolder', () => c.openDatasetFolder()),
    reg('forgeenv.configureExecution', (args) => configureExecution(args)),
    reg('forgeenv.openWalkthrough', () => vscode.commands.executeCommand('workbench.action.openWalkthrough', 'forgeenv.forgeenv-studio#gettingStarted', false)),
  ];
}

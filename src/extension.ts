// Entry point: builds the editor layer on activation (commands, views and the resume of an open
// episode) and tears it down on deactivation, killing any script still running.
import * as vscode from 'vscode';
import { killAllRuns } from './env/executor';
import { registerCommands } from './editor/commands';
import { ForgeEnvController } from './editor/controller';
import { registerLab } from './editor/lab';
import { registerReview } from './editor/review';
import { showWelcomeOnFirstStart } from './editor/welcome';

let controller: ForgeEnvController | undefined;
let commands: vscode.Disposable[] = [];

/** What activate() returns; `testing` exists only when VS Code runs the extension's tests. */
export interface ForgeEnvApi {
  testing?: {
    controller(): ForgeEnvController | undefined;
    /** Tears the editor layer down as a window reload would, then activates it again (resume path). */
    reload(): Promise<void>;
  };
}

function build(context: vscode.ExtensionContext): ForgeEnvController {
  const c = new ForgeEnvController(context);
  // The repair loop (controller), the primitive lab (issue 4) and review/labeling (issue 5).
  commands = [...registerCommands(c), registerLab(context), registerReview(context)];
  void c.restore();
  return c;
}

async function teardown(): Promise<void> {
  for (const d of commands.splice(0)) d.dispose();
  const c = controller;
  controller = undefined;
  await c?.dispose();
}

export function activate(context: vscode.ExtensionContext): ForgeEnvApi {
  controller = build(context);
  context.subscriptions.push({ dispose: () => void teardown() });
  showWelcomeOnFirstStart(context);
  if (context.extensionMode !== vscode.ExtensionMode.Test) return {};
  return {
    testing: {
      controller: () => controller,
      reload: async () => {
        await teardown();
        controller = build(context);
        await controller.restore();
      },
    },
  };
}

export async function deactivate(): Promise<void> {
  await teardown();
  await killAllRuns();
}

// Export Dataset's trl-dpo: its pairs are re-executed at export (src/store/export/dpo.ts), so it
// runs scripts (trusted workspaces only) in environments built from the settings, as Rescore
// Dataset does, under a cancellable progress notification.
import * as vscode from 'vscode';
import { exportDpo, type DpoResult } from '../../store/export/dpo';
import type { CompletionForm, PromptStyle } from '../../store/export/formats';
import type { ForgeContext } from '../context';
import { environmentsByMode } from '../environmentFactory';

export async function exportDpoInEditor(
  forge: ForgeContext,
  a: { dir: string; out: string; style?: PromptStyle; completion?: CompletionForm },
): Promise<DpoResult> {
  const settings = forge.settings();
  const resolved = await forge.resolvedInterpreter();
  const taskDirs = forge.taskDirs();
  const { envFor, dispose } = environmentsByMode(settings, resolved, taskDirs);
  try {
    return await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: 'ForgeEnv: exporting trl-dpo (re-executing both sides of each pair)',
        cancellable: true,
      },
      (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        return exportDpo({
          ...a,
          envFor,
          signal: controller.signal,
          onProgress: (m) => (forge.log.info(`trl-dpo: ${m}`), progress.report({ message: m.slice(0, 120) })),
        });
      },
    );
  } finally {
    await dispose();
  }
}

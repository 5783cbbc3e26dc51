// "Rescore Dataset": the CLI's `forgeenv rescore` in a cancellable progress notification; the
// report goes to the log and a summary message.
import * as vscode from 'vscode';
import { z } from 'zod';
import { renderRescoreText, rescoreDataset, type RescoreReport } from '../../store/rescore';
import { refusal, type CommandResult } from '../commandArgs';
import { environmentsByMode } from '../environmentFactory';
import type { ForgeContext } from '../context';

export const RescoreArgsSchema = z.object({ dataset: z.string().min(1).optional() }).strict();

export async function rescoreCommand(forge: ForgeContext, rawArgs: unknown): Promise<CommandResult<{ report: RescoreReport }>> {
  const parsed = RescoreArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Rescore Dataset: ${parsed.error.message}`);
  const untrusted = forge.refuseUntrusted();
  if (untrusted) return untrusted;
  const log = forge.log;
  const dir = parsed.data.dataset ?? forge.datasetDir();
  const settings = forge.settings();
  const resolved = await forge.resolvedInterpreter();
  const taskDirs = forge.taskDirs();
  const { envFor, dispose } = environmentsByMode(settings, resolved, taskDirs);
  try {
    const report = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'ForgeEnv: rescoring the dataset', cancellable: true },
      (progress, token) => {
        const controller = new AbortController();
        token.onCancellationRequested(() => controller.abort());
        let last = 0;
        return rescoreDataset(dir, {
          envFor,
          signal: controller.signal,
          onProgress: (done, total, e) => {
            const pct = (100 * done) / Math.max(1, total);
            progress.report({ increment: pct - last, message: `${done}/${total}: ${e.task_id} ${e.status}` });
            last = pct;
          },
        });
      },
    );
    log.appendLine(renderRescoreText(report));
    const bad = report.done - report.counts.same;
    const msg = `ForgeEnv: rescored ${report.done} of ${report.total} demonstration(s)${report.cancelled ? ' (cancelled)' : ''}: ${report.counts.same} identical${bad ? `, ${bad} not (see the log)` : ''}.`;
    if (bad) void vscode.window.showWarningMessage(msg, 'Show Log').then((c) => c && log.show());
    else void vscode.window.showInformationMessage(msg);
    return { ok: true, report };
  } finally {
    await dispose();
  }
}

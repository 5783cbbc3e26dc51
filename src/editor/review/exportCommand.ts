// "Export dataset": format → save dialog → the store's exporter, with progress.
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { exportDataset, type ExportResult } from '../../store/export/exportDataset';
import { EXPORT_FORMATS, FORMATS, type ExportFormat } from '../../store/export/formats';
import { refusal, type CommandResult } from '../commandArgs';
import { datasetFolderSetting } from './reviewSettings';

export const ExportArgsSchema = z
  .object({
    format: z.enum(EXPORT_FORMATS).optional(),
    out: z.string().min(1).optional(),
    dataset: z.string().min(1).optional(),
  })
  .strict();

export async function exportCommand(context: vscode.ExtensionContext, rawArgs: unknown): Promise<CommandResult<Pick<ExportResult, 'out' | 'card' | 'rows' | 'deduplicated'>>> {
  const parsed = ExportArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Export Dataset: ${parsed.error.message}`);
  const args = parsed.data;
  const dir = args.dataset ?? datasetFolderSetting(context);
  let format: ExportFormat | undefined = args.format;
  if (!format) {
    const picked = await vscode.window.showQuickPick(
      EXPORT_FORMATS.map((f) => ({ label: f, detail: FORMATS[f].description('standard'), format: f })),
      { title: 'ForgeEnv: export the dataset as…' },
    );
    format = picked?.format;
  }
  if (!format) return refusal('cancelled', 'No format chosen.');
  let out = args.out;
  if (!out) {
    const target = await vscode.window.showSaveDialog({
      title: `Export ${format} (a dataset card README.md is written beside it)`,
      filters: { JSONL: ['jsonl'] },
      defaultUri: vscode.Uri.file(join(dirname(dir), 'exports', `${format}.jsonl`)),
    });
    out = target?.fsPath;
  }
  if (!out) return refusal('cancelled', 'No file chosen.');
  const chosen = format;
  const target = out;
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: exporting ${chosen}` },
      () => exportDataset({ format: chosen, dir, out: target }),
    );
    if (!args.out) {
      void vscode.window.showInformationMessage(`ForgeEnv: exported ${result.rows} rows (${result.deduplicated} deduplicated) to ${result.out}.`, 'Open').then((c) => {
        if (c === 'Open') void vscode.window.showTextDocument(vscode.Uri.file(result.out));
      });
    }
    return { ok: true, out: result.out, card: result.card, rows: result.rows, deduplicated: result.deduplicated };
  } catch (e) {
    const msg = `Export failed: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
}

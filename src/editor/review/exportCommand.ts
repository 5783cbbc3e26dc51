// "Export dataset": format → save dialog → the store's exporter, with progress.
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { exportDataset, type ExportResult } from '../../store/export/exportDataset';
import { EXPORT_FORMATS, FORMATS, type ExportFormat } from '../../store/export/formats';
import { datasetFolderSetting } from './reviewSettings';

export const ExportArgsSchema = z
  .object({
    format: z.enum(EXPORT_FORMATS).optional(),
    out: z.string().min(1).optional(),
    dataset: z.string().min(1).optional(),
  })
  .strict();

export async function exportCommand(rawArgs: unknown): Promise<Pick<ExportResult, 'out' | 'card' | 'rows' | 'deduplicated'> | undefined> {
  const args = ExportArgsSchema.parse(rawArgs ?? {});
  const dir = args.dataset ?? datasetFolderSetting();
  if (!dir) {
    void vscode.window.showWarningMessage('ForgeEnv: set forgeenv.datasetFolder (or open a folder) to export a dataset.');
    return undefined;
  }
  let format: ExportFormat | undefined = args.format;
  if (!format) {
    const picked = await vscode.window.showQuickPick(
      EXPORT_FORMATS.map((f) => ({ label: f, detail: FORMATS[f].description('standard'), format: f })),
      { title: 'ForgeEnv: export the dataset as…' },
    );
    format = picked?.format;
  }
  if (!format) return undefined;
  let out = args.out;
  if (!out) {
    const target = await vscode.window.showSaveDialog({
      title: `Export ${format} (a dataset card README.md is written beside it)`,
      filters: { JSONL: ['jsonl'] },
      defaultUri: vscode.Uri.file(join(dirname(dir), 'exports', `${format}.jsonl`)),
    });
    out = target?.fsPath;
  }
  if (!out) return undefined;
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
    return { out: result.out, card: result.card, rows: result.rows, deduplicated: result.deduplicated };
  } catch (e) {
    void vscode.window.showErrorMessage(`ForgeEnv: export failed: ${e instanceof Error ? e.message : String(e)}`);
    return undefined;
  }
}

// "Export dataset": format → filters (the CLI's, from the same schema) → save dialog → the
// store's exporter, with progress.
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { exportDataset, type ExportResult } from '../../store/export/exportDataset';
import { COMPLETION_FORMS, EXPORT_FORMATS, FORMATS, PROMPT_STYLES, type ExportFormat } from '../../store/export/formats';
import { DEFAULT_FILTERS, FILTER_CHOICES, SelectionFiltersSchema, type SelectionFilters } from '../../store/export/selection';
import { breakagePrimitives } from '../../env/primitives/registry';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { exportDpoInEditor } from './dpoExportCommand';

export const ExportArgsSchema = z
  .object({
    format: z.enum([...EXPORT_FORMATS, 'trl-dpo'] as const).optional(),
    out: z.string().min(1).optional(),
    dataset: z.string().min(1).optional(),
    /** The CLI's filters (partial: the rest take the defaults); given, no filter pickers are shown. */
    filters: SelectionFiltersSchema.partial().optional(),
    style: z.enum(PROMPT_STYLES).optional(),
    completion: z.enum(COMPLETION_FORMS).optional(),
  })
  .strict();

type ChoiceKey = keyof typeof FILTER_CHOICES;

function describeFilters(f: SelectionFilters): string {
  return `${f.status}, review ${f.review}, breakage ${f.breakage}, ${f.primitives.length ? f.primitives.join(' ') : 'all primitives'}`;
}

/** The filter pickers: defaults in one step, or each filter as the CLI offers it. undefined: cancelled. */
async function pickFilters(format: ExportFormat): Promise<SelectionFilters | undefined> {
  // A format may default otherwise (trl-kto takes failures: they are its negatives).
  const defaults = SelectionFiltersSchema.parse({ ...DEFAULT_FILTERS, ...FORMATS[format].defaultFilters });
  const how = await vscode.window.showQuickPick(
    [
      { label: 'Default filters', detail: describeFilters(defaults), custom: false },
      {
        label: 'Choose filters…',
        detail: 'outcome, review verdict, breakage, primitives (as forgeenv export --status/--review/--breakage/--primitive)',
        custom: true,
      },
    ],
    { title: 'ForgeEnv: which demonstrations to export', ignoreFocusOut: true },
  );
  if (!how) return undefined;
  if (!how.custom) return defaults;
  const chosen: Record<string, unknown> = {};
  for (const key of Object.keys(FILTER_CHOICES) as ChoiceKey[]) {
    const c = FILTER_CHOICES[key];
    const items = Object.entries(c.values).map(([value, detail]) => ({
      label: value,
      description: value === defaults[key] ? 'default' : undefined,
      detail: detail,
    }));
    const picked = await vscode.window.showQuickPick(items, { title: `ForgeEnv export: ${c.title} (${c.flag})`, ignoreFocusOut: true });
    if (!picked) return undefined;
    chosen[key] = picked.label;
  }
  const prims = await vscode.window.showQuickPick(
    breakagePrimitives().map((p) => ({ label: p.name, description: p.category })),
    { title: 'ForgeEnv export: primitives (--primitive; none selected = all)', canPickMany: true, ignoreFocusOut: true },
  );
  if (!prims) return undefined;
  chosen.primitives = prims.map((p) => p.label);
  return SelectionFiltersSchema.parse(chosen);
}

export async function exportCommand(
  forge: ForgeContext,
  rawArgs: unknown,
): Promise<CommandResult<Pick<ExportResult, 'out' | 'rows' | 'deduplicated'> & Partial<Pick<ExportResult, 'card' | 'filters'>>>> {
  const parsed = ExportArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Export Dataset: ${parsed.error.message}`);
  const args = parsed.data;
  const dir = args.dataset ?? forge.datasetDir();
  let format: ExportFormat | 'trl-dpo' | undefined = args.format;
  if (!format) {
    const picked = await vscode.window.showQuickPick(
      [
        ...EXPORT_FORMATS.map((f): { label: string; detail: string; format: ExportFormat | 'trl-dpo' } => ({
          label: f,
          detail: FORMATS[f].description('standard'),
          format: f,
        })),
        {
          label: 'trl-dpo',
          detail:
            'TRL DPO pairs {prompt, chosen, rejected}: a passing and a failing attempt at the same broken script, both re-executed now',
          format: 'trl-dpo' as const,
        },
      ],
      { ignoreFocusOut: true, title: 'ForgeEnv: export the dataset as…' },
    );
    format = picked?.format;
  }
  if (!format) return refusal('cancelled', 'No format chosen.');
  if (format === 'trl-dpo') return exportDpoCommand(forge, dir, args);
  const filters = args.filters
    ? SelectionFiltersSchema.parse({ ...FORMATS[format].defaultFilters, ...args.filters })
    : args.out
      ? SelectionFiltersSchema.parse({ ...DEFAULT_FILTERS, ...FORMATS[format].defaultFilters })
      : await pickFilters(format);
  if (!filters) return refusal('cancelled', 'No filters chosen.');
  let out = args.out;
  if (!out) {
    const target = await vscode.window.showSaveDialog({
      title: `Export ${format} (its dataset card README.md is written beside it: one export per folder)`,
      filters: { JSONL: ['jsonl'] },
      // A folder per format, so each export's card sits beside its own data file.
      defaultUri: vscode.Uri.file(join(dirname(dir), 'exports', format, `${format}.jsonl`)),
    });
    out = target?.fsPath;
  }
  if (!out) return refusal('cancelled', 'No file chosen.');
  const chosen = format;
  const target = out;
  try {
    const result = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: exporting ${chosen}` },
      () => exportDataset({ format: chosen, dir, out: target, filters, style: args.style, completion: args.completion }),
    );
    if (!args.out) {
      void vscode.window
        .showInformationMessage(`ForgeEnv: exported ${result.rows} rows (${result.deduplicated} deduplicated) to ${result.out}.`, 'Open')
        .then((c) => {
          if (c === 'Open') void vscode.window.showTextDocument(vscode.Uri.file(result.out));
        });
    }
    return { ok: true, out: result.out, card: result.card, rows: result.rows, deduplicated: result.deduplicated, filters: result.filters };
  } catch (e) {
    const msg = `Export failed: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
}

/** trl-dpo: no filters (every attempt is a candidate); both sides run, so only in a trusted workspace. */
async function exportDpoCommand(
  forge: ForgeContext,
  dir: string,
  args: z.infer<typeof ExportArgsSchema>,
): Promise<CommandResult<{ out: string; rows: number; deduplicated: number }>> {
  if (args.filters)
    return refusal('invalid_args', 'trl-dpo takes no filters: every attempt is a candidate, and both sides are re-executed.');
  const untrusted = forge.refuseUntrusted();
  if (untrusted) return untrusted;
  let out = args.out;
  if (!out) {
    const target = await vscode.window.showSaveDialog({
      title: 'Export trl-dpo',
      filters: { JSONL: ['jsonl'] },
      defaultUri: vscode.Uri.file(join(dirname(dir), 'exports', 'trl-dpo', 'trl-dpo.jsonl')),
    });
    out = target?.fsPath;
  }
  if (!out) return refusal('cancelled', 'No file chosen.');
  try {
    const r = await exportDpoInEditor(forge, { dir, out, style: args.style, completion: args.completion });
    if (r.cancelled) return refusal('cancelled', 'Export cancelled; nothing was written.');
    const msg = `ForgeEnv: exported ${r.rows} trl-dpo pair(s) to ${r.out} (${r.reexecuted} attempts re-executed, ${r.changed_at_export} left out as their outcome changed, ${r.deduplicated} duplicate row(s)).`;
    forge.log.info(msg);
    if (!args.out) void vscode.window.showInformationMessage(msg);
    return { ok: true, out: r.out, rows: r.rows, deduplicated: r.deduplicated };
  } catch (e) {
    const msg = `Export failed: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
}

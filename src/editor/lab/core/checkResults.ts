// The "check all primitives" results as the tree view shows them and as the JSON export
// stores them. No vscode import.
import { z } from 'zod';
import { CheckRowSchema, type CheckRow, type CheckSummary } from '../../../env/primitives/checkPrimitives';

export const CHECK_EXPORT_SCHEMA = 'forgeenv.primitive-checks/v1';

export const CheckExportSchema = z.object({
  schema: z.literal(CHECK_EXPORT_SCHEMA),
  generated_at: z.string(),
  source: z.string(),
  mode: z.enum(['simulated', 'real']),
  no_run: z.boolean(),
  summary: z.object({
    scripts: z.number().int(),
    primitives: z.number().int(),
    rows: z.number().int(),
    applied: z.number().int(),
    broke: z.number().int(),
    restored: z.number().int(),
    passes_after_repair: z.number().int(),
    not_runnable: z.number().int(),
    internal_errors: z.number().int(),
    // Optional: exports written before these counts existed still load.
    names_changed_api: z.number().int().optional(),
    verified: z.number().int().optional(),
    verified_real: z.number().int().optional(),
    original_runs: z.number().int().optional(),
    scripts_two_verified: z.number().int().optional(),
    wall_time_ms: z.number(),
  }),
  results: z.array(CheckRowSchema),
});
export type CheckExport = z.infer<typeof CheckExportSchema>;

export type RowStatus = 'broke' | 'applied' | 'not-broken' | 'not-applicable' | 'internal-error' | 'not-restored';

/** The one status a row's icon shows, worst first. */
export function rowStatus(r: CheckRow): RowStatus {
  if ((r.error ?? '').startsWith('internal:')) return 'internal-error';
  if (!r.applied) return 'not-applicable';
  if (r.restored === false) return 'not-restored';
  if (r.broke === true) return 'broke';
  if (r.broke === false) return 'not-broken';
  return 'applied';
}

const mark = (v: boolean | null, yes: string, no: string) => (v === null ? undefined : v ? yes : no);

/** "applied · broke · restored · 2 lines", the tree row's description. */
export function rowDescription(r: CheckRow): string {
  if (!r.applied) return 'not applicable';
  const parts = [
    'applied',
    mark(r.broke, 'broke', 'did not break'),
    mark(r.restored, 'restored', 'NOT restored'),
    mark(r.passes_after_repair, 'passes after repair', 'fails after repair'),
    r.diff_lines === null ? undefined : `${r.diff_lines} line${r.diff_lines === 1 ? '' : 's'}`,
  ];
  return parts.filter(Boolean).join(' · ');
}

/** The reason shown in the tooltip: the error, else the broken run's error. */
export function rowReason(r: CheckRow): string | undefined {
  return r.error ?? r.broken_error ?? undefined;
}

export interface ScriptGroup {
  script: string;
  rows: CheckRow[];
  applied: number;
  broke: number;
  restored: number;
}

/** Rows grouped by script in first-seen order. */
export function groupByScript(rows: readonly CheckRow[]): ScriptGroup[] {
  const map = new Map<string, ScriptGroup>();
  for (const r of rows) {
    let g = map.get(r.script);
    if (!g) map.set(r.script, (g = { script: r.script, rows: [], applied: 0, broke: 0, restored: 0 }));
    g.rows.push(r);
    if (r.applied) g.applied++;
    if (r.broke === true) g.broke++;
    if (r.restored === true) g.restored++;
  }
  return [...map.values()];
}

export function groupDescription(g: ScriptGroup): string {
  return `${g.applied}/${g.rows.length} applied · ${g.broke} broke · ${g.restored} restored`;
}

/** Totals over rows, as checkPrimitives' summary counts them (for a live, partial view). */
export function countRows(
  rows: readonly CheckRow[],
): Pick<CheckSummary, 'rows' | 'applied' | 'broke' | 'restored' | 'passes_after_repair' | 'internal_errors'> {
  const n = (f: (r: CheckRow) => boolean) => rows.filter(f).length;
  return {
    rows: rows.length,
    applied: n((r) => r.applied),
    broke: n((r) => r.broke === true),
    restored: n((r) => r.restored === true),
    passes_after_repair: n((r) => r.passes_after_repair === true),
    internal_errors: n((r) => (r.error ?? '').startsWith('internal:')),
  };
}

export function checkExport(args: {
  source: string;
  mode: 'simulated' | 'real';
  noRun: boolean;
  summary: CheckSummary;
  results: CheckRow[];
  now?: Date;
}): CheckExport {
  return CheckExportSchema.parse({
    schema: CHECK_EXPORT_SCHEMA,
    generated_at: (args.now ?? new Date()).toISOString(),
    source: args.source,
    mode: args.mode,
    no_run: args.noRun,
    summary: args.summary,
    results: args.results,
  });
}

// RestructureDatasetSchema: the script reads a dataset column under the name another dataset
// revision (or a sibling dataset) used: GLUE SST-2's "sentence" vs "text", "label" vs "labels",
// CIFAR-10's "img" vs "image", CNN/DailyMail's "highlights" vs XSum's "summary". This primitive
// is about string content: it rewrites plain string literals in column positions only, i.e.
// subscript keys (`examples["sentence"]`), column keywords (`remove_columns=["sentence"]`,
// `dataset_text_field="text"`) and column arguments of Dataset methods (`rename_column("a", ...)`).
// Dict keys that build a dataset are left alone, so the reads no longer match what is loaded.
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import type { StringLiteral } from '../python/strings';
import type { CallArgument, ScriptIndex } from '../python/scriptIndex';
import { definePrimitive, driftProposals, refuse, type Plan, type Proposal, type ScriptContext } from './engine';

const Column = z
  .string()
  .min(1)
  .regex(/^[^"'\\\n\r]+$/, 'a column name without quotes, backslashes or line breaks');

export const ColumnParamsSchema = z
  .object({
    old_column: Column.describe('The column name the script reads now, e.g. sentence.'),
    new_column: Column.describe('The name to read instead, e.g. text (what another dataset revision calls it).'),
  })
  .strict()
  .refine((p) => p.old_column !== p.new_column, { message: 'old_column and new_column must differ', path: ['new_column'] });
export type ColumnParams = z.infer<typeof ColumnParamsSchema>;

/** Keywords whose value names columns. */
const COLUMN_KEYWORDS = new Set([
  'remove_columns',
  'input_columns',
  'columns',
  'column_names',
  'dataset_text_field',
  'text_column',
  'label_column',
  'text_column_name',
  'label_column_name',
  'question_column',
  'context_column',
  'answer_column',
  'column',
]);
/** Dataset methods whose positional arguments name columns. */
const COLUMN_METHODS = new Set([
  'rename_column',
  'remove_columns',
  'select_columns',
  'class_encode_column',
  'cast_column',
  'unique',
  'sort',
]);
/** Names scripts give to a dataset row or batch, for candidate columns. */
const ROW_NAMES = /^(examples?|batch|ex|samples?|rows?|items?|records?|features)$/;

/** Plain string literals of an argument value: the string itself or the elements of a list/tuple. */
function argumentStrings(index: ScriptIndex, arg: CallArgument, byFrom: Map<number, StringLiteral>): StringLiteral[] {
  const single = byFrom.get(arg.valueFrom);
  if (single && single.to === arg.valueTo) return single.plain ? [single] : [];
  const source = index.source;
  const text = source.slice(arg.valueFrom, arg.valueTo);
  if (!/^[[(]/.test(text)) return [];
  const out: StringLiteral[] = [];
  for (const s of index.strings) {
    if (s.from <= arg.valueFrom || s.to >= arg.valueTo || !s.plain) continue;
    // Direct elements only: the text between the brackets is strings, commas and whitespace.
    out.push(s);
  }
  const inner = text.slice(1, -1);
  const rest = out.reduce((acc, s) => acc.replace(source.slice(s.from, s.to), ''), inner);
  return /^[\s,]*$/.test(rest) ? out : [];
}

interface ColumnSite {
  lit: StringLiteral;
  /** A subscript whose object looks like a row or batch (for candidates). */
  rowRead: boolean;
}

function columnSites(ctx: ScriptContext): ColumnSite[] {
  const { index } = ctx;
  const byFrom = new Map(index.strings.map((s) => [s.from, s]));
  const rows = rowVariables(ctx);
  const sites: ColumnSite[] = [];
  for (const s of index.subscripts) {
    if (s.key?.plain) sites.push({ lit: s.key, rowRead: isRowRead(ctx.script, s.objectNode, rows) });
  }
  for (const c of index.calls) {
    for (const a of c.args) {
      const named = a.kind === 'keyword' && COLUMN_KEYWORDS.has(a.name!);
      const positional = a.kind === 'positional' && c.method !== undefined && COLUMN_METHODS.has(c.method.name);
      if (named || positional) for (const lit of argumentStrings(index, a, byFrom)) sites.push({ lit, rowRead: true });
    }
  }
  return sites;
}

/** Names holding a dataset row or batch: function parameters, row-like names, and `x = row["a"][i]`. */
function rowVariables(ctx: ScriptContext): Set<string> {
  const rows = new Set(ctx.index.functions.flatMap((f) => f.params).filter((p) => p !== 'self'));
  for (const n of ctx.index.names) if (n.role === 'name' && ROW_NAMES.test(n.text)) rows.add(n.text);
  for (const a of ctx.index.assignments) {
    if (a.valueNode.name === 'MemberExpression' && isRowRead(ctx.script, a.valueNode, rows)) rows.add(a.target);
  }
  return rows;
}

/** A subscript object that is a row, a subscript of a row (`examples["answers"][i]`), or `<ds>.features`. */
function isRowRead(source: string, node: SyntaxNode, rows: Set<string>): boolean {
  if (
    node.name === 'MemberExpression' &&
    node.lastChild?.name === 'PropertyName' &&
    source.slice(node.lastChild.from, node.lastChild.to) === 'features'
  )
    return true;
  let n: SyntaxNode | null = node;
  while (n && n.name === 'MemberExpression' && n.firstChild?.nextSibling?.name === '[') n = n.firstChild;
  return n !== null && n.name === 'VariableName' && rows.has(source.slice(n.from, n.to));
}

function plan(primitive: string, inverse: string, ctx: ScriptContext, p: ColumnParams): Plan {
  const sites = columnSites(ctx);
  const hits = sites.filter((s) => s.lit.raw === p.old_column);
  if (hits.length === 0)
    refuse(primitive, `no dataset column "${p.old_column}" is read in the script (as a subscript key or a column argument)`);
  if (sites.some((s) => s.lit.raw === p.new_column))
    refuse(primitive, `the script already uses the column name "${p.new_column}", so the rename could not be undone exactly`);
  const edits: TextEdit[] = hits.map((s) => ({ from: s.lit.contentFrom, to: s.lit.contentTo, insert: p.new_column }));
  return { edits, inverse: { primitive_type: inverse, params: { old_column: p.new_column, new_column: p.old_column } } };
}

/** `label` ↔ `labels` style: the plural or singular of the name. */
export function siblingColumnName(column: string): string {
  return column.endsWith('s') && column.length > 1 ? column.slice(0, -1) : `${column}s`;
}

function proposals(ctx: ScriptContext, versions: Parameters<typeof driftProposals>[1]): Array<Proposal<ColumnParams>> {
  const sites = columnSites(ctx);
  const columns = [...new Set(sites.filter((s) => s.rowRead).map((s) => s.lit.raw))];
  const used = new Set(columns);
  const drift = driftProposals<ColumnParams>('RestructureDatasetSchema', versions).filter((d) => used.has(d.params.old_column));
  const generic = columns.map((c) => ({ params: { old_column: c, new_column: siblingColumnName(c) }, breaks: true }));
  return [...drift, ...generic];
}

export const RestructureDatasetSchema = definePrimitive<ColumnParams>({
  name: 'RestructureDatasetSchema',
  category: 'schema_drift',
  kind: 'breakage',
  description: 'Reads a dataset column under the name another dataset revision used (subscript keys and column arguments).',
  models:
    'dataset columns renamed between revisions and sibling datasets: sentence ↔ text (GLUE SST-2), label ↔ labels, img ↔ image (CIFAR-10), highlights ↔ summary',
  paramsSchema: ColumnParamsSchema,
  label: (p) => `read column "${p.new_column}" instead of "${p.old_column}"`,
  plan: (ctx, p) => plan('RestructureDatasetSchema', 'RestoreColumn', ctx, p),
  propose: proposals,
});

export const RestoreColumn = definePrimitive<ColumnParams>({
  name: 'RestoreColumn',
  category: 'schema_drift',
  kind: 'inverse',
  description: 'Undoes RestructureDatasetSchema: reads old_column (the broken name) as new_column again.',
  models: 'the repair of a renamed dataset column, e.g. examples["text"] → examples["sentence"]',
  paramsSchema: ColumnParamsSchema,
  label: (p) => `restore column "${p.new_column}" (was read as "${p.old_column}")`,
  plan: (ctx, p) => plan('RestoreColumn', 'RestructureDatasetSchema', ctx, p),
  propose: (_ctx, versions) =>
    driftProposals<ColumnParams>('RestructureDatasetSchema', versions).map((d) => ({
      ...d,
      params: { old_column: d.params.new_column, new_column: d.params.old_column },
    })),
});

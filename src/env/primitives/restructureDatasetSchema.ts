// RestructureDatasetSchema / RestoreColumn: the dataset column `old_column` is called
// `new_column` in another version of the dataset: string keys in subscripts (`examples["sentence"]`)
// and column names passed to dataset methods (`remove_columns=["sentence"]`) change; quotes kept.
// Models glue/sst2 `sentence` vs `text`, `label` vs `labels`, cifar10 `img` vs `image`.
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import { driftEntriesFor, driftNote } from '../drift/driftTable';
import { accessRefs, callRefs, textOf, type ParsedScript } from '../python/syntax';
import { parseOrNull, parseOrRefuse, resultOf, spanOf, type Edit } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const Column = z.string().min(1).regex(/^[^'"\\\n]+$/, 'a column name without quotes or backslashes');
const Params = z
  .object({
    old_column: Column.describe('Column name the script uses'),
    new_column: Column.describe('Name of that column in another dataset version'),
  })
  .strict()
  .refine((p) => p.old_column !== p.new_column, 'old_column and new_column must differ');
type P = z.infer<typeof Params>;

const DATASET_METHODS = /^(map|filter|rename_column|rename_columns|remove_columns|select_columns|cast_column|class_encode_column|sort|unique|set_format|with_format|train_test_split|flatten|add_column)$/;
const COLUMN_KEYWORDS = /^(remove_columns|input_columns|columns|column|label_column|text_column|dataset_text_field)$/;

function nearestCall(n: SyntaxNode | null): SyntaxNode | null {
  for (let x = n; x; x = x.parent) if (x.name === 'CallExpression') return x;
  return null;
}

/** Ranges (inside the quotes) of every column-name occurrence of `column`. */
function columnRanges(p: ParsedScript, column: string): Edit[] {
  const out: Edit[] = [];
  const seen = new Set<number>();
  for (const a of accessRefs(p)) {
    if (a.style === 'subscript' && a.key === column) {
      out.push({ from: a.keyFrom, to: a.keyTo, insert: '' });
      seen.add(a.keyFrom);
    }
  }
  const methodOf = new Map(callRefs(p).map((c) => [c.node.from * 1e7 + c.node.to, c.method]));
  for (const n of p.nodes) {
    if (n.name !== 'String' || seen.has(n.from + 1)) continue;
    const m = /^(['"])([^'"\\\n]*)\1$/.exec(textOf(p, n));
    if (!m || m[2] !== column) continue;
    const call = nearestCall(n.parent);
    const method = call ? methodOf.get(call.from * 1e7 + call.to) : undefined;
    // `remove_columns=["x"]`: the keyword name sits before the value in the ArgList.
    let kw: string | undefined;
    let top: SyntaxNode | null = n;
    while (top && top.parent && top.parent.name !== 'ArgList') top = top.parent;
    const eq = top?.prevSibling;
    if (eq?.name === 'AssignOp') kw = eq.prevSibling ? textOf(p, eq.prevSibling) : undefined;
    if ((method && DATASET_METHODS.test(method)) || (kw && COLUMN_KEYWORDS.test(kw))) out.push({ from: n.from + 1, to: n.to - 1, insert: '' });
  }
  return out;
}

function makeSchema(name: 'RestructureDatasetSchema' | 'RestoreColumn'): Primitive<P> {
  const inverseName = name === 'RestructureDatasetSchema' ? 'RestoreColumn' : 'RestructureDatasetSchema';
  return {
    name,
    category: 'schema_drift',
    kind: name === 'RestructureDatasetSchema' ? 'breakage' : 'inverse',
    description: name === 'RestructureDatasetSchema' ? 'Use a dataset column under the name it has in another dataset version' : 'Use the dataset column under its current name again',
    models: 'glue/sst2 "sentence" vs "text", "label" vs "labels", cifar10 "img" vs "image" (datasets schema changes)',
    paramsSchema: Params as unknown as z.ZodType<P>,
    candidates(script) {
      const p = parseOrNull(script);
      if (!p || name === 'RestoreColumn') return [];
      const out: PrimitiveCandidate<P>[] = [];
      const seen = new Set<string>();
      const add = (params: P, note?: { drift: string; breaks: boolean }) => {
        if (seen.has(params.old_column)) return;
        const edits = columnRanges(p, params.old_column);
        if (!edits.length || columnRanges(p, params.new_column).length) return;
        seen.add(params.old_column);
        out.push({ params, label: `column "${params.old_column}" → "${params.new_column}" (${edits.length}×)`, ...spanOf(edits), ...note });
      };
      for (const d of driftEntriesFor('RestructureDatasetSchema')) add(d.params as P, driftNote(d));
      for (const a of accessRefs(p)) {
        if (a.style !== 'subscript' || !/^(examples?|batch|ex|row|sample|item|record|features)$/.test(a.object)) continue;
        add({ old_column: a.key, new_column: a.key.endsWith('s') ? a.key.slice(0, -1) : `${a.key}s` });
      }
      return out;
    },
    apply(script, params) {
      const p = parseOrRefuse(name, script);
      if (columnRanges(p, params.new_column).length) throw new PrimitiveRefusal(name, `the script already uses a column "${params.new_column}", so the rename could not be undone exactly`);
      const edits = columnRanges(p, params.old_column).map((e) => ({ ...e, insert: params.new_column }));
      return resultOf(name, script, edits, { primitive_type: inverseName, params: { old_column: params.new_column, new_column: params.old_column } }, `the script does not use a dataset column "${params.old_column}"`);
    },
  };
}

export const RestructureDatasetSchema = makeSchema('RestructureDatasetSchema');
export const RestoreColumn = makeSchema('RestoreColumn');

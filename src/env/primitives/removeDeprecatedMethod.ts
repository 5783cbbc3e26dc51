// RemoveDeprecatedMethod / RestoreMethod: calls to `call` go back to `deprecated_call`, a method
// the library has removed; optionally the import line the old code needed is added after the
// last import. Models `datasets.load_metric(...)` (removed in datasets 3.0; now
// `evaluate.load(...)`) and `Trainer.is_world_master()` (now `is_world_process_zero()`).
import { z } from 'zod';
import { driftEntriesFor, driftNote } from '../drift/driftTable';
import { callRefs, DOTTED, importRefs, type ParsedScript } from '../python/syntax';
import { parseOrNull, parseOrRefuse, resultOf, spanOf, type Edit } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const ImportLine = z.string().regex(/^(from [\w.]+ import [\w, ]+|import [\w.]+( as \w+)?)$/, 'a single import statement, e.g. "from datasets import load_metric"');

const Params = z
  .object({
    call: z.string().regex(DOTTED).describe('Dotted callee the script uses now (e.g. evaluate.load)'),
    deprecated_call: z.string().regex(DOTTED).describe('The removed callee older code used (e.g. load_metric)'),
    deprecated_import: ImportLine.optional().describe('Import the old code needed, added after the last import'),
  })
  .strict()
  .refine((p) => p.call !== p.deprecated_call, 'call and deprecated_call must differ');
type P = z.infer<typeof Params>;
const RestoreParams = z
  .object({
    deprecated_call: z.string().regex(DOTTED).describe('The removed callee in the broken script'),
    call: z.string().regex(DOTTED).describe('The current callee to restore'),
    remove_import: ImportLine.optional().describe('Import line to remove (the one the breakage added)'),
  })
  .strict();
type R = z.infer<typeof RestoreParams>;

const callEdits = (p: ParsedScript, from: string, to: string): Edit[] =>
  callRefs(p).filter((c) => c.callee === from).map((c) => ({ from: c.calleeFrom, to: c.calleeTo, insert: to }));

/** Offset just after the line of the last top-level import (where an added import goes). */
function afterLastImport(p: ParsedScript): number {
  const imps = importRefs(p).filter((r) => r.node.parent?.name === 'Script');
  const last = imps[imps.length - 1];
  if (!last) return 0;
  const nl = p.source.indexOf('\n', last.node.to);
  return nl < 0 ? p.source.length : nl + 1;
}

const hasLine = (source: string, line: string) => source.split(/\r?\n/).some((l) => l === line);

export const RemoveDeprecatedMethod: Primitive<P> = {
  name: 'RemoveDeprecatedMethod',
  category: 'method_removal',
  kind: 'breakage',
  description: 'Call a method the library has since removed instead of its replacement',
  models: 'datasets.load_metric removed in datasets 3.0 (now evaluate.load); Trainer.is_world_master → is_world_process_zero',
  paramsSchema: Params as unknown as z.ZodType<P>,
  candidates(script) {
    const p = parseOrNull(script);
    if (!p) return [];
    const out: PrimitiveCandidate<P>[] = [];
    const calls = callRefs(p);
    for (const d of driftEntriesFor('RemoveDeprecatedMethod')) {
      const params = d.params as P;
      const edits = callEdits(p, params.call, params.deprecated_call);
      if (!edits.length || calls.some((c) => c.callee === params.deprecated_call)) continue;
      if (params.deprecated_import && hasLine(script, params.deprecated_import)) continue;
      out.push({ params, label: `${params.call}(…) → ${params.deprecated_call}(…)`, ...spanOf(edits), ...driftNote(d) });
    }
    // Generic: any method call on a library object, back to a removed "_legacy" spelling.
    const seen = new Set(out.map((c) => c.params.call));
    for (const c of calls) {
      if (!c.callee.includes('.') || c.callee.startsWith('.') || seen.has(c.callee)) continue;
      if (!/^(trainer|model|tokenizer|dataset|ds|metric|evaluate|torch|optimizer|scheduler)\b/i.test(c.callee)) continue;
      seen.add(c.callee);
      const params = { call: c.callee, deprecated_call: `${c.callee}_legacy` };
      out.push({ params, label: `${params.call}(…) → ${params.deprecated_call}(…)`, ...spanOf(callEdits(p, params.call, params.deprecated_call)) });
    }
    return out;
  },
  apply(script, params) {
    const p = parseOrRefuse(this.name, script);
    if (callRefs(p).some((c) => c.callee === params.deprecated_call)) throw new PrimitiveRefusal(this.name, `the script already calls ${params.deprecated_call}, so the change could not be undone exactly`);
    const edits = callEdits(p, params.call, params.deprecated_call);
    if (edits.length && params.deprecated_import) {
      if (hasLine(script, params.deprecated_import)) throw new PrimitiveRefusal(this.name, `the script already has the line "${params.deprecated_import}"`);
      const at = afterLastImport(p);
      const eol = script.includes('\r\n') ? '\r\n' : '\n';
      // At end of a file with no final newline, the new line needs one before it.
      const lead = at === script.length && script.length > 0 && !script.endsWith('\n') ? eol : '';
      edits.push({ from: at, to: at, insert: `${lead}${params.deprecated_import}${lead ? '' : eol}` });
    }
    return resultOf(this.name, script, edits, { primitive_type: 'RestoreMethod', params: { deprecated_call: params.deprecated_call, call: params.call, ...(params.deprecated_import ? { remove_import: params.deprecated_import } : {}) } }, `no call to ${params.call} in the script`);
  },
};

export const RestoreMethod: Primitive<R> = {
  name: 'RestoreMethod',
  category: 'method_removal',
  kind: 'inverse',
  description: 'Call the current replacement of a removed method again',
  models: RemoveDeprecatedMethod.models,
  paramsSchema: RestoreParams as unknown as z.ZodType<R>,
  candidates: () => [],
  apply(script, params) {
    const p = parseOrRefuse(this.name, script);
    if (callRefs(p).some((c) => c.callee === params.call)) throw new PrimitiveRefusal(this.name, `the script already calls ${params.call}`);
    const edits = callEdits(p, params.deprecated_call, params.call);
    if (params.remove_import) {
      const re = new RegExp(`(^|\\n)${params.remove_import.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(\\r?\\n|$)`);
      const m = re.exec(script);
      if (!m) throw new PrimitiveRefusal(this.name, `the line "${params.remove_import}" is not in the script`);
      const start = m.index + m[1]!.length;
      // Removing a last line without newline also removes the newline before it.
      edits.push(m[2] ? { from: start, to: start + params.remove_import.length + m[2].length, insert: '' } : { from: m.index, to: start + params.remove_import.length, insert: '' });
    }
    return resultOf(this.name, script, edits, { primitive_type: 'RemoveDeprecatedMethod', params: { call: params.call, deprecated_call: params.deprecated_call, ...(params.remove_import ? { deprecated_import: params.remove_import } : {}) } }, `no call to ${params.deprecated_call} in the script`);
  },
};

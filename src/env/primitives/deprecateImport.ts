// DeprecateImport / RestoreImport: import statements of `old_module` (only those importing `name`,
// when given) now import from `new_module`; only the module path is edited.
// Models: `from transformers import AdamW` (removed in 4.46; now torch.optim.AdamW),
// `from datasets import load_metric` (moved to `evaluate`, removed in datasets 3.0).
import { z } from 'zod';
import { driftEntriesFor, driftNote } from '../drift/driftTable';
import { DOTTED, IDENTIFIER, importRefs, type ImportRef } from '../python/syntax';
import { isLibraryModule, parseOrNull, parseOrRefuse, resultOf, spanOf } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const Params = z
  .object({
    old_module: z.string().regex(DOTTED, 'a dotted module path').describe('Module the script imports from'),
    new_module: z.string().regex(DOTTED, 'a dotted module path').describe('Module the name lived in at another library version'),
    name: z.string().regex(IDENTIFIER).optional().describe('Only move the import statements that import this name'),
  })
  .strict()
  .refine((p) => p.old_module !== p.new_module, 'old_module and new_module must differ');
type P = z.infer<typeof Params>;

const matches = (r: ImportRef, module: string, name?: string) => r.module === module && (name === undefined ? true : r.form === 'from' && r.names.includes(name));

function makeImport(primName: 'DeprecateImport' | 'RestoreImport'): Primitive<P> {
  const inverseName = primName === 'DeprecateImport' ? 'RestoreImport' : 'DeprecateImport';
  return {
    name: primName,
    category: 'import_drift',
    kind: primName === 'DeprecateImport' ? 'breakage' : 'inverse',
    description: primName === 'DeprecateImport' ? 'Import a name from the module it lived in before it moved' : 'Import a name from its current module again',
    models: 'from transformers import AdamW → torch.optim (removed in transformers 4.46); datasets.load_metric → evaluate (datasets 3.0)',
    paramsSchema: Params as unknown as z.ZodType<P>,
    candidates(script) {
      const p = parseOrNull(script);
      if (!p) return [];
      const refs = importRefs(p);
      const out: PrimitiveCandidate<P>[] = [];
      const seen = new Set<string>();
      const add = (params: P, note?: { drift: string; breaks: boolean }) => {
        const key = `${params.old_module}|${params.name ?? ''}`;
        if (seen.has(key)) return;
        const hit = refs.filter((r) => matches(r, params.old_module, params.name));
        if (!hit.length || refs.some((r) => matches(r, params.new_module, params.name))) return;
        seen.add(key);
        out.push({ params, label: `import ${params.name ?? params.old_module} from ${params.new_module} instead of ${params.old_module}`, ...spanOf(hit.map((r) => ({ from: r.moduleFrom, to: r.moduleTo, insert: '' }))), ...note });
      };
      if (primName === 'DeprecateImport') {
        for (const d of driftEntriesFor('DeprecateImport')) add(d.params as P, driftNote(d));
        for (const r of refs) {
          if (r.form === 'from' && isLibraryModule(r.module) && r.names[0]) add({ old_module: r.module, new_module: `${r.module}.legacy`, name: r.names[0] });
        }
      }
      return out;
    },
    apply(script, params) {
      const p = parseOrRefuse(primName, script);
      const refs = importRefs(p);
      if (refs.some((r) => matches(r, params.new_module, params.name))) {
        throw new PrimitiveRefusal(primName, `the script already imports ${params.name ?? ''} from ${params.new_module}, so the move could not be undone exactly`.replace('  ', ' '));
      }
      const edits = refs.filter((r) => matches(r, params.old_module, params.name)).map((r) => ({ from: r.moduleFrom, to: r.moduleTo, insert: params.new_module }));
      return resultOf(primName, script, edits, { primitive_type: inverseName, params: { old_module: params.new_module, new_module: params.old_module, ...(params.name ? { name: params.name } : {}) } },
        params.name ? `no import of ${params.name} from ${params.old_module} in the script` : `the script does not import ${params.old_module}`);
    },
  };
}

export const DeprecateImport = makeImport('DeprecateImport');
export const RestoreImport = makeImport('RestoreImport');

// RenameApiCall / RestoreApiCall: every identifier `old_name` (variables, attributes, imported
// names; never strings or comments) becomes `new_name`.
// Models: AutoModelWithLMHead -> AutoModelForCausalLM (transformers 4.x, removed),
// peft prepare_model_for_int8_training -> prepare_model_for_kbit_training (peft 0.10).
import { z } from 'zod';
import { driftEntriesFor, driftNote } from '../drift/driftTable';
import { IDENTIFIER, importRefs, nameRefs, type ParsedScript } from '../python/syntax';
import { isLibraryModule, parseOrNull, parseOrRefuse, resultOf, spanOf } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const Params = z
  .object({
    old_name: z.string().regex(IDENTIFIER, 'a Python identifier').describe('Identifier in the script to rename'),
    new_name: z.string().regex(IDENTIFIER, 'a Python identifier').describe('Name it had in another library version'),
  })
  .strict()
  .refine((p) => p.old_name !== p.new_name, 'old_name and new_name must differ');
type P = z.infer<typeof Params>;

function renameEdits(p: ParsedScript, from: string, to: string) {
  return nameRefs(p)
    .filter((r) => r.name === from)
    .map((r) => ({ from: r.from, to: r.to, insert: to }));
}

function makeRename(name: 'RenameApiCall' | 'RestoreApiCall'): Primitive<P> {
  const inverseName = name === 'RenameApiCall' ? 'RestoreApiCall' : 'RenameApiCall';
  return {
    name,
    category: 'api_drift',
    kind: name === 'RenameApiCall' ? 'breakage' : 'inverse',
    description: name === 'RenameApiCall' ? 'Rename an API (class, function, method) everywhere it is used' : 'Rename an API back to its current name',
    models: 'AutoModelWithLMHead → AutoModelForCausalLM (transformers); prepare_model_for_int8_training → prepare_model_for_kbit_training (peft 0.10)',
    paramsSchema: Params as unknown as z.ZodType<P>,
    candidates(script) {
      const p = parseOrNull(script);
      if (!p) return [];
      const refs = nameRefs(p);
      const present = new Set(refs.map((r) => r.name));
      const out: PrimitiveCandidate<P>[] = [];
      const seen = new Set<string>();
      const add = (params: P, note?: { drift: string; breaks: boolean }) => {
        if (seen.has(params.old_name) || present.has(params.new_name)) return;
        const edits = renameEdits(p, params.old_name, params.new_name);
        if (!edits.length) return;
        seen.add(params.old_name);
        out.push({ params, label: `rename ${params.old_name} → ${params.new_name} (${edits.length}×)`, ...spanOf(edits), ...note });
      };
      if (name === 'RenameApiCall') {
        for (const d of driftEntriesFor('RenameApiCall')) {
          const params = d.params as P;
          if (present.has(params.old_name)) add(params, driftNote(d));
        }
        // Any other name imported from a library: a synthetic "older name" for it.
        for (const imp of importRefs(p)) {
          if (imp.form !== 'from' || !isLibraryModule(imp.module)) continue;
          for (const n of imp.names) add({ old_name: n, new_name: legacyName(n) });
        }
      }
      return out;
    },
    apply(script, params) {
      const p = parseOrRefuse(name, script);
      if (nameRefs(p).some((r) => r.name === params.new_name)) {
        throw new PrimitiveRefusal(name, `"${params.new_name}" already occurs in the script, so the rename could not be undone exactly`);
      }
      return resultOf(name, script, renameEdits(p, params.old_name, params.new_name), { primitive_type: inverseName, params: { old_name: params.new_name, new_name: params.old_name } }, `"${params.old_name}" does not occur as a name in the script`);
    },
  };
}

/** A plausible pre-rename spelling, for names the drift table does not cover (clearly synthetic). */
export function legacyName(n: string): string {
  if (/^Auto/.test(n)) return n.replace(/^Auto/, 'Auto') + 'Legacy';
  if (/^[a-z_]+$/.test(n)) return `${n}_legacy`;
  return `${n}Legacy`;
}

export const RenameApiCall = makeRename('RenameApiCall');
export const RestoreApiCall = makeRename('RestoreApiCall');

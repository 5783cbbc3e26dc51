// RenameApiCall: an API name the script uses is replaced by the name another library version
// had. Modelled on peft's prepare_model_for_int8_training → prepare_model_for_kbit_training
// (0.10) and transformers' AutoModelWithLMHead → AutoModelForCausalLM & co. Unlike the
// original's `\b` text replacement it renames only code names (never strings, comments or a
// call's keyword names), and a dotted `old_name` such as `trainer.evaluate` renames just that
// attribute chain, leaving `import evaluate` alone.
import { z } from 'zod';
import { isDottedName, isIdentifier } from '../python/identifiers';
import type { NameOccurrence } from '../python/scriptIndex';
import { definePrimitive, driftProposals, refuse, type Plan, type Proposal, type ScriptContext } from './engine';
import { lastSegment } from './queries';

const NameSchema = z
  .string()
  .refine(isDottedName, 'a Python name or dotted name such as prepare_model_for_kbit_training or trainer.evaluate');

export const RenameParamsSchema = z
  .object({
    old_name: NameSchema.describe(
      'The name as the script uses it now: an identifier (every code occurrence) or a dotted attribute chain such as trainer.evaluate (only that chain).',
    ),
    new_name: NameSchema.describe(
      'The replacement, e.g. the name an older release had. For a dotted old_name: an identifier, or a chain with the same prefix.',
    ),
  })
  .strict()
  .refine((p) => p.old_name !== p.new_name, { message: 'old_name and new_name must differ', path: ['new_name'] });
export type RenameParams = z.infer<typeof RenameParamsSchema>;

/** Libraries whose imported names make sensible generic rename candidates. */
const API_LIBRARIES = new Set(['transformers', 'datasets', 'evaluate', 'trl', 'peft', 'torch', 'accelerate']);

/** A name the script's library never had, for generic candidates (fails with ImportError). */
export function legacyNameFor(name: string): string {
  return /^[A-Z]/.test(name) ? `${name}Legacy` : `${name}_legacy`;
}

function renameSites(ctx: ScriptContext, name: string): Array<{ from: number; to: number }> {
  if (!name.includes('.')) return (ctx.index.namesByText.get(name) ?? []).filter((o: NameOccurrence) => o.role !== 'keyword');
  return ctx.index.attributes
    .filter((a) => a.object !== null && `${a.object}.${a.property}` === name)
    .map((a) => ({ from: a.propertyFrom, to: a.propertyTo }));
}

function planRename(primitive: string, inverse: string, ctx: ScriptContext, p: RenameParams): Plan {
  const dotted = p.old_name.includes('.');
  let replacement = p.new_name;
  if (dotted) {
    const prefix = p.old_name.slice(0, p.old_name.lastIndexOf('.') + 1);
    if (p.new_name.includes('.') && !p.new_name.startsWith(prefix)) {
      refuse(primitive, `a dotted rename keeps the prefix "${prefix.slice(0, -1)}"; to move a name to another module use DeprecateImport`);
    }
    replacement = lastSegment(p.new_name);
  } else if (!isIdentifier(p.new_name)) {
    refuse(primitive, `new_name "${p.new_name}" must be a plain identifier when old_name is one`);
  }
  const newFull = dotted ? p.old_name.slice(0, p.old_name.lastIndexOf('.') + 1) + replacement : replacement;
  const sites = renameSites(ctx, p.old_name);
  if (sites.length === 0) {
    const onlyKeyword = !dotted && (ctx.index.namesByText.get(p.old_name) ?? []).length > 0;
    refuse(
      primitive,
      onlyKeyword
        ? `"${p.old_name}" occurs only as a keyword-argument name, not as an API name (use ChangeArgumentSignature)`
        : `"${p.old_name}" does not occur as a name in the script`,
    );
  }
  if (renameSites(ctx, newFull).length > 0) {
    refuse(primitive, `"${newFull}" already occurs as a name in the script, so the rename could not be undone exactly`);
  }
  return {
    edits: sites.map((s) => ({ from: s.from, to: s.to, insert: replacement })),
    inverse: { primitive_type: inverse, params: { old_name: newFull, new_name: p.old_name } },
  };
}

function genericProposals(ctx: ScriptContext): Array<Proposal<RenameParams>> {
  const out: Array<Proposal<RenameParams>> = [];
  for (const imp of ctx.index.imports) {
    if (imp.kind !== 'from' || !imp.module || !API_LIBRARIES.has(imp.module.split('.')[0])) continue;
    for (const n of imp.names) {
      if (n.alias) continue;
      // Only names the script really uses beyond importing them.
      const used = (ctx.index.namesByText.get(n.name) ?? []).some((o) => o.role === 'name');
      if (used) out.push({ params: { old_name: n.name, new_name: legacyNameFor(n.name) }, breaks: true });
    }
  }
  return out;
}

export const RenameApiCall = definePrimitive<RenameParams>({
  name: 'RenameApiCall',
  category: 'api_drift',
  kind: 'breakage',
  description: 'Renames an API name (class, function, attribute) everywhere it occurs in code.',
  models:
    'peft prepare_model_for_kbit_training → prepare_model_for_int8_training (removed in 0.10); transformers AutoModelForCausalLM → AutoModelWithLMHead',
  paramsSchema: RenameParamsSchema,
  label: (p) => `rename ${p.old_name} → ${p.new_name}`,
  plan: (ctx, p) => planRename('RenameApiCall', 'RestoreApiCall', ctx, p),
  propose: (ctx, versions) => [...driftProposals<RenameParams>('RenameApiCall', versions), ...genericProposals(ctx)],
});

export const RestoreApiCall = definePrimitive<RenameParams>({
  name: 'RestoreApiCall',
  category: 'api_drift',
  kind: 'inverse',
  description: 'Undoes RenameApiCall: renames old_name (the name in the broken script) back to new_name.',
  models: 'the repair of a renamed API, e.g. prepare_model_for_int8_training → prepare_model_for_kbit_training',
  paramsSchema: RenameParamsSchema,
  label: (p) => `restore ${p.old_name} → ${p.new_name}`,
  plan: (ctx, p) => planRename('RestoreApiCall', 'RenameApiCall', ctx, p),
  // Repair hints: the drift table read backwards.
  propose: (_ctx, versions) =>
    driftProposals<RenameParams>('RenameApiCall', versions).map((d) => ({
      ...d,
      params: { old_name: d.params.new_name, new_name: d.params.old_name },
    })),
});

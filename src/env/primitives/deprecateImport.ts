// DeprecateImport: names the script imports from one module are imported from the module where
// another library version had them. Modelled on `from transformers import AdamW` (deprecated,
// removed: use torch.optim.AdamW) and on the package renames pytorch_transformers → transformers
// (2.0) and nlp → datasets (1.0). Acts on `from old import ...` statements (only the module path
// is rewritten) and, for the named `names`, on qualified uses such as `torch.optim.AdamW`
// (rewritten to `transformers.AdamW`, adding `import transformers` when the script lacks it).
import { z } from 'zod';
import { isDottedName, isIdentifier } from '../python/identifiers';
import type { TextEdit } from '../python/edits';
import { breaksUnder, flatModelModuleDrift } from '../drift/driftTable';
import { definePrimitive, driftProposals, refuse, type Plan, type Proposal, type ScriptContext } from './engine';
import { importBinding, importsModule, insertLineAfter, lineOf, removeLineEdit, usedAsName } from './queries';

const ModuleSchema = z.string().refine(isDottedName, 'a dotted module path such as torch.optim');

const base = {
  old_module: ModuleSchema.describe('The module the script imports from now, e.g. torch.optim.'),
  new_module: ModuleSchema.describe('The module to import from instead, e.g. transformers (where an older release had the name).'),
  names: z
    .array(z.string().refine(isIdentifier, 'an identifier'))
    .min(1)
    .optional()
    .describe(
      'Only these names (also moves qualified uses such as torch.optim.AdamW). Omitted: every `from old_module import ...` statement.',
    ),
};

export const DeprecateImportParamsSchema = z
  .object(base)
  .strict()
  .refine((p) => p.old_module !== p.new_module, { message: 'old_module and new_module must differ', path: ['new_module'] });
export type DeprecateImportParams = z.infer<typeof DeprecateImportParamsSchema>;

export const RestoreImportParamsSchema = z
  .object({
    ...base,
    old_module: ModuleSchema.describe('The module the broken script imports from, e.g. transformers.'),
    new_module: ModuleSchema.describe('The module to restore, e.g. torch.optim.'),
    remove_import: ModuleSchema.optional().describe('Drop the top-level `import <module>` line DeprecateImport added for qualified uses.'),
  })
  .strict()
  .refine((p) => p.old_module !== p.new_module, { message: 'old_module and new_module must differ', path: ['new_module'] });
export type RestoreImportParams = z.infer<typeof RestoreImportParamsSchema>;

interface Move {
  edits: TextEdit[];
  moved: string[];
  /** Module whose `import` line was added for qualified uses. */
  added?: string;
}

function planMove(primitive: string, ctx: ScriptContext, p: DeprecateImportParams, allowInsert: boolean): Move {
  const { index, script } = ctx;
  const wanted = p.names ? new Set(p.names) : undefined;
  const edits: TextEdit[] = [];
  const moved = new Set<string>();
  for (const imp of index.imports) {
    if (imp.kind !== 'from' || imp.level > 0 || imp.module !== p.old_module || imp.moduleFrom === undefined) continue;
    if (wanted) {
      if (imp.star) continue;
      const hit = imp.names.filter((n) => wanted.has(n.name));
      if (hit.length === 0) continue;
      if (hit.length < imp.names.length) {
        const others = imp.names.filter((n) => !wanted.has(n.name)).map((n) => n.name);
        refuse(
          primitive,
          `line ${lineOf(script, imp.from)} also imports ${others.join(', ')} from ${p.old_module}; moving only ${hit.map((n) => n.name).join(', ')} would split the statement`,
        );
      }
    }
    if (imp.star && !wanted) moved.add('*');
    for (const n of imp.names) moved.add(n.name);
    edits.push({ from: imp.moduleFrom, to: imp.moduleTo!, insert: p.new_module });
  }
  let added: string | undefined;
  if (wanted) {
    const qualified = index.attributes.filter((a) => a.object === p.old_module && wanted.has(a.property));
    if (qualified.length) {
      for (const a of qualified) {
        edits.push({ from: a.objectFrom, to: a.objectTo, insert: p.new_module });
        moved.add(a.property);
      }
      if (!importsModule(index, p.new_module)) {
        const root = p.new_module.split('.')[0];
        if (!allowInsert)
          refuse(primitive, `${p.new_module} is not imported, so ${p.new_module}.${qualified[0].property} could not be restored`);
        if (usedAsName(index, root))
          refuse(primitive, `"${root}" is already a name in the script, so \`import ${p.new_module}\` cannot be added`);
        const line = insertLineAfter(index, `import ${p.new_module}`, importBinding(index, p.old_module.split('.')[0]));
        if (!line) refuse(primitive, `no place for \`import ${p.new_module}\` (the script has no top-level import line to put it after)`);
        edits.push(line);
        added = p.new_module;
      }
    }
  }
  if (edits.length === 0) {
    refuse(
      primitive,
      wanted
        ? `${[...wanted].join(', ')} is not imported from ${p.old_module} (no \`from ${p.old_module} import ...\` of it and no qualified ${p.old_module}.${[...wanted][0]} use)`
        : `there is no \`from ${p.old_module} import ...\` statement in the script`,
    );
  }
  // The inverse moves these names back; any the script already imports from new_module would move too.
  const clash = index.imports.find((i) => i.kind === 'from' && i.module === p.new_module && i.names.some((n) => moved.has(n.name)));
  if (clash)
    refuse(primitive, `line ${lineOf(script, clash.from)} already imports from ${p.new_module}, so the move could not be undone exactly`);
  const qualifiedClash = index.attributes.find((a) => a.object === p.new_module && moved.has(a.property));
  if (qualifiedClash)
    refuse(primitive, `${p.new_module}.${qualifiedClash.property} already occurs, so the move could not be undone exactly`);
  return { edits, moved: [...moved].filter((n) => n !== '*').sort(), added };
}

export const DeprecateImport = definePrimitive<DeprecateImportParams>({
  name: 'DeprecateImport',
  category: 'import_drift',
  kind: 'breakage',
  description: 'Imports names from the module where another library version had them.',
  models:
    'from transformers import AdamW (removed; now torch.optim.AdamW); pytorch_transformers → transformers (2.0); nlp → datasets (1.0)',
  paramsSchema: DeprecateImportParamsSchema,
  label: (p) => `import ${p.names ? p.names.join(', ') + ' ' : ''}from ${p.new_module} instead of ${p.old_module}`,
  plan(ctx, p): Plan {
    const m = planMove('DeprecateImport', ctx, p, true);
    const inverse: Record<string, unknown> = { old_module: p.new_module, new_module: p.old_module };
    if (m.moved.length) inverse.names = m.moved;
    if (m.added) inverse.remove_import = m.added;
    return { edits: m.edits, inverse: { primitive_type: 'RestoreImport', params: inverse } };
  },
  propose: (ctx, versions) => [...driftProposals<DeprecateImportParams>('DeprecateImport', versions), ...movedModelModules(ctx, versions)],
});

/** `from transformers.models.bert.modeling_bert import ...`: the 3.x flat module path (real, 4.0). */
function movedModelModules(ctx: ScriptContext, versions: Parameters<typeof breaksUnder>[1]): Array<Proposal<DeprecateImportParams>> {
  const out: Array<Proposal<DeprecateImportParams>> = [];
  for (const imp of ctx.index.imports) {
    const drift = imp.kind === 'from' && imp.module ? flatModelModuleDrift(imp.module) : undefined;
    if (drift) out.push({ params: drift.params as DeprecateImportParams, drift, breaks: breaksUnder(drift, versions) });
  }
  return out;
}

export const RestoreImport = definePrimitive<RestoreImportParams>({
  name: 'RestoreImport',
  category: 'import_drift',
  kind: 'inverse',
  description: 'Undoes DeprecateImport: imports the names from new_module again (and drops the import line it added).',
  models: 'the repair of a moved import, e.g. from transformers import AdamW → from torch.optim import AdamW',
  paramsSchema: RestoreImportParamsSchema,
  label: (p) => `restore ${p.names ? p.names.join(', ') + ' ' : ''}import from ${p.new_module}`,
  plan(ctx, p): Plan {
    const { remove_import, ...move } = p;
    const m = planMove('RestoreImport', ctx, move, false);
    const edits = [...m.edits];
    if (remove_import) {
      const drop = removeLineEdit(ctx.index, `import ${remove_import}`);
      if (!drop) refuse('RestoreImport', `there is no top-level \`import ${remove_import}\` line to remove`);
      edits.push(drop);
    }
    const inverse: Record<string, unknown> = { old_module: p.new_module, new_module: p.old_module };
    if (m.moved.length) inverse.names = m.moved;
    return { edits, inverse: { primitive_type: 'DeprecateImport', params: inverse } };
  },
  propose: (_ctx, versions) =>
    driftProposals<DeprecateImportParams>('DeprecateImport', versions).map((d) => ({
      ...d,
      params: { old_module: d.params.new_module, new_module: d.params.old_module, ...(d.params.names ? { names: d.params.names } : {}) },
    })),
});

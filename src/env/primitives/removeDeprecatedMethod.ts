// RemoveDeprecatedMethod: the script regresses to calling a function or method that a library
// removed. Modelled on datasets.load_metric (removed in datasets 3.0; evaluate.load replaces it),
// the in-place Dataset.rename_column_/remove_columns_ (removed in datasets 2.0) and
// Trainer.is_world_master (removed in transformers 4). Two forms:
// - a module function: calls whose callee is exactly `current_call` (e.g. `evaluate.load`) now
//   call `deprecated_call`, with the import it needs added as one new line;
// - a method (`.name`): every `<anything>.name(...)` call becomes `<anything>.deprecated(...)`.
import { z } from 'zod';
import { isIdentifier } from '../python/identifiers';
import type { TextEdit } from '../python/edits';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { importBinding, importsModule, insertLineAfter, removeLineEdit, usedAsName } from './queries';

const CALL_PATH = /^\.?[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;
const CallPathSchema = z
  .string()
  .regex(CALL_PATH, 'a dotted callee such as evaluate.load, a bare name such as load_metric, or a method such as .rename_column')
  .refine((s) => !s.startsWith('.') || !s.slice(1).includes('.'), 'a method form is one name after the dot, e.g. .rename_column');

const isMethod = (s: string) => s.startsWith('.');

export const RemoveMethodParamsSchema = z
  .object({
    current_call: CallPathSchema.describe(
      'What the script calls now: a dotted callee (evaluate.load) or a method on any object (.rename_column).',
    ),
    deprecated_call: CallPathSchema.describe(
      'The removed API the broken script calls instead: dotted (datasets.load_metric), a bare name with import_from (load_metric), or a method (.rename_column_).',
    ),
    import_from: z
      .string()
      .regex(/^[A-Za-z_][\w.]*$/)
      .optional()
      .describe('For a bare deprecated_call: the module it used to be imported from (adds `from <module> import <name>`).'),
  })
  .strict()
  .refine((p) => isMethod(p.current_call) === isMethod(p.deprecated_call), {
    message: 'both calls must be methods (.name) or both functions',
    path: ['deprecated_call'],
  })
  .refine((p) => p.current_call !== p.deprecated_call, { message: 'the calls must differ', path: ['deprecated_call'] });
export type RemoveMethodParams = z.infer<typeof RemoveMethodParamsSchema>;

export const RestoreMethodParamsSchema = z
  .object({
    current_call: CallPathSchema.describe('The removed API as the broken script calls it, e.g. load_metric or .rename_column_.'),
    restored_call: CallPathSchema.describe('The call to restore, e.g. evaluate.load or .rename_column.'),
    remove_import: z
      .string()
      .regex(/^(import [\w.]+|from [\w.]+ import \w+)$/)
      .optional()
      .describe('The import line RemoveDeprecatedMethod added, to drop.'),
  })
  .strict()
  .refine((p) => isMethod(p.current_call) === isMethod(p.restored_call), {
    message: 'both calls must be methods (.name) or both functions',
    path: ['restored_call'],
  });
export type RestoreMethodParams = z.infer<typeof RestoreMethodParamsSchema>;

interface Rewrite {
  edits: TextEdit[];
  /** The import line added for the new callee. */
  added?: string;
}

/** Rewrites calls of `from` to call `to`; `importFrom`/`allowInsert` govern the import the new callee needs. */
function rewriteCalls(primitive: string, ctx: ScriptContext, from: string, to: string, allowInsert: boolean, importFrom?: string): Rewrite {
  const { index } = ctx;
  if (isMethod(from)) {
    const name = from.slice(1);
    const target = to.slice(1);
    const sites = index.calls.filter((c) => c.method?.name === name);
    if (sites.length === 0) refuse(primitive, `no call of .${name}() in the script`);
    if ((index.namesByText.get(target) ?? []).some((o) => o.role === 'property')) {
      refuse(primitive, `.${target} already occurs in the script, so the change could not be undone exactly`);
    }
    return { edits: sites.map((c) => ({ from: c.method!.from, to: c.method!.to, insert: target })) };
  }
  const sites = index.calls.filter((c) => c.callee === from);
  if (sites.length === 0) refuse(primitive, `${from}(...) is not called in the script`);
  const edits: TextEdit[] = sites.map((c) => ({ from: c.calleeFrom, to: c.calleeTo, insert: to }));
  if (!allowInsert) return { edits };
  const anchor = importBinding(index, from.split('.')[0]);
  let line: string | undefined;
  if (to.includes('.')) {
    if (index.calls.some((c) => c.callee === to) || index.attributes.some((a) => a.object !== null && `${a.object}.${a.property}` === to)) {
      refuse(primitive, `${to} already occurs in the script, so the change could not be undone exactly`);
    }
    const module = to.slice(0, to.lastIndexOf('.'));
    if (!importsModule(index, module)) {
      if (usedAsName(index, module.split('.')[0]))
        refuse(primitive, `"${module.split('.')[0]}" is already a name in the script, so \`import ${module}\` cannot be added`);
      line = `import ${module}`;
    }
  } else {
    if (!importFrom) refuse(primitive, `a bare deprecated_call ("${to}") needs import_from, the module it was imported from`);
    if (!isIdentifier(to)) refuse(primitive, `"${to}" is not an identifier`);
    if (usedAsName(index, to))
      refuse(primitive, `"${to}" already occurs as a name in the script, so the change could not be undone exactly`);
    line = `from ${importFrom} import ${to}`;
  }
  if (line) {
    const edit = insertLineAfter(index, line, anchor);
    if (!edit) refuse(primitive, `no place for \`${line}\` (the script has no top-level import line to put it after)`);
    edits.push(edit);
  }
  return { edits, added: line };
}

export const RemoveDeprecatedMethod = definePrimitive<RemoveMethodParams>({
  name: 'RemoveDeprecatedMethod',
  category: 'method_drift',
  kind: 'breakage',
  description: 'Makes the script call a function or method that a library removed, instead of its replacement.',
  models:
    'datasets.load_metric (removed in datasets 3.0; now evaluate.load); Dataset.rename_column_ / remove_columns_ (removed in datasets 2.0)',
  paramsSchema: RemoveMethodParamsSchema,
  label: (p) =>
    `call ${p.import_from && !p.deprecated_call.includes('.') && !isMethod(p.deprecated_call) ? `${p.import_from}.` : ''}${p.deprecated_call}() instead of ${p.current_call}()`,
  plan(ctx, p): Plan {
    const r = rewriteCalls('RemoveDeprecatedMethod', ctx, p.current_call, p.deprecated_call, true, p.import_from);
    const inverse: Record<string, unknown> = { current_call: p.deprecated_call, restored_call: p.current_call };
    if (r.added) inverse.remove_import = r.added;
    return { edits: r.edits, inverse: { primitive_type: 'RestoreMethod', params: inverse } };
  },
  propose: (_ctx, versions) => driftProposals('RemoveDeprecatedMethod', versions),
});

export const RestoreMethod = definePrimitive<RestoreMethodParams>({
  name: 'RestoreMethod',
  category: 'method_drift',
  kind: 'inverse',
  description: 'Undoes RemoveDeprecatedMethod: calls the replacement again and drops the import line that was added.',
  models: 'the repair of a removed API, e.g. load_metric("accuracy") → evaluate.load("accuracy")',
  paramsSchema: RestoreMethodParamsSchema,
  label: (p) => `restore ${p.restored_call}() in place of ${p.current_call}()`,
  plan(ctx, p): Plan {
    const r = rewriteCalls('RestoreMethod', ctx, p.current_call, p.restored_call, false);
    const edits = [...r.edits];
    if (p.remove_import) {
      const drop = removeLineEdit(ctx.index, p.remove_import);
      if (!drop) refuse('RestoreMethod', `there is no top-level \`${p.remove_import}\` line to remove`);
      edits.push(drop);
    }
    const inverse: Record<string, unknown> = { current_call: p.restored_call, deprecated_call: p.current_call };
    const fromImport = p.remove_import ? /^from ([\w.]+) import \w+$/.exec(p.remove_import) : null;
    if (fromImport) inverse.import_from = fromImport[1];
    return { edits, inverse: { primitive_type: 'RemoveDeprecatedMethod', params: inverse } };
  },
  propose: (_ctx, versions) =>
    driftProposals<RemoveMethodParams>('RemoveDeprecatedMethod', versions).map((d) => ({
      ...d,
      params: {
        current_call: d.params.deprecated_call,
        restored_call: d.params.current_call,
        ...(d.params.import_from ? { remove_import: `from ${d.params.import_from} import ${d.params.deprecated_call}` } : {}),
      },
    })),
});

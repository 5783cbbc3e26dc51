// ChangeReturnType: the script reads a return value in the shape another version returned.
// - metric_prefix: Trainer.evaluate() returns keys prefixed with metric_key_prefix ("eval_"); the
//   broken script reads `metrics["accuracy"]` instead of `metrics["eval_accuracy"]` (KeyError).
// - output_index: models return ModelOutput objects since transformers 4 (return_dict=True); the
//   broken script indexes them like the old tuples, `outputs[0]` for `outputs.loss`.
// - return_dict: transformers 4.0 flipped return_dict's default from False to True; the broken
//   script asks for the 3.x tuples (`return_dict=True` → `False` where it is passed, else
//   `return_dict=False` added to the model calls) while still reading `.loss`: AttributeError.
// Only the string content of the keys (or the `.loss` → `[0]` accessor) changes.
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import type { CallArgument, CallSite, ScriptIndex } from '../python/scriptIndex';
import { insertArgument, removeArgument } from './argumentLayout';
import type { StringLiteral } from '../python/strings';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { keywordArg, lastSegment, lineOf, receiverOf } from './queries';

const Change = z.enum(['metric_prefix', 'output_index', 'return_dict']);
const Prefix = z.string().regex(/^[A-Za-z][A-Za-z0-9]*_$/, 'a prefix such as eval_');

export const ReturnTypeParamsSchema = z
  .object({
    change: Change.describe(
      'metric_prefix: Trainer.evaluate() keys lose their prefix (metrics["eval_accuracy"] → metrics["accuracy"]); output_index: outputs.loss / .logits → outputs[0] / [1]; return_dict: the model returns 3.x tuples (return_dict=False) while outputs.loss is still read.',
    ),
    prefix: Prefix.optional().describe('metric_prefix: the prefix to strip (default eval_; Trainer.predict uses test_).'),
  })
  .strict();
export type ReturnTypeParams = z.infer<typeof ReturnTypeParamsSchema>;

export const RestoreReturnTypeParamsSchema = z
  .object({
    change: Change.describe('The change ChangeReturnType made.'),
    prefix: Prefix.optional().describe('metric_prefix: the prefix to put back (default eval_).'),
    keys: z
      .array(z.string().min(1))
      .min(1)
      .optional()
      .describe('metric_prefix: the keys (without prefix) to prefix again; required for metric_prefix.'),
    inserted: z
      .boolean()
      .optional()
      .describe(
        'return_dict: true when return_dict=False was added to the model calls (remove it), false when return_dict=True was flipped (flip it back).',
      ),
  })
  .strict()
  .refine((p) => p.change !== 'metric_prefix' || p.keys !== undefined, { message: 'metric_prefix needs keys', path: ['keys'] });
export type RestoreReturnTypeParams = z.infer<typeof RestoreReturnTypeParamsSchema>;

const NAME = 'ChangeReturnType';
const RESTORE = 'RestoreReturnType';

// --- metric_prefix ------------------------------------------------------------------------------

interface KeySite {
  lit: StringLiteral;
}

/** String keys read from Trainer.evaluate()/predict() results: `m["k"]`, `m.get("k")`, `trainer.evaluate()["k"]`. */
function metricKeySites(index: ScriptIndex): KeySite[] {
  const trainers = new Set(
    index.assignments.filter((a) => a.call?.callee && /Trainer$/.test(lastSegment(a.call.callee))).map((a) => a.target),
  );
  const isEval = (c: CallSite) => (c.method?.name === 'evaluate' || c.method?.name === 'predict') && trainers.has(receiverOf(c) ?? '');
  const evalCalls = new Set(index.calls.filter(isEval).map((c) => c.from));
  const metricVars = new Set(
    index.assignments.filter((a) => a.call && evalCalls.has(a.call.from) && a.call.method?.name === 'evaluate').map((a) => a.target),
  );
  // predict() returns a PredictionOutput; its metrics live in `.metrics`.
  for (const a of index.assignments)
    if (a.call && evalCalls.has(a.call.from) && a.call.method?.name === 'predict') metricVars.add(`${a.target}.metrics`);
  const sites: KeySite[] = [];
  for (const s of index.subscripts) {
    if (!s.key?.plain) continue;
    const direct =
      s.objectNode.name === 'CallExpression' &&
      evalCalls.has(s.objectNode.from) &&
      index.callsByFrom.get(s.objectNode.from)?.method?.name === 'evaluate';
    if (direct || (s.object !== null && metricVars.has(s.object))) sites.push({ lit: s.key });
  }
  for (const c of index.calls) {
    const first = c.args[0];
    if (c.method?.name !== 'get' || !first || first.kind !== 'positional' || !metricVars.has(receiverOf(c) ?? '')) continue;
    const lit = index.strings.find((x) => x.from === first.from && x.to === first.to);
    if (lit?.plain) sites.push({ lit });
  }
  return sites;
}

function planPrefixForward(ctx: ScriptContext, prefix: string): Plan {
  const sites = metricKeySites(ctx.index);
  const hits = sites.filter((s) => s.lit.raw.startsWith(prefix) && s.lit.raw.length > prefix.length);
  if (hits.length === 0) refuse(NAME, `no Trainer.evaluate() result is read with a key starting with ${prefix}`);
  const keys = [...new Set(hits.map((s) => s.lit.raw.slice(prefix.length)))];
  const clash = sites.find((s) => keys.includes(s.lit.raw));
  if (clash) refuse(NAME, `the script already reads the unprefixed key "${clash.lit.raw}", so the change could not be undone exactly`);
  return {
    edits: hits.map((s) => ({ from: s.lit.contentFrom, to: s.lit.contentFrom + prefix.length, insert: '' })),
    inverse: {
      primitive_type: RESTORE,
      params: prefix === 'eval_' ? { change: 'metric_prefix', keys } : { change: 'metric_prefix', prefix, keys },
    },
  };
}

function planPrefixRestore(ctx: ScriptContext, prefix: string, keys: string[]): Plan {
  const sites = metricKeySites(ctx.index);
  const wanted = new Set(keys);
  const hits = sites.filter((s) => wanted.has(s.lit.raw));
  if (hits.length === 0) refuse(RESTORE, `no metric key ${keys.map((k) => `"${k}"`).join(', ')} is read from a Trainer.evaluate() result`);
  return {
    edits: hits.map((s) => ({ from: s.lit.contentFrom, to: s.lit.contentFrom, insert: prefix })),
    inverse: { primitive_type: NAME, params: prefix === 'eval_' ? { change: 'metric_prefix' } : { change: 'metric_prefix', prefix } },
  };
}

// --- output_index -------------------------------------------------------------------------------

const FIELDS = ['loss', 'logits'] as const;

/** Model calls (`model(...)`, `self.model(...)`, `peft_model(...)`) and what their tuple holds. */
function modelOutputs(index: ScriptIndex): { calls: Map<number, readonly string[]>; vars: Map<string, readonly string[]> } {
  const calls = new Map<number, readonly string[]>();
  for (const c of index.calls) {
    if (!c.callee || !/(^|_)model$/i.test(lastSegment(c.callee))) continue;
    // The loss comes first only when labels are passed (explicitly or inside **batch).
    const withLoss = keywordArg(c, 'labels') !== undefined || c.args.some((a) => a.kind === 'double_star');
    calls.set(c.from, withLoss ? ['loss', 'logits'] : ['logits']);
  }
  const vars = new Map<string, readonly string[]>();
  const conflicting = new Set<string>();
  for (const a of index.assignments) {
    const layout = a.call ? calls.get(a.call.from) : undefined;
    if (!layout) continue;
    const prev = vars.get(a.target);
    if (prev && prev.join() !== layout.join()) conflicting.add(a.target);
    vars.set(a.target, layout);
  }
  for (const v of conflicting) vars.delete(v);
  return { calls, vars };
}

function layoutOf(outputs: ReturnType<typeof modelOutputs>, object: string | null, objectNode: SyntaxNode): readonly string[] | undefined {
  if (objectNode.name === 'CallExpression') return outputs.calls.get(objectNode.from);
  return object !== null ? outputs.vars.get(object) : undefined;
}

function planIndexForward(ctx: ScriptContext): Plan {
  const { index, script } = ctx;
  const outputs = modelOutputs(index);
  const edits: TextEdit[] = [];
  for (const s of index.subscripts) {
    if (s.integer !== undefined && layoutOf(outputs, s.object, s.objectNode)) {
      refuse(NAME, `the script already indexes a model output (${script.slice(s.from, s.to)}), so the change could not be undone exactly`);
    }
  }
  for (const a of index.attributes) {
    if (!(FIELDS as readonly string[]).includes(a.property)) continue;
    const layout = layoutOf(outputs, a.object, a.objectNode);
    const i = layout?.indexOf(a.property) ?? -1;
    if (i >= 0) edits.push({ from: a.dotFrom, to: a.propertyTo, insert: `[${i}]` });
  }
  if (edits.length === 0) refuse(NAME, 'no model output is read as .loss or .logits');
  return { edits, inverse: { primitive_type: RESTORE, params: { change: 'output_index' } } };
}

function planIndexRestore(ctx: ScriptContext): Plan {
  const { index, script } = ctx;
  const outputs = modelOutputs(index);
  for (const a of index.attributes) {
    if ((FIELDS as readonly string[]).includes(a.property) && layoutOf(outputs, a.object, a.objectNode)) {
      refuse(RESTORE, `the script already reads a model output as .${a.property}, so the change could not be undone exactly`);
    }
  }
  const edits: TextEdit[] = [];
  for (const s of index.subscripts) {
    if (s.integer === undefined) continue;
    const field = layoutOf(outputs, s.object, s.objectNode)?.[s.integer];
    if (field && script.slice(s.openBracket, s.closeBracket + 1) === `[${s.integer}]`)
      edits.push({ from: s.openBracket, to: s.closeBracket + 1, insert: `.${field}` });
  }
  if (edits.length === 0) refuse(RESTORE, 'no model output is indexed as [0] or [1]');
  return { edits, inverse: { primitive_type: NAME, params: { change: 'output_index' } } };
}

// --- return_dict --------------------------------------------------------------------------------

/** Calls that build or run a model: `model(...)`, `self.model(...)`, `X.from_pretrained(...)`. */
function isModelCall(c: CallSite): boolean {
  if (!c.callee) return false;
  const last = lastSegment(c.callee);
  return /(^|_)model$/i.test(last) || last === 'from_pretrained';
}

/** Reads of `.loss` / `.logits` on model outputs: what a tuple return breaks. */
function readsOutputFields(index: ScriptIndex): boolean {
  const outputs = modelOutputs(index);
  return index.attributes.some(
    (a) => (FIELDS as readonly string[]).includes(a.property) && layoutOf(outputs, a.object, a.objectNode) !== undefined,
  );
}

/** Offsets of the model calls whose outputs are read as `.loss` / `.logits` (directly or through a variable). */
function readCalls(index: ScriptIndex): Set<number> {
  const outputs = modelOutputs(index);
  const vars = new Set<string>();
  const out = new Set<number>();
  for (const a of index.attributes) {
    if (!(FIELDS as readonly string[]).includes(a.property)) continue;
    if (a.objectNode.name === 'CallExpression' && outputs.calls.has(a.objectNode.from)) out.add(a.objectNode.from);
    else if (a.object !== null && outputs.vars.has(a.object)) vars.add(a.object);
  }
  for (const a of index.assignments) if (a.call && vars.has(a.target) && outputs.calls.has(a.call.from)) out.add(a.call.from);
  return out;
}

function returnDictArgs(ctx: ScriptContext, value: 'True' | 'False'): Array<{ call: CallSite; arg: CallArgument }> {
  const out: Array<{ call: CallSite; arg: CallArgument }> = [];
  for (const c of ctx.index.calls) {
    if (!isModelCall(c)) continue;
    const a = keywordArg(c, 'return_dict');
    if (a && ctx.script.slice(a.valueFrom, a.valueTo) === value) out.push({ call: c, arg: a });
  }
  return out;
}

function planReturnDictForward(ctx: ScriptContext): Plan {
  if (!readsOutputFields(ctx.index)) refuse(NAME, 'no model output is read as .loss or .logits, so tuple outputs would change nothing');
  if (returnDictArgs(ctx, 'False').length)
    refuse(NAME, 'the script already passes return_dict=False, so the change could not be undone exactly');
  const explicit = returnDictArgs(ctx, 'True');
  if (explicit.length) {
    return {
      edits: explicit.map(({ arg }) => ({ from: arg.valueFrom, to: arg.valueTo, insert: 'False' })),
      inverse: { primitive_type: RESTORE, params: { change: 'return_dict', inserted: false } },
    };
  }
  // The forward calls whose outputs are read: `model(**batch)` → `model(**batch, return_dict=False)`.
  const read = readCalls(ctx.index);
  const edits: TextEdit[] = [];
  for (const c of ctx.index.calls) {
    if (!read.has(c.from) || keywordArg(c, 'return_dict')) continue;
    const edit = insertArgument(ctx.script, c, 'return_dict=False', '');
    if (edit) edits.push(edit);
  }
  if (edits.length === 0) refuse(NAME, 'no model call to add return_dict=False to');
  return { edits, inverse: { primitive_type: RESTORE, params: { change: 'return_dict', inserted: true } } };
}

function planReturnDictRestore(ctx: ScriptContext, inserted: boolean): Plan {
  const found = returnDictArgs(ctx, 'False');
  if (found.length === 0) refuse(RESTORE, 'no model call passes return_dict=False');
  const edits: TextEdit[] = [];
  for (const { call, arg } of found) {
    if (!inserted) {
      edits.push({ from: arg.valueFrom, to: arg.valueTo, insert: 'True' });
      continue;
    }
    const removed = removeArgument(ctx.script, call, call.args.indexOf(arg));
    if (!removed) refuse(RESTORE, `the return_dict=False argument on line ${lineOf(ctx.script, call.from)} cannot be removed exactly`);
    edits.push(removed.edit);
  }
  return { edits, inverse: { primitive_type: NAME, params: { change: 'return_dict' } } };
}

export const ChangeReturnType = definePrimitive<ReturnTypeParams>({
  name: NAME,
  category: 'return_type_drift',
  kind: 'breakage',
  description:
    'Reads a return value in the shape another version returned: unprefixed Trainer.evaluate() keys, tuple-indexed model outputs, or tuple outputs read as objects.',
  models:
    'Trainer.evaluate() metric keys carry the eval_ prefix (metric_key_prefix); model outputs became ModelOutput objects in transformers 4.0 (outputs.loss vs outputs[0]; return_dict default False → True)',
  paramsSchema: ReturnTypeParamsSchema,
  label: (p) =>
    p.change === 'metric_prefix'
      ? `read Trainer.evaluate() keys without the ${p.prefix ?? 'eval_'} prefix`
      : p.change === 'return_dict'
        ? 'ask the model for 3.x tuples (return_dict=False) while reading outputs.loss'
        : 'index model outputs as tuples (outputs[0] for outputs.loss)',
  plan: (ctx, p) =>
    p.change === 'metric_prefix'
      ? planPrefixForward(ctx, p.prefix ?? 'eval_')
      : p.change === 'return_dict'
        ? planReturnDictForward(ctx)
        : planIndexForward(ctx),
  propose: (_ctx, versions) => driftProposals(NAME, versions),
});

export const RestoreReturnType = definePrimitive<RestoreReturnTypeParams>({
  name: RESTORE,
  category: 'return_type_drift',
  kind: 'inverse',
  description: 'Undoes ChangeReturnType: prefixed metric keys again, or .loss / .logits instead of tuple indexes.',
  models: 'the repair of an outdated return shape, e.g. metrics["accuracy"] → metrics["eval_accuracy"]',
  paramsSchema: RestoreReturnTypeParamsSchema,
  label: (p) =>
    p.change === 'metric_prefix'
      ? `prefix ${p.keys?.join(', ')} with ${p.prefix ?? 'eval_'} again`
      : 'read model outputs as .loss / .logits again',
  plan: (ctx, p) =>
    p.change === 'metric_prefix'
      ? planPrefixRestore(ctx, p.prefix ?? 'eval_', p.keys ?? [])
      : p.change === 'return_dict'
        ? planReturnDictRestore(ctx, p.inserted ?? false)
        : planIndexRestore(ctx),
  propose: () => [],
});

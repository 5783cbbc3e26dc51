// ChangeReturnType: the script reads a return value in the shape another version returned.
// - metric_prefix: Trainer.evaluate() returns keys prefixed with metric_key_prefix ("eval_"); the
//   broken script reads `metrics["accuracy"]` instead of `metrics["eval_accuracy"]` (KeyError).
// - output_index: models return ModelOutput objects since transformers 4 (return_dict=True); the
//   broken script indexes them like the old tuples, `outputs[0]` for `outputs.loss`.
// Only the string content of the keys (or the `.loss` → `[0]` accessor) changes.
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import type { CallSite, ScriptIndex } from '../python/scriptIndex';
import type { StringLiteral } from '../python/strings';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { keywordArg, lastSegment, receiverOf } from './queries';

const Change = z.enum(['metric_prefix', 'output_index']);
const Prefix = z.string().regex(/^[A-Za-z][A-Za-z0-9]*_$/, 'a prefix such as eval_');

export const ReturnTypeParamsSchema = z
  .object({
    change: Change.describe('metric_prefix: Trainer.evaluate() keys lose their prefix (metrics["eval_accuracy"] → metrics["accuracy"]); output_index: outputs.loss / .logits → outputs[0] / [1].'),
    prefix: Prefix.optional().describe('metric_prefix: the prefix to strip (default eval_; Trainer.predict uses test_).'),
  })
  .strict();
export type ReturnTypeParams = z.infer<typeof ReturnTypeParamsSchema>;

export const RestoreReturnTypeParamsSchema = z
  .object({
    change: Change.describe('The change ChangeReturnType made.'),
    prefix: Prefix.optional().describe('metric_prefix: the prefix to put back (default eval_).'),
    keys: z.array(z.string().min(1)).min(1).optional().describe('metric_prefix: the keys (without prefix) to prefix again; required for metric_prefix.'),
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
  const trainers = new Set(index.assignments.filter((a) => a.call?.callee && /Trainer$/.test(lastSegment(a.call.callee))).map((a) => a.target));
  const isEval = (c: CallSite) => (c.method?.name === 'evaluate' || c.method?.name === 'predict') && trainers.has(receiverOf(c) ?? '');
  const evalCalls = new Set(index.calls.filter(isEval).map((c) => c.from));
  const metricVars = new Set(index.assignments.filter((a) => a.call && evalCalls.has(a.call.from) && a.call.method?.name === 'evaluate').map((a) => a.target));
  // predict() returns a PredictionOutput; its metrics live in `.metrics`.
  for (const a of index.assignments) if (a.call && evalCalls.has(a.call.from) && a.call.method?.name === 'predict') metricVars.add(`${a.target}.metrics`);
  const sites: KeySite[] = [];
  for (const s of index.subscripts) {
    if (!s.key?.plain) continue;
    const direct = s.objectNode.name === 'CallExpression' && evalCalls.has(s.objectNode.from) && index.callsByFrom.get(s.objectNode.from)?.method?.name === 'evaluate';
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
    inverse: { primitive_type: RESTORE, params: prefix === 'eval_' ? { change: 'metric_prefix', keys } : { change: 'metric_prefix', prefix, keys } },
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
    if (field && script.slice(s.openBracket, s.closeBracket + 1) === `[${s.integer}]`) edits.push({ from: s.openBracket, to: s.closeBracket + 1, insert: `.${field}` });
  }
  if (edits.length === 0) refuse(RESTORE, 'no model output is indexed as [0] or [1]');
  return { edits, inverse: { primitive_type: NAME, params: { change: 'output_index' } } };
}

export const ChangeReturnType = definePrimitive<ReturnTypeParams>({
  name: NAME,
  category: 'return_type_drift',
  kind: 'breakage',
  description: 'Reads a return value in the shape another version returned: unprefixed Trainer.evaluate() keys, or tuple-indexed model outputs.',
  models: 'Trainer.evaluate() metric keys carry the eval_ prefix (metric_key_prefix); model outputs became ModelOutput objects in transformers 4 (outputs.loss vs outputs[0])',
  paramsSchema: ReturnTypeParamsSchema,
  label: (p) => (p.change === 'metric_prefix' ? `read Trainer.evaluate() keys without the ${p.prefix ?? 'eval_'} prefix` : 'index model outputs as tuples (outputs[0] for outputs.loss)'),
  plan: (ctx, p) => (p.change === 'metric_prefix' ? planPrefixForward(ctx, p.prefix ?? 'eval_') : planIndexForward(ctx)),
  propose: (_ctx, versions) => driftProposals(NAME, versions),
});

export const RestoreReturnType = definePrimitive<RestoreReturnTypeParams>({
  name: RESTORE,
  category: 'return_type_drift',
  kind: 'inverse',
  description: 'Undoes ChangeReturnType: prefixed metric keys again, or .loss / .logits instead of tuple indexes.',
  models: 'the repair of an outdated return shape, e.g. metrics["accuracy"] → metrics["eval_accuracy"]',
  paramsSchema: RestoreReturnTypeParamsSchema,
  label: (p) => (p.change === 'metric_prefix' ? `prefix ${p.keys?.join(', ')} with ${p.prefix ?? 'eval_'} again` : 'read model outputs as .loss / .logits again'),
  plan: (ctx, p) => (p.change === 'metric_prefix' ? planPrefixRestore(ctx, p.prefix ?? 'eval_', p.keys ?? []) : planIndexRestore(ctx)),
  propose: () => [],
});

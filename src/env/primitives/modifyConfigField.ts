// ModifyConfigField: a field of a config object (TrainingArguments, SFTConfig, LoraConfig, ...)
// goes back to the name another version had. Modelled on TrainingArguments.evaluation_strategy →
// eval_strategy (renamed in transformers 4.41, old name removed in 4.46), no_cuda → use_cpu and
// per_gpu_* → per_device_*. Unlike a call's keyword, a config field is renamed wherever the
// script names it: the constructor keyword, attribute reads/writes on the config variable
// (`args.eval_strategy`), and keys of a dict passed as `**config` (a string key, by content).
import type { SyntaxNode } from '@lezer/common';
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import { isIdentifier } from '../python/identifiers';
import { readStringLiteral } from '../python/strings';
import type { CallSite } from '../python/scriptIndex';
import { definePrimitive, driftProposals, refuse, type Plan, type Proposal, type ScriptContext } from './engine';
import { callsOf, keywordArg } from './queries';

const Identifier = z.string().refine(isIdentifier, 'a Python identifier');

export const ConfigFieldParamsSchema = z
  .object({
    config_class: z
      .string()
      .regex(/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/)
      .describe('The config class, e.g. TrainingArguments, Seq2SeqTrainingArguments, SFTConfig, LoraConfig.'),
    old_field: Identifier.describe('The field as the script names it now, e.g. eval_strategy.'),
    new_field: Identifier.describe('The name another version had, e.g. evaluation_strategy.'),
  })
  .strict()
  .refine((p) => p.old_field !== p.new_field, { message: 'old_field and new_field must differ', path: ['new_field'] });
export type ConfigFieldParams = z.infer<typeof ConfigFieldParamsSchema>;

const NAME = 'ModifyConfigField';

/** Deprecated field names of the TrainingArguments family, for candidates beyond the drift table. */
const FIELD_ALIASES: Readonly<Record<string, string>> = {
  eval_strategy: 'evaluation_strategy',
  use_cpu: 'no_cuda',
  per_device_train_batch_size: 'per_gpu_train_batch_size',
  per_device_eval_batch_size: 'per_gpu_eval_batch_size',
  hub_token: 'push_to_hub_token',
};

interface FieldSite {
  from: number;
  to: number;
  field: string;
}

/** Every place a field of `config_class` is named: constructor keywords, attributes, `**dict` keys. */
function fieldSites(ctx: ScriptContext, calls: CallSite[]): FieldSite[] {
  const { index, script } = ctx;
  const sites: FieldSite[] = [];
  const configVars = new Set<string>();
  const dictVars = new Set<string>();
  const callSet = new Set(calls);
  for (const c of calls) {
    for (const a of c.args) {
      if (a.kind === 'keyword') sites.push({ from: a.nameFrom!, to: a.nameTo!, field: a.name! });
      if (a.kind === 'double_star') {
        const v = script.slice(a.valueFrom, a.valueTo);
        if (/^[A-Za-z_]\w*$/.test(v)) dictVars.add(v);
      }
    }
  }
  for (const a of index.assignments) {
    if (a.call && callSet.has(a.call)) configVars.add(a.target);
  }
  for (const at of index.attributes) {
    if (at.object !== null && configVars.has(at.object)) sites.push({ from: at.propertyFrom, to: at.propertyTo, field: at.property });
  }
  for (const a of index.assignments) {
    if (!dictVars.has(a.target)) continue;
    if (a.valueNode.name === 'DictionaryExpression') sites.push(...dictKeys(script, a.valueNode));
    else if (a.call && a.call.callee === 'dict') {
      for (const arg of a.call.args) if (arg.kind === 'keyword') sites.push({ from: arg.nameFrom!, to: arg.nameTo!, field: arg.name! });
    }
  }
  return sites;
}

function dictKeys(source: string, dict: SyntaxNode): FieldSite[] {
  const out: FieldSite[] = [];
  for (let c = dict.firstChild; c; c = c.nextSibling) {
    if (c.name !== 'String' || c.nextSibling?.name !== ':') continue;
    const lit = readStringLiteral(source, c.from, c.to);
    if (lit?.plain) out.push({ from: lit.contentFrom, to: lit.contentTo, field: lit.raw });
  }
  return out;
}

function plan(ctx: ScriptContext, p: ConfigFieldParams): Plan {
  const calls = callsOf(ctx.index, p.config_class);
  if (calls.length === 0) refuse(NAME, `${p.config_class}(...) is not constructed in the script`);
  const sites = fieldSites(ctx, calls);
  const hits = sites.filter((s) => s.field === p.old_field);
  if (hits.length === 0)
    refuse(NAME, `${p.config_class} is never given ${p.old_field} (as a keyword, an attribute of its variable, or a **dict key)`);
  if (sites.some((s) => s.field === p.new_field))
    refuse(NAME, `${p.config_class} already uses ${p.new_field}, so the rename could not be undone exactly`);
  const edits: TextEdit[] = hits.map((s) => ({ from: s.from, to: s.to, insert: p.new_field }));
  return {
    edits,
    inverse: { primitive_type: NAME, params: { config_class: p.config_class, old_field: p.new_field, new_field: p.old_field } },
  };
}

function genericProposals(ctx: ScriptContext): Array<Proposal<ConfigFieldParams>> {
  const out: Array<Proposal<ConfigFieldParams>> = [];
  for (const c of ctx.index.calls) {
    const cls = c.callee?.split('.').pop();
    if (!cls || !/(Arguments|Config)$/.test(cls)) continue;
    for (const [old_field, new_field] of Object.entries(FIELD_ALIASES)) {
      if (keywordArg(c, old_field)) out.push({ params: { config_class: cls, old_field, new_field } });
    }
  }
  return out;
}

export const ModifyConfigField = definePrimitive<ConfigFieldParams>({
  name: NAME,
  category: 'config_drift',
  kind: 'breakage',
  description: 'Renames a config-object field (constructor keyword, attribute, **dict key) to the name another version had.',
  models: 'TrainingArguments eval_strategy ← evaluation_strategy (renamed 4.41, removed 4.46); use_cpu ← no_cuda; per_device_* ← per_gpu_*',
  paramsSchema: ConfigFieldParamsSchema,
  label: (p) => `${p.config_class}.${p.old_field} → ${p.new_field}`,
  plan,
  propose: (ctx, versions) => [...driftProposals<ConfigFieldParams>(NAME, versions), ...genericProposals(ctx)],
});

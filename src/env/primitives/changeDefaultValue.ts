// ChangeDefaultValue: the script stops passing an argument explicitly, so the library default takes
// over, and that default is not what the script needs (or changed between releases). Modelled on:
// - torch.load(weights_only=) whose default became True in torch 2.6 (pickled objects then fail);
// - TrainingArguments(report_to=) whose default went from "all" to "none" in transformers 5.0;
// - DataCollatorForLanguageModeling(mlm=False) dropped: the default mlm=True needs a mask token,
//   which causal tokenizers (GPT-2, LLaMA, OPT) lack (ValueError);
// - TrainingArguments(remove_unused_columns=False) dropped: the default True makes the Trainer
//   drop the raw columns custom collators and transforms read.
// The argument's line (one argument per line) or its inline slot is removed; the inverse,
// RestoreExplicitArgument, puts the same text back at the same position of the same call.
import { z } from 'zod';
import { isIdentifier } from '../python/identifiers';
import { insertArgument, removeArgument } from './argumentLayout';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { callsOf, keywordArg, lineOf } from './queries';

const Identifier = z.string().refine(isIdentifier, 'a Python identifier');
const Callee = z.string().regex(/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/, 'a function or class name such as TrainingArguments or torch.load');

export const DefaultValueParamsSchema = z
  .object({
    function: Callee.describe(
      'The callee: matches `function(...)` and `x.function(...)`, e.g. DataCollatorForLanguageModeling, TrainingArguments, torch.load.',
    ),
    keyword: Identifier.describe('The keyword argument to stop passing, so the default applies, e.g. mlm.'),
    value: z
      .string()
      .min(1)
      .optional()
      .describe('Only when the argument\'s value is written like this (quotes may differ), e.g. False or "none".'),
  })
  .strict();
export type DefaultValueParams = z.infer<typeof DefaultValueParamsSchema>;

export const RestoreArgumentParamsSchema = z
  .object({
    function: Callee.describe('The callee whose call lost the argument.'),
    argument: z
      .string()
      .regex(/^[A-Za-z_]\w*\s*=[^\n]+$/, 'a keyword argument as written, e.g. mlm=False')
      .describe('The argument text to put back, e.g. mlm=False.'),
    call_index: z.number().int().nonnegative().describe('Which call of function (0-based, in source order).'),
    position: z.number().int().nonnegative().describe('The argument index to insert at.'),
    tail: z
      .string()
      .regex(/^[^\n]*$/)
      .optional()
      .describe('A comment that shared the argument\'s line, e.g. "  # causal LM".'),
  })
  .strict();
export type RestoreArgumentParams = z.infer<typeof RestoreArgumentParamsSchema>;

const NAME = 'ChangeDefaultValue';
const RESTORE = 'RestoreExplicitArgument';

/** The value text with one quoting style, so `"none"` matches `'none'`. */
function normalValue(text: string): string {
  return text.trim().replace(/^'([^'"\\]*)'$/, '"$1"');
}

function plan(ctx: ScriptContext, p: DefaultValueParams): Plan {
  const calls = callsOf(ctx.index, p.function);
  if (calls.length === 0) refuse(NAME, `${p.function}(...) is not called in the script`);
  const passing = calls.filter((c) => keywordArg(c, p.keyword));
  if (passing.length === 0)
    refuse(NAME, `no call of ${p.function} passes ${p.keyword}= explicitly, so there is no default to fall back to`);
  const matching =
    p.value === undefined
      ? passing
      : passing.filter((c) => {
          const a = keywordArg(c, p.keyword)!;
          return normalValue(ctx.script.slice(a.valueFrom, a.valueTo)) === normalValue(p.value!);
        });
  if (matching.length === 0) refuse(NAME, `${p.function}(${p.keyword}=...) is never passed as ${p.value}`);
  if (matching.length > 1) refuse(NAME, `${matching.length} calls of ${p.function} pass ${p.keyword}=; dropping it needs exactly one`);
  const call = matching[0];
  const k = call.args.indexOf(keywordArg(call, p.keyword)!);
  const removed = removeArgument(ctx.script, call, k);
  if (!removed)
    refuse(
      NAME,
      `the ${p.keyword}= argument of ${p.function} on line ${lineOf(ctx.script, call.from)} is not laid out one per line or inline, so it cannot be dropped exactly`,
    );
  const inverse: Record<string, unknown> = { function: p.function, argument: removed.text, call_index: calls.indexOf(call), position: k };
  if (removed.tail) inverse.tail = removed.tail;
  return { edits: [removed.edit], inverse: { primitive_type: RESTORE, params: inverse } };
}

function planRestore(ctx: ScriptContext, p: RestoreArgumentParams): Plan {
  const keyword = p.argument.slice(0, p.argument.indexOf('=')).trim();
  const calls = callsOf(ctx.index, p.function);
  const call = calls[p.call_index];
  if (!call) refuse(RESTORE, `there is no call number ${p.call_index + 1} of ${p.function} in the script`);
  if (keywordArg(call, keyword))
    refuse(RESTORE, `the call of ${p.function} on line ${lineOf(ctx.script, call.from)} already passes ${keyword}=`);
  const edit = insertArgument(ctx.script, call, p.argument, p.tail ?? '', p.position);
  if (!edit) refuse(RESTORE, `no exact place for ${p.argument} in the call of ${p.function} on line ${lineOf(ctx.script, call.from)}`);
  const value = p.argument.slice(p.argument.indexOf('=') + 1).trim();
  return { edits: [edit], inverse: { primitive_type: NAME, params: { function: p.function, keyword, value } } };
}

export const ChangeDefaultValue = definePrimitive<DefaultValueParams>({
  name: NAME,
  category: 'default_drift',
  kind: 'breakage',
  description: 'Stops passing an argument explicitly, so a library default that differs (or changed between releases) takes over.',
  models:
    'torch.load(weights_only=) default True from torch 2.6; TrainingArguments(report_to=) default "all" → "none" in transformers 5.0; DataCollatorForLanguageModeling mlm=True default; remove_unused_columns=True default',
  paramsSchema: DefaultValueParamsSchema,
  label: (p) => `drop ${p.function}(${p.keyword}=${p.value ?? '…'}) so the default applies`,
  plan,
  propose: (_ctx, versions) => driftProposals(NAME, versions),
});

export const RestoreExplicitArgument = definePrimitive<RestoreArgumentParams>({
  name: RESTORE,
  category: 'default_drift',
  kind: 'inverse',
  description: 'Undoes ChangeDefaultValue: passes the argument explicitly again, where it was.',
  models:
    'the repair of a changed default, e.g. DataCollatorForLanguageModeling(tokenizer) → DataCollatorForLanguageModeling(tokenizer, mlm=False)',
  paramsSchema: RestoreArgumentParamsSchema,
  label: (p) => `pass ${p.argument} to ${p.function}(...) again`,
  plan: planRestore,
  propose: () => [],
});

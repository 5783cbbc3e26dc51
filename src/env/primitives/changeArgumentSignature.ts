// ChangeArgumentSignature: a call passes an argument the way another library version took it.
// Two forms, both modelled on real drifts:
// - rename a keyword at every call of `function`: Trainer(processing_class=) ← tokenizer=
//   (transformers 4.46), load_dataset(token=) ← use_auth_token= (removed in datasets 3.0);
// - move a keyword from the call of `function` into the call of `move_to`: SFTConfig(max_seq_length=)
//   ← SFTTrainer(max_seq_length=) (trl 0.12 moved the SFT options into SFTConfig).
// Only the keyword (or the one argument's line) changes; the inverse is the same primitive.
import { z } from 'zod';
import { isIdentifier } from '../python/identifiers';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { insertArgument, removeArgument } from './argumentLayout';
import { callsOf, keywordArg, lineOf } from './queries';

const Identifier = z.string().refine(isIdentifier, 'a Python identifier');
const Callee = z
  .string()
  .regex(/^[A-Za-z_][\w]*(\.[A-Za-z_]\w*)*$/, 'a function or class name such as Trainer or AutoTokenizer.from_pretrained');

export const ArgumentSignatureParamsSchema = z
  .object({
    function: Callee.describe(
      'The callee whose calls change: matches `function(...)` and `x.function(...)`, e.g. Trainer, load_dataset, from_pretrained.',
    ),
    old_keyword: Identifier.describe('The keyword the script passes now, e.g. processing_class.'),
    new_keyword: Identifier.optional().describe(
      "Rename the keyword to this (the other version's name, e.g. tokenizer). Give this or move_to.",
    ),
    move_to: Callee.optional().describe(
      'Move the argument into the (single) call of this callee instead, e.g. SFTTrainer. Give this or new_keyword.',
    ),
    position: z
      .number()
      .int()
      .nonnegative()
      .optional()
      .describe('With move_to: the argument index to insert at in the target call (default: after the last argument).'),
  })
  .strict()
  .refine((p) => (p.new_keyword === undefined) !== (p.move_to === undefined), {
    message: 'give exactly one of new_keyword or move_to',
    path: ['new_keyword'],
  })
  .refine((p) => p.new_keyword !== p.old_keyword, { message: 'new_keyword must differ from old_keyword', path: ['new_keyword'] })
  .refine((p) => p.move_to !== p.function, { message: 'move_to must be another callee', path: ['move_to'] })
  .refine((p) => p.position === undefined || p.move_to !== undefined, {
    message: 'position only applies with move_to',
    path: ['position'],
  });
export type ArgumentSignatureParams = z.infer<typeof ArgumentSignatureParamsSchema>;

const NAME = 'ChangeArgumentSignature';

function planRename(ctx: ScriptContext, p: ArgumentSignatureParams & { new_keyword: string }): Plan {
  const calls = callsOf(ctx.index, p.function);
  if (calls.length === 0) refuse(NAME, `${p.function}(...) is not called in the script`);
  const sites = calls.flatMap((c) => {
    const a = keywordArg(c, p.old_keyword);
    return a ? [a] : [];
  });
  if (sites.length === 0) refuse(NAME, `no call of ${p.function} passes ${p.old_keyword}=`);
  const clash = calls.find((c) => keywordArg(c, p.new_keyword));
  if (clash)
    refuse(
      NAME,
      `the call of ${p.function} on line ${lineOf(ctx.script, clash.from)} already passes ${p.new_keyword}=, so the rename could not be undone exactly`,
    );
  return {
    edits: sites.map((a) => ({ from: a.nameFrom!, to: a.nameTo!, insert: p.new_keyword })),
    inverse: { primitive_type: NAME, params: { function: p.function, old_keyword: p.new_keyword, new_keyword: p.old_keyword } },
  };
}

function planMove(ctx: ScriptContext, p: ArgumentSignatureParams & { move_to: string }): Plan {
  const sources = callsOf(ctx.index, p.function).filter((c) => keywordArg(c, p.old_keyword));
  if (sources.length === 0) refuse(NAME, `no call of ${p.function} passes ${p.old_keyword}=`);
  if (sources.length > 1) refuse(NAME, `${sources.length} calls of ${p.function} pass ${p.old_keyword}=; a move needs exactly one`);
  const targets = callsOf(ctx.index, p.move_to);
  if (targets.length !== 1)
    refuse(
      NAME,
      targets.length === 0
        ? `${p.move_to}(...) is not called in the script`
        : `${p.move_to} is called ${targets.length} times; a move needs exactly one target call`,
    );
  const source = sources[0];
  const target = targets[0];
  if (keywordArg(target, p.old_keyword)) refuse(NAME, `${p.move_to}(...) already passes ${p.old_keyword}=`);
  const k = source.args.indexOf(keywordArg(source, p.old_keyword)!);
  const removed = removeArgument(ctx.script, source, k);
  if (!removed)
    refuse(
      NAME,
      `the ${p.old_keyword}= argument of ${p.function} on line ${lineOf(ctx.script, source.from)} is not laid out one per line or inline, so it cannot be moved exactly`,
    );
  const inserted = insertArgument(ctx.script, target, removed.text, removed.tail, p.position);
  if (!inserted)
    refuse(NAME, `no exact place for ${p.old_keyword}= in the call of ${p.move_to} on line ${lineOf(ctx.script, target.from)}`);
  return {
    edits: [removed.edit, inserted],
    inverse: { primitive_type: NAME, params: { function: p.move_to, old_keyword: p.old_keyword, move_to: p.function, position: k } },
  };
}

export const ChangeArgumentSignature = definePrimitive<ArgumentSignatureParams>({
  name: NAME,
  category: 'signature_drift',
  kind: 'breakage',
  description: 'Passes a keyword argument the way another library version took it: renamed, or on another call.',
  models:
    'Trainer(processing_class=) ← tokenizer= (transformers 4.46); load_dataset(token=) ← use_auth_token= (datasets 3.0); SFTConfig(max_seq_length=) ← SFTTrainer(max_seq_length=) (trl 0.12)',
  paramsSchema: ArgumentSignatureParamsSchema,
  label: (p) =>
    p.move_to
      ? `move ${p.old_keyword}= from ${p.function}(...) to ${p.move_to}(...)`
      : `${p.function}(${p.old_keyword}=) → ${p.new_keyword}=`,
  plan: (ctx, p) =>
    p.move_to !== undefined ? planMove(ctx, { ...p, move_to: p.move_to }) : planRename(ctx, { ...p, new_keyword: p.new_keyword! }),
  propose: (_ctx, versions) => driftProposals('ChangeArgumentSignature', versions),
});

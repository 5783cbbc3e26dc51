// PassArgumentPositionally: keyword arguments that follow a call's positional arguments are passed
// by position, as code written before the parameters became keyword-only did. Modelled on the
// metric API: evaluate's EvaluationModule.compute(*, predictions=, references=) and add_batch
// (keyword-only since evaluate 0.1, as datasets.Metric was) reject the positional call of the
// nlp era (`metric.compute(preds, refs)`: TypeError: compute() takes 1 positional argument but 3
// were given). Only the `name=` prefixes go; the inverse, RestoreKeywordArgument, adds them back.
import { z } from 'zod';
import type { TextEdit } from '../python/edits';
import { isIdentifier } from '../python/identifiers';
import type { CallSite } from '../python/scriptIndex';
import { definePrimitive, driftProposals, refuse, type Plan, type ScriptContext } from './engine';
import { callsOf, lineOf } from './queries';

const Identifier = z.string().refine(isIdentifier, 'a Python identifier');
const Callee = z.string().regex(/^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$/, 'a function or method name such as compute or torch.load');

const base = {
  function: Callee.describe('The callee: matches `function(...)` and `x.function(...)`, e.g. compute.'),
  keywords: z.array(Identifier).min(1).describe('The keyword-only parameters, in signature order, e.g. ["predictions", "references"].'),
};

export const PositionalParamsSchema = z
  .object(base)
  .strict()
  .refine((p) => new Set(p.keywords).size === p.keywords.length, { message: 'keywords must differ', path: ['keywords'] });
export type PositionalParams = z.infer<typeof PositionalParamsSchema>;

export const RestoreKeywordParamsSchema = z
  .object({
    ...base,
    first: z.number().int().nonnegative().describe('Index of the first argument to name (the number of positional arguments before them).'),
  })
  .strict()
  .refine((p) => new Set(p.keywords).size === p.keywords.length, { message: 'keywords must differ', path: ['keywords'] });
export type RestoreKeywordParams = z.infer<typeof RestoreKeywordParamsSchema>;

const NAME = 'PassArgumentPositionally';
const RESTORE = 'RestoreKeywordArgument';

/** Leading positional arguments of a call. */
function positionalCount(call: CallSite): number {
  let n = 0;
  while (n < call.args.length && call.args[n].kind === 'positional') n++;
  return n;
}

function plan(ctx: ScriptContext, p: PositionalParams): Plan {
  const calls = callsOf(ctx.index, p.function);
  if (calls.length === 0) refuse(NAME, `${p.function}(...) is not called in the script`);
  const edits: TextEdit[] = [];
  let first: number | undefined;
  for (const c of calls) {
    const n = positionalCount(c);
    const run = p.keywords.map((k, i) => c.args[n + i]).filter((a, i) => a?.kind === 'keyword' && a.name === p.keywords[i]);
    if (run.length !== p.keywords.length) continue;
    // `name=value` exactly, so that adding `name=` back restores the text.
    if (run.some((a) => ctx.script.slice(a.nameFrom, a.valueFrom) !== `${a.name}=`)) continue;
    if (first !== undefined && first !== n)
      refuse(
        NAME,
        `calls of ${p.function} pass ${p.keywords[0]}= after different numbers of positional arguments (line ${lineOf(ctx.script, c.from)})`,
      );
    first = n;
    for (const a of run) edits.push({ from: a.nameFrom!, to: a.valueFrom, insert: '' });
  }
  if (first === undefined)
    refuse(NAME, `no call of ${p.function} passes ${p.keywords.map((k) => `${k}=`).join(', ')} right after its positional arguments`);
  return { edits, inverse: { primitive_type: RESTORE, params: { function: p.function, keywords: p.keywords, first } } };
}

function planRestore(ctx: ScriptContext, p: RestoreKeywordParams): Plan {
  const calls = callsOf(ctx.index, p.function);
  const edits: TextEdit[] = [];
  for (const c of calls) {
    if (positionalCount(c) < p.first + p.keywords.length) continue;
    p.keywords.forEach((k, i) => {
      const a = c.args[p.first + i];
      edits.push({ from: a.from, to: a.from, insert: `${k}=` });
    });
  }
  if (edits.length === 0) refuse(RESTORE, `no call of ${p.function} passes ${p.first + p.keywords.length} or more positional arguments`);
  return { edits, inverse: { primitive_type: NAME, params: { function: p.function, keywords: p.keywords } } };
}

export const PassArgumentPositionally = definePrimitive<PositionalParams>({
  name: NAME,
  category: 'positional_drift',
  kind: 'breakage',
  description: 'Passes keyword-only arguments by position, as code written before they became keyword-only did.',
  models:
    'evaluate EvaluationModule.compute(*, predictions=, references=) / add_batch are keyword-only (evaluate 0.1, like datasets.Metric): metric.compute(preds, refs) raises TypeError',
  paramsSchema: PositionalParamsSchema,
  label: (p) => `pass ${p.keywords.join(', ')} to ${p.function}(...) by position`,
  plan,
  propose: (_ctx, versions) => driftProposals(NAME, versions),
});

export const RestoreKeywordArgument = definePrimitive<RestoreKeywordParams>({
  name: RESTORE,
  category: 'positional_drift',
  kind: 'inverse',
  description: 'Undoes PassArgumentPositionally: names the keyword-only arguments again.',
  models: 'the repair of a positional call to a keyword-only API, e.g. metric.compute(p, r) → metric.compute(predictions=p, references=r)',
  paramsSchema: RestoreKeywordParamsSchema,
  label: (p) => `name ${p.keywords.join(', ')} in ${p.function}(...) again`,
  plan: planRestore,
  propose: () => [],
});

// ChangeReturnType: a value returned by a library call is used as the other kind of object:
// `metrics["eval_accuracy"]` (a dict) ↔ `metrics.eval_accuracy` (an object), for one variable and key.
// Models the return-type changes of the ecosystem: model outputs became ModelOutput objects
// (transformers 4.0: `outputs[0]` → `outputs.loss`), Trainer.train()/predict() return NamedTuples
// (TrainOutput, PredictionOutput), evaluate's compute() and Trainer.evaluate() return plain dicts.
import { z } from 'zod';
import { accessRefs, IDENTIFIER, type AccessRef, type ParsedScript } from '../python/syntax';
import { parseOrNull, parseOrRefuse, resultOf, spanOf } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const Style = z.enum(['subscript', 'attribute']);
const Params = z
  .object({
    variable: z.string().regex(IDENTIFIER).describe('Variable holding the returned value (e.g. metrics)'),
    key: z.string().regex(IDENTIFIER, 'an identifier (attribute access needs one)').describe('Key or attribute (e.g. eval_accuracy)'),
    from: Style.describe('How the script accesses it now'),
    to: Style.describe('How code for the other return type accesses it'),
    quote: z.enum(['"', "'"]).default('"').describe('Quote for subscript keys'),
  })
  .strict()
  .refine((p) => p.from !== p.to, 'from and to must differ');
type P = z.infer<typeof Params>;

const hits = (p: ParsedScript, v: string, key: string, style: 'subscript' | 'attribute'): AccessRef[] =>
  accessRefs(p).filter((a) => a.object === v && a.key === key && a.style === style && !a.called);

/** Values whose attribute access works either way (BatchEncoding) would not break: rank them last. */
const DUAL_ACCESS = /^(batch|inputs|encod\w*|tokenized\w*|enc|features)$/;

export const ChangeReturnType: Primitive<P> = {
  name: 'ChangeReturnType',
  category: 'return_type_drift',
  kind: 'breakage',
  description: 'Access a returned value as a dict where it is an object, or the reverse',
  models: 'ModelOutput objects (transformers 4.0), TrainOutput/PredictionOutput NamedTuples, dict metrics from evaluate and Trainer.evaluate()',
  paramsSchema: Params as unknown as z.ZodType<P>,
  candidates(script) {
    const p = parseOrNull(script);
    if (!p) return [];
    const seen = new Set<string>();
    const good: PrimitiveCandidate<P>[] = [];
    const weak: PrimitiveCandidate<P>[] = [];
    for (const a of accessRefs(p)) {
      if (a.called || !IDENTIFIER.test(a.key) || a.key.startsWith('_')) continue;
      const k = `${a.object}|${a.key}|${a.style}`;
      if (seen.has(k)) continue;
      seen.add(k);
      const to = a.style === 'subscript' ? 'attribute' : 'subscript';
      if (hits(p, a.object, a.key, to).length) continue;
      const same = hits(p, a.object, a.key, a.style);
      if (a.style === 'subscript' && new Set(same.map((h) => h.quote)).size > 1) continue;
      // Attribute access on modules/classes/self is not a returned value.
      if (a.style === 'attribute' && !/^[a-z_][a-z0-9_]*$/.test(a.object)) continue;
      if (a.style === 'attribute' && /^(self|np|torch|nn|F|os|sys|math|random|json|evaluate|datasets|transformers|trl|peft|optim)$/.test(a.object)) continue;
      const params: P = { variable: a.object, key: a.key, from: a.style, to, quote: (a.quote as '"' | "'") ?? '"' };
      const c = { params, label: a.style === 'subscript' ? `${a.object}["${a.key}"] → ${a.object}.${a.key}` : `${a.object}.${a.key} → ${a.object}["${a.key}"]`, ...spanOf(same.map((h) => ({ from: h.from, to: h.to, insert: '' }))) };
      (a.style === 'subscript' && !DUAL_ACCESS.test(a.object) ? good : weak).push(c);
    }
    return [...good, ...weak];
  },
  apply(script, params) {
    const p = parseOrRefuse(this.name, script);
    if (hits(p, params.variable, params.key, params.to).length) throw new PrimitiveRefusal(this.name, `the script already accesses ${params.variable} ${params.key} as ${params.to}, so the change could not be undone exactly`);
    const found = hits(p, params.variable, params.key, params.from);
    const quotes = new Set(found.map((h) => h.quote));
    if (params.from === 'subscript' && quotes.size > 1) throw new PrimitiveRefusal(this.name, 'the key is quoted in different ways, so the change could not be undone exactly');
    const quote = (found[0]?.quote as '"' | "'" | undefined) ?? params.quote;
    const edits = found.map((h) => ({ from: h.from, to: h.to, insert: params.to === 'attribute' ? `.${params.key}` : `[${params.quote}${params.key}${params.quote}]` }));
    return resultOf(this.name, script, edits, { primitive_type: 'ChangeReturnType', params: { variable: params.variable, key: params.key, from: params.to, to: params.from, quote: params.from === 'subscript' ? quote : params.quote } },
      `no ${params.from} access ${params.from === 'subscript' ? `${params.variable}["${params.key}"]` : `${params.variable}.${params.key}`} in the script`);
  },
};

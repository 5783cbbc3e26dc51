// Keyword-argument drifts, three primitives over one mechanism: in calls to a given callee, the
// keyword `old_kwarg` (optionally only with a given value) becomes `new_kwarg` (and value).
// - ChangeArgumentSignature: a function's keyword was renamed. Models Trainer(tokenizer=) →
//   processing_class= (transformers 4.46), use_auth_token= → token= (datasets 3.0 removed it).
// - ModifyConfigField: a field of a config object (TrainingArguments, SFTConfig, LoraConfig, …)
//   was renamed. Models evaluation_strategy → eval_strategy (4.41, old name removed in 4.46).
// - ChangeTokenizerBehavior: a tokenizer call convention changed. Models pad_to_max_length=True →
//   padding="max_length", truncation_strategy= → truncation=, as_target_tokenizer() → text_target=.
import { z } from 'zod';
import { driftEntriesFor, driftNote } from '../drift/driftTable';
import { callRefs, IDENTIFIER, type CallRef, type ParsedScript } from '../python/syntax';
import { parseOrNull, parseOrRefuse, resultOf, spanOf, type Edit } from './base';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from './types';

const Ident = z.string().regex(IDENTIFIER, 'a Python identifier');

interface KwSpec {
  callee?: string; // last dotted segment or full dotted callee; undefined: any call accepted by `accepts`
  old_kwarg: string;
  new_kwarg: string;
  old_value?: string;
  new_value?: string;
}

function calleeMatches(c: CallRef, callee: string): boolean {
  return c.callee === callee || c.method === callee || c.callee.endsWith(`.${callee}`);
}

function kwEdits(p: ParsedScript, calls: CallRef[], s: KwSpec): Edit[] {
  const edits: Edit[] = [];
  for (const c of calls) {
    for (const k of c.keywords) {
      if (k.name !== s.old_kwarg) continue;
      if (s.old_value !== undefined && k.valueText !== s.old_value) continue;
      if (s.new_value !== undefined) edits.push({ from: k.nameFrom, to: k.valueTo, insert: `${s.new_kwarg}${p.source.slice(k.nameTo, k.valueFrom)}${s.new_value}` });
      else edits.push({ from: k.nameFrom, to: k.nameTo, insert: s.new_kwarg });
    }
  }
  return edits;
}

/** Whether any call already has the drifted keyword (then the inverse would touch it too). */
function clashes(calls: CallRef[], s: KwSpec): boolean {
  return calls.some((c) => c.keywords.some((k) => k.name === s.new_kwarg && (s.new_value === undefined || k.valueText === s.new_value)));
}

interface KwPrimitiveDef<P> {
  name: string;
  inverseName: string;
  kind: 'breakage' | 'inverse';
  category: string;
  description: string;
  models: string;
  schema: z.ZodType<P>;
  toSpec(p: P): KwSpec;
  invert(p: P): P;
  accepts(c: CallRef): boolean;
  /** False when generic candidates are known not to break (tokenizers ignore unknown keywords, with a warning). */
  genericBreaks?: boolean;
  /** Generic candidates beyond the drift table. */
  generic?(p: ParsedScript, calls: CallRef[]): P[];
  labelOf(p: P): string;
  driftKey: string;
}

function makeKw<P extends Record<string, unknown>>(d: KwPrimitiveDef<P>): Primitive<P> {
  const callsFor = (p: ParsedScript, s: KwSpec) => callRefs(p).filter((c) => d.accepts(c) && (s.callee === undefined || calleeMatches(c, s.callee)));
  return {
    name: d.name,
    category: d.category,
    kind: d.kind,
    description: d.description,
    models: d.models,
    paramsSchema: d.schema,
    candidates(script) {
      const p = parseOrNull(script);
      if (!p || d.kind === 'inverse') return [];
      const out: PrimitiveCandidate<P>[] = [];
      const seen = new Set<string>();
      const add = (params: P, note?: { drift?: string; breaks: boolean }) => {
        const key = JSON.stringify(params);
        if (seen.has(key)) return;
        const s = d.toSpec(params);
        const calls = callsFor(p, s);
        const edits = kwEdits(p, calls, s);
        if (!edits.length || clashes(calls, s)) return;
        seen.add(key);
        out.push({ params, label: d.labelOf(params), ...spanOf(edits), ...note });
      };
      for (const e of driftEntriesFor(d.driftKey)) add(e.params as P, driftNote(e));
      for (const g of d.generic?.(p, callRefs(p).filter(d.accepts)) ?? []) add(g, d.genericBreaks === false ? { breaks: false } : undefined);
      return out;
    },
    apply(script, params) {
      const p = parseOrRefuse(d.name, script);
      const s = d.toSpec(params);
      const calls = callsFor(p, s);
      if (clashes(calls, s)) throw new PrimitiveRefusal(d.name, `a call already passes ${s.new_kwarg}${s.new_value !== undefined ? `=${s.new_value}` : ''}, so the change could not be undone exactly`);
      const where = s.callee ? `calls to ${s.callee}` : 'the matching calls';
      return resultOf(d.name, script, kwEdits(p, calls, s), { primitive_type: d.inverseName, params: d.invert(params) as Record<string, unknown> },
        `no keyword argument ${s.old_kwarg}${s.old_value !== undefined ? `=${s.old_value}` : ''} in ${where}`);
    },
  };
}

// ChangeArgumentSignature
const SigParams = z
  .object({
    function: z.string().regex(/^[A-Za-z_][\w.]*$/).describe('Callee whose signature changed (last dotted segment is enough: from_pretrained)'),
    old_kwarg: Ident.describe('Keyword the script passes'),
    new_kwarg: Ident.describe('Keyword it had in another library version'),
  })
  .strict()
  .refine((p) => p.old_kwarg !== p.new_kwarg, 'old_kwarg and new_kwarg must differ');
type SigP = z.infer<typeof SigParams>;

const LIB_CALLEE = /^[A-Z]|from_pretrained$|^load_dataset$|^pipeline$|\.map$|\.generate$|\.train$|\.save_pretrained$|\.push_to_hub$/;

function sigDef(name: string, inverseName: string, kind: 'breakage' | 'inverse'): KwPrimitiveDef<SigP> {
  return {
    name,
    inverseName,
    kind,
    category: 'signature_drift',
    description: 'Rename a keyword argument of a library function or class',
    models: 'Trainer(tokenizer=) → processing_class= (transformers 4.46); use_auth_token= → token= (removed from load_dataset in datasets 3.0)',
    schema: SigParams as unknown as z.ZodType<SigP>,
    toSpec: (p) => ({ callee: p.function, old_kwarg: p.old_kwarg, new_kwarg: p.new_kwarg }),
    invert: (p) => ({ function: p.function, old_kwarg: p.new_kwarg, new_kwarg: p.old_kwarg }),
    accepts: (c) => !isConfigCall(c) && !isTokenizerCall(c),
    generic: (_p, calls) =>
      calls.filter((c) => LIB_CALLEE.test(c.callee)).flatMap((c) => c.keywords.slice(0, 1).map((k) => ({ function: c.method, old_kwarg: k.name, new_kwarg: `${k.name}_legacy` }))),
    labelOf: (p) => `${p.function}(${p.old_kwarg}=…) → ${p.new_kwarg}=`,
    driftKey: 'ChangeArgumentSignature',
  };
}

// ModifyConfigField
const CONFIG_CALLEE = /(Config|Arguments|TrainingArguments)$/;
export const isConfigCall = (c: CallRef): boolean => CONFIG_CALLEE.test(c.method);
const CfgParams = z
  .object({
    config_class: z.string().regex(IDENTIFIER).describe('Config class, e.g. TrainingArguments, SFTConfig, LoraConfig'),
    old_field: Ident.describe('Field the script sets'),
    new_field: Ident.describe('Field name at another library version'),
  })
  .strict()
  .refine((p) => p.old_field !== p.new_field, 'old_field and new_field must differ');
type CfgP = z.infer<typeof CfgParams>;
function cfgDef(name: string, inverseName: string, kind: 'breakage' | 'inverse'): KwPrimitiveDef<CfgP> {
  return {
    name,
    inverseName,
    kind,
    category: 'config_drift',
    description: 'Rename a field of a config object (TrainingArguments, SFTConfig, LoraConfig, …)',
    models: 'TrainingArguments evaluation_strategy → eval_strategy (transformers 4.41; removed 4.46); SFTTrainer options moved into SFTConfig (trl 0.12)',
    schema: CfgParams as unknown as z.ZodType<CfgP>,
    toSpec: (p) => ({ callee: p.config_class, old_kwarg: p.old_field, new_kwarg: p.new_field }),
    invert: (p) => ({ config_class: p.config_class, old_field: p.new_field, new_field: p.old_field }),
    accepts: isConfigCall,
    generic: (_p, calls) => calls.flatMap((c) => c.keywords.filter((k) => k.name !== 'output_dir').slice(0, 2).map((k) => ({ config_class: c.method, old_field: k.name, new_field: `${k.name}_legacy` }))),
    labelOf: (p) => `${p.config_class}.${p.old_field} → ${p.new_field}`,
    driftKey: 'ModifyConfigField',
  };
}

// ChangeTokenizerBehavior
export const isTokenizerCall = (c: CallRef): boolean => /(^|\.)(tokenizer|tok|processor|tokenize\w*)$|\.(encode|encode_plus|batch_encode_plus|__call__)$/i.test(c.callee);
const TokParams = z
  .object({
    old_kwarg: Ident.describe('Tokenizer keyword the script passes (e.g. padding)'),
    old_value: z.string().optional().describe('Only when passed with this value (Python source text, e.g. "max_length" with quotes)'),
    new_kwarg: Ident.describe('Keyword at another library version (e.g. pad_to_max_length)'),
    new_value: z.string().optional().describe('Value to pass instead (Python source text, e.g. True)'),
  })
  .strict()
  .refine((p) => (p.old_value === undefined) === (p.new_value === undefined), 'give both old_value and new_value, or neither')
  .refine((p) => p.old_kwarg !== p.new_kwarg || p.old_value !== p.new_value, 'the change must change something');
type TokP = z.infer<typeof TokParams>;
function tokDef(name: string, inverseName: string, kind: 'breakage' | 'inverse'): KwPrimitiveDef<TokP> {
  return {
    name,
    inverseName,
    kind,
    category: 'tokenizer_drift',
    description: 'Change how a tokenizer call is made (padding/truncation/target keywords)',
    models: 'pad_to_max_length=True → padding="max_length"; truncation_strategy= → truncation=; as_target_tokenizer() → text_target= (transformers 4.x)',
    schema: TokParams as unknown as z.ZodType<TokP>,
    toSpec: (p) => ({ old_kwarg: p.old_kwarg, new_kwarg: p.new_kwarg, old_value: p.old_value, new_value: p.new_value }),
    invert: (p) => ({ old_kwarg: p.new_kwarg, new_kwarg: p.old_kwarg, ...(p.old_value !== undefined ? { old_value: p.new_value, new_value: p.old_value } : {}) }),
    accepts: isTokenizerCall,
    genericBreaks: false,
    generic: (_p, calls) => calls.flatMap((c) => c.keywords.slice(0, 1).map((k) => ({ old_kwarg: k.name, new_kwarg: `${k.name}_strategy` }))),
    labelOf: (p) => `tokenizer(${p.old_kwarg}${p.old_value !== undefined ? `=${p.old_value}` : ''}) → ${p.new_kwarg}${p.new_value !== undefined ? `=${p.new_value}` : ''}`,
    driftKey: 'ChangeTokenizerBehavior',
  };
}

export const ChangeArgumentSignature = makeKw(sigDef('ChangeArgumentSignature', 'ChangeArgumentSignature', 'breakage'));
export const ModifyConfigField = makeKw(cfgDef('ModifyConfigField', 'ModifyConfigField', 'breakage'));
export const ChangeTokenizerBehavior = makeKw(tokDef('ChangeTokenizerBehavior', 'ChangeTokenizerBehavior', 'breakage'));

// The leaf module names of a family's layers, which PEFT's `target_modules` match by suffix: a script's
// LoRA targets name the family it was written for (`query_key_value`, `dense_h_to_4h`: GPT-NeoX,
// Falcon, BLOOM). When a placeholder model of another family stands in, the targets match nothing and
// PEFT refuses (`NoMatchingPeftModuleError`); a family whose modules include the targets serves instead.
// Names from the transformers modeling files (each family's attention and MLP projections, the same in
// every release the snapshots pin); test/unit/moduleNames.test.ts checks them against the snapshot
// venvs' real transformers (a tiny model of each family, its named modules).
import { resolveModel, type ModelHead } from './modelTable';

export interface FamilyModules {
  model_type: string;
  /** A well-known id of the family that the offline hub builds tiny (in every snapshot's transformers). */
  id: string;
  /** Leaf module names of the decoder/encoder layers (not the embeddings, not the LM head). */
  modules: readonly string[];
}

/** In preference order: families every snapshot's transformers has come first. */
export const FAMILY_MODULES: readonly FamilyModules[] = [
  // modeling_llama.py: LlamaAttention q/k/v/o_proj, LlamaMLP gate/up/down_proj.
  {
    model_type: 'llama',
    id: 'HuggingFaceTB/SmolLM2-135M',
    modules: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
  },
  // modeling_gpt_neox.py: GPTNeoXAttention query_key_value/dense, GPTNeoXMLP dense_h_to_4h/dense_4h_to_h
  // (Falcon's and BLOOM's layers carry the same four names).
  { model_type: 'gpt_neox', id: 'EleutherAI/pythia-70m', modules: ['query_key_value', 'dense', 'dense_h_to_4h', 'dense_4h_to_h'] },
  // modeling_opt.py: OPTAttention q/k/v/out_proj, OPTDecoderLayer fc1/fc2.
  { model_type: 'opt', id: 'facebook/opt-125m', modules: ['q_proj', 'k_proj', 'v_proj', 'out_proj', 'fc1', 'fc2'] },
  // modeling_gpt2.py: GPT2Attention c_attn/c_proj, GPT2MLP c_fc/c_proj (Conv1D).
  { model_type: 'gpt2', id: 'gpt2', modules: ['c_attn', 'c_proj', 'c_fc'] },
  // modeling_t5.py: T5Attention q/k/v/o, T5DenseActDense wi/wo.
  { model_type: 't5', id: 't5-small', modules: ['q', 'k', 'v', 'o', 'wi', 'wo'] },
  // modeling_bert.py: BertSelfAttention query/key/value, BertSelfOutput/BertIntermediate/BertOutput dense.
  { model_type: 'bert', id: 'bert-base-cased', modules: ['query', 'key', 'value', 'dense'] },
];

/** The target names of a PEFT "Target modules … not found in the base model" error (a set or a list, any release). */
export function targetModulesOfError(text: string): string[] | undefined {
  const m = /Target modules? ([{[][^\n}\]]*[}\]]) not found in the base model/.exec(text);
  if (!m) return undefined;
  const names = [...m[1].matchAll(/'([^']+)'|"([^"]+)"/g)].map((x) => x[1] ?? x[2]);
  return names.length ? names : undefined;
}

const headOf = (model_type: string, id: string): ModelHead | undefined => {
  try {
    return resolveModel(id, { architecture: model_type }).head;
  } catch {
    return undefined;
  }
};

/**
 * The first family of the same head as `current` (a causal LM stays one) whose modules include every
 * target; else the one matching most of them (PEFT needs one match). Undefined when none matches any.
 */
export function familyForTargets(targets: readonly string[], current: string): FamilyModules | undefined {
  const currentType = resolveModelType(current);
  const head = currentType ? headOf(currentType, current) : undefined;
  let best: { f: FamilyModules; hits: number } | undefined;
  for (const f of FAMILY_MODULES) {
    if (f.model_type === currentType || (head && headOf(f.model_type, f.id) !== head)) continue;
    const hits = targets.filter((t) => f.modules.includes(t)).length;
    if (hits === targets.length) return f;
    if (hits > 0 && (!best || hits > best.hits)) best = { f, hits };
  }
  return best?.f;
}

function resolveModelType(id: string): string | undefined {
  try {
    return resolveModel(id).model_type;
  } catch {
    return undefined;
  }
}

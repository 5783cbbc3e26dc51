// Library snapshot drift: what real-world change an error under an older or newer snapshot most
// likely corresponds to. A small table of well-known Hugging Face changes, matched on the names
// quoted in the exception message, plus whatever the environment's drift table knows (passed
// in, so this module stays independent of its shape). Versions come from the drift catalog
// (resources/drifts/catalog.json), never written here. No vscode import.
import { catalogWhen } from '../../../env/drift/catalog';
import type { ParsedError } from '../../../env/scoring/traceback';

export interface KnownChange {
  /** Identifiers whose appearance in the message points at this change. */
  names: readonly string[];
  library: string;
  /** Where the change happened, e.g. `4.41 (deprecated) / 4.46 (removed)`. */
  when: string;
  change: string;
}

export const KNOWN_CHANGES: readonly KnownChange[] = [
  {
    names: ['evaluation_strategy', 'eval_strategy'],
    library: 'transformers',
    when: catalogWhen('transformers-trainingargs-evaluation-strategy'),
    change: 'TrainingArguments(evaluation_strategy=) was renamed to eval_strategy=',
  },
  {
    names: ['processing_class'],
    library: 'transformers',
    when: catalogWhen('transformers-trainer-tokenizer-kwarg'),
    change: 'Trainer(tokenizer=) became Trainer(processing_class=); older versions only know tokenizer=',
  },
  {
    names: ['use_auth_token'],
    library: 'transformers / datasets',
    when: catalogWhen('datasets-load-dataset-use-auth-token', 'transformers-from-pretrained-use-auth-token'),
    change: 'use_auth_token= was replaced by token=',
  },
  {
    names: ['load_metric'],
    library: 'datasets',
    when: catalogWhen('datasets-load-metric-removed'),
    change: 'datasets.load_metric was removed; metrics moved to the evaluate library (evaluate.load)',
  },
  {
    names: ['AdamW'],
    library: 'transformers',
    when: catalogWhen('transformers-adamw-removed'),
    change: 'transformers.AdamW was removed; use torch.optim.AdamW',
  },
  {
    names: ['AutoModelWithLMHead'],
    library: 'transformers',
    when: catalogWhen('transformers-automodelwithlmhead-removed'),
    change: 'AutoModelWithLMHead was split into AutoModelForCausalLM / AutoModelForSeq2SeqLM / AutoModelForMaskedLM',
  },
  {
    names: ['as_target_tokenizer', 'text_target'],
    library: 'transformers',
    when: catalogWhen('transformers-as-target-tokenizer-removed'),
    change: 'tokenizer.as_target_tokenizer() was replaced by tokenizer(text_target=...)',
  },
  {
    names: ['pad_to_max_length'],
    library: 'transformers',
    when: catalogWhen('transformers-pad-to-max-length-removed'),
    change: "tokenizer(pad_to_max_length=True) was replaced by padding='max_length'",
  },
  {
    names: ['dataset_text_field', 'max_seq_length', 'packing', 'SFTConfig'],
    library: 'trl',
    when: catalogWhen('trl-sfttrainer-dataset-text-field-kwarg'),
    change: "SFTTrainer's dataset_text_field / max_seq_length / packing moved into SFTConfig",
  },
  {
    names: ['prepare_model_for_int8_training', 'prepare_model_for_kbit_training'],
    library: 'peft',
    when: catalogWhen('peft-prepare-model-for-int8-training-removed'),
    change: 'prepare_model_for_int8_training was replaced by prepare_model_for_kbit_training',
  },
  {
    names: ['no_cuda', 'use_cpu'],
    library: 'transformers',
    when: catalogWhen('transformers-trainingargs-no-cuda'),
    change: 'TrainingArguments(no_cuda=) was replaced by use_cpu=',
  },
  {
    names: ['eval_accumulation_steps'],
    library: 'transformers',
    when: '',
    change: 'TrainingArguments eval options changed between versions',
  },
];

export interface DriftExplanation {
  change: string;
  library?: string;
  when?: string;
  /** Where the explanation came from. */
  source: 'drift-table' | 'known-changes' | 'exception-kind';
}

/** Names quoted in a message ('x' or "x" or `x`), plus dotted tails (module.attr → attr). */
export function quotedNames(message: string): string[] {
  const out = new Set<string>();
  for (const m of message.matchAll(/['"`]([A-Za-z_][\w.]*)['"`]/g)) {
    out.add(m[1]);
    const tail = m[1].split('.').pop();
    if (tail) out.add(tail);
  }
  return [...out];
}

/** One entry the environment's drift table contributes: identifiers and a one-line description. */
export interface DriftTableHint {
  names: readonly string[];
  description: string;
  library?: string;
  when?: string;
}

const LIBRARY_MODULES = new Set(['transformers', 'datasets', 'trl', 'peft', 'torch', 'evaluate', 'accelerate']);

/** How well an entry's names match the quoted names: an API name counts more than a bare library module. */
function matchScore(entryNames: readonly string[], quoted: readonly string[]): number {
  let score = 0;
  for (const n of entryNames) if (quoted.includes(n)) score += LIBRARY_MODULES.has(n) ? 1 : 3;
  return score;
}

function best<T extends { names: readonly string[] }>(entries: readonly T[], quoted: readonly string[]): T | undefined {
  let top: T | undefined;
  let topScore = 0;
  for (const e of entries) {
    const s = matchScore(e.names, quoted);
    if (s > topScore) [top, topScore] = [e, s];
  }
  // A bare module name alone ("from 'transformers'") says too little to name a change.
  return topScore >= 3 ? top : undefined;
}

/** The most specific explanation for an error: drift table, then our table, then the exception kind. */
export function explainError(
  err: Pick<ParsedError, 'exception_type' | 'message'>,
  driftTable: readonly DriftTableHint[] = [],
): DriftExplanation {
  const names = quotedNames(err.message);
  const fromTable = best(driftTable, names);
  if (fromTable) return { change: fromTable.description, library: fromTable.library, when: fromTable.when, source: 'drift-table' };
  const known = best(KNOWN_CHANGES, names);
  if (known) return { change: known.change, library: known.library, when: known.when || undefined, source: 'known-changes' };
  return { change: kindExplanation(err.exception_type, err.message), source: 'exception-kind' };
}

function kindExplanation(type: string, message: string): string {
  if (type === 'TypeError' && /unexpected keyword argument/.test(message))
    return 'a keyword argument this snapshot does not accept (added, renamed or removed in another version)';
  if (type === 'ImportError' || /cannot import name/.test(message))
    return 'a name this snapshot does not export (added, moved or removed in another version)';
  if (type === 'ModuleNotFoundError') return 'a module this snapshot does not have (or one the simulated libraries do not cover)';
  if (type === 'AttributeError') return 'an attribute or method missing in this snapshot (renamed or removed)';
  if (type === 'KeyError') return 'a key or dataset column that this snapshot names differently (schema drift)';
  if (type === 'TypeError') return 'a call signature or return type that differs in this snapshot';
  return 'a behaviour change between library versions';
}

export function explanationText(e: DriftExplanation): string {
  const where = [e.library, e.when].filter(Boolean).join(' ');
  return where ? `${e.change} (${where})` : e.change;
}

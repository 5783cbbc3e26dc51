// Real Hugging Face drifts, as data: which primitive reproduces each one, with which params, the
// library and version where it changed, and under which versions the broken form raises (in the
// real library and in our simulated one, which mirrors the real gates: docs/simulated-libraries.md).
// Params go from the form the corpus is written in (the latest snapshot) to the form a user
// writing for another version would have used, so the broken script fails under the snapshot.
import { compareVersions } from '../versions';
import type { LibraryVersions } from '../schemas';

export interface DriftEntry {
  /** Stable id for logs and docs. */
  id: string;
  primitive: string;
  params: Record<string, unknown>;
  library: string;
  /** Version where the current form arrived or the drifted form went away. */
  changedIn: string;
  description: string;
  /**
   * Versions under which the drifted form raises: `library` at least `atLeast` and below `below`;
   * `always` when it raises under every snapshot. Absent: it is only deprecated (warns, still runs).
   */
  rejectedWhen?: { library: string; atLeast?: string; below?: string } | 'always';
  /** How the drifted form fails, e.g. `ImportError`. */
  failure?: string;
}

const TRAINING_ARGUMENT_CLASSES = ['TrainingArguments', 'Seq2SeqTrainingArguments', 'SFTConfig'] as const;

function perArgumentsClass(
  id: string,
  fields: { old_field: string; new_field: string },
  rest: Omit<DriftEntry, 'id' | 'primitive' | 'params'>,
): DriftEntry[] {
  return TRAINING_ARGUMENT_CLASSES.map((config_class) => ({ id: `${id}:${config_class}`, primitive: 'ModifyConfigField', params: { config_class, ...fields }, ...rest }));
}

export const DRIFT_TABLE: readonly DriftEntry[] = [
  // RenameApiCall
  {
    id: 'peft-int8-training',
    primitive: 'RenameApiCall',
    params: { old_name: 'prepare_model_for_kbit_training', new_name: 'prepare_model_for_int8_training' },
    library: 'peft',
    changedIn: '0.10',
    description: 'peft replaced prepare_model_for_int8_training with prepare_model_for_kbit_training and removed the old name',
    rejectedWhen: { library: 'peft', atLeast: '0.10' },
    failure: 'ImportError',
  },
  ...['AutoModelForCausalLM', 'AutoModelForSeq2SeqLM', 'AutoModelForMaskedLM'].map(
    (current): DriftEntry => ({
      id: `auto-model-with-lm-head:${current}`,
      primitive: 'RenameApiCall',
      params: { old_name: current, new_name: 'AutoModelWithLMHead' },
      library: 'transformers',
      changedIn: '4.46',
      description: `AutoModelWithLMHead (deprecated since transformers 4.0) was split into task classes such as ${current}; the simulated transformers drops it from 4.46`,
      rejectedWhen: { library: 'transformers', atLeast: '4.46' },
      failure: 'ImportError',
    }),
  ),
  // DeprecateImport
  {
    id: 'transformers-adamw',
    primitive: 'DeprecateImport',
    params: { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] },
    library: 'transformers',
    changedIn: '4.46',
    description: 'transformers.AdamW was deprecated in favour of torch.optim.AdamW and removed (the simulated transformers rejects it from 4.46)',
    rejectedWhen: { library: 'transformers', atLeast: '4.46' },
    failure: 'ImportError / AttributeError',
  },
  {
    id: 'pytorch-transformers-package',
    primitive: 'DeprecateImport',
    params: { old_module: 'transformers', new_module: 'pytorch_transformers' },
    library: 'transformers',
    changedIn: '2.0.0',
    description: 'the package was called pytorch_transformers until it was renamed transformers in 2.0.0',
    rejectedWhen: 'always',
    failure: 'ModuleNotFoundError',
  },
  {
    id: 'nlp-package',
    primitive: 'DeprecateImport',
    params: { old_module: 'datasets', new_module: 'nlp' },
    library: 'datasets',
    changedIn: '1.0.0',
    description: 'the datasets library was called nlp until it was renamed datasets in 1.0.0',
    rejectedWhen: 'always',
    failure: 'ModuleNotFoundError',
  },
  // RemoveDeprecatedMethod
  {
    id: 'datasets-load-metric',
    primitive: 'RemoveDeprecatedMethod',
    params: { current_call: 'evaluate.load', deprecated_call: 'load_metric', import_from: 'datasets' },
    library: 'datasets',
    changedIn: '3.0.0',
    description: 'datasets.load_metric was deprecated in favour of the evaluate library (2.x) and removed in datasets 3.0',
    rejectedWhen: { library: 'datasets', atLeast: '3.0' },
    failure: 'ImportError',
  },
  ...['rename_column', 'remove_columns'].map(
    (method): DriftEntry => ({
      id: `datasets-inplace-${method}`,
      primitive: 'RemoveDeprecatedMethod',
      params: { current_call: `.${method}`, deprecated_call: `.${method}_` },
      library: 'datasets',
      changedIn: '2.0.0',
      description: `the in-place Dataset.${method}_() was deprecated in datasets 1.4 in favour of ${method}() and removed in 2.0`,
      rejectedWhen: { library: 'datasets', atLeast: '2.0' },
      failure: 'AttributeError',
    }),
  ),
  {
    id: 'trainer-is-world-master',
    primitive: 'RemoveDeprecatedMethod',
    params: { current_call: '.is_world_process_zero', deprecated_call: '.is_world_master' },
    library: 'transformers',
    changedIn: '4.0.0',
    description: 'Trainer.is_world_master() was deprecated in favour of is_world_process_zero() and removed in transformers 4',
    rejectedWhen: { library: 'transformers', atLeast: '4.0' },
    failure: 'AttributeError',
  },
  // ChangeArgumentSignature
  ...['dataset_text_field', 'max_seq_length'].map(
    (keyword): DriftEntry => ({
      id: `trl-sft-${keyword}`,
      primitive: 'ChangeArgumentSignature',
      params: { function: 'SFTConfig', old_keyword: keyword, move_to: 'SFTTrainer' },
      library: 'trl',
      changedIn: '0.12',
      description: `SFTTrainer(${keyword}=...) moved into SFTConfig; trl 0.12 removed the SFTTrainer keyword`,
      rejectedWhen: { library: 'trl', atLeast: '0.12' },
      failure: 'TypeError',
    }),
  ),
  {
    id: 'load-dataset-use-auth-token',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'load_dataset', old_keyword: 'token', new_keyword: 'use_auth_token' },
    library: 'datasets',
    changedIn: '3.0.0',
    description: "load_dataset(use_auth_token=) was deprecated for token= in datasets 2.14 and removed in 3.0",
    rejectedWhen: { library: 'datasets', atLeast: '3.0' },
    failure: 'ValueError / TypeError',
  },
  ...['Trainer', 'Seq2SeqTrainer', 'SFTTrainer'].map(
    (cls): DriftEntry => ({
      id: `processing-class:${cls}`,
      primitive: 'ChangeArgumentSignature',
      params: { function: cls, old_keyword: 'processing_class', new_keyword: 'tokenizer' },
      library: cls === 'SFTTrainer' ? 'trl' : 'transformers',
      changedIn: cls === 'SFTTrainer' ? '0.12' : '4.46',
      description: `${cls}(tokenizer=) was renamed processing_class=; the old keyword still works with a FutureWarning`,
    }),
  ),
  {
    id: 'from-pretrained-use-auth-token',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'from_pretrained', old_keyword: 'token', new_keyword: 'use_auth_token' },
    library: 'transformers',
    changedIn: '4.34',
    description: 'from_pretrained(use_auth_token=) was deprecated for token=; it still works with a warning',
  },
  // ModifyConfigField
  ...perArgumentsClass(
    'evaluation-strategy',
    { old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
    {
      library: 'transformers',
      changedIn: '4.46',
      description: 'TrainingArguments.evaluation_strategy was renamed eval_strategy in transformers 4.41 and the old name removed in 4.46',
      rejectedWhen: { library: 'transformers', atLeast: '4.46' },
      failure: 'TypeError',
    },
  ),
  ...perArgumentsClass(
    'per-gpu-batch-size',
    { old_field: 'per_device_train_batch_size', new_field: 'per_gpu_train_batch_size' },
    { library: 'transformers', changedIn: '2.9', description: 'per_gpu_train_batch_size was deprecated for per_device_train_batch_size; still accepted with a warning' },
  ),
  ...perArgumentsClass(
    'no-cuda',
    { old_field: 'use_cpu', new_field: 'no_cuda' },
    { library: 'transformers', changedIn: '4.34', description: 'TrainingArguments.no_cuda was deprecated for use_cpu; still accepted with a warning' },
  ),
  // ChangeTokenizerBehavior
  {
    id: 'as-target-tokenizer',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'as_target_tokenizer' },
    library: 'transformers',
    changedIn: '4.45',
    description: 'labels used to be tokenized inside `with tokenizer.as_target_tokenizer():`; text_target= replaced it (deprecated 4.21, gone in the simulated 4.45)',
    rejectedWhen: { library: 'transformers', atLeast: '4.45' },
    failure: 'AttributeError',
  },
  {
    id: 'pad-to-max-length',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'pad_to_max_length' },
    library: 'transformers',
    changedIn: '4.45',
    description: 'pad_to_max_length=True was replaced by padding="max_length"; from 4.45 it is ignored with a warning, so sequences stay unpadded',
  },
  {
    id: 'is-pretokenized',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'is_pretokenized' },
    library: 'transformers',
    changedIn: '4.0.0',
    description: 'is_pretokenized=True was renamed is_split_into_words=True in transformers 3.x; the old keyword is ignored, so word lists are not split',
  },
  // RestructureDatasetSchema
  ...(
    [
      ['sentence', 'text', 'GLUE SST-2 names its text column "sentence"; imdb, rotten_tomatoes and most single-text datasets use "text"'],
      ['text', 'sentence', 'single-text datasets use "text"; the GLUE configurations call it "sentence"'],
      ['label', 'labels', 'datasets ship "label"; the Trainer reads "labels" and many preprocessing scripts rename it'],
      ['labels', 'label', 'datasets ship "label"; the Trainer reads "labels" and many preprocessing scripts rename it'],
      ['img', 'image', 'CIFAR-10 names its image column "img"; most image datasets use "image"'],
      ['image', 'img', 'most image datasets use "image"; CIFAR-10 calls it "img"'],
      ['highlights', 'summary', 'CNN/DailyMail calls the target "highlights"; XSum calls it "summary"'],
      ['article', 'document', 'CNN/DailyMail calls the source "article"; XSum calls it "document"'],
      ['ner_tags', 'tags', 'CoNLL-2003 calls the labels "ner_tags"; other token-classification datasets use "tags"'],
    ] as const
  ).map(
    ([old_column, new_column, description]): DriftEntry => ({
      id: `column:${old_column}->${new_column}`,
      primitive: 'RestructureDatasetSchema',
      params: { old_column, new_column },
      library: 'datasets',
      changedIn: 'dataset revision',
      description,
      rejectedWhen: 'always',
      failure: 'KeyError',
    }),
  ),
  // ChangeReturnType
  {
    id: 'trainer-evaluate-eval-prefix',
    primitive: 'ChangeReturnType',
    params: { change: 'metric_prefix', prefix: 'eval_' },
    library: 'transformers',
    changedIn: '4.0.0',
    description: 'Trainer.evaluate() returns metrics prefixed with metric_key_prefix="eval" (eval_accuracy, eval_loss); scripts written against plain metric names fail',
    rejectedWhen: 'always',
    failure: 'KeyError',
  },
  {
    id: 'model-output-tuple',
    primitive: 'ChangeReturnType',
    params: { change: 'output_index' },
    library: 'transformers',
    changedIn: '4.0.0',
    description: 'models returned tuples before transformers 4 (return_dict=True became the default); tuple indexing still works on ModelOutput',
  },
];

export function driftEntriesFor(primitive: string): DriftEntry[] {
  return DRIFT_TABLE.filter((d) => d.primitive === primitive);
}

/** True when the drifted form raises under `versions` (a missing library counts as not rejecting). */
export function breaksUnder(entry: DriftEntry, versions: LibraryVersions): boolean {
  const gate = entry.rejectedWhen;
  if (!gate) return false;
  if (gate === 'always') return true;
  const v = versions[gate.library];
  if (!v) return false;
  if (gate.atLeast && compareVersions(v, gate.atLeast) < 0) return false;
  if (gate.below && compareVersions(v, gate.below) >= 0) return false;
  return true;
}

/** One line for pickers: the drift and where it changed. */
export function driftText(entry: DriftEntry): string {
  return `${entry.description} (${entry.library} ${entry.changedIn})`;
}

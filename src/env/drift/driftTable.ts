// Real Hugging Face drifts, as data: which primitive reproduces each one, with which params, the
// library and version where it changed, and under which versions the broken form raises (in the
// real library and in our simulated one, which mirrors the real gates: docs/simulated-libraries.md).
// An entry linked to the drift catalog (CATALOG_LINKS) takes its versions from it and writes none of
// its own: resources/drifts/catalog.json is the one source of those boundaries.
// Params go from the form the corpus is written in (the latest snapshot) to the form a user
// writing for another version would have used, so the broken script fails under the snapshot.
import { compareVersions } from '../snapshots/versions';
import { catalogPath, driftCatalog } from './catalog';
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
  /**
   * `real`: a change a real release made (or a failure the real library raises); `synthetic`: a
   * made-up or pre-history drift, offered only when no real one applies.
   */
  provenance: Provenance;
  /** The matching entry of `resources/drifts/catalog.json`, when there is one. */
  catalogId?: string;
}

export type Provenance = 'real' | 'synthetic';

/**
 * An entry as written below: `provenance` defaults to `real`; `changedIn` and `rejectedWhen` are
 * written only by entries the catalog does not cover (linked ones get them from the catalog).
 */
type RawEntry = Omit<DriftEntry, 'provenance' | 'changedIn'> & { changedIn?: string; provenance?: Provenance };

const TRAINING_ARGUMENT_CLASSES = ['TrainingArguments', 'Seq2SeqTrainingArguments', 'SFTConfig'] as const;

function perArgumentsClass(
  id: string,
  fields: { old_field: string; new_field: string },
  rest: Omit<RawEntry, 'id' | 'primitive' | 'params'>,
  classes: readonly string[] = TRAINING_ARGUMENT_CLASSES,
): RawEntry[] {
  return classes.map((config_class) => ({
    id: `${id}:${config_class}`,
    primitive: 'ModifyConfigField',
    params: { config_class, ...fields },
    ...rest,
  }));
}

const ENTRIES: readonly RawEntry[] = [
  // RenameApiCall
  {
    id: 'peft-int8-training',
    primitive: 'RenameApiCall',
    params: { old_name: 'prepare_model_for_kbit_training', new_name: 'prepare_model_for_int8_training' },
    library: 'peft',
    description: 'peft replaced prepare_model_for_int8_training with prepare_model_for_kbit_training and removed the old name',
    failure: 'ImportError',
  },
  ...['AutoModelForCausalLM', 'AutoModelForSeq2SeqLM', 'AutoModelForMaskedLM'].map((current): RawEntry => ({
    id: `auto-model-with-lm-head:${current}`,
    primitive: 'RenameApiCall',
    params: { old_name: current, new_name: 'AutoModelWithLMHead' },
    library: 'transformers',
    description: `AutoModelWithLMHead (deprecated since transformers 4.0) was split into task classes such as ${current} and later removed`,
    failure: 'ImportError',
  })),
  // DeprecateImport
  {
    id: 'transformers-adamw',
    primitive: 'DeprecateImport',
    params: { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] },
    library: 'transformers',
    description: 'transformers.AdamW was deprecated in favour of torch.optim.AdamW and removed',
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
    // Older than every snapshot: no user of our snapshots writes this, so it is only a fallback.
    provenance: 'synthetic',
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
    provenance: 'synthetic',
  },
  // RemoveDeprecatedMethod
  {
    id: 'datasets-load-metric',
    primitive: 'RemoveDeprecatedMethod',
    params: { current_call: 'evaluate.load', deprecated_call: 'load_metric', import_from: 'datasets' },
    library: 'datasets',
    description: 'datasets.load_metric was deprecated in favour of the evaluate library (2.x) and removed in datasets 3.0',
    failure: 'ImportError',
  },
  ...['rename_column', 'remove_columns'].map((method): RawEntry => ({
    id: `datasets-inplace-${method}`,
    primitive: 'RemoveDeprecatedMethod',
    params: { current_call: `.${method}`, deprecated_call: `.${method}_` },
    library: 'datasets',
    changedIn: '2.0.0',
    description: `the in-place Dataset.${method}_() was deprecated in datasets 1.4 in favour of ${method}() and removed in 2.0`,
    rejectedWhen: { library: 'datasets', atLeast: '2.0' },
    failure: 'AttributeError',
  })),
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
  ...['dataset_text_field', 'max_seq_length'].map((keyword): RawEntry => ({
    id: `trl-sft-${keyword}`,
    primitive: 'ChangeArgumentSignature',
    params: { function: 'SFTConfig', old_keyword: keyword, move_to: 'SFTTrainer' },
    library: 'trl',
    description: `SFTTrainer(${keyword}=...) moved into SFTConfig (deprecated in trl 0.9); the SFTTrainer keyword was then removed`,
    failure: 'TypeError',
  })),
  {
    id: 'load-dataset-use-auth-token',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'load_dataset', old_keyword: 'token', new_keyword: 'use_auth_token' },
    library: 'datasets',
    description: 'load_dataset(use_auth_token=) was deprecated for token= in datasets 2.14 and removed in 3.0',
    failure: 'ValueError / TypeError',
  },
  ...['Trainer', 'Seq2SeqTrainer', 'SFTTrainer'].map((cls): RawEntry => ({
    id: `processing-class:${cls}`,
    primitive: 'ChangeArgumentSignature',
    params: { function: cls, old_keyword: 'processing_class', new_keyword: 'tokenizer' },
    library: cls === 'SFTTrainer' ? 'trl' : 'transformers',
    description: `${cls}(tokenizer=) was renamed processing_class=; the old keyword still works with a FutureWarning`,
  })),
  {
    id: 'from-pretrained-use-auth-token',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'from_pretrained', old_keyword: 'token', new_keyword: 'use_auth_token' },
    library: 'transformers',
    description: 'from_pretrained(use_auth_token=) was deprecated for token=; it still works with a warning',
  },
  // ModifyConfigField
  ...perArgumentsClass(
    'evaluation-strategy',
    { old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
    {
      library: 'transformers',
      description:
        'TrainingArguments.evaluation_strategy was renamed eval_strategy in transformers 4.41 (deprecated) and the old name later removed',
      failure: 'TypeError',
    },
  ),
  ...perArgumentsClass(
    'per-gpu-batch-size',
    { old_field: 'per_device_train_batch_size', new_field: 'per_gpu_train_batch_size' },
    {
      library: 'transformers',
      description: 'per_gpu_train_batch_size was deprecated for per_device_train_batch_size; still accepted with a warning',
    },
  ),
  ...perArgumentsClass(
    'no-cuda',
    { old_field: 'use_cpu', new_field: 'no_cuda' },
    { library: 'transformers', description: 'TrainingArguments.no_cuda was deprecated for use_cpu; still accepted with a warning' },
  ),
  // ChangeTokenizerBehavior
  {
    id: 'as-target-tokenizer',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'as_target_tokenizer' },
    library: 'transformers',
    description:
      'labels used to be tokenized inside `with tokenizer.as_target_tokenizer():`; text_target= replaced it (deprecated 4.21, then removed)',
    failure: 'AttributeError',
  },
  {
    id: 'pad-to-max-length',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'pad_to_max_length' },
    library: 'transformers',
    description: 'pad_to_max_length=True was replaced by padding="max_length"; it warned for years, then the keyword was removed',
  },
  {
    id: 'is-pretokenized',
    primitive: 'ChangeTokenizerBehavior',
    params: { behavior: 'is_pretokenized' },
    library: 'transformers',
    changedIn: '4.0.0',
    description:
      'is_pretokenized=True was renamed is_split_into_words=True in transformers 3.x; the old keyword is ignored, so word lists are not split',
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
  ).map(([old_column, new_column, description]): RawEntry => ({
    id: `column:${old_column}->${new_column}`,
    primitive: 'RestructureDatasetSchema',
    params: { old_column, new_column },
    library: 'datasets',
    changedIn: 'dataset revision',
    description,
    rejectedWhen: 'always',
    failure: 'KeyError',
    // Sibling datasets name columns differently, but no release changed them.
    provenance: 'synthetic',
  })),
  {
    id: 'transformers-generation-utils',
    primitive: 'DeprecateImport',
    params: { old_module: 'transformers.generation', new_module: 'transformers.generation_utils' },
    library: 'transformers',
    description: 'transformers.generation_utils became the transformers.generation package; the old module is gone',
    failure: 'ModuleNotFoundError',
  },
  {
    id: 'transformers-deepspeed-module',
    primitive: 'DeprecateImport',
    params: { old_module: 'transformers.integrations', new_module: 'transformers.deepspeed', names: ['is_deepspeed_zero3_enabled'] },
    library: 'transformers',
    description: 'transformers.deepspeed moved to transformers.integrations (deepspeed helpers); the old module is gone',
    failure: 'ModuleNotFoundError',
  },
  // ChangeReturnType
  {
    id: 'trainer-evaluate-eval-prefix',
    primitive: 'ChangeReturnType',
    params: { change: 'metric_prefix', prefix: 'eval_' },
    library: 'transformers',
    changedIn: '4.0.0',
    description:
      'Trainer.evaluate() returns metrics prefixed with metric_key_prefix="eval" (eval_accuracy, eval_loss); scripts written against plain metric names fail',
    rejectedWhen: 'always',
    failure: 'KeyError',
  },
  {
    id: 'model-output-tuple',
    primitive: 'ChangeReturnType',
    params: { change: 'output_index' },
    library: 'transformers',
    changedIn: '4.0.0',
    description:
      'models returned tuples before transformers 4 (return_dict=True became the default); tuple indexing still works on ModelOutput',
  },
  // The other direction: a script written for a newer release, run under an older snapshot.
  ...perArgumentsClass(
    'eval-strategy-added',
    { old_field: 'evaluation_strategy', new_field: 'eval_strategy' },
    {
      library: 'transformers',
      description: 'TrainingArguments(eval_strategy=) only exists from transformers 4.41; older releases know evaluation_strategy only',
      failure: 'TypeError',
    },
    ['TrainingArguments', 'Seq2SeqTrainingArguments'],
  ),
  ...perArgumentsClass(
    'sft-max-seq-length',
    { old_field: 'max_length', new_field: 'max_seq_length' },
    {
      library: 'trl',
      description: 'SFTConfig(max_seq_length=) was deprecated for max_length in trl 0.16 and removed in 0.20',
      failure: 'TypeError',
    },
    ['SFTConfig'],
  ),
  ...['Trainer', 'Seq2SeqTrainer'].map((cls): RawEntry => ({
    id: `processing-class-added:${cls}`,
    primitive: 'ChangeArgumentSignature',
    params: { function: cls, old_keyword: 'tokenizer', new_keyword: 'processing_class' },
    library: 'transformers',
    description: `${cls}(processing_class=) only exists from transformers 4.46; older releases take tokenizer=`,
    failure: 'TypeError',
  })),
  {
    id: 'from-pretrained-torch-dtype',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'from_pretrained', old_keyword: 'dtype', new_keyword: 'torch_dtype' },
    library: 'transformers',
    description: 'from_pretrained(torch_dtype=) was deprecated for dtype= in transformers 4.56; it still works with a warning',
  },
  {
    id: 'from-pretrained-dtype-added',
    primitive: 'ChangeArgumentSignature',
    params: { function: 'from_pretrained', old_keyword: 'torch_dtype', new_keyword: 'dtype' },
    library: 'transformers',
    description:
      'from_pretrained(dtype=) only exists from transformers 4.56; older releases pass the unknown keyword on to the model constructor',
    failure: 'TypeError',
  },
  {
    id: 'peft-kbit-training-added',
    primitive: 'RenameApiCall',
    params: { old_name: 'prepare_model_for_int8_training', new_name: 'prepare_model_for_kbit_training' },
    library: 'peft',
    changedIn: '0.4.0',
    description: 'prepare_model_for_kbit_training only exists from peft 0.4.0; older releases have prepare_model_for_int8_training',
    rejectedWhen: { library: 'peft', below: '0.4.0' },
    failure: 'ImportError',
  },
  // DeprecateImport: modules that moved
  ...(
    [
      ['trl.experimental.ppo', ['PPOConfig', 'PPOTrainer']],
      ['trl.experimental.online_dpo', ['OnlineDPOConfig', 'OnlineDPOTrainer']],
      ['trl.experimental.orpo', ['ORPOConfig', 'ORPOTrainer']],
      ['trl.experimental.cpo', ['CPOConfig', 'CPOTrainer']],
      ['trl.experimental.gkd', ['GKDConfig', 'GKDTrainer']],
    ] as const
  ).map(([module, names]): RawEntry => ({
    id: `trl-experimental-moved:${module}`,
    primitive: 'DeprecateImport',
    params: { old_module: module, new_module: 'trl' },
    library: 'trl',
    description: `${names.join(' and ')} moved to ${module} in the TRL v1 refactor (0.26, with deprecation stubs at the old place) and the top-level import was removed in 0.29`,
    failure: 'ImportError',
  })),
  ...(
    [
      ['trl', 'trl.experimental.ppo', ['PPOConfig', 'PPOTrainer']],
      ['trl', 'trl.experimental.online_dpo', ['OnlineDPOConfig', 'OnlineDPOTrainer']],
      ['trl', 'trl.experimental.orpo', ['ORPOConfig', 'ORPOTrainer']],
      ['trl', 'trl.experimental.cpo', ['CPOConfig', 'CPOTrainer']],
      ['trl', 'trl.experimental.gkd', ['GKDConfig', 'GKDTrainer']],
    ] as const
  ).map(([from, to, names]): RawEntry => ({
    id: `trl-experimental-added:${to}`,
    primitive: 'DeprecateImport',
    params: { old_module: from, new_module: to, names: [...names] },
    library: 'trl',
    description: `${to} only exists from trl 0.26 (the TRL v1 refactor); older releases have ${names.join(' and ')} at the top level`,
    failure: 'ModuleNotFoundError',
  })),
  {
    id: 'model-return-dict-default',
    primitive: 'ChangeReturnType',
    params: { change: 'return_dict' },
    library: 'transformers',
    changedIn: '4.0.0',
    description:
      "transformers 4.0 changed return_dict's default from False to True; 3.x-style code gets tuples (return_dict=False), so outputs.loss raises AttributeError",
    rejectedWhen: 'always',
    failure: 'AttributeError',
  },
  // ChangeDefaultValue: an explicit argument dropped, so a default that differs takes over
  {
    id: 'collator-mlm-default',
    primitive: 'ChangeDefaultValue',
    params: { function: 'DataCollatorForLanguageModeling', keyword: 'mlm', value: 'False' },
    library: 'transformers',
    changedIn: '2.9',
    description:
      'DataCollatorForLanguageModeling defaults to mlm=True (masked LM); causal-LM code must pass mlm=False, and a causal tokenizer has no mask token',
    rejectedWhen: 'always',
    failure: 'ValueError',
  },
  {
    id: 'remove-unused-columns-default',
    primitive: 'ChangeDefaultValue',
    params: { function: 'TrainingArguments', keyword: 'remove_unused_columns', value: 'False' },
    library: 'transformers',
    changedIn: '4.0.0',
    description:
      'TrainingArguments.remove_unused_columns defaults to True: the Trainer drops the columns the model forward does not name, which custom collators and transforms still read',
    rejectedWhen: 'always',
    failure: 'KeyError / ValueError',
  },
  {
    id: 'torch-load-weights-only-default',
    primitive: 'ChangeDefaultValue',
    params: { function: 'torch.load', keyword: 'weights_only', value: 'False' },
    library: 'torch',
    changedIn: '2.6',
    description:
      'torch.load(weights_only=) defaults to True from torch 2.6 (False before), so loading pickled Python objects fails unless weights_only=False is passed',
    rejectedWhen: { library: 'torch', atLeast: '2.6' },
    failure: 'UnpicklingError',
  },
  {
    id: 'report-to-default',
    primitive: 'ChangeDefaultValue',
    params: { function: 'TrainingArguments', keyword: 'report_to', value: '"none"' },
    library: 'transformers',
    changedIn: '5.0',
    description:
      'TrainingArguments.report_to defaulted to "all" (every installed integration) before transformers 5.0 and to "none" since; dropping report_to="none" turns integrations back on under 4.x',
  },
  // PassArgumentPositionally: keyword-only parameters passed by position
  ...['compute', 'add_batch'].map((method): RawEntry => ({
    id: `metric-${method}-keyword-only`,
    primitive: 'PassArgumentPositionally',
    params: { function: method, keywords: ['predictions', 'references'] },
    library: 'evaluate',
    changedIn: '0.1.0',
    description: `EvaluationModule.${method}(*, predictions=, references=) is keyword-only (as datasets.Metric.${method} was); the nlp-era positional call fails`,
    rejectedWhen: 'always',
    failure: 'TypeError',
  })),
];

/**
 * Entries (by id, or by the id before `:` for per-class families) that reproduce a drift of
 * resources/drifts/catalog.json. `old`: the broken script uses the old form, which the real library
 * rejects from the catalog's `changed_in` (when it errors then; a warning-only drift gets no gate).
 * `new`: the broken script uses the new form, which releases before `deprecated_in` lack.
 */
const CATALOG_LINKS: Readonly<Record<string, { id: string; form: 'old' | 'new' }>> = {
  'peft-int8-training': { id: 'peft-prepare-model-for-int8-training-removed', form: 'old' },
  'auto-model-with-lm-head': { id: 'transformers-automodelwithlmhead-removed', form: 'old' },
  'transformers-adamw': { id: 'transformers-adamw-removed', form: 'old' },
  'datasets-load-metric': { id: 'datasets-load-metric-removed', form: 'old' },
  'trl-sft-dataset_text_field': { id: 'trl-sfttrainer-dataset-text-field-kwarg', form: 'old' },
  // The same release (trl 0.13) removed SFTTrainer's max_seq_length= with dataset_text_field=.
  'trl-sft-max_seq_length': { id: 'trl-sfttrainer-dataset-text-field-kwarg', form: 'old' },
  'load-dataset-use-auth-token': { id: 'datasets-load-dataset-use-auth-token', form: 'old' },
  'processing-class:Trainer': { id: 'transformers-trainer-tokenizer-kwarg', form: 'old' },
  'processing-class:Seq2SeqTrainer': { id: 'transformers-trainer-tokenizer-kwarg', form: 'old' },
  'processing-class:SFTTrainer': { id: 'trl-sfttrainer-tokenizer-kwarg', form: 'old' },
  'from-pretrained-use-auth-token': { id: 'transformers-from-pretrained-use-auth-token', form: 'old' },
  'evaluation-strategy': { id: 'transformers-trainingargs-evaluation-strategy', form: 'old' },
  'per-gpu-batch-size': { id: 'transformers-trainingargs-per-gpu-batch-size', form: 'old' },
  'no-cuda': { id: 'transformers-trainingargs-no-cuda', form: 'old' },
  'as-target-tokenizer': { id: 'transformers-as-target-tokenizer-removed', form: 'old' },
  'pad-to-max-length': { id: 'transformers-pad-to-max-length-removed', form: 'old' },
  'eval-strategy-added': { id: 'transformers-trainingargs-evaluation-strategy', form: 'new' },
  'sft-max-seq-length': { id: 'trl-sftconfig-max-seq-length', form: 'old' },
  'processing-class-added': { id: 'transformers-trainer-tokenizer-kwarg', form: 'new' },
  'from-pretrained-torch-dtype': { id: 'transformers-from-pretrained-torch-dtype', form: 'old' },
  'from-pretrained-dtype-added': { id: 'transformers-from-pretrained-torch-dtype', form: 'new' },
  'trl-experimental-moved:trl.experimental.ppo': { id: 'trl-ppo-moved-to-experimental', form: 'old' },
  'trl-experimental-added:trl.experimental.ppo': { id: 'trl-ppo-moved-to-experimental', form: 'new' },
  'trl-experimental-moved:trl.experimental.online_dpo': { id: 'trl-online-dpo-moved-to-experimental', form: 'old' },
  'trl-experimental-added:trl.experimental.online_dpo': { id: 'trl-online-dpo-moved-to-experimental', form: 'new' },
  'trl-experimental-moved:trl.experimental.orpo': { id: 'trl-orpo-moved-to-experimental', form: 'old' },
  'trl-experimental-added:trl.experimental.orpo': { id: 'trl-orpo-moved-to-experimental', form: 'new' },
  'trl-experimental-moved:trl.experimental.cpo': { id: 'trl-cpo-moved-to-experimental', form: 'old' },
  'trl-experimental-added:trl.experimental.cpo': { id: 'trl-cpo-moved-to-experimental', form: 'new' },
  'trl-experimental-moved:trl.experimental.gkd': { id: 'trl-gkd-moved-to-experimental', form: 'old' },
  'trl-experimental-added:trl.experimental.gkd': { id: 'trl-gkd-moved-to-experimental', form: 'new' },
  'transformers-generation-utils': { id: 'transformers-generation-utils-module', form: 'old' },
  'transformers-deepspeed-module': { id: 'transformers-deepspeed-module', form: 'old' },
};

/** The entry with its catalog id and the catalog's version gate, when the catalog has the drift. */
function linkCatalog(e: RawEntry): DriftEntry {
  const link = CATALOG_LINKS[e.id] ?? CATALOG_LINKS[e.id.split(':')[0]];
  if (!link) {
    if (e.changedIn === undefined) throw new Error(`drift table: ${e.id} has neither a catalog link nor its own changedIn`);
    return { ...e, changedIn: e.changedIn, provenance: e.provenance ?? 'real' };
  }
  const c = driftCatalog().get(link.id);
  if (!c) throw new Error(`drift table: ${e.id} links to ${link.id}, which ${catalogPath()} lacks`);
  const entry: DriftEntry = { ...e, changedIn: c.changed_in, provenance: e.provenance ?? 'real', catalogId: c.id };
  delete entry.rejectedWhen;
  if (link.form === 'old') {
    if (c.expect_after === 'error') entry.rejectedWhen = { library: e.library, atLeast: c.changed_in };
  } else {
    const arrived = c.deprecated_in ?? c.changed_in;
    entry.changedIn = arrived;
    entry.rejectedWhen = { library: e.library, below: arrived };
  }
  return entry;
}

export const DRIFT_TABLE: readonly DriftEntry[] = ENTRIES.map(linkCatalog);

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

/**
 * transformers 4.0 moved every model's files under `transformers.models.<model>`; the flat
 * `transformers.modeling_bert` (etc.) of 3.x is gone. One entry per module a script imports.
 */
export function flatModelModuleDrift(module: string): DriftEntry | undefined {
  const m = /^transformers\.models\.\w+\.((?:modeling|modeling_tf|modeling_flax|tokenization|configuration|feature_extraction)_\w+)$/.exec(
    module,
  );
  if (!m) return undefined;
  return {
    id: `transformers-flat-model-module:${m[1]}`,
    primitive: 'DeprecateImport',
    params: { old_module: module, new_module: `transformers.${m[1]}` },
    library: 'transformers',
    changedIn: '4.0.0',
    description: `transformers 3.x had ${m[1]} at the top level (transformers.${m[1]}); 4.0 moved it to ${module}`,
    rejectedWhen: 'always',
    failure: 'ModuleNotFoundError',
    provenance: 'real',
  };
}

/** One line for pickers: the drift and where it changed. */
export function driftText(entry: DriftEntry): string {
  return `${entry.description} (${entry.library} ${entry.changedIn})`;
}

// Real Hugging Face drifts, as data. Each entry gives the primitive that reproduces it, the params
// (the "current" form the script is written in → the form from another library version), and the
// library version where the change happened. Candidates drawn from here come first in pickers and
// in the baseline drift generator; the simulated libraries reject the drifted form at the latest
// snapshot (docs/simulated-libraries.md).

export interface DriftEntry {
  primitive: string;
  params: Record<string, unknown>;
  library: string;
  /** Version where the current form arrived or the drifted form went away. */
  changedIn: string;
  description: string;
  /** The drifted form is still accepted at the latest snapshot (deprecated, warns): it does not break. */
  deprecatedOnly?: true;
}

export const DRIFT_TABLE: readonly DriftEntry[] = [
  // RenameApiCall: renamed classes and functions.
  { primitive: 'RenameApiCall', params: { old_name: 'AutoModelForCausalLM', new_name: 'AutoModelWithLMHead' }, library: 'transformers', changedIn: '4.46', description: 'AutoModelWithLMHead was split into AutoModelForCausalLM / AutoModelForMaskedLM / AutoModelForSeq2SeqLM and later removed' },
  { primitive: 'RenameApiCall', params: { old_name: 'AutoModelForSeq2SeqLM', new_name: 'AutoModelWithLMHead' }, library: 'transformers', changedIn: '4.46', description: 'AutoModelWithLMHead was split into task-specific auto classes' },
  { primitive: 'RenameApiCall', params: { old_name: 'prepare_model_for_kbit_training', new_name: 'prepare_model_for_int8_training' }, library: 'peft', changedIn: '0.10', description: 'peft renamed prepare_model_for_int8_training to prepare_model_for_kbit_training and removed the old name' },
  { primitive: 'RenameApiCall', params: { old_name: 'AutoImageProcessor', new_name: 'AutoFeatureExtractor' }, library: 'transformers', changedIn: '4.46', description: 'vision feature extractors became image processors' , deprecatedOnly: true },
  // DeprecateImport: names that moved between modules.
  { primitive: 'DeprecateImport', params: { old_module: 'torch.optim', new_module: 'transformers', name: 'AdamW' }, library: 'transformers', changedIn: '4.46', description: 'transformers.AdamW was deprecated and removed: use torch.optim.AdamW' },
  { primitive: 'DeprecateImport', params: { old_module: 'evaluate', new_module: 'datasets' }, library: 'datasets', changedIn: '3.0', description: 'metrics moved from datasets to the evaluate library' },
  { primitive: 'DeprecateImport', params: { old_module: 'trl', new_module: 'trl.trainer', name: 'SFTConfig' }, library: 'trl', changedIn: '0.12', description: 'trl reorganised its public modules' },
  // ChangeArgumentSignature: keyword arguments renamed on functions and classes.
  { primitive: 'ChangeArgumentSignature', params: { function: 'Trainer', old_kwarg: 'processing_class', new_kwarg: 'tokenizer' }, library: 'transformers', changedIn: '4.46', description: 'Trainer(tokenizer=...) became Trainer(processing_class=...)' , deprecatedOnly: true },
  { primitive: 'ChangeArgumentSignature', params: { function: 'load_dataset', old_kwarg: 'token', new_kwarg: 'use_auth_token' }, library: 'datasets', changedIn: '3.0', description: 'use_auth_token was replaced by token and removed from load_dataset' },
  { primitive: 'ChangeArgumentSignature', params: { function: 'from_pretrained', old_kwarg: 'token', new_kwarg: 'use_auth_token' }, library: 'transformers', changedIn: '4.34', description: 'use_auth_token was deprecated in favour of token' , deprecatedOnly: true },
  { primitive: 'ChangeArgumentSignature', params: { function: 'SFTTrainer', old_kwarg: 'processing_class', new_kwarg: 'tokenizer' }, library: 'trl', changedIn: '0.12', description: 'SFTTrainer(tokenizer=...) became processing_class=...' , deprecatedOnly: true },
  // ModifyConfigField: fields of config objects renamed or moved.
  { primitive: 'ModifyConfigField', params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' }, library: 'transformers', changedIn: '4.46', description: 'TrainingArguments.evaluation_strategy was renamed eval_strategy (4.41) and the old name removed' },
  { primitive: 'ModifyConfigField', params: { config_class: 'Seq2SeqTrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' }, library: 'transformers', changedIn: '4.46', description: 'evaluation_strategy was renamed eval_strategy' },
  { primitive: 'ModifyConfigField', params: { config_class: 'SFTConfig', old_field: 'max_seq_length', new_field: 'max_length' }, library: 'trl', changedIn: '0.12', description: 'SFT length and text-field options moved between SFTTrainer and SFTConfig and were renamed' },
  { primitive: 'ModifyConfigField', params: { config_class: 'TrainingArguments', old_field: 'use_cpu', new_field: 'no_cuda' }, library: 'transformers', changedIn: '4.46', description: 'TrainingArguments.no_cuda was replaced by use_cpu' },
  // ChangeTokenizerBehavior: tokenizer call conventions.
  { primitive: 'ChangeTokenizerBehavior', params: { old_kwarg: 'padding', old_value: '"max_length"', new_kwarg: 'pad_to_max_length', new_value: 'True' }, library: 'transformers', changedIn: '4.45', description: 'pad_to_max_length=True was replaced by padding="max_length"' , deprecatedOnly: true },
  { primitive: 'ChangeTokenizerBehavior', params: { old_kwarg: 'text_target', new_kwarg: 'target_text' }, library: 'transformers', changedIn: '4.45', description: 'targets are tokenized with text_target= (as_target_tokenizer() was removed)' },
  { primitive: 'ChangeTokenizerBehavior', params: { old_kwarg: 'truncation', old_value: 'True', new_kwarg: 'truncation_strategy', new_value: '"longest_first"' }, library: 'transformers', changedIn: '4.45', description: 'truncation_strategy= was replaced by truncation=' , deprecatedOnly: true },
  // RemoveDeprecatedMethod: the script regresses to a method that was removed.
  { primitive: 'RemoveDeprecatedMethod', params: { call: 'evaluate.load', deprecated_call: 'load_metric', deprecated_import: 'from datasets import load_metric' }, library: 'datasets', changedIn: '3.0', description: 'datasets.load_metric was removed: use evaluate.load' },
  { primitive: 'RemoveDeprecatedMethod', params: { call: 'trainer.is_world_process_zero', deprecated_call: 'trainer.is_world_master' }, library: 'transformers', changedIn: '4.0', description: 'Trainer.is_world_master was replaced by is_world_process_zero' },
  // RestructureDatasetSchema: dataset columns renamed.
  { primitive: 'RestructureDatasetSchema', params: { old_column: 'sentence', new_column: 'text' }, library: 'datasets', changedIn: '3.0', description: 'glue/sst2 style datasets expose the input as "sentence", others as "text"' },
  { primitive: 'RestructureDatasetSchema', params: { old_column: 'label', new_column: 'labels' }, library: 'datasets', changedIn: '2.14', description: 'label vs labels column naming between datasets and the Trainer' },
  { primitive: 'RestructureDatasetSchema', params: { old_column: 'ner_tags', new_column: 'tags' }, library: 'datasets', changedIn: '3.0', description: 'token classification datasets renamed their tag columns' },
  { primitive: 'RestructureDatasetSchema', params: { old_column: 'highlights', new_column: 'summary' }, library: 'datasets', changedIn: '3.0', description: 'summarization datasets differ in their target column' },
  { primitive: 'RestructureDatasetSchema', params: { old_column: 'img', new_column: 'image' }, library: 'datasets', changedIn: '3.0', description: 'cifar10 "img" vs "image" columns' },
  // ChangeReturnType: return values changed between dicts, objects and tuples.
  { primitive: 'ChangeReturnType', params: { from: 'subscript', to: 'attribute' }, library: 'evaluate', changedIn: '0.4', description: 'evaluate/Trainer metrics are plain dicts, model outputs are ModelOutput objects: attribute vs key access' },
];

export function driftEntriesFor(primitive: string): DriftEntry[] {
  return DRIFT_TABLE.filter((d) => d.primitive === primitive);
}

/** The candidate fields a drift-table entry contributes. */
export function driftNote(d: DriftEntry): { drift: string; breaks: boolean } {
  return { drift: `${d.library} ${d.changedIn}: ${d.description}${d.deprecatedOnly ? ' (still accepted with a warning at the latest snapshot)' : ''}`, breaks: !d.deprecatedOnly };
}

// A bounded run, before the first run: the task must train in seconds on a CPU with tiny models, so
// every option the script's own parser offers for the length of a run (steps, epochs, sequence
// lengths, subsets, eval/save/log intervals, batch sizes) is set small, unless the args set it
// already. Data-like: option names, in order of preference, and the value.
import { firstOption, type ParserOptions } from './parserOptions';
import { optionIndex, setOption } from './argEdits';
import type { Adaptation } from './provenance';

interface ShortRunSetting {
  /** Option names meaning the same thing, the first the parser has is set. */
  names: readonly string[];
  /** '' : a bare flag. */
  value: string;
}

/** Option names of the input sequence length (`cutoff_len`: alpaca-lora style scripts). */
export const SEQUENCE_LENGTH_OPTIONS = [
  'max_seq_length',
  'max_length',
  'seq_length',
  'block_size',
  'max_seq_len',
  'model_max_length',
  'max_source_length',
  'cutoff_len',
  'max_input_length',
  'max_len',
] as const;

export const SHORT_RUN_SETTINGS: readonly ShortRunSetting[] = [
  { names: ['max_steps', 'max_train_steps', 'total_steps', 'num_train_steps', 'train_steps', 'steps'], value: '8' },
  { names: ['num_train_epochs', 'epochs', 'num_epochs', 'n_epochs'], value: '1' },
  { names: ['per_device_train_batch_size', 'train_batch_size', 'batch_size'], value: '2' },
  { names: ['per_device_eval_batch_size', 'eval_batch_size'], value: '2' },
  { names: ['gradient_accumulation_steps'], value: '1' },
  { names: SEQUENCE_LENGTH_OPTIONS, value: '64' },
  { names: ['max_target_length', 'max_new_tokens', 'max_completion_length', 'generation_max_length', 'response_length'], value: '16' },
  { names: ['max_prompt_length'], value: '32' },
  { names: ['max_train_samples', 'train_subset', 'num_train_samples', 'n_train', 'train_size'], value: '16' },
  { names: ['max_eval_samples', 'eval_subset', 'num_eval_samples', 'size_valid_set', 'n_eval', 'max_predict_samples'], value: '8' },
  // On-policy trainers (TRL's PPO, RLOO: OnPolicyConfig) ignore max_steps: their length is the number of prompts
  // (`total_episodes`, else the dataset's length x epochs), each batch optimised `num_ppo_epochs` times (4 by
  // default; `ppo_epochs` before trl 0.9), with `num_sample_generations` (10) sample generations on the eval set
  // on the way. 16 prompts in batches of 2 is the same 8 updates as max_steps; no sampling on the side.
  { names: ['total_episodes'], value: '16' },
  { names: ['num_ppo_epochs', 'ppo_epochs'], value: '1' },
  { names: ['num_sample_generations'], value: '0' },
  { names: ['logging_steps', 'log_steps', 'log_freq'], value: '1' },
  { names: ['eval_steps'], value: '8' },
  { names: ['save_steps', 'checkpointing_steps'], value: '8' },
  { names: ['warmup_steps', 'num_warmup_steps'], value: '0' },
  // Batches load in the run's own process (TrainingArguments' default): a worker process costs a start-up
  // and meets releases' worker bugs the script never chose (trl 0.23's `worker_init_fn=seed_worker`, which
  // transformers 4.56 made a three-argument function: "seed_worker() missing 2 required positional arguments").
  { names: ['dataloader_num_workers'], value: '0' },
  { names: ['num_workers', 'preprocessing_num_workers', 'num_proc'], value: '1' },
  { names: ['report_to', 'log_with'], value: 'none' },
  // A script that saves only when given a folder (`if args.output_dir is not None: save_pretrained`) must
  // leave the model the verifier checks: a folder inside the run's own (fresh) directory.
  { names: ['output_dir', 'out_dir', 'save_dir'], value: 'out' },
  // Scripts that train only when asked (`if training_args.do_train:`): a bare flag (argparse store_true and
  // HfArgumentParser bools both take it).
  { names: ['do_train'], value: '' },
];

/** The bounded-run args and one adaptation per option set. */
export function boundRun(
  args: readonly string[],
  options: ParserOptions | undefined,
): { args: string[]; adaptations: Array<Omit<Adaptation, 'round'>> } {
  let out = [...args];
  const adaptations: Array<Omit<Adaptation, 'round'>> = [];
  for (const s of SHORT_RUN_SETTINGS) {
    const name = firstOption(options, s.names);
    if (!name || s.names.some((n) => optionIndex(out, n) >= 0)) continue;
    out = s.value === '' ? [...out, `--${name}`] : setOption(out, name, s.value);
    adaptations.push({
      rule: 'short-run',
      kind: 'args',
      error: `bounded run: the parser offers --${name}`,
      change: `--${name}${s.value === '' ? '' : ` ${s.value}`}`,
    });
  }
  return { args: out, adaptations };
}

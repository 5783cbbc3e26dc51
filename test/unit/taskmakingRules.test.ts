// make-task's run -> diagnose -> adapt rules on recorded error texts (as Python, argparse and the
// Hugging Face libraries print them), the bounded-run options and the argv edits.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { removeOption, setOption, optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, lastErrorLine, RULES, type RuleContext } from '../../src/env/taskmaking/rules';
import { boundRun } from '../../src/env/taskmaking/shortRun';
import { outputOf } from '../../src/env/taskmaking/adaptLoop';
import { verifySpecFor } from '../../src/env/taskmaking/verifySpecRules';

const HF_HELP = `usage: train.py [-h] --model_name_or_path MODEL_NAME_OR_PATH --output_dir OUTPUT_DIR
                [--bf16 [BF16]] [--fp16 [FP16]] [--tf32 TF32] [--use_cpu [USE_CPU]]
                [--max_steps MAX_STEPS] [--num_train_epochs NUM_TRAIN_EPOCHS]
                [--per_device_train_batch_size PER_DEVICE_TRAIN_BATCH_SIZE]
                [--logging_steps LOGGING_STEPS] [--save_steps SAVE_STEPS] [--eval_steps EVAL_STEPS]
                [--report_to REPORT_TO [REPORT_TO ...]] [--attn_implementation ATTN_IMPLEMENTATION]
                [--load_in_4bit [LOAD_IN_4BIT]] [--max_seq_length MAX_SEQ_LENGTH]`;
const ARGPARSE_HELP = `usage: run.py [-h] [--model-name MODEL_NAME] [--epochs EPOCHS] [--device DEVICE]`;

const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({
  script: 'import argparse\nfrom transformers import AutoModelForCausalLM\nAutoModelForCausalLM.from_pretrained("gpt2")\n',
  args: ['--output_dir', 'out'],
  env: {},
  options: parseHelpOptions(HF_HELP),
  ...over,
});

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 12, in <module>\n    main()\n${last}\n`;

describe('diagnose: recorded errors map to rules', () => {
  test('argparse: the following arguments are required (options and positionals)', () => {
    const d = diagnose(
      'usage: train.py [-h] --task_name TASK_NAME data_dir\ntrain.py: error: the following arguments are required: --task_name, --base_model, data_dir',
      ctx({ args: [] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'missing-required-option');
    const args = d.outcome.args!;
    assert.equal(optionValue(args, 'task_name'), 'x');
    // A model option gets the model id the script itself uses.
    assert.equal(optionValue(args, 'base_model'), 'gpt2');
    assert.equal(args[0], 'x', 'the positional comes first');
  });

  test('HfArgumentParser: unused arguments are removed', () => {
    const d = diagnose(
      traceback("ValueError: Some specified arguments are not used by the HfArgumentParser: ['--max_steps', '8']"),
      ctx({ args: ['--output_dir', 'out', '--max_steps', '8'] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.args, ['--output_dir', 'out']);
  });

  test('argparse: unrecognized arguments are removed', () => {
    const d = diagnose('train.py: error: unrecognized arguments: --epochs 1', ctx({ args: ['--epochs', '1', '--lr', '0.1'] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.args, ['--lr', '0.1']);
  });

  test("argparse: an invalid choice takes the parser's first choice", () => {
    const d = diagnose(
      "train.py: error: argument --task: invalid choice: 'x' (choose from 'sst2', 'mrpc')",
      ctx({ args: ['--task', 'x'] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'task'), 'sst2');
  });

  test('KeyError of an environment variable the script reads becomes a task env entry', () => {
    const script = 'import os\nmodel_dir = os.environ["SM_MODEL_DIR"]\ntrain = os.environ["SM_CHANNEL_TRAIN"]\n';
    const d = diagnose(traceback("KeyError: 'SM_CHANNEL_TRAIN'"), ctx({ script, env: { SM_MODEL_DIR: 'out/sm_model_dir' } }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.kind, 'env');
    assert.deepEqual(d.outcome.env, { SM_MODEL_DIR: 'out/sm_model_dir', SM_CHANNEL_TRAIN: 'data/train' });
  });

  test('a KeyError of a dict key the script does not read from the environment is not an env rule', () => {
    const d = diagnose(traceback("KeyError: 'LABEL'"), ctx({ script: 'row = {}\nrow["LABEL"]\n' }));
    assert.ok(d, 'recognised as a missing column');
    assert.equal(d.outcome.kind, 'refuse');
    assert.ok(d.outcome.kind === 'refuse' && d.outcome.rule === 'dataset-column-missing');
  });

  test("CPU: bf16, fp16, tf32 go off through the parser's own options", () => {
    const cases: Array<[string, string]> = [
      ["ValueError: Your setup doesn't support bf16/gpu. You need to assign use_cpu if you want to train the model on CPU.", 'bf16'],
      ["ValueError: fp16 mixed precision requires a GPU (not 'mps').", 'fp16'],
      ['ValueError: --tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7', 'tf32'],
    ];
    for (const [err, option] of cases) {
      const d = diagnose(traceback(err), ctx());
      assert.ok(d && d.outcome.kind === 'adapt', err);
      assert.equal(optionValue(d.outcome.args!, option), 'false', err);
    }
  });

  test('CPU: bf16 in the code with no option gets the no-mixed-precision shim, then is refused with a reason', () => {
    const err = traceback("ValueError: Your setup doesn't support bf16/gpu.");
    const d = diagnose(err, ctx({ options: parseHelpOptions(ARGPARSE_HELP) }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.kind, 'runtime');
    assert.deepEqual(d.outcome.runtime, { shims: ['no-mixed-precision'] });
    const again = diagnose(err, ctx({ options: parseHelpOptions(ARGPARSE_HELP), runtime: { shims: ['no-mixed-precision'] } }));
    assert.ok(again && again.outcome.kind === 'refuse');
    assert.match(again.outcome.reason, /bf16/);
  });

  test('flash-attention: attn_implementation eager', () => {
    const d = diagnose(
      traceback(
        'ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package flash_attn seems to be not installed.',
      ),
      ctx(),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'attn_implementation'), 'eager');
  });

  test('8-/4-bit: an option turns it off, else the no-quantization shim, else a refusal with the reason', () => {
    const err = traceback(
      'ImportError: Using `bitsandbytes` 4-bit quantization requires the latest version of bitsandbytes: `pip install -U bitsandbytes`',
    );
    const d = diagnose(err, ctx());
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'load_in_4bit'), 'false');
    const shim = diagnose(err, ctx({ options: undefined }));
    assert.ok(shim && shim.outcome.kind === 'adapt');
    assert.deepEqual(shim.outcome.runtime, { shims: ['no-quantization'] });
    const r = diagnose(err, ctx({ options: undefined, runtime: { shims: ['no-quantization'] } }));
    assert.ok(r && r.outcome.kind === 'refuse');
    assert.match(r.outcome.reason, /bitsandbytes/);
  });

  test('CUDA-only code: --device cpu when the parser has it, else the cuda-to-cpu shim, else refused as GPU-only', () => {
    const err = traceback('AssertionError: Torch not compiled with CUDA enabled');
    const withDevice = diagnose(err, ctx({ options: parseHelpOptions(ARGPARSE_HELP), args: [] }));
    assert.ok(withDevice && withDevice.outcome.kind === 'adapt');
    assert.deepEqual(withDevice.outcome.args, ['--device', 'cpu']);
    const shim = diagnose(err, ctx({ options: undefined }));
    assert.ok(shim && shim.outcome.kind === 'adapt');
    assert.deepEqual(shim.outcome.runtime, { shims: ['cuda-to-cpu'] });
    const none = diagnose(err, ctx({ options: undefined, runtime: { shims: ['cuda-to-cpu'] } }));
    assert.ok(none && none.outcome.kind === 'refuse');
    assert.match(none.outcome.reason, /GPU-only/);
  });

  test('deepspeed: the launch option is dropped when given, else refused', () => {
    const err = traceback("ModuleNotFoundError: No module named 'deepspeed'");
    const d = diagnose(err, ctx({ args: ['--deepspeed', 'ds.json', '--output_dir', 'out'] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.args, ['--output_dir', 'out']);
    const r = diagnose(err, ctx());
    assert.ok(r && r.outcome.kind === 'refuse');
  });

  test("a placeholder model id is replaced through the parser's model option", () => {
    const d = diagnose(
      traceback(
        "OSError: Repo id must be in the form 'repo_name' or 'namespace/repo_name': 'path/to/model'. Use `repo_type` argument if needed.",
      ),
      ctx({ options: parseHelpOptions('usage: x.py [--model_name_or_path MODEL_NAME_OR_PATH]') }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'gpt2');
    assert.match(d.outcome.adaptation.change, /path\/to\/model is not a model id/);
  });

  test("two options made inconsistent by the bounded run: the divisor takes the dividend's value", () => {
    const d = diagnose(
      traceback('ValueError: generation_batch_size (2) must be divisible by num_generations (8).'),
      ctx({ options: parseHelpOptions('usage: x.py [--num_generations NUM_GENERATIONS]') }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'num_generations'), '2');
  });

  test('a multiple of a product of options: the divisor options shrink to 1, else the dividend takes the product', () => {
    const err = traceback(
      'ValueError: `batch_size` must be a multiple of `mini_batch_size * gradient_accumulation_steps`, inexact division: 2 / 16 = 0.125',
    );
    const help =
      'usage: x.py [--batch_size BATCH_SIZE] [--mini_batch_size MINI_BATCH_SIZE] [--gradient_accumulation_steps GRADIENT_ACCUMULATION_STEPS]';
    const d = diagnose(err, ctx({ args: ['--batch_size', '2', '--gradient_accumulation_steps', '1'], options: parseHelpOptions(help) }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'multiple-of-options');
    assert.equal(optionValue(d.outcome.args!, 'mini_batch_size'), '1');
    assert.equal(optionValue(d.outcome.args!, 'batch_size'), '2');
    // The divisors are not options of the parser: the dividend grows to the product.
    const d2 = diagnose(err, ctx({ args: ['--batch_size', '2'], options: parseHelpOptions('usage: x.py [--batch_size BATCH_SIZE]') }));
    assert.ok(d2 && d2.outcome.kind === 'adapt');
    assert.equal(optionValue(d2.outcome.args!, 'batch_size'), '16');
  });

  test("a placeholder used as a key of the script's dict: a model type the offline hub has, and the model option follows", () => {
    const script = [
      'import argparse',
      'from transformers import BertConfig, BertForMaskedLM, GPT2Config, GPT2LMHeadModel',
      'ARCHS = {',
      '    "xlnet": (None, None),  # {"not": "a key"}',
      '    "bert": (BertConfig, BertForMaskedLM),',
      '    "gpt2": (GPT2Config, GPT2LMHeadModel),',
      '}',
      'TASKS = {"cola": 2, "mnli": 3}',
      'p = argparse.ArgumentParser()',
      'p.add_argument("--arch", required=True)',
      'p.add_argument("--task", required=True)',
      'p.add_argument("--model_name_or_path", required=True)',
      'args = p.parse_args()',
      'config_class, model_class = ARCHS[args.arch]',
      'n = TASKS[args.task]',
    ].join('\n');
    const options = parseHelpOptions('usage: t.py --arch ARCH --task TASK --model_name_or_path M');
    const d = diagnose(
      traceback("KeyError: 'x'"),
      ctx({ script, options, args: ['--arch', 'x', '--task', 'y', '--model_name_or_path', 'gpt2'] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'placeholder-key');
    assert.equal(optionValue(d.outcome.args!, 'arch'), 'bert');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'bert-base-cased');
    // Not a model type: the dict's first key.
    const t = diagnose(traceback("KeyError: 'y'"), ctx({ script, options, args: ['--arch', 'bert', '--task', 'y'] }));
    assert.ok(t && t.outcome.kind === 'adapt');
    assert.equal(optionValue(t.outcome.args!, 'task'), 'cola');
    // A KeyError of a value no option was given is not this rule's.
    const none = diagnose(traceback("KeyError: 'z'"), ctx({ script, options, args: ['--arch', 'bert'] }));
    assert.notEqual(none?.outcome.kind === 'adapt' ? none.outcome.adaptation.rule : undefined, 'placeholder-key');
  });

  test('an embedding index out of range: the sequence length option shrinks (cutoff_len too)', () => {
    const options = parseHelpOptions('usage: t.py [--base_model BASE_MODEL] [--cutoff_len CUTOFF_LEN]');
    const err = traceback('    return F.embedding(\nIndexError: index out of range in self');
    const d = diagnose(err, ctx({ options, args: ['--base_model', 'gpt2'] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'sequence-beyond-positions');
    assert.equal(optionValue(d.outcome.args!, 'cutoff_len'), '64');
    // Already short: not this rule's to answer.
    const again = diagnose(err, ctx({ options, args: ['--cutoff_len', '64'] }));
    assert.ok(!again || again.outcome.kind !== 'adapt' || again.outcome.adaptation.rule !== 'sequence-beyond-positions');
    // The bounded run sets it up front.
    assert.equal(optionValue(boundRun([], options).args, 'cutoff_len'), '64');
  });

  test("the bounded run loads batches in the run's own process; a preprocessing pool gets one worker", () => {
    const options = parseHelpOptions('usage: t.py [--dataloader_num_workers N] [--preprocessing_num_workers P]');
    const run = boundRun([], options).args;
    assert.equal(optionValue(run, 'dataloader_num_workers'), '0');
    assert.equal(optionValue(run, 'preprocessing_num_workers'), '1');
  });

  test('the bounded run bounds an on-policy trainer by prompts and optimisation epochs, with no side sampling', () => {
    // TRL's PPOConfig (trl.experimental.ppo at 1.0): max_steps does not end its loop.
    const options = parseHelpOptions(
      'usage: t.py [--max_steps MAX_STEPS] [--total_episodes TOTAL_EPISODES] [--num_ppo_epochs NUM_PPO_EPOCHS] [--num_sample_generations N]',
    );
    const run = boundRun([], options).args;
    assert.equal(optionValue(run, 'total_episodes'), '16');
    assert.equal(optionValue(run, 'num_ppo_epochs'), '1');
    assert.equal(optionValue(run, 'num_sample_generations'), '0');
    // The script's own value stands; trl < 0.9's `ppo_epochs` is the same knob.
    assert.equal(optionValue(boundRun(['--total_episodes', '64'], options).args, 'total_episodes'), '64');
    assert.equal(optionValue(boundRun([], parseHelpOptions('usage: t.py [--ppo_epochs PPO_EPOCHS]')).args, 'ppo_epochs'), '1');
  });

  test('the bounded run gives an optional output folder option a folder (the model must be saved), unless given', () => {
    const options = parseHelpOptions('usage: t.py [--output_dir OUTPUT_DIR] [--max_train_steps N]');
    assert.equal(optionValue(boundRun([], options).args, 'output_dir'), 'out');
    assert.equal(optionValue(boundRun(['--output_dir', 'mine'], options).args, 'output_dir'), 'mine');
    // A script that trains only when asked gets the bare flag.
    const run = boundRun([], parseHelpOptions('usage: t.py [--do_train] [--do_eval]')).args;
    assert.deepEqual(run, ['--do_train']);
  });

  test('an online trainer without a reward: the reward model option gets the policy model', () => {
    const options = parseHelpOptions('usage: t.py [--model_name_or_path M] [--reward_model_path REWARD_MODEL_PATH] [--judge JUDGE]');
    const d = diagnose(
      traceback('ValueError: `reward_funcs` must be provided.'),
      ctx({ options, args: ['--model_name_or_path', 'Qwen/Qwen2-0.5B-Instruct'] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'reward-model-option');
    assert.equal(optionValue(d.outcome.args!, 'reward_model_path'), 'Qwen/Qwen2-0.5B-Instruct');
    // No such option in the parser: no answer from this rule.
    const none = diagnose(
      traceback('ValueError: `reward_funcs` must be provided.'),
      ctx({ options: parseHelpOptions('usage: t.py [--model_name_or_path M]'), args: [] }),
    );
    assert.ok(!none || none.outcome.kind !== 'adapt' || none.outcome.adaptation.rule !== 'reward-model-option');
  });

  test('a PEFT adapter the script loads: the option names an adapter of the model the script otherwise names', () => {
    const options = parseHelpOptions('usage: t.py [--model_name_or_path M]');
    const hub = { needs: { models: [{ id: 'meta-llama/Llama-2-7b-hf' }], datasets: [] }, refusals: [] };
    const d = diagnose(
      traceback("ValueError: Can't find 'adapter_config.json' at 'gpt2'"),
      ctx({ options, args: ['--model_name_or_path', 'gpt2'], hub }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'peft-adapter');
    const id = optionValue(d.outcome.args!, 'model_name_or_path')!;
    assert.deepEqual(d.outcome.hub!.models, [
      { id, adapter_of: 'meta-llama/Llama-2-7b-hf', from: 'a PEFT adapter the script loads (model_name_or_path)' },
    ]);
    // A repo id huggingface_hub accepts: no '--' or '..'.
    assert.ok(!/--|\.\./.test(id), id);
    // No other model named: an adapter of the plain model the args gave.
    const own = diagnose(
      traceback("ValueError: Can't find 'adapter_config.json' at 'gpt2'"),
      ctx({ options, args: ['--model_name_or_path', 'gpt2'] }),
    );
    assert.ok(own && own.outcome.kind === 'adapt');
    assert.equal(own.outcome.hub!.models[0].adapter_of, 'gpt2');
  });

  test('a variable assigned only when an option is given (UnboundLocalError): the option gets a data file of its split', () => {
    const script = [
      'def main(args):',
      '    if args.dataset is not None:',
      '        ds = load_dataset(args.dataset)',
      '    else:',
      '        files = {}',
      '        if args.train_file is not None:',
      '            files["train"] = args.train_file',
      '            ext = args.train_file.split(".")[-1]',
      '        if args.validation_file is not None:',
      '            ext = args.validation_file.split(".")[-1]',
      '        ds = load_dataset(ext, data_files=files)',
    ].join('\n');
    const options = parseHelpOptions('usage: t.py [--dataset D] [--train_file TRAIN_FILE] [--validation_file VALIDATION_FILE]');
    const d = diagnose(
      traceback("UnboundLocalError: cannot access local variable 'ext' where it is not associated with a value"),
      ctx({ script, options, args: [] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'unset-input-option');
    assert.equal(optionValue(d.outcome.args!, 'train_file'), 'train.json');
    // Python < 3.11 words it differently; the train file given, the validation file is next.
    const older = diagnose(
      traceback("UnboundLocalError: local variable 'ext' referenced before assignment"),
      ctx({ script, options, args: ['--train_file', 'train.json'] }),
    );
    assert.ok(older && older.outcome.kind === 'adapt');
    assert.equal(optionValue(older.outcome.args!, 'validation_file'), 'validation.json');
  });

  test('a value the library no longer accepts: the option whose default it is takes the first valid one', () => {
    const script = [
      'from dataclasses import dataclass, field',
      '@dataclass',
      'class S:',
      '    optim: str = field(',
      '        default="adamw_hf",',
      '        metadata={"help": "x"},',
      '    )',
    ].join('\n');
    const options = parseHelpOptions('usage: t.py [--optim OPTIM]');
    const err = traceback(
      "ValueError: adamw_hf is not a valid OptimizerNames, please select one of ['adamw_torch', 'adamw_torch_fused', 'sgd']",
    );
    const d = diagnose(err, ctx({ script, options, args: [] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'invalid-enum-value');
    assert.equal(optionValue(d.outcome.args!, 'optim'), 'adamw_torch');
    // Given in the args: that option.
    const given = diagnose(err, ctx({ script: '', options, args: ['--optim', 'adamw_hf'] }));
    assert.ok(given && given.outcome.kind === 'adapt');
    assert.equal(optionValue(given.outcome.args!, 'optim'), 'adamw_torch');
  });

  test('a placeholder the library checks against a listed set of values takes the first; a written value is kept', () => {
    const script = [
      'import argparse',
      'p = argparse.ArgumentParser()',
      'p.add_argument("--speech_lang", type=str, required=True)',
      'p.add_argument("--lang_code", type=str, required=True)',
      'a = p.parse_args()',
    ].join('\n');
    const options = parseHelpOptions('usage: t.py --speech_lang SPEECH_LANG --lang_code LANG_CODE');
    const err = traceback("ValueError: Unsupported language: x. Language should be one of: ['english', 'chinese', 'german', 'spanish'].");
    const d = diagnose(err, ctx({ script, options, args: ['--speech_lang', 'x', '--lang_code', 'x'] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'placeholder-choice');
    assert.equal(optionValue(d.outcome.args!, 'speech_lang'), 'english');
    assert.equal(optionValue(d.outcome.args!, 'lang_code'), 'x', 'one option per round');
    // A value the derivation did not choose (the user's, the script's) is not a placeholder: no answer.
    const written = diagnose(
      traceback("ValueError: Unsupported language: hindi_x. Language should be one of: ['english', 'chinese']."),
      ctx({ script, options, args: ['--speech_lang', 'hindi_x', '--lang_code', 'hi'] }),
    );
    assert.ok(!written || written.outcome.kind !== 'adapt' || written.outcome.adaptation.rule !== 'placeholder-choice');
  });

  test("a script's own refusal of a CPU placement: the cuda-to-cpu shim first, then an honest GPU-only refusal", () => {
    const err = traceback('ValueError: Training on CPU or disk is not supported.');
    const first = diagnose(err, ctx({ script: 'import torch\n', options: undefined, args: [] }));
    assert.ok(first && first.outcome.kind === 'adapt', JSON.stringify(first));
    assert.equal(first.outcome.adaptation.rule, 'cpu-device');
    const again = diagnose(err, ctx({ script: 'import torch\n', options: undefined, args: [], runtime: { shims: ['cuda-to-cpu'] } }));
    assert.ok(again && again.outcome.kind === 'refuse' && again.outcome.rule === 'cpu-device', JSON.stringify(again));
    assert.match(again.outcome.reason, /GPU-only/);
  });

  test('a tracker value this release does not know ("none"): the bounded run\'s option is dropped', () => {
    const d = diagnose(
      traceback("ValueError: Unsupported logging capability: none. Choose between ['all', 'aim', 'tensorboard', 'wandb']"),
      ctx({ args: ['--log_with', 'none', '--batch_size', '2'] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.args, ['--batch_size', '2']);
  });

  test('a script that asks for a hub token (token=True) gets a placeholder one in its env (runs are offline)', () => {
    const err = traceback(
      'huggingface_hub.errors.LocalTokenNotFoundError: Token is required (`token=True`), but no token found. You need to provide a token or be logged in to Hugging Face with `huggingface-cli login` or `huggingface_hub.login`.',
    );
    const d = diagnose(err, ctx());
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'hub-token-required');
    assert.ok(d.outcome.env!.HF_TOKEN);
    // huggingface_hub < 0.18 reads HUGGING_FACE_HUB_TOKEN only: HF_TOKEN alone is answered with both.
    assert.equal(diagnose(err, ctx({ env: { HF_TOKEN: 'set' } }))?.outcome.kind, 'adapt');
    assert.equal(
      diagnose(err, ctx({ env: { HF_TOKEN: 'set', HUGGING_FACE_HUB_TOKEN: 'set' } }))?.outcome.kind === 'adapt' ? 'adapted again' : 'no',
      'no',
    );
  });

  test('an option naming the text column gets the conventional column, not a placeholder', () => {
    const options = parseHelpOptions('usage: t.py [--dataset_text_field DATASET_TEXT_FIELD]');
    const d = diagnose(
      traceback(
        "ValueError: You need to provide either `dataset_text_field` or `formatting_func` argument. Alternatively, you can skip the dataset preparation by using `SFTConfig(dataset_kwargs={'skip_prepare_dataset': True})`.",
      ),
      ctx({ options, args: [] }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'dataset_text_field'), 'text');
  });

  test('a run that logs to stdout: the traceback on stderr is still what the rules diagnose', () => {
    const stdout = Array.from({ length: 40 }, (_, i) => `INFO training argument ${i} = value`).join('\n');
    const stderr = traceback("UnboundLocalError: cannot access local variable 'ext' where it is not associated with a value");
    const script = 'def f(args):\n    if args.train_file is not None:\n        ext = args.train_file.split(".")[-1]\n    return ext\n';
    const d = diagnose(outputOf({ stdout, stderr }), ctx({ script, options: parseHelpOptions('usage: t.py [--train_file F]'), args: [] }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'unset-input-option');
  });

  test('a model id of the wrong architecture is a hub refusal when no model option can change it (else model-of-wrong-kind, test/unit/hubMedia.test.ts)', () => {
    const d = diagnose(
      traceback(
        "ValueError: Unrecognized configuration class <class 'transformers.models.gpt2.configuration_gpt2.GPT2Config'> for this kind of AutoModel: AutoModelForImageTextToText.",
      ),
      ctx({ options: undefined }),
    );
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'hub-item-unavailable');
  });

  test("a hub message in a traceback's source line is not the error: the exception line decides", () => {
    const out = [
      'Traceback (most recent call last):',
      '  File "site-packages/datasets/load.py", line 1, in f',
      "    raise ConnectionError(f\"Couldn't reach '{path}' on the Hub ({e.__class__.__name__})\") from e",
      "AttributeError: 'ModelConfig' object has no attribute 'trust_remote_code'",
    ].join('\n');
    assert.equal(diagnose(out, ctx()), undefined);
  });

  test('a model missing offline is refused, naming the seam', () => {
    const d = diagnose(
      traceback(
        "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like meta-llama/Llama-2-7b-hf is not the path to a directory containing a file named config.json.",
      ),
      ctx(),
    );
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'hub-item-unavailable');
    assert.match(d.outcome.reason, /Llama-2-7b-hf/);
  });

  test('a column the script uses but the dataset lacks is refused with the column; an unrelated KeyError is not', () => {
    const script = 'ds = load_dataset("imdb")\nds.map(lambda r: r["chosen"])\n';
    const d = diagnose(traceback("KeyError: 'chosen'"), ctx({ script }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'dataset-column-missing');
    assert.match(d.outcome.reason, /"chosen"/);
    assert.equal(diagnose(traceback("KeyError: 'other'"), ctx({ script })), undefined);
  });

  test('an error no rule knows is not diagnosed; the last error line is kept for the refusal', () => {
    const out = traceback('ZeroDivisionError: division by zero');
    assert.equal(diagnose(out, ctx()), undefined);
    assert.equal(lastErrorLine(out), 'ZeroDivisionError: division by zero');
  });

  test('every rule has a distinct id', () => {
    const ids = RULES.map((r) => r.id);
    assert.equal(new Set(ids).size, ids.length);
  });
});

describe('bounded run and argv edits', () => {
  test("the parser's run-length options are set small, user-given ones kept", () => {
    const { args, adaptations } = boundRun(['--output_dir', 'out', '--max_steps', '3'], parseHelpOptions(HF_HELP));
    assert.equal(optionValue(args, 'max_steps'), '3');
    assert.equal(optionValue(args, 'max_seq_length'), '64');
    assert.equal(optionValue(args, 'report_to'), 'none');
    assert.ok(adaptations.every((a) => a.rule === 'short-run'));
    assert.ok(!adaptations.some((a) => a.change.startsWith('--max_steps')));
  });

  test("help options keep the parser's own spelling (argparse does not accept --model_name for --model-name)", () => {
    const o = parseHelpOptions(ARGPARSE_HELP);
    assert.equal(o.get('model_name'), 'model-name');
    assert.equal(o.get('epochs'), 'epochs');
    assert.equal(o.has('h'), false);
  });

  test('no parser options: nothing is guessed', () => {
    assert.deepEqual(boundRun(['a'], undefined), { args: ['a'], adaptations: [] });
  });

  test('setOption/removeOption keep the rest in order, understand --name=value', () => {
    assert.deepEqual(setOption(['--a', '1', '--b=2'], 'b', '3'), ['--a', '1', '--b', '3']);
    assert.deepEqual(removeOption(['--flag', '--a', '1'], 'flag'), ['--a', '1']);
    assert.equal(optionValue(['--flag'], 'flag'), 'true');
  });
});

describe("verify-spec rules answer the verifier's findings", () => {
  test("base_model and head from the task's args and the script's Auto class", () => {
    const finding =
      'neither the original nor the saved model names the model it starts from (set verify.base_model and verify.head in tasks.json)';
    const r = verifySpecFor(finding, 'from transformers import AutoModelForSequenceClassification\n', [
      '--model_name_or_path',
      'distilbert-base-uncased',
    ]);
    assert.ok(r);
    assert.equal(r.spec.base_model, 'distilbert-base-uncased');
    assert.equal(r.spec.head, 'seqcls');
    assert.equal(r.adaptation.kind, 'verify');
  });

  test('no model option: the id the script loads through a variable, and a VisionText2Text class is a vlm', () => {
    const finding =
      'neither the original nor the saved model names the model it starts from (set verify.base_model and verify.head in tasks.json)';
    const script =
      'from transformers import AcmeForVisionText2Text, AutoProcessor\nckpt = "acme/vision-chat-1b"\nprocessor = AutoProcessor.from_pretrained(ckpt)\nmodel = AcmeForVisionText2Text.from_pretrained(ckpt)\n';
    const r = verifySpecFor(finding, script, []);
    assert.ok(r);
    assert.equal(r.spec.base_model, 'acme/vision-chat-1b');
    assert.equal(r.spec.head, 'vlm');
  });

  test("the saved model's architectures name another head than the script's first Auto class: that head", () => {
    // A script that loads a vision-language class for VLM types and a causal LM otherwise, run with a text model
    // (the verifier's wording, forgeenv_verify.py's loader_for).
    const finding =
      "AutoModelForImageTextToText does not map the saved GPT2Config, and the class the saved config's architectures name, GPT2LMHeadModel, is no vlm model (causal)";
    const r = verifySpecFor(finding, '', [], { base_model: 'gpt2', head: 'vlm' });
    assert.ok(r);
    assert.equal(r.spec.head, 'causal');
    assert.equal(r.spec.base_model, 'gpt2');
    // Declared already as that head, or a head the verifier does not know: no answer.
    assert.equal(verifySpecFor(finding, '', [], { base_model: 'gpt2', head: 'causal' }), undefined);
    assert.equal(verifySpecFor(finding.replace('(causal)', '(unknown head)'), '', [], { head: 'vlm' }), undefined);
  });

  test('a finding no rule answers gives nothing', () => {
    assert.equal(verifySpecFor('the held-out data has no image column (set verify.image)', '', []), undefined);
  });

  test('base_model: the option the script loads the head-class model from, before the usual model options', () => {
    const script = [
      'tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)',
      'value_model = AutoModelForSequenceClassification.from_pretrained(training_args.reward_model_path, num_labels=1)',
      'policy = AutoModelForCausalLM.from_pretrained(training_args.sft_model_path, **kw)',
    ].join('\n');
    const args = ['--model_name_or_path', 'gpt2', '--sft_model_path', 'EleutherAI/pythia-160m', '--reward_model_path', 'x/rm'];
    const r = verifySpecFor('cannot load the base model (set verify.base_model and verify.head in tasks.json)', script, args);
    assert.equal(r?.spec.base_model, 'EleutherAI/pythia-160m');
    assert.equal(r?.spec.head, 'causal');
    // Without that option in the args, the usual model options as before.
    const plain = verifySpecFor('set verify.base_model', script, ['--model_name_or_path', 'gpt2']);
    assert.equal(plain?.spec.base_model, 'gpt2');
  });
});

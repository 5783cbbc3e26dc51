// TRL/chat datasets and templates in make-task: the kinds of the columns a script hands to a chat
// template, placeholders (a dataset or model id the derivation chose) that do not fit the script, and
// the table of real schemas as a floor. Tiny scripts written here and recorded error texts of the
// real libraries (trl 1.x KTOTrainer, transformers' apply_chat_template), nothing from the corpus.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { KNOWN_DATASETS, SYNTHETIC_DATASET_ID } from '../../src/env/hub/datasetTable';
import { CHAT_PLACEHOLDER_MODEL, resolveModel } from '../../src/env/hub/modelTable';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { candidateHubNeeds } from '../../src/env/taskmaking/hubSupply';
import { placeholderDataset, placeholderModels } from '../../src/env/taskmaking/placeholders';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { deriveScriptArgs } from '../../src/env/tasks/scriptArgs';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 30, in <module>\n    trainer = Trainer(...)\n${last}\n`;
const ctx = (over: Partial<RuleContext>): RuleContext => ({
  script: '',
  args: [],
  env: {},
  options: undefined,
  hub: { needs: { models: [], datasets: [] }, refusals: [] },
  ...over,
});

// A preference script that applies the chat template to the columns itself (the TRL examples of 2024).
const SELF_TEMPLATED = [
  'from datasets import load_dataset',
  'from trl import ORPOTrainer',
  'ds = load_dataset("acme/paired-chats")',
  'def process(row):',
  '    row["chosen"] = tokenizer.apply_chat_template(row["chosen"], tokenize=False)',
  '    row["rejected"] = tokenizer.apply_chat_template(conversation=row["rejected"], tokenize=False)',
  '    return {"prompt": row["question"], **row}',
  'ds = ds.map(process)',
].join('\n');

// A KTO script that passes the dataset it is given straight to the trainer (trl's ScriptArguments).
const KTO_SCRIPT = [
  'from datasets import load_dataset',
  'from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser',
  'from trl import KTOConfig, KTOTrainer, ModelConfig, ScriptArguments',
  'parser = HfArgumentParser((ScriptArguments, KTOConfig, ModelConfig))',
  'script_args, training_args, model_args = parser.parse_args_into_dataclasses()',
  'model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)',
  'dataset = load_dataset(script_args.dataset_name)',
  'trainer = KTOTrainer(model, args=training_args, train_dataset=dataset["train"])',
].join('\n');

describe('column kinds: what the script hands to a chat template holds messages', () => {
  test('apply_chat_template(row["x"]) makes x a list of messages, positional or conversation=; other columns stay strings', () => {
    const d = deriveHubNeeds(SELF_TEMPLATED).datasets.find((x) => x.path === 'acme/paired-chats');
    assert.equal(d?.columns?.chosen, 'messages');
    assert.equal(d?.columns?.rejected, 'messages');
    assert.equal(d?.columns?.question, 'string');
    // The trainer's format adds `prompt` as a string (the standard format), not a conversation.
    assert.equal(d?.columns?.prompt, 'string');
  });

  test("a column used as a message's content (a string the script wraps itself) stays a string", () => {
    const script = [
      'from datasets import load_dataset',
      'from trl import DPOTrainer',
      'ds = load_dataset("acme/prefs", split="train")',
      'def fmt(sample):',
      '    p = tokenizer.apply_chat_template([{"role": "user", "content": sample["prompt"]}], tokenize=False)',
      '    return {"prompt": p, "chosen": sample["chosen"], "rejected": sample["rejected"]}',
      'ds = ds.map(fmt)',
    ].join('\n');
    const d = deriveHubNeeds(script).datasets[0];
    assert.deepEqual([d.columns?.prompt, d.columns?.chosen, d.columns?.rejected], ['string', 'string', 'string']);
  });

  test("the table of real schemas has TRL's trl-style HH dataset with conversational chosen/rejected", () => {
    const script = 'from datasets import load_dataset\nds = load_dataset("trl-internal-testing/hh-rlhf-helpful-base-trl-style")\n';
    const d = deriveHubNeeds(script).datasets[0];
    assert.deepEqual(d.columns, { chosen: 'messages', rejected: 'messages', prompt: 'string' });
    assert.deepEqual(d.splits, ['train', 'test']);
  });
});

describe('placeholder dataset: a fixed schema the derivation chose, swapped for a synthetic one', () => {
  // trl 1.x KTOTrainer on a dataset without `prompt`: extract_prompt reads `chosen` (recorded).
  const KTO_ERROR = traceback(
    '  File "/venv/lib/python3.12/site-packages/trl/data_utils.py", line 541, in extract_prompt\n    for idx in range(min(len(example["chosen"]), len(example["rejected"]))):\n                             ~~~~~~~^^^^^^^^^^\nKeyError: \'chosen\'',
  );

  test('the derivation gives the script no dataset of its own: a placeholder', () => {
    const args = deriveScriptArgs(KTO_SCRIPT).args;
    const p = placeholderDataset(KTO_SCRIPT, args);
    assert.ok(p, `a placeholder in ${args.join(' ')}`);
    assert.equal(p.option, 'dataset_name');
    assert.equal(p.replacement, SYNTHETIC_DATASET_ID);
  });

  test("KeyError of a TRL format key on a placeholder: the synthetic dataset, whose derived schema is the trainer's format", () => {
    const args = deriveScriptArgs(KTO_SCRIPT).args;
    const d = diagnose(KTO_ERROR, ctx({ script: KTO_SCRIPT, args }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-dataset');
    assert.equal(optionValue(d.outcome.args!, 'dataset_name'), SYNTHETIC_DATASET_ID);
    assert.match(d.outcome.adaptation.change, /placeholder/);
    const needs = candidateHubNeeds(KTO_SCRIPT, d.outcome.args!, {});
    const synthetic = needs.datasets.find((x) => x.path === SYNTHETIC_DATASET_ID);
    assert.deepEqual(synthetic?.columns, { prompt: 'string', completion: 'string', label: 'bool' });
  });

  test("a dataset the script names itself is not a placeholder: the column stays the script's problem", () => {
    const script = KTO_SCRIPT.replace('load_dataset(script_args.dataset_name)', 'load_dataset("imdb")');
    assert.equal(placeholderDataset(script, ['--dataset_name', 'imdb']), undefined);
    const d = diagnose(KTO_ERROR, ctx({ script, args: ['--dataset_name', 'imdb'] }));
    assert.notEqual(d?.outcome.kind === 'adapt' ? d.outcome.adaptation.rule : undefined, 'placeholder-dataset');
  });

  test("a KeyError of a key that is neither the script's nor a TRL format key is not a dataset column", () => {
    const d = diagnose(traceback("KeyError: 'weird_internal'"), ctx({ script: KTO_SCRIPT, args: ['--dataset_name', 'imdb'] }));
    assert.equal(d, undefined);
  });

  test("a column the script reads, on the derived placeholder of a required dataclass field, swaps; a user's own dataset does not", () => {
    const script = [
      'from dataclasses import dataclass',
      'from datasets import load_dataset',
      'from transformers import HfArgumentParser',
      '@dataclass',
      'class ScriptArguments:',
      '    dataset_id_or_path: str',
      'args, = HfArgumentParser((ScriptArguments,)).parse_args_into_dataclasses()',
      'ds = load_dataset(args.dataset_id_or_path, split="train")',
      'ds = ds.map(lambda s: {"p": s["system_prompt"] + s["prompt"]})',
    ].join('\n');
    const args = deriveScriptArgs(script).args;
    const d = diagnose(traceback("KeyError: 'system_prompt'"), ctx({ script, args }));
    assert.ok(d && d.outcome.kind === 'adapt', `${args.join(' ')}: ${JSON.stringify(d)}`);
    assert.equal(d.outcome.adaptation.rule, 'placeholder-dataset');
    const synthetic = candidateHubNeeds(script, d.outcome.args!, {}).datasets.find((x) => x.path === SYNTHETIC_DATASET_ID);
    assert.deepEqual(Object.keys(synthetic?.columns ?? {}).sort(), ['prompt', 'system_prompt']);
    // A table dataset the user chose is theirs: not a placeholder (the column rule answers instead).
    const known = Object.keys(KNOWN_DATASETS).find((k) => k.includes('/'))!;
    assert.equal(placeholderDataset(script, ['--dataset_id_or_path', known]), undefined);
  });
});

describe("chat templates: a placeholder model gets a chat model; the script's own model is the real behaviour", () => {
  const NO_TEMPLATE = traceback(
    'ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template argument was passed! For information about writing templates and setting the tokenizer.chat_template attribute, please see the documentation at https://huggingface.co/docs/transformers/main/en/chat_templating',
  );

  test('a derived model id (gpt2, the script names none) becomes a chat model, valid in every era', () => {
    const script = KTO_SCRIPT;
    const args = ['--model_name_or_path', 'gpt2', '--output_dir', 'out'];
    const d = diagnose(NO_TEMPLATE, ctx({ script, args }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'chat-template-missing');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), CHAT_PLACEHOLDER_MODEL);
    // The chat model is a Llama (every snapshot's transformers) with a real chat template.
    const r = resolveModel(CHAT_PLACEHOLDER_MODEL);
    assert.equal(r.model_type, 'llama');
    assert.ok(r.chat_template, 'the chat model has a template');
    assert.deepEqual(placeholderModels(script, d.outcome.args!), [], 'no second swap');
  });

  test("the script's own model without a template is refused as the real behaviour", () => {
    const script = KTO_SCRIPT.replace('model_args.model_name_or_path', '"gpt2"');
    const d = diagnose(NO_TEMPLATE, ctx({ script, args: ['--model_name_or_path', 'gpt2'] }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'chat-template-missing');
    assert.match(d.outcome.reason, /real libraries fail the same way/);
  });

  test('base models of families whose real tokenizers ship a template get it; a base without one gets none', () => {
    assert.equal(resolveModel('Qwen/Qwen2-0.5B').chat_template, 'chatml');
    assert.equal(resolveModel('Qwen/Qwen2.5-0.5B').chat_template, 'qwen2_5');
    assert.equal(resolveModel('Qwen/Qwen3-0.6B-Base').chat_template, 'qwen3');
    assert.equal(resolveModel('HuggingFaceTB/SmolLM2-135M').chat_template, 'chatml-smollm');
    assert.equal(resolveModel('meta-llama/Llama-2-7b-hf').chat_template, null);
    assert.equal(resolveModel('mistralai/Mistral-7B-v0.1').chat_template, null);
  });

  test("Zephyr and TinyLlama chat models get Zephyr's template (system turns allowed), not their base family's", () => {
    assert.equal(resolveModel('TinyLlama/TinyLlama-1.1B-Chat-v1.0').chat_template, 'zephyr');
    assert.equal(resolveModel('HuggingFaceH4/zephyr-7b-beta').chat_template, 'zephyr');
    assert.equal(resolveModel('mistralai/Mistral-7B-Instruct-v0.1').chat_template, 'mistral');
    assert.equal(resolveModel('meta-llama/Llama-2-7b-chat-hf').chat_template, 'llama2');
  });
});

describe('the table of real schemas is a floor', () => {
  test('a column the script reads that a table dataset lacks is added, and the adaptation says why', () => {
    const script =
      'from datasets import load_dataset\nds = load_dataset("trl-lib/ultrafeedback_binarized", split="train")\nds = ds.map(lambda s: {"x": s["system_prompt"]})\n';
    const needs = candidateHubNeeds(script, [], {});
    const d = diagnose(traceback("KeyError: 'system_prompt'"), ctx({ script, hub: { needs, refusals: [] } }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'dataset-column-missing');
    assert.match(d.outcome.adaptation.change, /real schema of trl-lib\/ultrafeedback_binarized lacks it/);
    const next = candidateHubNeeds(script, [], {}, d.outcome.hub).datasets[0];
    // The real features stay (chosen is still a conversation), with the script's column on top.
    assert.equal(next.columns?.chosen, 'messages');
    assert.equal(next.columns?.system_prompt, 'string');
  });
});

describe('an optional package a library asks for', () => {
  test("trl's reward function without math_verify is refused naming the package", () => {
    const d = diagnose(
      traceback(
        '  File "/venv/lib/python3.12/site-packages/trl/rewards/accuracy_rewards.py", line 65, in accuracy_reward\n    raise ImportError("Please install the `math_verify` package to use accuracy_reward")\nImportError: Please install the `math_verify` package to use accuracy_reward',
      ),
      ctx({}),
    );
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'module-not-installed');
    assert.match(d.outcome.reason, /math_verify/);
  });
});

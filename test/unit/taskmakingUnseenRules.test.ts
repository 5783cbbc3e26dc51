// Rules found by measuring make-task on scripts the project had never seen (bench:make-task --scripts-dir):
// recorded error texts and tiny scripts written here, never those scripts' text.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpFlags, parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, removedColumns, type RuleContext } from '../../src/env/taskmaking/rules';
import { deriveScriptArgs } from '../../src/env/tasks/scriptArgs';
import { SYNTHETIC_DATASET_ID } from '../../src/env/hub/datasetTable';

const ctxOf = (script: string, help: string, args: string[], over: Partial<RuleContext> = {}): RuleContext => ({
  script,
  args,
  env: {},
  options: parseHelpOptions(help),
  flags: parseHelpFlags(help),
  ...over,
});

const at = (line: string, last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 30, in <module>\n    ${line}\n  File "/venv/lib/python3.11/site-packages/datasets/load.py", line 2074, in load_dataset\n    builder_instance = load_dataset_builder(\n  File "<frozen posixpath>", line 152, in dirname\n${last}\n`;

describe('rules from the unseen scripts', () => {
  test('unset-path-option: a dataset id option left at None and handed to load_dataset gets a value', () => {
    const script =
      'from dataclasses import dataclass, field\nfrom datasets import load_dataset\n@dataclass\nclass A:\n    dataset_name: str = field(default=None)\nargs = parse()\nds = load_dataset(args.dataset_name)\n';
    const help = 'usage: t.py [-h] [--dataset_name DATASET_NAME] [--output_dir OUTPUT_DIR]';
    const err = at('ds = load_dataset(args.dataset_name)', 'TypeError: expected str, bytes or os.PathLike object, not NoneType');
    const d = diagnose(err, ctxOf(script, help, ['--output_dir', 'out']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'unset-path-option');
    assert.ok(optionValue(d.outcome.args!, 'dataset_name'));
    // Given already: no answer from this rule.
    const again = diagnose(err, ctxOf(script, help, ['--output_dir', 'out', '--dataset_name', 'x/y']));
    assert.ok(!again || again.outcome.kind !== 'adapt' || again.outcome.adaptation.rule !== 'unset-path-option');
  });

  test('companion-model-option: the unset option of the model role the error names gets the policy model', () => {
    const script =
      'trainer = Trainer(model=model_args.model_name_or_path, teacher_model=training_args.teacher_model_name_or_path, args=training_args)\n';
    const help = 'usage: t.py [-h] [--model_name_or_path M] [--teacher_model_name_or_path TEACHER_MODEL_NAME_OR_PATH] [--output_dir O]';
    const err = at(
      'trainer = Trainer(',
      'ValueError: You passed teacher_model_init_kwargs to the Config, but your teacher_model is already instantiated.',
    );
    const d = diagnose(err, ctxOf(script, help, ['--model_name_or_path', 'Qwen/Qwen2-0.5B', '--output_dir', 'out']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'companion-model-option');
    assert.equal(optionValue(d.outcome.args!, 'teacher_model_name_or_path'), 'Qwen/Qwen2-0.5B');
    // The script never reads that option: not this rule's answer.
    const unread = diagnose(err, ctxOf('trainer = Trainer(model=m)\n', help, ['--model_name_or_path', 'gpt2']));
    assert.ok(!unread || unread.outcome.kind !== 'adapt' || unread.outcome.adaptation.rule !== 'companion-model-option');
    // Set already: not again.
    const set = diagnose(err, ctxOf(script, help, ['--model_name_or_path', 'gpt2', '--teacher_model_name_or_path', 'gpt2']));
    assert.ok(!set || set.outcome.kind !== 'adapt' || set.outcome.adaptation.rule !== 'companion-model-option');
  });
});

describe('unset-input-option at module level', () => {
  test('a NameError of a variable assigned only under option guards: the plain model option gets a value', () => {
    const script = [
      'args = parser.parse_args()',
      'if args.bits in ["nf4"]:',
      '    net = load_quantized(args.residual_model_name_or_path)',
      'elif args.residual_model_name_or_path is not None:',
      '    net = load(args.residual_model_name_or_path)',
      'elif args.base_model_name_or_path is not None:',
      '    net = wrap(load(args.base_model_name_or_path))',
      'print(net)',
      '',
    ].join('\n');
    const help = 'usage: t.py [-h] [--residual_model_name_or_path R] [--base_model_name_or_path B] [--bits BITS]';
    const err = at('print(net)', "NameError: name 'net' is not defined");
    const d = diagnose(err, ctxOf(script, help, []));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'unset-input-option');
    assert.ok(optionValue(d.outcome.args!, 'base_model_name_or_path'));
    assert.equal(optionValue(d.outcome.args!, 'residual_model_name_or_path'), undefined);
    // A name the script never assigns under a guard (a typo, a missing import): no answer from this rule.
    const typo = diagnose(at('print(nett)', "NameError: name 'nett' is not defined"), ctxOf(script, help, []));
    assert.ok(!typo || typo.outcome.kind !== 'adapt' || typo.outcome.adaptation.rule !== 'unset-input-option');
  });
});

describe("snapshot fallback: an Enum member removed, with Python's suggestion", () => {
  test("AttributeError: TPU. Did you mean: 'TP'? moves to an older snapshot; train-and-eval-mode stays out", async () => {
    const { fallbackSnapshot } = await import('../../src/env/taskmaking/makeTask');
    const fit = (id: string) => ({ id, date: id, missing: [], unknown: 0, ready: true });
    const fits = [fit('2024-09'), fit('2025-03')];
    const last = "AttributeError: TPU. Did you mean: 'TP'?";
    const refusal = { rule: 'unrecognised-error', reason: `no rule recognises the error: ${last}` };
    assert.equal(fallbackSnapshot({ refusal }, fits, ['2025-03']), '2024-09');
    const help = 'usage: t.py [--do_train [DO_TRAIN]] [--do_eval [DO_EVAL]]';
    const d = diagnose(at('if x == DistributedType.TPU:', last), ctxOf('import accelerate\n', help, ['--do_train']));
    assert.ok(!d || d.outcome.kind !== 'adapt' || d.outcome.adaptation.rule !== 'train-and-eval-mode', JSON.stringify(d));
  });
});

describe("PRMTrainer's stepwise-supervision format", () => {
  test('a script with PRMTrainer gets prompt, completions (strings) and labels (bools), whatever it subscripts', async () => {
    const { deriveHubNeeds } = await import('../../src/env/hub/needs');
    const needs = deriveHubNeeds(
      'from trl import PRMTrainer\nfrom datasets import load_dataset\nd = load_dataset("me/steps")\nd = d.filter(lambda x: len(x["completions"]) > 0)\nt = PRMTrainer(model=m, train_dataset=d["train"])\n',
    );
    const columns = needs.datasets.find((x) => x.path === 'me/steps')?.columns;
    assert.deepEqual(columns, { completions: 'strings', prompt: 'string', labels: 'bools' });
  });

  test("GKDTrainer's dataset is conversational: a messages column", async () => {
    const { deriveHubNeeds } = await import('../../src/env/hub/needs');
    const needs = deriveHubNeeds(
      'from trl import GKDTrainer\nfrom datasets import load_dataset\nd = load_dataset("me/chats")\nt = GKDTrainer(model=m, train_dataset=d["train"])\n',
    );
    assert.deepEqual(needs.datasets.find((x) => x.path === 'me/chats')?.columns, { messages: 'messages' });
  });
});

describe('repo-local helpers named after their project', () => {
  test('`from utils_proj import X` not beside the script is reported missing; a package like `numpy` is not', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { collectLocalImports } = await import('../../src/env/taskmaking/localImports');
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-unseen-imports-'));
    try {
      const text = 'import numpy\nfrom utils_proj import ProjDataset\nfrom modeling_proj import Net\nimport torchvision\n';
      writeFileSync(join(dir, 'train.py'), text);
      const r = collectLocalImports(join(dir, 'train.py'), text);
      assert.deepEqual(r.missing.sort(), ['modeling_proj', 'utils_proj']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("diagnose's window and Python 3.11 carets", () => {
  test("the script's frame above a deep library traceback with caret lines is still read", () => {
    const script = 'from datasets import load_dataset\nargs = parse()\nds = load_dataset(args.dataset_name)\n';
    const help = 'usage: t.py [-h] [--dataset_name DATASET_NAME] [--output_dir OUTPUT_DIR]';
    const frames = ['load.py', 'load.py', 'builder.py', 'pathlib.py', 'pathlib.py', 'pathlib.py']
      .map((f, i) => `  File "/venv/lib/python3.11/${f}", line ${100 + i}, in f${i}\n    call_${i}(x)\n    ^^^^^^^^^^^^^^^^^^^^^^^^`)
      .join('\n');
    const err = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 3, in <module>\n    ds = load_dataset(args.dataset_name)\n         ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^\n${frames}\nTypeError: expected str, bytes or os.PathLike object, not NoneType\n`;
    const d = diagnose(err, ctxOf(script, help, ['--output_dir', 'out']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'unset-path-option');
  });
});

describe('honest refusals found on the unseen scripts', () => {
  test("NLTK data fetched from the network (nltk.download('punkt') offline) is refused, named", () => {
    const err =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 39, in compute_metrics\n    preds = [nltk.sent_tokenize(p) for p in preds]\nLookupError: \n**********************************************************************\n  Resource \u001b[93mpunkt\u001b[0m not found.\n  Please use the NLTK Downloader to obtain the resource:\n\n  >>> import nltk\n  >>> nltk.download(\'punkt\')\n**********************************************************************\n';
    const d = diagnose(err, ctxOf('import nltk\n', 'usage: t.py [-h]', []));
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'nltk-data-missing');
    assert.match(d.outcome.reason, /punkt/);
  });

  test('the whole NLTK message as nltk 3.9 prints it (the Resource line above the window): still refused, named', () => {
    // Recorded from nltk in the 2025-03 venv (paths shortened): sent_tokenize after an offline nltk.download('punkt').
    const recorded =
      "LookupError(resource_not_found)\nLookupError: \n**********************************************************************\n  Resource \u001b[93mpunkt_tab\u001b[0m not found.\n  Please use the NLTK Downloader to obtain the resource:\n\n  \u001b[31m>>> import nltk\n  >>> nltk.download('punkt_tab')\n  \u001b[0m\n  For more information see: https://www.nltk.org/data.html\n\n  Attempted to load \u001b[93mtokenizers/punkt_tab/english/\u001b[0m\n\n  Searched in:\n    - '/home/user/nltk_data'\n    - '/venv/nltk_data'\n    - '/venv/share/nltk_data'\n    - '/venv/lib/nltk_data'\n    - '/usr/share/nltk_data'\n    - '/usr/local/share/nltk_data'\n    - '/usr/lib/nltk_data'\n    - '/usr/local/lib/nltk_data'\n**********************************************************************\n\n";
    const d = diagnose(
      `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 39, in f\n    nltk.sent_tokenize(p)\n${recorded}`,
      ctxOf('import nltk\n', 'usage: t.py [-h]', []),
    );
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'nltk-data-missing');
    assert.match(d.outcome.reason, /punkt_tab/);
  });

  test('a fixed subset beyond the synthetic cap is refused with both numbers; a smaller overflow is not this rule', () => {
    const d = diagnose(
      at('dataset = dataset.select(range(50000))', 'IndexError: Index 49999 out of range for dataset of size 20000.'),
      ctxOf('ds.select(range(50000))\n', 'usage: t.py [-h]', []),
    );
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'dataset-subset-too-large');
    assert.match(d.outcome.reason, /50000\+ rows.*20000/);
    const small = diagnose(
      at('x = ds[12]', 'IndexError: Index 12 out of range for dataset of size 10.'),
      ctxOf('\n', 'usage: t.py [-h]', []),
    );
    assert.ok(!small || small.outcome.kind !== 'refuse' || small.outcome.rule !== 'dataset-subset-too-large');
  });
});

describe('api-in-no-snapshot with a single fitting snapshot', () => {
  test("an API error at the only snapshot with all the script's imports is refused as api-in-no-snapshot, said so", async () => {
    const { acrossSnapshots } = await import('../../src/env/taskmaking/makeTask');
    const refusal = {
      rule: 'unrecognised-error',
      reason: "no rule recognises the error: AttributeError: 'ScriptArgs' object has no attribute 'sanity_check'",
    };
    const r = acrossSnapshots(refusal, '2024-09', [], [], undefined, true);
    assert.equal(r.rule, 'api-in-no-snapshot');
    assert.match(r.reason, /at 2024-09 \(the only snapshot with all its imports\): AttributeError/);
    // Other snapshots fit (the fallback decides) or the error is not an API error: unchanged.
    assert.deepEqual(acrossSnapshots(refusal, '2024-09', [], [], undefined, false), refusal);
    const other = { rule: 'unrecognised-error', reason: 'no rule recognises the error: ValueError: bad value' };
    assert.deepEqual(acrossSnapshots(other, '2024-09', [], [], undefined, true), other);
  });
});

// datasets' wording when `.map(remove_columns=[...])` names columns the dataset lacks (datasets 2.x-4.x, recorded
// from trl 0.16's DPOTrainer on a dataset of text/label).
const REMOVE_ERROR = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 40, in <module>\n    trainer = DPOTrainer(\n  File "/venv/lib/python3.11/site-packages/datasets/arrow_dataset.py", line 3045, in map\n    raise ValueError(\nValueError: Column to remove ['rejected', 'chosen', 'prompt'] not in the dataset. Current columns in the dataset: ['text', 'label']\n`;

describe("datasets' remove_columns error names the missing columns", () => {
  test('removedColumns reads the repr of the list', () => {
    assert.deepEqual(removedColumns("['rejected', 'chosen', 'prompt']"), ['rejected', 'chosen', 'prompt']);
    assert.deepEqual(removedColumns(undefined), []);
  });

  test('on a placeholder dataset (the derivation chose it): the synthetic dataset, for a TRL format key', () => {
    const script = [
      'from datasets import load_dataset',
      'from trl import DPOConfig, DPOTrainer, ScriptArguments, TrlParser',
      'script_args, training_args = TrlParser((ScriptArguments, DPOConfig)).parse_args_and_config()',
      'dataset = load_dataset(script_args.dataset_name)',
      'trainer = DPOTrainer("gpt2", args=training_args, train_dataset=dataset["train"])',
    ].join('\n');
    const args = deriveScriptArgs(script).args;
    const hub = { needs: { models: [], datasets: [] }, refusals: [] };
    const d = diagnose(REMOVE_ERROR, { script, args, env: {}, options: undefined, hub });
    assert.ok(d && d.outcome.kind === 'adapt', `${args.join(' ')}: ${JSON.stringify(d)}`);
    assert.equal(d.outcome.adaptation.rule, 'placeholder-dataset');
    assert.equal(optionValue(d.outcome.args!, 'dataset_name'), SYNTHETIC_DATASET_ID);
    assert.match(d.outcome.adaptation.change, /column "(rejected|chosen|prompt)"/);
  });

  test("on the script's own synthetic dataset: every listed column the script quotes is added in one round", () => {
    const script = [
      'from datasets import load_dataset',
      'ds = load_dataset("acme/pairs", split="train")',
      'ds = ds.map(fmt, remove_columns=["question", "answer", "other"])',
      'def fmt(x):',
      '    return {"text": x["question"] + x["answer"]}',
    ].join('\n');
    const err = REMOVE_ERROR.replace("['rejected', 'chosen', 'prompt']", "['answer', 'question', 'unquoted_elsewhere']");
    const hub = { needs: { models: [], datasets: [{ path: 'acme/pairs', columns: { text: 'string' as const } }] }, refusals: [] };
    const d = diagnose(err, { script, args: [], env: {}, options: undefined, hub });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'dataset-column-missing');
    const cols = d.outcome.hub?.datasets.find((x) => x.path === 'acme/pairs')?.columns ?? {};
    assert.deepEqual(Object.keys(cols).sort(), ['answer', 'question', 'text']);
    // None of the listed columns is the script's: no answer from the column rules.
    const none = diagnose(REMOVE_ERROR, { script, args: [], env: {}, options: undefined, hub });
    assert.ok(!none || none.outcome.kind !== 'adapt' || !/column/.test(none.outcome.adaptation.rule), JSON.stringify(none));
    // A listed name that is no valid regular expression (the error quotes any column) is matched as text.
    const odd = REMOVE_ERROR.replace("['rejected', 'chosen', 'prompt']", "['a(b', '[x', 'answer']");
    const d2 = diagnose(odd, { script, args: [], env: {}, options: undefined, hub });
    assert.ok(d2 && d2.outcome.kind === 'adapt', JSON.stringify(d2));
    assert.deepEqual(Object.keys(d2.outcome.hub?.datasets.find((x) => x.path === 'acme/pairs')?.columns ?? {}).sort(), ['answer', 'text']);
  });
});

describe('placeholder-model-chat-setup', () => {
  // A 2024-style TRL example: a base model without a chat template gets ChatML (its vocabulary grows), the
  // reference model is loaded apart and is not resized.
  const script = [
    'from transformers import AutoModelForCausalLM, AutoTokenizer, HfArgumentParser',
    'from trl import KTOConfig, KTOTrainer, ModelConfig, setup_chat_format',
    'parser = HfArgumentParser((KTOConfig, ModelConfig))',
    'training_args, model_args = parser.parse_args_into_dataclasses()',
    'model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)',
    'ref_model = AutoModelForCausalLM.from_pretrained(model_args.model_name_or_path)',
    'tokenizer = AutoTokenizer.from_pretrained(model_args.model_name_or_path)',
    'if tokenizer.chat_template is None:',
    '    model, tokenizer = setup_chat_format(model, tokenizer)',
  ].join('\n');
  // torch's wording (recorded from a KTOTrainer run whose reference model kept the old vocabulary).
  const err = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 9, in <module>\n    trainer.train()\n  File "/venv/lib/python3.11/site-packages/torch/nn/functional.py", line 2551, in embedding\n    return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)\nIndexError: index out of range in self\n`;

  test('the placeholder model becomes the chat placeholder', () => {
    const args = ['--model_name_or_path', 'gpt2', '--output_dir', 'out'];
    const d = diagnose(err, { script, args, env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-model-chat-setup');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'HuggingFaceTB/SmolLM2-135M-Instruct');
  });

  test("the script's own model, or a script without the chat-format branch: not this rule", () => {
    const own = script.replace(/model_args\.model_name_or_path/g, '"acme/base-1b"');
    const d = diagnose(err, { script: own, args: ['--output_dir', 'out'], env: {}, options: undefined });
    assert.ok(!d || d.outcome.kind !== 'adapt' || d.outcome.adaptation.rule !== 'placeholder-model-chat-setup');
    const plain = script.split('\n').slice(0, 7).join('\n');
    const p = diagnose(err, { script: plain, args: ['--model_name_or_path', 'gpt2'], env: {}, options: undefined });
    assert.ok(!p || p.outcome.kind !== 'adapt' || p.outcome.adaptation.rule !== 'placeholder-model-chat-setup');
  });
});

describe('deepspeed-import', () => {
  test("accelerate's DeepSpeed wrappers, exported only with deepspeed installed: refused, named", () => {
    const err = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 41, in <module>\n    from accelerate.utils import DummyOptim, DummyScheduler, set_seed\nImportError: cannot import name 'DummyOptim' from 'accelerate.utils' (/venv/lib/python3.11/site-packages/accelerate/utils/__init__.py)\n`;
    const d = diagnose(err, { script: 'from accelerate.utils import DummyOptim\n', args: [], env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'deepspeed-import');
    assert.match(d.outcome.reason, /DummyOptim[^\n]*DeepSpeed is installed/);
    // Another name missing from accelerate.utils is an API error, not this refusal.
    const other = diagnose(err.replace(/DummyOptim/g, 'find_batch_size'), { script: '', args: [], env: {}, options: undefined });
    assert.ok(!other || other.outcome.kind !== 'refuse' || other.outcome.rule !== 'deepspeed-import');
  });
});

describe('pad-token-undefined: the tokenizer wording', () => {
  // transformers' tokenizer padding a batch without a pad token (all releases since 4.x).
  const err = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 80, in <module>\n    batch = tokenizer(texts, padding=True)\n  File "/venv/lib/python3.11/site-packages/transformers/tokenization_utils_base.py", line 2834, in _get_padding_truncation_strategies\n    raise ValueError(\nValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as \`pad_token\` \`(tokenizer.pad_token = tokenizer.eos_token e.g.)\` or add a new pad token via \`tokenizer.add_special_tokens({'pad_token': '[PAD]'})\`.\n`;
  const script = [
    'import argparse',
    'from transformers import AutoModel, AutoTokenizer',
    'p = argparse.ArgumentParser()',
    'p.add_argument("--model_name_or_path", required=True)',
    'args = p.parse_args()',
    'tokenizer = AutoTokenizer.from_pretrained(args.model_name_or_path)',
    'model = AutoModel.from_pretrained(args.model_name_or_path)',
  ].join('\n');

  test('a placeholder model: an encoder whose tokenizer has a pad token', () => {
    const d = diagnose(err, { script, args: ['--model_name_or_path', 'gpt2'], env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'pad-token-undefined');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'roberta-base');
    assert.match(d.outcome.adaptation.change, /no pad token in its tokenizer/);
  });

  test("the script's own model: refused, saying the tokenizer", () => {
    const own = script.replace(/args\.model_name_or_path/g, '"acme/base"');
    const d = diagnose(err, { script: own, args: [], env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.match(d.outcome.reason, /tokenizer has no pad token/);
  });
});

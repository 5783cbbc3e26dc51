// Saved (`load_from_disk`) datasets: the schema read off tiny scripts written here, the needs
// deriveHubNeeds gives them, the run-folder links, and the make-task rule keyed on datasets' error.
// Pure TypeScript (hubDiskDatasetsReal.test.ts builds and loads one with a real snapshot).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { missingDataFiles } from '../../src/env/hub/dataFiles';
import { diskDatasetLinks, diskDatasetSchema, isRunRelativeFolder } from '../../src/env/hub/diskDatasets';
import { deriveHubNeeds, HubNeedsSchema } from '../../src/env/hub/needs';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';

const LM_SCRIPT = [
  'import argparse',
  'from datasets import load_from_disk',
  'from transformers import AutoModelForCausalLM, Trainer, default_data_collator',
  'p = argparse.ArgumentParser()',
  'p.add_argument("--data_path", type=str, default="prepared/lm")',
  'p.add_argument("--model_id", type=str, default="EleutherAI/pythia-70m")',
  'args = p.parse_args()',
  'ds = load_from_disk(args.data_path)',
  'model = AutoModelForCausalLM.from_pretrained(args.model_id)',
  'Trainer(model=model, train_dataset=ds, data_collator=default_data_collator).train()',
].join('\n');

const IMAGE_SCRIPT = [
  'import os',
  'from datasets import load_from_disk',
  'from transformers import AutoModelForImageClassification',
  'train = load_from_disk(os.environ["TRAIN_DIR"])',
  'n = train.features["label"].num_classes',
  'model = AutoModelForImageClassification.from_pretrained("some/vit", num_labels=n)',
].join('\n');

describe('diskDatasetSchema', () => {
  test('a tokenized LM dataset handed to the trainer as saved: input ids, mask, labels; no splits', () => {
    const s = diskDatasetSchema(LM_SCRIPT);
    assert.deepEqual(s.columns, { input_ids: 'token_ids', attention_mask: 'token_ids', labels: 'token_ids' });
    assert.equal(s.splits, undefined);
  });

  test('an image classification dataset: pixel values, and the label the script reads off features', () => {
    const s = diskDatasetSchema(IMAGE_SCRIPT);
    assert.deepEqual(s.columns, { label: 'label', pixel_values: 'pixels' });
  });

  test('splits the script indexes make a DatasetDict; keys read through a split and a row are columns', () => {
    const s = diskDatasetSchema(
      [
        'from datasets import load_from_disk',
        'd = load_from_disk("data")',
        'x = d["train"][0]["question"]',
        'y = d["test"]',
        'd = d.map(f)',
      ].join('\n'),
    );
    assert.deepEqual(s.splits, ['train', 'test']);
    // Mapped: the script preprocesses it itself, so no model inputs are added.
    assert.deepEqual(s.columns, { question: 'string' });
  });

  test('a seq2seq (vision encoder-decoder) dataset: labels are token ids, read through ds["labels"]', () => {
    const s = diskDatasetSchema(
      [
        'from datasets import load_from_disk',
        'from transformers import VisionEncoderDecoderModel',
        'ds = load_from_disk(p)',
        'shape = ds[0]["pixel_values"][0]',
        'm = max(ds["labels"], key=len)',
      ].join('\n'),
    );
    assert.deepEqual(s.columns, { pixel_values: 'pixels', labels: 'token_ids' });
  });

  test('run-relative folders only', () => {
    assert.ok(isRunRelativeFolder('lm_dataset'));
    assert.ok(isRunRelativeFolder('./data/train/'));
    assert.ok(!isRunRelativeFolder('/opt/ml/input/data/train'));
    assert.ok(!isRunRelativeFolder('../elsewhere'));
  });
});

describe('deriveHubNeeds: load_from_disk', () => {
  test('a path from an argparse default becomes a disk need with the derived schema, valid as a task hub', () => {
    const n = deriveHubNeeds(LM_SCRIPT);
    const d = n.datasets.find((x) => x.path === 'prepared/lm');
    assert.ok(d, JSON.stringify(n.datasets));
    assert.equal(d.format, 'disk');
    assert.deepEqual(Object.keys(d.columns ?? {}), ['input_ids', 'attention_mask', 'labels']);
    assert.equal(d.splits, undefined, 'a plain Dataset, not train/test');
    assert.ok(HubNeedsSchema.safeParse(n).success);
    assert.ok(n.models.some((m) => m.id === 'EleutherAI/pythia-70m'));
  });

  test('the same path given in args is not also taken for a hub dataset id', () => {
    const n = deriveHubNeeds(LM_SCRIPT.replace('"--data_path"', '"--dataset_path"').replace('args.data_path', 'args.dataset_path'), [
      '--dataset_path',
      'my_ds',
    ]);
    assert.deepEqual(
      n.datasets.map((d) => [d.path, d.format]),
      [['my_ds', 'disk']],
    );
  });

  test('an absolute path or an unresolvable one is no need (the run error decides)', () => {
    assert.equal(deriveHubNeeds(IMAGE_SCRIPT).datasets.filter((d) => d.format === 'disk').length, 0);
    assert.equal(deriveHubNeeds('from datasets import load_from_disk\nd = load_from_disk("/opt/ml/data")\n').datasets.length, 0);
  });

  test('a disk need is no data file, and links point into the run hub', () => {
    const n = deriveHubNeeds(LM_SCRIPT);
    assert.deepEqual(missingDataFiles(n.datasets, {}), {});
    assert.deepEqual(diskDatasetLinks(n.datasets, '/hub/run1'), { 'prepared/lm': '/hub/run1/disk/prepared/lm' });
  });
});

describe('rule disk-dataset-missing', () => {
  const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({
    script: IMAGE_SCRIPT,
    args: [],
    env: { TRAIN_DIR: 'data/train' },
    options: undefined,
    hub: { needs: { models: [], datasets: [] }, refusals: [] },
    ...over,
  });
  const tb = (last: string) =>
    `Traceback (most recent call last):\n  File "/tmp/r/train.py", line 4, in <module>\n    train = load_from_disk(os.environ["TRAIN_DIR"])\n${last}\n`;

  test('datasets 2.x "Directory X not found": a saved dataset at X', () => {
    const d = diagnose(tb('FileNotFoundError: Directory data/train not found'), ctx());
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'disk-dataset-missing');
    const need = d.outcome.hub!.datasets[0];
    assert.equal(need.path, 'data/train');
    assert.equal(need.format, 'disk');
    assert.deepEqual(need.columns, { label: 'label', pixel_values: 'pixels' });
  });

  test('datasets 3.x+ "is neither a Dataset directory": same; already provided: refused with the reason', () => {
    const err = tb('FileNotFoundError: Directory lm_dataset is neither a `Dataset` directory nor a `DatasetDict` directory.');
    const d = diagnose(err, ctx({ script: LM_SCRIPT }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.hub!.datasets[0].path, 'lm_dataset');
    const again = diagnose(
      err,
      ctx({
        script: LM_SCRIPT,
        hub: {
          needs: { models: [], datasets: [{ path: 'lm_dataset', format: 'disk' }] },
          refusals: [{ kind: 'dataset', id: 'lm_dataset', reason: 'no Array3D' }],
        },
      }),
    );
    assert.ok(again && again.outcome.kind === 'refuse');
    assert.match(again.outcome.reason, /no Array3D/);
  });

  test('an absolute folder is refused with the reason; a script without load_from_disk is not this rule', () => {
    const d = diagnose(tb('FileNotFoundError: Directory /opt/ml/input/data/train not found'), ctx());
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.match(d.outcome.reason, /outside its run folder/);
    const other = diagnose(tb('FileNotFoundError: Directory data/train not found'), ctx({ script: 'import os\nos.listdir("x")\n' }));
    assert.ok(!other || other.outcome.kind !== 'adapt' || other.outcome.adaptation.rule !== 'disk-dataset-missing');
  });
});

describe('splits the script names through an option', () => {
  const SCRIPT = [
    'from dataclasses import dataclass, field',
    'from datasets import load_dataset',
    '@dataclass',
    'class DataArguments:',
    '    dataset_name: str = field(metadata={"help": "x"})',
    '    train_split_name: str = field(default="train+validation", metadata={"help": "x"})',
    '    eval_split_name: str = field(default="test", metadata={"help": "x"})',
    'def main(data_args):',
    '    tr = load_dataset(data_args.dataset_name, split=data_args.train_split_name)',
    '    ev = load_dataset(data_args.dataset_name, split=data_args.eval_split_name)',
    '    return tr, ev',
  ].join('\n');

  test('split=<option> resolves to the default, and "a+b" names both splits', () => {
    const n = deriveHubNeeds(SCRIPT, ['--dataset_name', 'org/speech']);
    const d = n.datasets.find((x) => x.path === 'org/speech');
    assert.ok(d);
    assert.deepEqual([...d.splits!].sort(), ['test', 'train', 'validation']);
  });

  test('an unknown split of a placeholder dataset: the synthetic dataset instead', () => {
    const c: RuleContext = {
      script: SCRIPT,
      args: ['--dataset_name', 'imdb', '--output_dir', 'out'],
      env: {},
      options: undefined,
      hub: { needs: { models: [], datasets: [] }, refusals: [] },
    };
    const d = diagnose(
      "Traceback (most recent call last):\nValueError: Unknown split \"validation\". Should be one of ['train', 'test', 'unsupervised'].\n",
      c,
    );
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-dataset');
    assert.ok(d.outcome.args!.includes('forgeenv/synthetic-dataset'));
    // The script's own dataset id is not a placeholder: no answer from this rule.
    const own = diagnose('ValueError: Unknown split "validation". Should be one of [\'train\'].\n', {
      ...c,
      script: SCRIPT.replace('metadata={"help": "x"})\n    train', 'default="imdb")\n    train'),
    });
    assert.ok(!own || own.outcome.kind !== 'adapt' || own.outcome.adaptation.rule !== 'placeholder-dataset');
  });
});

describe('column kinds from use', () => {
  test('a column handed to a tokenizer (through a local or directly) is text, whatever its name', () => {
    const script = [
      'from datasets import load_dataset',
      'from transformers import AutoTokenizer',
      'def main():',
      '    text_column = "sentence"',
      '    label_column = "label"',
      '    ds = load_dataset("json", data_files={"train": "data/train.jsonl"})',
      '    tok = AutoTokenizer.from_pretrained("t5-small")',
      '    def prep(examples):',
      '        inputs = examples[text_column]',
      '        targets = examples[label_column]',
      '        enc = tok(inputs, max_length=8)',
      '        enc["labels"] = tok(targets, max_length=2)["input_ids"]',
      '        enc["score"] = examples["score"]',
      '        return enc',
      '    ds.map(prep, batched=True)',
    ].join('\n');
    const d = deriveHubNeeds(script).datasets.find((x) => x.path === 'data/train.jsonl');
    assert.ok(d, JSON.stringify(deriveHubNeeds(script)));
    assert.equal(d.columns?.label, 'string');
    assert.equal(d.columns?.sentence, 'string');
    assert.equal(d.columns?.score, 'float', 'a column not tokenized keeps the kind its name gives');
    // Without the tokenizer call, `label` is a class label as before.
    const plain = deriveHubNeeds(script.replace('tok(targets, max_length=2)["input_ids"]', 'targets')).datasets.find(
      (x) => x.path === 'data/train.jsonl',
    );
    assert.equal(plain?.columns?.label, 'label');
  });
});

describe('load_dataset keywords that reach the builder config', () => {
  test("literal keywords other than load_dataset's own are recorded (the generator keeps those its release passes on)", () => {
    const script = [
      'from datasets import load_dataset',
      'ds = load_dataset("org/pairs", data_dir="data/finetune", split="train", use_auth_token=True, num_proc=4, streaming=False, lang="en", n=args.n)',
    ].join('\n');
    const d = deriveHubNeeds(script).datasets.find((x) => x.path === 'org/pairs');
    assert.ok(d);
    assert.equal(d.data_dir, 'data/finetune');
    assert.deepEqual(d.config_kwargs, { use_auth_token: true, lang: 'en' });
    assert.ok(HubNeedsSchema.safeParse(deriveHubNeeds(script)).success);
    assert.equal(
      deriveHubNeeds('from datasets import load_dataset\nload_dataset("org/pairs", split="train")\n').datasets[0].config_kwargs,
      undefined,
    );
  });
});

describe('handOver and run-folder links', () => {
  test(
    'a link is handed over itself: its target (the shared hub) keeps its owner, a dangling one is no error',
    { skip: process.getuid?.() !== 0 ? 'needs root (chown)' : false },
    async () => {
      const { mkdtempSync, mkdirSync, symlinkSync, statSync, lstatSync, rmSync } = await import('node:fs');
      const { tmpdir } = await import('node:os');
      const { join } = await import('node:path');
      const { handOver } = await import('../../src/env/sandbox/plan');
      const root = mkdtempSync(join(tmpdir(), 'forgeenv-handover-'));
      try {
        const hub = join(root, 'hub', 'disk', 'ds');
        mkdirSync(hub, { recursive: true });
        const run = join(root, 'run');
        mkdirSync(join(run, 'data'), { recursive: true });
        symlinkSync(hub, join(run, 'data', 'train'));
        symlinkSync(join(root, 'nowhere'), join(run, 'gone'));
        await handOver(run, 4242);
        assert.equal(lstatSync(join(run, 'data', 'train')).uid, 4242);
        assert.equal(statSync(hub).uid, 0, 'the target is not handed over');
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );
});

describe('rule placeholder-model-family', () => {
  const SCRIPT = [
    'import argparse',
    'from transformers import WhisperForConditionalGeneration, WhisperProcessor',
    'p = argparse.ArgumentParser()',
    'p.add_argument("--model_name_or_path", type=str, required=True)',
    'args = p.parse_args()',
    'processor = WhisperProcessor.from_pretrained(args.model_name_or_path, language="hi")',
    'model = WhisperForConditionalGeneration.from_pretrained(args.model_name_or_path)',
  ].join('\n');
  const c = (script: string, args: string[]): RuleContext => ({
    script,
    args,
    env: {},
    options: undefined,
    hub: { needs: { models: [], datasets: [] }, refusals: [] },
  });
  const err =
    "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like gpt2 is not the path to a directory containing a file named preprocessor_config.json.";

  test('the derived placeholder loaded with a Whisper class becomes a Whisper model id', () => {
    const d = diagnose(`Traceback (most recent call last):\n${err}\n`, c(SCRIPT, ['--model_name_or_path', 'gpt2']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-model-family');
    const i = d.outcome.args!.indexOf('--model_name_or_path');
    assert.match(d.outcome.args![i + 1], /whisper/);
  });

  test("Auto classes or the script's own id: not this rule", () => {
    const auto = diagnose(
      `${err}\n`,
      c(SCRIPT.replace(/Whisper(Processor|ForConditionalGeneration)\.from/g, 'AutoProcessor.from'), ['--model_name_or_path', 'gpt2']),
    );
    assert.ok(!auto || auto.outcome.kind !== 'adapt' || auto.outcome.adaptation.rule !== 'placeholder-model-family');
    const own = diagnose(`${err}\n`, c(SCRIPT.replace('required=True', 'default="gpt2"'), ['--model_name_or_path', 'gpt2']));
    assert.ok(!own || own.outcome.kind !== 'adapt' || own.outcome.adaptation.rule !== 'placeholder-model-family');
  });
});

describe('hub-URL data files and binary data files', () => {
  const SCRIPT = [
    'import os',
    'from dataclasses import dataclass, field',
    'from typing import Optional',
    'from datasets import load_dataset',
    '@dataclass',
    'class Args:',
    '    data_dir: Optional[str] = field(default=None)',
    'def main(args):',
    '    if args.data_dir:',
    '        data_files = {"train": [os.path.join(args.data_dir, "data", "train-0.parquet")], "test": os.path.join(args.data_dir, "test.parquet")}',
    '    else:',
    '        data_files = {"train": ["hf://datasets/org/cars/data/train-0.parquet"], "test": "hf://datasets/org/cars/test.parquet"}',
    '    ds = load_dataset("parquet", data_files=data_files)',
    '    imgs = [im.convert("RGB") for im in ds["train"][0:2]["image"]]',
    '    def transform(batch):',
    '        return {"pixel_values": batch["image"], "labels": batch["label"]}',
    '    ds.with_transform(transform)',
  ].join('\n');

  test('offline hf:// data files: the option that guards the local branch gets a value', () => {
    const c: RuleContext = {
      script: SCRIPT,
      args: ['--output_dir', 'out'],
      env: {},
      options: new Map([
        ['data_dir', 'data_dir'],
        ['output_dir', 'output_dir'],
      ]),
      hub: { needs: { models: [], datasets: [] }, refusals: [] },
    };
    const d = diagnose(
      'Traceback (most recent call last):\nhuggingface_hub.errors.OfflineModeIsEnabled: Cannot reach https://huggingface.co/api/datasets/org/cars: offline mode is enabled.\n',
      c,
    );
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'hub-url-data-files');
    assert.ok(d.outcome.args!.includes('--data_dir'));
  });

  test("data_files through a variable: the local branch's joined paths become parquet needs, linked from the hub", () => {
    const n = deriveHubNeeds(SCRIPT, ['--data_dir', 'local']);
    const paths = n.datasets.map((d) => d.path).sort();
    assert.deepEqual(paths, ['local/data/train-0.parquet', 'local/test.parquet'], 'hf:// URLs are no needs');
    assert.ok(n.datasets.every((d) => d.format === 'parquet' && d.columns?.image === 'image' && d.columns?.label === 'label'));
    assert.deepEqual(missingDataFiles(n.datasets, {}), {}, 'parquet is binary: no text file');
    assert.equal(diskDatasetLinks(n.datasets, '/h')['local/test.parquet'], '/h/files/local/test.parquet');
  });
});

describe('rule none-option-used', () => {
  test("an option's None default used as a value gets a value; one already given or not the parser's is left", () => {
    const script =
      'import argparse\np = argparse.ArgumentParser()\np.add_argument("--special_tokens", type=str, default=None)\nargs = p.parse_args()\ntoks = args.special_tokens.split(",")\n';
    const c: RuleContext = { script, args: [], env: {}, options: new Map([['special_tokens', 'special_tokens']]) };
    const err =
      'Traceback (most recent call last):\n  File "train.py", line 5, in <module>\n    toks = args.special_tokens.split(",")\nAttributeError: \'NoneType\' object has no attribute \'split\'\n';
    const d = diagnose(err, c);
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'none-option-used');
    assert.equal(d.outcome.args![0], '--special_tokens');
    const again = diagnose(err, { ...c, args: ['--special_tokens', 'x'] });
    assert.ok(!again || again.outcome.kind !== 'adapt' || again.outcome.adaptation.rule !== 'none-option-used');
  });
});

describe('executor links', () => {
  test('a run-folder link to a private copy resolves inside the run (sandboxed or not); absolute targets only', async () => {
    const { mkdtempSync, mkdirSync, writeFileSync, rmSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { executeScript } = await import('../../src/env/run/executor');
    const root = mkdtempSync(join(tmpdir(), 'forgeenv-links-'));
    try {
      const hub = join(root, 'hub');
      mkdirSync(join(hub, 'disk', 'ds'), { recursive: true });
      writeFileSync(join(hub, 'disk', 'ds', 'state.json'), '{"ok": 1}');
      const r = await executeScript({
        script: 'import json\nprint("LINKED", json.load(open("data/train/state.json"))["ok"])\n',
        mode: 'real',
        interpreter: 'python3',
        libraryVersions: { transformers: '4.50.0' },
        parentDir: root,
        timeoutMs: 30_000,
        validate: false,
        privateCopies: [hub],
        links: { 'data/train': join(hub, 'disk', 'ds') },
      });
      assert.equal(r.exit_code, 0, r.stderr);
      assert.match(r.stdout, /LINKED 1/);
      const bad = await executeScript({
        script: 'print(1)\n',
        mode: 'real',
        interpreter: 'python3',
        libraryVersions: {},
        parentDir: root,
        validate: false,
        links: { x: 'relative/target' },
      }).catch((e: Error) => ({ exit_code: -1, stdout: '', stderr: e.message }));
      assert.notEqual(bad.exit_code, 0);
      assert.match(bad.stderr, /absolute link target/);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('load_dataset through an alias', () => {
  test('`loading_method = load_dataset` then `loading_method(name, config, ...)`: the dataset and its config', () => {
    const script = [
      'import argparse',
      'from datasets import load_dataset',
      'p = argparse.ArgumentParser()',
      'p.add_argument("--dataset_name", default="org/voices")',
      'p.add_argument("--language_abbr", required=True)',
      'args = p.parse_args()',
      'loading_method = load_dataset',
      'if args.language_abbr == "debug":',
      '    train_split = "train[:100]"',
      'else:',
      '    train_split = "train+validation"',
      'train = loading_method(args.dataset_name, args.language_abbr, split=train_split)',
      'x = train[0]["sentence"]',
    ].join('\n');
    const d = deriveHubNeeds(script, ['--language_abbr', 'hi']).datasets.find((x) => x.path === 'org/voices' && x.config === 'hi');
    assert.ok(d, JSON.stringify(deriveHubNeeds(script, ['--language_abbr', 'hi']).datasets));
    assert.deepEqual([...d.splits!].sort(), ['train', 'validation']);
  });
});

describe('refusal of a missing audio decoder', () => {
  test("datasets' \"please install 'librosa'\" is a module-not-installed refusal naming it", () => {
    const d = diagnose(
      "Traceback (most recent call last):\nImportError: To support decoding audio files, please install 'librosa' and 'soundfile'.\n",
      { script: 'import datasets\n', args: [], env: {}, options: undefined },
    );
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'module-not-installed');
    assert.match(d.outcome.reason, /librosa/);
  });
});

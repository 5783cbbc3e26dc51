// deriveHubNeeds on small inline scripts, the model architecture table and synthetic data files.
// Pure TypeScript: nothing runs Python here (hubItemsReal.test.ts builds the items for real).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { missingDataFiles, synthesizeDataFile } from '../../src/env/hub/dataFiles';
import { resolveModel, UnknownModelError } from '../../src/env/hub/modelTable';
import { deriveHubNeeds, HubNeedsSchema, readConfigFile, unpackedLiteral } from '../../src/env/hub/needs';
import { TaskMetadataSchema } from '../../src/env/tasks/tasks';

const ids = (n: { models: { id: string }[] }) => n.models.map((m) => m.id).sort();
const ds = (n: ReturnType<typeof deriveHubNeeds>, path: string) => n.datasets.find((d) => d.path === path);

describe('deriveHubNeeds: model ids', () => {
  test('from_pretrained literals, pipeline/trainer model=, but not the base hub corpus models', () => {
    const n = deriveHubNeeds(
      [
        'from transformers import AutoModelForCausalLM, AutoTokenizer, pipeline',
        'from trl import SFTTrainer',
        'tok = AutoTokenizer.from_pretrained("Qwen/Qwen2-0.5B")',
        'm = AutoModelForCausalLM.from_pretrained(pretrained_model_name_or_path="meta-llama/Llama-2-7b-hf")',
        'g = AutoModelForCausalLM.from_pretrained("gpt2")',
        'p = pipeline("text-classification", model="lvwerra/distilbert-imdb")',
        'trainer = SFTTrainer(model="HuggingFaceTB/SmolLM2-135M", train_dataset=None)',
      ].join('\n'),
    );
    assert.deepEqual(ids(n), ['HuggingFaceTB/SmolLM2-135M', 'Qwen/Qwen2-0.5B', 'lvwerra/distilbert-imdb', 'meta-llama/Llama-2-7b-hf']);
    assert.match(n.models.find((m) => m.id === 'Qwen/Qwen2-0.5B')!.from!, /literal line 3/);
  });

  test('argparse and dataclass defaults, overridden by args, and YAML config files', () => {
    const script = [
      'import argparse',
      'from dataclasses import dataclass, field',
      'from transformers import AutoModel',
      '@dataclass',
      'class ModelArguments:',
      '    model_name_or_path: str = field(default="google/flan-t5-base", metadata={"help": "x"})',
      '    teacher_model: str = "bert-large-uncased"',
      'parser = argparse.ArgumentParser()',
      'parser.add_argument("--base-model", default="mistralai/Mistral-7B-v0.1")',
      'args = parser.parse_args()',
      'model = AutoModel.from_pretrained(args.base_model)',
    ].join('\n');
    assert.deepEqual(ids(deriveHubNeeds(script)), ['bert-large-uncased', 'google/flan-t5-base', 'mistralai/Mistral-7B-v0.1']);
    const overridden = deriveHubNeeds(script, ['--base_model', 'Qwen/Qwen2.5-0.5B-Instruct', 'recipe.yaml'], {
      'recipe.yaml': 'model_name_or_path: "HuggingFaceTB/SmolLM2-360M"  # the student\nlearning_rate: 2e-5\n',
    });
    assert.deepEqual(ids(overridden), ['HuggingFaceTB/SmolLM2-360M', 'Qwen/Qwen2.5-0.5B-Instruct', 'bert-large-uncased']);
    assert.match(overridden.models.find((m) => m.id === 'HuggingFaceTB/SmolLM2-360M')!.from!, /recipe\.yaml/);
  });

  test('`a or b` arguments resolve to the first part that names something', () => {
    const script =
      'import argparse\nfrom transformers import AutoTokenizer\np = argparse.ArgumentParser()\np.add_argument("--tokenizer_name", default=None)\np.add_argument("--model_name_or_path", default="microsoft/phi-2")\nargs = p.parse_args()\ntok = AutoTokenizer.from_pretrained(args.tokenizer_name or args.model_name_or_path)\n';
    assert.deepEqual(ids(deriveHubNeeds(script)), ['microsoft/phi-2']);
    assert.deepEqual(ids(deriveHubNeeds(script, ['--tokenizer_name', 'EleutherAI/pythia-160m'])), [
      'EleutherAI/pythia-160m',
      'microsoft/phi-2',
    ]);
  });

  test('placeholders and output folders are not model ids', () => {
    const n = deriveHubNeeds(
      'import argparse\np = argparse.ArgumentParser()\np.add_argument("--model_name", default="sagemaker")\np.add_argument("--model_dir", default="out")\n',
    );
    assert.deepEqual(n.models, []);
  });
});

describe('deriveHubNeeds: datasets and columns', () => {
  test('data_files built with os.path.join of a folder the script names are data files at that path', () => {
    const n = deriveHubNeeds(
      [
        'import os',
        'from datasets import load_dataset',
        'def main():',
        '    base_path = "corpora/reviews-v2"',
        '    text_column = "sentence"',
        '    ds = load_dataset("json", data_files={"train": os.path.join(base_path, "train.jsonl"), "validation": os.path.join(base_path, "val.jsonl")})',
        '    ds = ds.map(lambda ex: tok(ex["sentence"]))',
      ].join('\n'),
    );
    assert.deepEqual(n.datasets.map((d) => d.path).sort(), ['corpora/reviews-v2/train.jsonl', 'corpora/reviews-v2/val.jsonl']);
    assert.equal(ds(n, 'corpora/reviews-v2/train.jsonl')!.format, 'jsonl');
  });

  test('a column read through a name that holds it (examples[text_column])', () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'def main():',
        '    text_column = "sentence"',
        '    ds = load_dataset("acme/phrases")',
        '    def preprocess(examples):',
        '        return tok(examples[text_column])',
        '    ds = ds.map(preprocess, batched=True)',
      ].join('\n'),
    );
    assert.ok('sentence' in ds(n, 'acme/phrases')!.columns!, JSON.stringify(ds(n, 'acme/phrases')));
  });

  test('a column read through a name a tuple assignment gives (source, target = "question", "answer")', () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'raw = load_dataset("acme/qa")',
        'source_column, target_column = "question", "answer"',
        '(a, b) = ("x", "y")',
        'def preprocess(examples):',
        '    return tok(examples[source_column], text_target=examples[target_column])',
        'raw = raw.map(preprocess, batched=True)',
      ].join('\n'),
    );
    assert.deepEqual(Object.keys(ds(n, 'acme/qa')!.columns!).sort(), ['answer', 'question']);
    assert.equal(unpackedLiteral('(a, b) = ("x", "y")\n', 'b')?.value, 'y');
    assert.equal(unpackedLiteral('a, b = "x", "y", "z"\n', 'b'), undefined, 'counts differ: nothing');
  });

  test('a DatasetDict loaded without split= keeps the splits the script reads, whatever later split= loads add', () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'raw = load_dataset("acme/qa")',
        'if "validation" not in raw.keys():',
        '    raw["validation"] = load_dataset("acme/qa", split="train[:5%]")',
        'cols = raw["train"].column_names',
        'dev = raw["dev"]',
      ].join('\n'),
    );
    assert.deepEqual(ds(n, 'acme/qa')!.splits, ['train', 'test', 'dev']);
  });

  test('load_dataset(path, data_dir=...): one need per data_dir, each carrying it', () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'SUB = "data/eval/"',
        'train = load_dataset("acme/pairs", data_dir="data/train", split="train")',
        'test = load_dataset("acme/pairs", data_dir=SUB, split="train")',
        'print(train[0]["question"])',
      ].join('\n'),
    );
    const needs = n.datasets.filter((d) => d.path === 'acme/pairs');
    assert.deepEqual(needs.map((d) => d.data_dir).sort(), ['data/eval', 'data/train']);
    assert.ok(needs.every((d) => d.columns?.question === 'string'));
  });

  test("data_dir=<parameter>: one need per value the function's callers pass, and its default when one leaves it out", () => {
    const script = (calls: string[]) =>
      [
        'from datasets import load_dataset',
        'def get_pairs(data_dir: str = "data/rl", sanity_check: bool = False):',
        '    ds = load_dataset("acme/pairs", split="train", data_dir=data_dir)',
        '    return ds.map(lambda ex: {"prompt": ex["question"]})',
        ...calls,
      ].join('\n');
    const dirs = (n: ReturnType<typeof deriveHubNeeds>) =>
      n.datasets
        .filter((d) => d.path === 'acme/pairs')
        .map((d) => d.data_dir)
        .sort();
    assert.deepEqual(
      dirs(deriveHubNeeds(script(['train = get_pairs(data_dir="data/finetune")', 'ev = get_pairs("data/evaluation", True)']))),
      ['data/evaluation', 'data/finetune'],
    );
    assert.deepEqual(dirs(deriveHubNeeds(script(['train = get_pairs()', 'ev = get_pairs(data_dir="data/evaluation")']))), [
      'data/evaluation',
      'data/rl',
    ]);
    // Nobody calls it: the default alone.
    assert.deepEqual(dirs(deriveHubNeeds(script([]))), ['data/rl']);
  });

  test('an unknown dataset gets the columns map/filter functions and remove_columns read', () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'raw = load_dataset("acme/support-tickets", split="train[:10%]")',
        'def tokenize(batch):',
        '    return tok(batch["body"], batch["subject"], truncation=True)',
        'raw = raw.filter(lambda ex: ex["priority"] is not None)',
        'raw = raw.map(tokenize, batched=True, remove_columns=["body", "ticket_id"])',
        'raw = raw.rename_column("queue_label", "labels")',
        'firsts = [t["opened_at"] for t in raw]',
      ].join('\n'),
    );
    const d = ds(n, 'acme/support-tickets')!;
    assert.deepEqual(Object.keys(d.columns!).sort(), ['body', 'opened_at', 'priority', 'queue_label', 'subject', 'ticket_id']);
    assert.equal(d.columns!.queue_label, 'label');
    assert.deepEqual(d.splits, ['train']);
  });

  test("columns the script's example function only writes are its outputs, not the dataset's", () => {
    const n = deriveHubNeeds(
      [
        'from datasets import Audio, load_dataset',
        'raw = load_dataset("acme/voice-notes", "fr", split="train")',
        'def prepare(batch):',
        '    audio = batch["clip"]',
        '    batch["features"] = extractor(audio["array"]).input_features[0]',
        '    batch["seconds"] = len(audio["array"]) / audio["sampling_rate"]',
        '    batch["transcript"] = batch["transcript"].lower()',
        '    batch["labels"] = tok(batch["transcript"]).input_ids',
        '    return batch',
        'raw = raw.map(prepare, remove_columns=list(raw.features))',
        'raw = raw.filter(lambda s: s < 30, input_columns=["seconds"])',
      ].join('\n'),
    );
    const d = ds(n, 'acme/voice-notes')!;
    // transcript is read (and rewritten); features, seconds and labels are only written.
    assert.deepEqual(Object.keys(d.columns!).sort(), ['clip', 'transcript']);
  });

  test("a column one example function creates and a later one reads is the script's, not the dataset's", () => {
    const n = deriveHubNeeds(
      [
        'from datasets import load_dataset',
        'raw = load_dataset("acme/notes", split="train")',
        'def add_spans(examples):',
        '    examples["spans"] = [len(t) for t in examples["body"]]',
        '    examples["body"] = [t.strip() for t in examples["body"]]',
        '    return examples',
        'def tokenize(examples):',
        '    return tok(examples["body"], examples["spans"])',
        'raw = raw.map(add_spans, batched=True).map(tokenize, batched=True)',
      ].join('\n'),
    );
    // body is read before it is rewritten; spans is created by add_spans before tokenize reads it.
    assert.deepEqual(Object.keys(ds(n, 'acme/notes')!.columns!), ['body']);
  });

  test("the token-classification template's tag column, whose name the script computes, comes right after tokens", () => {
    const ner = [
      'from datasets import load_dataset',
      'raw = load_dataset("json", data_files={"train": "train.json"})',
      'column_names = raw["train"].column_names',
      'features = raw["train"].features',
      'text_column_name = "tokens" if "tokens" in column_names else column_names[0]',
      'label_column_name = f"{task}_tags" if f"{task}_tags" in column_names else column_names[1]',
      'if isinstance(features[label_column_name].feature, ClassLabel):',
      '    label_list = features[label_column_name].feature.names',
    ].join('\n');
    assert.deepEqual(ds(deriveHubNeeds(ner), 'train.json')!.columns, { tokens: 'tokens', ner_tags: 'tags' });
    // Without the sequence read, the words alone.
    const plain = ner.split('\n').slice(0, 5).join('\n');
    assert.deepEqual(ds(deriveHubNeeds(plain), 'train.json')!.columns, { tokens: 'tokens' });
  });

  test('TRL trainers add the columns their format needs', () => {
    const dpo = deriveHubNeeds(
      'from trl import DPOTrainer\nfrom datasets import load_dataset\nd = load_dataset("me/prefs")\nt = DPOTrainer(model=m, train_dataset=d["train"])\n',
    );
    assert.deepEqual(ds(dpo, 'me/prefs')!.columns, { prompt: 'string', chosen: 'string', rejected: 'string' });
    const kto = deriveHubNeeds('from trl import KTOTrainer\nfrom datasets import load_dataset\nd = load_dataset("me/binary")\n');
    assert.equal(ds(kto, 'me/binary')!.columns!.label, 'bool');
    const grpo = deriveHubNeeds(
      'from trl import GRPOTrainer\nfrom datasets import load_dataset\nd = load_dataset("me/prompts", split="train")\n',
    );
    assert.deepEqual(Object.keys(ds(grpo, 'me/prompts')!.columns!), ['prompt']);
    const sft = deriveHubNeeds(
      'from trl import SFTTrainer, SFTConfig\nfrom datasets import load_dataset\nd = load_dataset("me/chats")\ntok.apply_chat_template(x)\n',
    );
    assert.equal(ds(sft, 'me/chats')!.columns!.messages, 'messages');
    const field = deriveHubNeeds(
      'from trl import SFTTrainer, SFTConfig\nfrom datasets import load_dataset\nd = load_dataset("me/docs")\nc = SFTConfig(dataset_text_field="article")\n',
    );
    assert.deepEqual(ds(field, 'me/docs')!.columns, { article: 'string' });
  });

  test('well-known datasets get their real features from the table, config included', () => {
    const n = deriveHubNeeds(
      'from datasets import load_dataset\nd = load_dataset("glue", "mrpc")\ne = load_dataset("Anthropic/hh-rlhf")\n',
    );
    assert.deepEqual(ds(n, 'glue')!.columns, { sentence1: 'string', sentence2: 'string', label: 'label', idx: 'int' });
    assert.deepEqual(ds(n, 'glue')!.labels, { label: ['not_equivalent', 'equivalent'] });
    assert.deepEqual(ds(n, 'Anthropic/hh-rlhf')!.columns, { chosen: 'string', rejected: 'string' });
    // The base hub's corpus datasets are served as they are.
    assert.equal(ds(deriveHubNeeds('from datasets import load_dataset\nd = load_dataset("glue", "sst2")\n'), 'glue'), undefined);
  });

  test('dataset ids from args and config names', () => {
    const script = 'from datasets import load_dataset\nimport sys\nd = load_dataset(args.dataset_name, args.dataset_config_name)\n';
    const n = deriveHubNeeds(script, ['--dataset_name', 'wikitext', '--dataset_config_name', 'wikitext-103-raw-v1']);
    assert.deepEqual(
      n.datasets.map((d) => [d.path, d.config]),
      [['wikitext', 'wikitext-103-raw-v1']],
    );
  });

  test('local data files: load_dataset("json", data_files=...) and --train_file', () => {
    const n = deriveHubNeeds(
      'from datasets import load_dataset\nd = load_dataset("json", data_files={"train": "data/train.jsonl", "test": "data/test.jsonl"})\ne = load_dataset("csv", data_files=args.train_file)\nx = d["train"][0]["question"]\ndef f(example):\n    return {"q": example["question"], "a": example["answer"]}\nd = d.map(f)\n',
      ['--train_file', 'extra.csv'],
    );
    const files = n.datasets.filter((d) => d.format).map((d) => [d.path, d.format]);
    assert.deepEqual(files.sort(), [
      ['data/test.jsonl', 'jsonl'],
      ['data/train.jsonl', 'jsonl'],
      ['extra.csv', 'csv'],
    ]);
    assert.deepEqual(Object.keys(ds(n, 'data/train.jsonl')!.columns!).sort(), ['answer', 'question']);
  });

  test('ids and data paths that would leave their folder are refused in tasks.json and never derived', () => {
    for (const id of ['../../etc/passwd', 'org/..', '/abs/model', 'a//b', 'a\\b']) {
      assert.equal(HubNeedsSchema.safeParse({ models: [{ id }], datasets: [] }).success, false, id);
      assert.equal(HubNeedsSchema.safeParse({ models: [], datasets: [{ path: id }] }).success, false, id);
    }
    assert.equal(
      HubNeedsSchema.safeParse({ models: [{ id: 'Qwen/Qwen2-0.5B' }], datasets: [{ path: 'data/train.jsonl', format: 'json' }] }).success,
      true,
    );
    const n = deriveHubNeeds('from datasets import load_dataset\nds = load_dataset("json", data_files="../../outside.json")\n');
    assert.deepEqual(
      n.datasets.map((d) => d.path),
      [],
    );
  });

  test('the result always satisfies HubNeedsSchema, and the task metadata accepts it', () => {
    const n = deriveHubNeeds('from datasets import load_dataset\nd = load_dataset("a/b")\nm = X.from_pretrained("c/d-llama")\n');
    assert.equal(HubNeedsSchema.safeParse(n).success, true);
    assert.equal(TaskMetadataSchema.safeParse({ task_id: 'my_task', hub: n }).success, true);
    assert.equal(
      TaskMetadataSchema.safeParse({ task_id: 'my_task', hub: { models: [{ id: 'x', colour: 1 }], datasets: [] } }).success,
      false,
    );
  });
});

describe('model architecture resolution', () => {
  test('families from the table and name patterns, with tokenizers and chat templates', () => {
    const q = resolveModel('Qwen/Qwen2.5-0.5B-Instruct');
    assert.deepEqual([q.model_type, q.head, q.tokenizer, q.chat_template], ['qwen2', 'causal_lm', 'qwen-instruct', 'qwen2_5']);
    const l3 = resolveModel('meta-llama/Meta-Llama-3.1-8B-Instruct');
    assert.deepEqual([l3.model_type, l3.tokenizer, l3.chat_template], ['llama', 'llama3-instruct', 'llama3']);
    const l2 = resolveModel('meta-llama/Llama-2-7b-hf');
    assert.deepEqual([l2.model_type, l2.tokenizer, l2.chat_template], ['llama', 'llama2', null]);
    assert.equal(resolveModel('google/flan-t5-base').head, 'seq2seq_lm');
    assert.equal(resolveModel('FacebookAI/xlm-roberta-large').model_type, 'xlm-roberta');
    assert.equal(resolveModel('bert-base-chinese').model_type, 'bert');
    assert.equal(resolveModel('HuggingFaceTB/SmolVLM-256M-Instruct').model_type, 'idefics3');
    assert.equal(resolveModel('microsoft/Phi-3-mini-4k-instruct').chat_template, 'phi3');
    assert.equal(resolveModel('google/gemma-2b-it').chat_template, 'gemma');
    assert.equal(resolveModel('google/gemma-2b').chat_template, null);
    assert.equal(resolveModel('openai/whisper-small').head, 'speech_seq2seq');
  });

  test('a config.json in the task files wins over the name; the setting wins over both', () => {
    const files = { 'my-model/config.json': JSON.stringify({ model_type: 'mistral', hidden_size: 4096 }) };
    const r = resolveModel('my-model', { files });
    assert.deepEqual([r.model_type, r.resolvedBy], ['mistral', 'config.json']);
    assert.equal(r.config?.hidden_size, 4096);
    const s = resolveModel('acme/secret-7b', { mapping: { 'acme/secret-7b': 'Qwen/Qwen2-0.5B' } });
    assert.deepEqual([s.model_type, s.resolvedBy], ['qwen2', 'setting']);
  });

  test('an unknown id names the setting that maps it', () => {
    assert.throws(
      () => resolveModel('acme/secret-7b'),
      (e: unknown) =>
        e instanceof UnknownModelError && /forgeenv\.real\.modelArchitectures/.test(e.message) && /acme\/secret-7b/.test(e.message),
    );
  });
});

describe('synthetic data files', () => {
  test('json, jsonl, csv and text files carry the columns asked for, deterministically', () => {
    const need = {
      path: 'train.jsonl',
      format: 'jsonl' as const,
      columns: { question: 'string' as const, score: 'float' as const, messages: 'messages' as const },
    };
    const text = synthesizeDataFile(need);
    const rows = text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(rows.length, 64);
    assert.deepEqual(Object.keys(rows[0]).sort(), ['messages', 'question', 'score']);
    assert.equal(typeof rows[0].score, 'number');
    assert.equal(synthesizeDataFile(need), text);
    const json = JSON.parse(synthesizeDataFile({ ...need, path: 'a.json', format: 'json' })) as unknown[];
    assert.equal(json.length, 64);
    const csv = synthesizeDataFile({ path: 'a.csv', format: 'csv', columns: { text: 'string', label: 'label' } }).split('\n');
    assert.equal(csv[0], 'text,label');
    assert.throws(() => synthesizeDataFile({ path: 'a.csv', format: 'csv', columns: { m: 'messages' } }), /scalar columns/);
    assert.throws(() => synthesizeDataFile({ path: 'a.parquet', format: 'parquet' }), /parquet is binary/);
  });

  test('missingDataFiles leaves the files a task ships alone', () => {
    const needs = [{ path: 'a.jsonl', format: 'jsonl' as const }, { path: 'b.csv', format: 'csv' as const }, { path: 'org/ds' }];
    assert.deepEqual(Object.keys(missingDataFiles(needs, { 'a.jsonl': '{}\n' })), ['b.csv']);
  });

  test('readConfigFile reads top-level JSON and YAML scalars', () => {
    assert.deepEqual(readConfigFile('c.json', '{"model_name_or_path": "x/y", "lr": 1, "nested": {"a": 1}}'), {
      model_name_or_path: 'x/y',
      lr: '1',
    });
    assert.deepEqual(readConfigFile('c.yaml', "model_name_or_path: 'x/y'\ndataset_name: a/b # comment\n  nested: 1\n"), {
      model_name_or_path: 'x/y',
      dataset_name: 'a/b',
    });
  });
});

describe('task metadata: hub', () => {
  test('a tasks.json entry with explicit needs reaches the task; malformed needs are reported', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const { loadTaskFolder } = await import('../../src/env/tasks/tasks');
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-hubmeta-'));
    try {
      writeFileSync(join(dir, 'a.py'), 'print("loss=1.0")\n');
      const hub = { models: [{ id: 'Qwen/Qwen2-0.5B', from: 'make-task' }], datasets: [{ path: 'acme/x', columns: { text: 'string' } }] };
      writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'a', hub }]));
      assert.deepEqual(loadTaskFolder(dir).tasks.find((t) => t.task_id === 'a')?.hub, hub);
      writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'a', hub: { models: 'Qwen' } }]));
      const bad = loadTaskFolder(dir);
      assert.equal(bad.tasks.find((t) => t.task_id === 'a')?.hub, undefined);
      assert.ok(
        bad.problems.some((p) => /tasks\.json/.test(p) && /hub/.test(p)),
        bad.problems.join('\n'),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

// make-task joined to the hub (src/env/hub): the needs follow the args as adapted; an error naming a
// model or dataset the derivation missed adds it; a hub refusal carries the hub's reason; the rows a
// script selects; the training extras' date bound and freeze parsing. Recorded error texts.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { deriveHubNeeds, selectedRows } from '../../src/env/hub/needs';
import { candidateHubNeeds, missingHubItem, providedNeeds } from '../../src/env/taskmaking/hubSupply';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { parseFreeze } from '../../src/env/snapshots/extras';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 12, in <module>\n    main()\n${last}\n`;
const SCRIPT =
  'import argparse\nfrom transformers import AutoModelForCausalLM\np = argparse.ArgumentParser()\np.add_argument("--model_name_or_path", default="gpt2")\na = p.parse_args()\nAutoModelForCausalLM.from_pretrained(a.model_name_or_path)\n';
const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({ script: SCRIPT, args: [], env: {}, options: undefined, ...over });

describe('make-task hub needs', () => {
  test('re-derived from the args as adapted: a model set on the command line becomes a need; base-hub models are not asked for', () => {
    assert.deepEqual(candidateHubNeeds(SCRIPT, [], {}).models, []);
    const n = candidateHubNeeds(SCRIPT, ['--model_name_or_path', 'Qwen/Qwen2-0.5B'], {});
    assert.deepEqual(
      n.models.map((m) => m.id),
      ['Qwen/Qwen2-0.5B'],
    );
  });

  test('extra ids (named by errors) join the derived ones without duplicates', () => {
    const n = candidateHubNeeds(
      SCRIPT,
      ['--model_name_or_path', 'Qwen/Qwen2-0.5B'],
      {},
      { models: [{ id: 'Qwen/Qwen2-0.5B' }, { id: 'acme/reward-model' }], datasets: [{ path: 'acme/chats' }] },
    );
    assert.deepEqual(
      n.models.map((m) => m.id),
      ['Qwen/Qwen2-0.5B', 'acme/reward-model'],
    );
    assert.deepEqual(
      n.datasets.map((d) => d.path),
      ['acme/chats'],
    );
  });

  test("a dataset id an error named gets the columns the script needs (here the trainer's format)", () => {
    const script = 'from trl import DPOTrainer\nfrom datasets import load_dataset\nds = load_dataset(args.dataset)\n';
    const n = candidateHubNeeds(script, [], {}, { models: [], datasets: [{ path: 'acme/prefs', from: 'named by a run error' }] });
    assert.deepEqual(Object.keys(n.datasets[0]?.columns ?? {}).sort(), ['chosen', 'prompt', 'rejected']);
  });

  test('a dataclass field default written over several lines is found', () => {
    const script =
      'from dataclasses import dataclass, field\nfrom datasets import load_dataset\n@dataclass\nclass A:\n    dataset: str = field(\n        default="acme/chats",\n        metadata={"help": "x"},\n    )\n';
    assert.deepEqual(
      deriveHubNeeds(script).datasets.map((d) => d.path),
      ['acme/chats'],
    );
  });

  test('what the hub refused is left out of what the task declares', () => {
    const p = providedNeeds({
      needs: { models: [{ id: 'a/b' }, { id: 'c/d' }], datasets: [{ path: 'e/f' }] },
      refusals: [{ kind: 'model', id: 'c/d', reason: 'unknown architecture' }],
    });
    assert.deepEqual(
      p.models.map((m) => m.id),
      ['a/b'],
    );
    assert.equal(p.datasets.length, 1);
  });
});

describe('missingHubItem: the id an offline error names', () => {
  const cases: Array<[string, { kind: 'model' | 'dataset'; id: string } | undefined]> = [
    [
      "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like meta-llama/Llama-2-7b-hf is not the path to a directory containing a file named config.json.",
      { kind: 'model', id: 'meta-llama/Llama-2-7b-hf' },
    ],
    [
      "OSError: Can't load tokenizer for 'acme/tok'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name.",
      { kind: 'model', id: 'acme/tok' },
    ],
    [
      "OSError: acme/model is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
      { kind: 'model', id: 'acme/model' },
    ],
    [
      "OSError: 'acme/model' is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'",
      { kind: 'model', id: 'acme/model' },
    ],
    [
      "datasets.exceptions.DatasetNotFoundError: Dataset 'trl-lib/ultrafeedback_binarized' doesn't exist on the Hub or cannot be accessed.",
      { kind: 'dataset', id: 'trl-lib/ultrafeedback_binarized' },
    ],
    [
      "ConnectionError: Couldn't reach 'Anthropic/hh-rlhf' on the Hub (LocalEntryNotFoundError)",
      { kind: 'dataset', id: 'Anthropic/hh-rlhf' },
    ],
    [
      "FileNotFoundError: Couldn't find a dataset script at /tmp/run/squad_v2/squad_v2.py or any data file in the same directory. Couldn't find 'squad_v2' on the Hugging Face Hub either: LocalEntryNotFoundError: Offline mode is enabled.",
      { kind: 'dataset', id: 'squad_v2' },
    ],
    ['ValueError: something else', undefined],
  ];
  for (const [text, want] of cases) test(text.slice(0, 70), () => assert.deepEqual(missingHubItem(text), want));
});

describe('rules with the hub', () => {
  const missing = traceback(
    "OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like acme/reward-model is not the path to a directory containing a file named config.json.",
  );

  test('an id the derivation missed is provided (a hub adaptation), not refused', () => {
    const d = diagnose(missing, ctx({ hub: { needs: { models: [], datasets: [] }, refusals: [] } }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'hub-item-missing');
    assert.equal(d.outcome.adaptation.kind, 'hub');
    assert.deepEqual(
      d.outcome.hub?.models.map((m) => m.id),
      ['acme/reward-model'],
    );
  });

  test("an id the hub refused is refused with the hub's reason", () => {
    const reason =
      'ForgeEnv cannot tell the architecture of model "acme/reward-model" (not in its table of families, no config.json in the task). Map it in the setting forgeenv.real.modelArchitectures';
    const d = diagnose(
      missing,
      ctx({
        hub: {
          needs: { models: [{ id: 'acme/reward-model' }], datasets: [] },
          refusals: [{ kind: 'model', id: 'acme/reward-model', reason }],
        },
      }),
    );
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'hub-item-unavailable');
    assert.match(d.outcome.reason, /forgeenv\.real\.modelArchitectures/);
  });

  test('an id already provided that still fails is refused, saying what was provided', () => {
    const d = diagnose(missing, ctx({ hub: { needs: { models: [{ id: 'acme/reward-model' }], datasets: [] }, refusals: [] } }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.match(d.outcome.reason, /provided model acme\/reward-model/);
  });
});

describe('rows a script selects', () => {
  test('select(range(N)) above the default gives every dataset N rows (capped); below it, nothing', () => {
    assert.equal(selectedRows('ds = ds.select(range(10000))\nev = ev.select(range(0, 500))'), 10000);
    assert.equal(selectedRows('ds.select(range(50))'), undefined);
    assert.equal(selectedRows('ds.select(range(1_000_000))'), 20000);
    // A name: the integer it defaults to as a parameter (multi-line def too) or is assigned; unknown names give nothing.
    const param =
      'def get_dataloaders(acc: Accelerator, batch_size: int = 16,\n        max_training_samples=500):\n    ds = ds.select(range(max_training_samples))';
    assert.equal(selectedRows(param), 500);
    assert.equal(selectedRows('limit: int = 2_000\nds = ds.select(range(limit))\n'), 2000);
    assert.equal(selectedRows('ds = ds.select(range(args.n))\nx = ds.select(range(n))'), undefined);
    assert.equal(selectedRows('n = 500.5\nds = ds.select(range(n))'), undefined);
    // A tail held out by a count, literal or named: more rows than the count, so the head is not empty.
    const heldOut = 'n_eval = 100\ntrain = ds.select(range(len(ds) - n_eval))\nev = ds.select(range(len(ds) - n_eval, len(ds)))';
    assert.equal(selectedRows(heldOut), 164);
    assert.equal(selectedRows('ev = ds.select(range(len(ds) - 300, len(ds)))'), 364);
    assert.equal(selectedRows('for i in range(len(xs) - 1):\n    pass'), undefined);
    assert.equal(selectedRows('ev = ds.select(range(len(ds) - k))'), undefined); // k is not a literal the script assigns
    const n = deriveHubNeeds('from datasets import load_dataset\nds = load_dataset("imdb", split="train")\nds = ds.select(range(10000))\n');
    // imdb is a base-hub dataset: served anyway, with the rows (and the base config).
    assert.deepEqual(
      n.datasets.map((d) => [d.path, d.rows]),
      [['imdb', 10000]],
    );
    assert.deepEqual(deriveHubNeeds('from datasets import load_dataset\nds = load_dataset("imdb", split="train")\n').datasets, []);
  });
});

describe('training extras', () => {
  test('freeze lines by normalised name', () => {
    const f = parseFreeze('Torch==2.4.0\ntyping_extensions==4.12.2\nfoo @ file:///x\n# comment\n');
    assert.equal(f.get('torch'), 'Torch==2.4.0');
    assert.equal(f.get('typing-extensions'), 'typing_extensions==4.12.2');
    assert.equal(f.get('foo'), 'foo @ file:///x');
  });
});

describe("an option the script's own check asks for", () => {
  test('"Need an `output_dir`" sets the parser\'s --output_dir; a name the parser lacks does nothing', async () => {
    const { parseHelpOptions } = await import('../../src/env/taskmaking/parserOptions');
    const options = parseHelpOptions('usage: x.py [--output_dir OUTPUT_DIR] [--num_train_epochs N]');
    const d = diagnose(traceback('AssertionError: Need an `output_dir` to store the finetune model and verify.'), ctx({ options }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'option-named-by-error');
    assert.deepEqual(d.outcome.args, ['--output_dir', 'out']);
    assert.equal(diagnose(traceback('AssertionError: Need a `save_dir` to store the model.'), ctx({ options })), undefined);
  });

  test('a value the error names (`remove_unused_columns=False`) is the one set, not a value from the name', async () => {
    const { parseHelpOptions } = await import('../../src/env/taskmaking/parserOptions');
    const options = parseHelpOptions('usage: x.py [--output_dir OUTPUT_DIR] [--remove_unused_columns [REMOVE_UNUSED_COLUMNS]]');
    const d = diagnose(
      traceback(
        "ValueError: No columns in the dataset match the model's forward method signature: (input_values, labels). The following columns have been ignored: [audio]. Please check the dataset and model. You may need to set `remove_unused_columns=False` in `TrainingArguments`.",
      ),
      ctx({ options }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.args, ['--remove_unused_columns', 'False']);
  });
});

describe('snapshot fallback on a library API error', () => {
  test('the newest older snapshot where every import exists; not for other errors, nor when none is left', async () => {
    const { fallbackSnapshot } = await import('../../src/env/taskmaking/makeTask');
    const fit = (id: string, missing: string[] = [], ready = true) => ({ id, date: id, missing, unknown: 0, ready });
    const fits = [fit('2023-06', ['trl.SFTConfig (line 3)']), fit('2024-09'), fit('2025-03'), fit('2026-11')];
    const api = {
      refusal: {
        rule: 'unrecognised-error',
        reason: "no rule recognises the error: AttributeError: 'ModelConfig' object has no attribute 'trust_remote_code'",
      },
    };
    assert.equal(fallbackSnapshot(api, fits, ['2026-11']), '2025-03');
    assert.equal(fallbackSnapshot(api, fits, ['2026-11', '2025-03']), '2024-09');
    assert.equal(fallbackSnapshot(api, fits, ['2026-11', '2025-03', '2024-09']), undefined, '2023-06 lacks an import');
    assert.equal(
      fallbackSnapshot(
        { refusal: { rule: 'unrecognised-error', reason: 'no rule recognises the error: IndexError: index out of range in self' } },
        fits,
        ['2026-11'],
      ),
      undefined,
    );
    assert.equal(fallbackSnapshot({}, fits, ['2026-11']), undefined);
  });
});

describe('a metric the offline hub does not serve', () => {
  test('evaluate.load and datasets.load_metric errors are refused naming the metric', () => {
    const a = diagnose(
      traceback(
        "FileNotFoundError: Couldn't find a module script at /tmp/run/glue/glue.py. Module 'glue' doesn't exist on the Hugging Face Hub either.",
      ),
      ctx(),
    );
    assert.ok(a && a.outcome.kind === 'refuse');
    assert.equal(a.outcome.rule, 'metric-unavailable');
    assert.match(a.outcome.reason, /"glue"/);
    const b = diagnose(
      traceback(
        'datasets.utils.file_utils.OfflineModeIsEnabled: Offline mode is enabled. Tried to reach https://raw.githubusercontent.com/huggingface/datasets/2.13.1/metrics/glue/glue.py',
      ),
      ctx(),
    );
    assert.ok(b && b.outcome.kind === 'refuse');
    assert.match(b.outcome.reason, /"glue"/);
  });
});

describe('a column the script reads that the synthetic dataset lacks', () => {
  test("is added to the hub's synthetic dataset (a hub adaptation), then derived needs carry it", () => {
    const script =
      'from datasets import load_dataset\nds = load_dataset("acme/prefs", split="train")\nds = ds.map(lambda r: {"p": r["prompt"] + r["system_prompt"]})\n';
    const needs = candidateHubNeeds(script, [], {});
    const d = diagnose(
      traceback("KeyError: 'system_prompt'"),
      ctx({
        script,
        hub: { needs: { models: [], datasets: needs.datasets.map((x) => ({ ...x, columns: { prompt: 'string' } })) }, refusals: [] },
      }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.kind, 'hub');
    const next = candidateHubNeeds(script, [], {}, d.outcome.hub);
    assert.equal(next.datasets[0]?.columns?.system_prompt, 'string');
  });
  test('a base-hub dataset (no synthetic need) is still refused', () => {
    const script = 'ds = load_dataset("imdb")\nds.map(lambda r: r["chosen"])\n';
    const d = diagnose(traceback("KeyError: 'chosen'"), ctx({ script, hub: { needs: { models: [], datasets: [] }, refusals: [] } }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'dataset-column-missing');
  });
});

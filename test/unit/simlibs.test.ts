// Runs the corpus and version-gate probes with the real python3 against the simulated libraries.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simlibsDir } from '../../src/env/paths';
import { loadCorpus } from '../../src/env/tasks/tasks';
import { snapshotVersions, type SnapshotId } from '../../src/env/snapshots/versions';
import type { LibraryVersions } from '../../src/env/schemas';

const LOSS_RE = /loss[=:\s]+([\d.]+)/gi; // the spec's visible-reward regex
const METRIC_RE = /(?:accuracy|acc|eval)[=:\s]+([\d.]+)/gi; // the spec's metrics_in_range regex
const CHECKPOINT_RE = /(\.safetensors|\.pt|\.pth|\.ckpt|\/pytorch_model\.bin)$/; // the executor's weights-file rule

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function freshDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'forgeenv-simlibs-'));
  dirs.push(d);
  return d;
}

function runPython(args: string[], versions: LibraryVersions, input?: string) {
  const cwd = freshDir();
  const r = spawnSync('python3', args, {
    cwd,
    input,
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: simlibsDir(),
      FORGEENV_LIBRARY_VERSIONS: JSON.stringify(versions),
      PYTHONDONTWRITEBYTECODE: '1',
    },
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '', cwd };
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [p];
  });
}

const numbers = (text: string, re: RegExp) => [...text.matchAll(re)].map((m) => Number(m[1]));

describe('corpus scripts under the simulated libraries', () => {
  const { tasks, problems } = loadCorpus();
  test('the built-in corpus loads without problems', () => {
    assert.deepEqual(problems, []);
    assert.ok(tasks.length >= 10);
  });
  for (const task of tasks) {
    test(`${task.task_id} trains, reports in range, saves a checkpoint, deterministically`, () => {
      const versions = task.library_versions ?? snapshotVersions();
      const first = runPython(['-c', task.script_content], versions);
      assert.equal(first.status, 0, `exit ${first.status}\n${first.stderr}`);
      assert.match(first.stdout, /TRAINING_COMPLETE\s*$/);
      const losses = numbers(first.stdout, LOSS_RE);
      assert.ok(losses.length >= 4, `only ${losses.length} loss lines`);
      for (let i = 1; i < losses.length; i++) assert.ok(losses[i] < losses[i - 1], `loss rose: ${losses.join(' ')}`);
      const [lo, hi] = task.expected_loss_range;
      const last = losses[losses.length - 1];
      assert.ok(last >= lo && last <= hi, `final loss ${last} outside [${lo}, ${hi}]`);
      const metrics = numbers(first.stdout, METRIC_RE);
      const [alo, ahi] = task.expected_accuracy_range;
      if (metrics.length === 0) assert.deepEqual([alo, ahi], [0, 1], 'a task that prints no accuracy must not claim a range');
      for (const m of metrics) assert.ok(m >= alo && m <= ahi, `metric ${m} outside [${alo}, ${ahi}]`);
      assert.ok(
        files(first.cwd).some((f) => CHECKPOINT_RE.test(f)),
        'no checkpoint file written',
      );
      const second = runPython(['-c', task.script_content], versions);
      assert.equal(second.stdout, first.stdout);
    });
  }
});

// One python process per snapshot runs several probes; each probe reports how it ended.
const DRIVER = String.raw`
import contextlib, io, json, sys, traceback, warnings
probes = json.load(sys.stdin)
out = {}
for name, code in probes.items():
    err = io.StringIO()
    res = {"ok": True, "type": None, "message": None}
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            exec(compile(code, "<probe %s>" % name, "exec"), {"__name__": "__probe__"})
        except BaseException as e:
            res = {"ok": False, "type": type(e).__name__, "message": str(e)}
    res["warnings"] = ["%s: %s" % (w.category.__name__, w.message) for w in caught]
    res["stderr"] = err.getvalue()
    out[name] = res
print(json.dumps(out))
`;

interface ProbeResult {
  ok: boolean;
  type: string | null;
  message: string | null;
  warnings: string[];
  stderr: string;
}

const MODEL = `from transformers import AutoModelForSequenceClassification, AutoTokenizer, Trainer, TrainingArguments
model = AutoModelForSequenceClassification.from_pretrained("distilbert-base-uncased", num_labels=2)
tok = AutoTokenizer.from_pretrained("distilbert-base-uncased")
args = TrainingArguments(output_dir="out", report_to="none")
`;

const PROBES: Record<string, string> = {
  evaluation_strategy: `from transformers import TrainingArguments\nTrainingArguments(output_dir="out", evaluation_strategy="epoch")`,
  eval_strategy: `from transformers import TrainingArguments\na = TrainingArguments(output_dir="out", eval_strategy="epoch")\nassert a.eval_strategy == "epoch"`,
  processing_class: MODEL + `Trainer(model=model, args=args, processing_class=tok)`,
  tokenizer_kwarg: MODEL + `Trainer(model=model, args=args, tokenizer=tok)`,
  adamw_import: `from transformers import AdamW`,
  with_lm_head: `from transformers import AutoModelWithLMHead\nAutoModelWithLMHead.from_pretrained("gpt2")`,
  load_metric_import: `from datasets import load_metric\nload_metric("accuracy")`,
  load_metric_attr: `import datasets\ndatasets.load_metric("accuracy")`,
  load_dataset_auth: `from datasets import load_dataset\nload_dataset("imdb", use_auth_token=True)`,
  load_dataset_trust: `from datasets import load_dataset\nload_dataset("imdb", trust_remote_code=False)`,
  from_pretrained_auth: `from transformers import AutoTokenizer\nAutoTokenizer.from_pretrained("bert-base-uncased", use_auth_token=True)`,
  as_target_tokenizer: `from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("t5-small")\nwith tok.as_target_tokenizer():\n    tok(["short summary"])`,
  pad_to_max_length: `from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased")\nenc = tok(["a b", "a b c d e"], pad_to_max_length=True, max_length=8, return_tensors="pt")\nassert tuple(enc["input_ids"].shape) == (2, 8)`,
  sft_trainer_kwargs: `from datasets import load_dataset\nfrom transformers import AutoModelForCausalLM, TrainingArguments\nfrom trl import SFTTrainer\nds = load_dataset("timdettmers/openassistant-guanaco")["train"]\nm = AutoModelForCausalLM.from_pretrained("gpt2")\nSFTTrainer(model=m, args=TrainingArguments(output_dir="out", report_to="none"), train_dataset=ds, dataset_text_field="text", max_seq_length=32)`,
  sft_config_import: `from trl import SFTConfig\nSFTConfig(output_dir="out", max_seq_length=32)`,
  int8_training: `from peft import prepare_model_for_int8_training`,
  use_dora: `from peft import LoraConfig\nLoraConfig(r=4, use_dora=True)`,
  compute_loss_override:
    MODEL +
    `from datasets import Dataset
class MyTrainer(Trainer):
    def compute_loss(self, model, inputs, return_outputs=False):
        out = model(**inputs)
        return (out.loss, out) if return_outputs else out.loss
ds = Dataset.from_dict({"sentence": ["good film", "bad film"] * 4, "label": [1, 0] * 4}).map(lambda b: tok(b["sentence"]), batched=True)
from transformers import DataCollatorWithPadding
MyTrainer(model=model, args=TrainingArguments(output_dir="out", max_steps=2, report_to="none"), train_dataset=ds, data_collator=DataCollatorWithPadding(tok)).train()`,
  evaluate_prefix:
    MODEL +
    `from datasets import Dataset
import evaluate
acc = evaluate.load("accuracy")
ds = Dataset.from_dict({"sentence": ["good film", "bad film"] * 4, "label": [1, 0] * 4}).map(lambda b: tok(b["sentence"]), batched=True)
t = Trainer(model=model, args=args, eval_dataset=ds, data_collator=__import__("transformers").DataCollatorWithPadding(tok), compute_metrics=lambda p: acc.compute(predictions=p.predictions.argmax(-1), references=p.label_ids))
m = t.evaluate()
assert "eval_accuracy" in m and "eval_loss" in m and "accuracy" not in m, sorted(m)`,
};

function probe(snapshot: SnapshotId, names: string[]): Record<string, ProbeResult> {
  const chosen = Object.fromEntries(names.map((n) => [n, PROBES[n]]));
  const r = runPython(['-c', DRIVER], snapshotVersions(snapshot), JSON.stringify(chosen));
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as Record<string, ProbeResult>;
}

describe('version-gated facts raise the real errors', () => {
  const names = Object.keys(PROBES);
  const results = {} as Record<SnapshotId, Record<string, ProbeResult>>;
  const at = (s: SnapshotId, name: string): ProbeResult => (results[s] ??= probe(s, names))[name];
  const fails = (r: ProbeResult, type: string, message: string | RegExp) => {
    assert.equal(r.ok, false, `expected ${type}, but it ran (stderr: ${r.stderr})`);
    assert.equal(r.type, type, `${r.type}: ${r.message}`);
    if (typeof message === 'string') assert.equal(r.message, message);
    else assert.match(r.message ?? '', message);
  };
  const runs = (r: ProbeResult) => assert.equal(r.ok, true, `${r.type}: ${r.message}`);

  // Real boundaries (resources/drifts/catalog.json, checked against the real releases): deprecated 4.41, removed 4.51.
  test('TrainingArguments(evaluation_strategy=): deprecated in 4.45 and 4.50, TypeError in 4.56', () => {
    for (const s of ['2024-09', '2025-03'] as const) {
      runs(at(s, 'evaluation_strategy'));
      assert.ok(
        at(s, 'evaluation_strategy').warnings.some((w) => /FutureWarning: `evaluation_strategy` is deprecated/.test(w)),
        s,
      );
    }
    fails(
      at('2025-09', 'evaluation_strategy'),
      'TypeError',
      "TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
    );
  });
  test('TrainingArguments(eval_strategy=): TypeError in 4.40, accepted from 4.41', () => {
    fails(at('2024-04', 'eval_strategy'), 'TypeError', "TrainingArguments.__init__() got an unexpected keyword argument 'eval_strategy'");
    runs(at('2024-09', 'eval_strategy'));
  });
  test('Trainer(processing_class=): TypeError in 4.45, accepted in 4.50', () => {
    fails(at('2024-09', 'processing_class'), 'TypeError', "Trainer.__init__() got an unexpected keyword argument 'processing_class'");
    runs(at('2025-03', 'processing_class'));
  });
  test('Trainer(tokenizer=): silent in 4.45, FutureWarning in 4.50', () => {
    runs(at('2024-09', 'tokenizer_kwarg'));
    assert.deepEqual(at('2024-09', 'tokenizer_kwarg').warnings, []);
    runs(at('2025-03', 'tokenizer_kwarg'));
    assert.ok(
      at('2025-03', 'tokenizer_kwarg').warnings.includes(
        'FutureWarning: `tokenizer` is deprecated and will be removed in version 5.0.0 for `Trainer.__init__`. Use `processing_class` instead.',
      ),
    );
  });
  test('from transformers import AdamW: works in 4.45, ImportError in 4.50', () => {
    runs(at('2024-09', 'adamw_import'));
    fails(at('2025-03', 'adamw_import'), 'ImportError', /^cannot import name 'AdamW' from 'transformers'/);
  });
  test('AutoModelWithLMHead: present through 4.x, ImportError in 5.x', () => {
    runs(at('2024-09', 'with_lm_head'));
    runs(at('2025-09', 'with_lm_head'));
    fails(at('2026-11', 'with_lm_head'), 'ImportError', /^cannot import name 'AutoModelWithLMHead' from 'transformers'/);
  });
  test('datasets.load_metric: works in 2.18, gone in 3.0', () => {
    runs(at('2024-04', 'load_metric_import'));
    fails(at('2024-09', 'load_metric_import'), 'ImportError', /^cannot import name 'load_metric' from 'datasets'/);
    fails(at('2024-09', 'load_metric_attr'), 'AttributeError', "module 'datasets' has no attribute 'load_metric'");
  });
  test('load_dataset(use_auth_token=): FutureWarning in 2.18, ValueError in 3.0', () => {
    runs(at('2024-04', 'load_dataset_auth'));
    assert.ok(
      at('2024-04', 'load_dataset_auth').warnings.some((w) =>
        w.startsWith("FutureWarning: 'use_auth_token' was deprecated in favor of 'token'"),
      ),
    );
    fails(at('2024-09', 'load_dataset_auth'), 'ValueError', /doesn't have a 'use_auth_token' key\.$/);
  });
  test('load_dataset(trust_remote_code=): unknown in 2.13, accepted from 2.16', () => {
    fails(at('2023-06', 'load_dataset_trust'), 'ValueError', /doesn't have a 'trust_remote_code' key\.$/);
    runs(at('2023-12', 'load_dataset_trust'));
    runs(at('2024-04', 'load_dataset_trust'));
  });
  test('from_pretrained(use_auth_token=) is accepted with a FutureWarning', () => {
    for (const s of ['2023-12', '2025-03'] as const) {
      runs(at(s, 'from_pretrained_auth'));
      assert.ok(at(s, 'from_pretrained_auth').warnings.some((w) => w.includes('`use_auth_token` argument is deprecated')));
    }
  });
  test('tokenizer.as_target_tokenizer(): present through 4.x, AttributeError in 5.x', () => {
    runs(at('2024-04', 'as_target_tokenizer'));
    runs(at('2024-09', 'as_target_tokenizer'));
    fails(at('2026-11', 'as_target_tokenizer'), 'AttributeError', "'T5TokenizerFast' object has no attribute 'as_target_tokenizer'");
  });
  test('tokenizer(pad_to_max_length=True): pads through 4.50; from 4.52 a fast tokenizer refuses it as the real one does', () => {
    runs(at('2024-04', 'pad_to_max_length'));
    runs(at('2025-03', 'pad_to_max_length'));
    // 4.52 stopped popping the keyword; 4.x fast tokenizers pass leftovers to _batch_encode_plus, which takes none
    // (measured in the real 4.56.1: the drift catalog's transformers-pad-to-max-length-removed entry).
    fails(
      at('2025-09', 'pad_to_max_length'),
      'TypeError',
      "PreTrainedTokenizerFast._batch_encode_plus() got an unexpected keyword argument 'pad_to_max_length'",
    );
  });
  test('SFTTrainer(dataset_text_field=, max_seq_length=): UserWarning in trl 0.11, TypeError from 0.16', () => {
    runs(at('2024-09', 'sft_trainer_kwargs'));
    assert.ok(
      at('2024-09', 'sft_trainer_kwargs').warnings.some((w) => w.includes('You passed a `dataset_text_field` argument to the SFTTrainer')),
    );
    // trl 0.12 only deprecated them; no snapshot has 0.12 since 2025-03 takes the trl of March 2025 (0.16).
    for (const s of ['2025-03', '2025-09'] as const)
      fails(at(s, 'sft_trainer_kwargs'), 'TypeError', "SFTTrainer.__init__() got an unexpected keyword argument 'dataset_text_field'");
  });
  test('trl.SFTConfig: missing in 0.8, present from 0.9', () => {
    fails(at('2024-04', 'sft_config_import'), 'ImportError', /^cannot import name 'SFTConfig' from 'trl'/);
    runs(at('2024-09', 'sft_config_import'));
  });
  test('peft.prepare_model_for_int8_training: present in 0.7, gone in 0.10', () => {
    runs(at('2023-12', 'int8_training'));
    fails(at('2024-04', 'int8_training'), 'ImportError', /^cannot import name 'prepare_model_for_int8_training' from 'peft'/);
  });
  test('LoraConfig(use_dora=): TypeError in peft 0.7, accepted from 0.9', () => {
    fails(at('2023-12', 'use_dora'), 'TypeError', "LoraConfig.__init__() got an unexpected keyword argument 'use_dora'");
    runs(at('2024-04', 'use_dora'));
  });
  test('Trainer.compute_loss override without num_items_in_batch: fine in 4.45, TypeError in 4.50', () => {
    runs(at('2024-09', 'compute_loss_override'));
    fails(
      at('2025-03', 'compute_loss_override'),
      'TypeError',
      "MyTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'",
    );
  });
  test('Trainer.evaluate() prefixes metrics with eval_', () => {
    runs(at('2025-03', 'evaluate_prefix'));
  });
  test('a corpus script written for 2025-03 fails under 2023-12 with a real traceback', () => {
    const task = loadCorpus().tasks.find((t) => t.task_id === 'distilbert_sst2');
    assert.ok(task);
    const r = runPython(['-c', task.script_content], snapshotVersions('2023-12'));
    assert.notEqual(r.status, 0);
    assert.match(
      r.stderr,
      /Traceback \(most recent call last\):[\s\S]*TypeError: TrainingArguments\.__init__\(\) got an unexpected keyword argument 'eval_strategy'/,
    );
  });
});

// Metrics offline (src/env/hub/metrics.ts, resources/localhub/metrics): which metrics a script loads
// (derived from its calls), the rule that provides one an error names, and — in the snapshot venvs,
// with the real evaluate / datasets — the scripts the hub writes loaded and computed offline.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { metricNameOf, missingMetric, offlineMetrics } from '../../src/env/hub/metrics';
import { deriveHubNeeds, HubNeedsSchema } from '../../src/env/hub/needs';
import { realModeEnv } from '../../src/env/run/realMode';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';
import { candidateHubNeeds, providedNeeds } from '../../src/env/taskmaking/hubSupply';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { realHubFixture } from './realHubFixture';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 40, in <module>\n    main()\n${last}\n`;
const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({
  script: 'import evaluate\n',
  args: [],
  env: {},
  options: undefined,
  ...over,
});

describe('metrics a script loads', () => {
  test('evaluate.load / load_metric literals, a module-level name, evaluate.combine lists; the evaluate-metric/ prefix dropped', () => {
    const script = [
      'import evaluate',
      'from datasets import load_metric',
      'NAME = "sacrebleu"',
      'm1 = evaluate.load("glue", "mrpc")',
      'm2 = load_metric("evaluate-metric/seqeval")',
      'm3 = evaluate.load(NAME)',
      'm4 = evaluate.combine(["accuracy", "f1", "precision"])',
      'm5 = evaluate.load("./my_metric.py")',
      'x = json.load(f)',
    ].join('\n');
    assert.deepEqual(deriveHubNeeds(script).metrics, ['glue', 'seqeval', 'sacrebleu', 'accuracy', 'f1', 'precision']);
  });

  test('a bare load() counts only when imported from evaluate; no metric, no `metrics` key', () => {
    assert.deepEqual(deriveHubNeeds('from evaluate import load\nm = load("wer")\n').metrics, ['wer']);
    assert.equal(deriveHubNeeds('from pickle import load\nm = load("wer")\n').metrics, undefined);
    assert.equal('metrics' in deriveHubNeeds('import torch\n'), false);
  });

  test('a load_metric name from a dataclass default is resolved', () => {
    const script =
      'from dataclasses import dataclass, field\nfrom datasets import load_metric\n@dataclass\nclass A:\n    metric_name: str = field(default="cer")\nm = load_metric(args.metric_name)\n';
    assert.deepEqual(deriveHubNeeds(script).metrics, ['cer']);
  });

  test('names: plain Hub names only', () => {
    assert.equal(metricNameOf('glue'), 'glue');
    assert.equal(metricNameOf('evaluate-metric/exact_match'), 'exact_match');
    assert.equal(metricNameOf('./metrics/x.py'), undefined);
    assert.equal(metricNameOf('someone/custom'), undefined);
    assert.ok(!HubNeedsSchema.safeParse({ models: [], datasets: [], metrics: ['../x'] }).success);
  });

  test('the offline library has the metrics training scripts use most', () => {
    for (const m of [
      'accuracy',
      'f1',
      'precision',
      'recall',
      'glue',
      'wer',
      'cer',
      'rouge',
      'squad',
      'seqeval',
      'sacrebleu',
      'bleu',
      'matthews_correlation',
    ])
      assert.ok(offlineMetrics().includes(m), m);
  });

  test('make-task needs carry derived and error-named metrics; a refused metric is not declared', () => {
    const n = candidateHubNeeds('import evaluate\nm = evaluate.load("accuracy")\n', [], {}, { models: [], datasets: [], metrics: ['wer'] });
    assert.deepEqual(n.metrics, ['accuracy', 'wer']);
    const p = providedNeeds({ needs: n, refusals: [{ kind: 'metric', id: 'wer', reason: 'x' }] });
    assert.deepEqual(p.metrics, ['accuracy']);
  });
});

describe('the metric-missing rule', () => {
  // Recorded: evaluate 0.4.x (evaluate.load offline) and datasets 2.13 (load_metric offline).
  const EVALUATE =
    "FileNotFoundError: Couldn't find a module script at /tmp/run/wer/wer.py. Module 'wer' doesn't exist on the Hugging Face Hub either.";
  const DATASETS =
    "FileNotFoundError: Couldn't find a metric script at /tmp/run/wer/wer.py. Metric 'wer' doesn't exist on the Hugging Face Hub either.";
  const hub = { needs: { models: [], datasets: [] }, refusals: [] };

  test("each loader's message names the metric", () => {
    assert.equal(missingMetric(EVALUATE), 'wer');
    assert.equal(missingMetric(DATASETS), 'wer');
    assert.equal(
      missingMetric(
        'OfflineModeIsEnabled: Tried to reach https://raw.githubusercontent.com/huggingface/datasets/2.13.1/metrics/glue/glue.py',
      ),
      'glue',
    );
  });

  test('a metric ForgeEnv has and the needs lack is provided (a hub adaptation)', () => {
    for (const text of [EVALUATE, DATASETS]) {
      const d = diagnose(traceback(text), ctx({ hub }));
      assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
      assert.equal(d.outcome.adaptation.rule, 'metric-missing');
      assert.deepEqual(d.outcome.hub?.metrics, ['wer']);
    }
  });

  test('refused with the reason: provided yet not found, a metric ForgeEnv has no script of, no hub', () => {
    const again = diagnose(traceback(EVALUATE), ctx({ hub: { needs: { models: [], datasets: [], metrics: ['wer'] }, refusals: [] } }));
    assert.ok(
      again && again.outcome.kind === 'refuse' && again.outcome.rule === 'metric-unavailable' && /provided/.test(again.outcome.reason),
    );
    const unknown = diagnose(
      traceback(
        "FileNotFoundError: Couldn't find a module script at /tmp/run/bertscore/bertscore.py. Module 'bertscore' doesn't exist on the Hugging Face Hub either.",
      ),
      ctx({ hub }),
    );
    assert.ok(unknown && unknown.outcome.kind === 'refuse' && /"bertscore".*glue/.test(unknown.outcome.reason));
    const simulated = diagnose(traceback(EVALUATE), ctx());
    assert.ok(simulated && simulated.outcome.kind === 'refuse' && /real mode/.test(simulated.outcome.reason));
  });
});

// ---------------------------------------------------------------- real libraries

const { cacheDir, skipReason, buildItems } = realHubFixture('forgeenv-metrics-');

function run(snapshot: string, hubDir: string, code: string): string {
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: cacheDir,
    ...realModeEnv(hubDir),
    HF_METRICS_CACHE: join(cacheDir, 'metrics'),
    PYTHONWARNINGS: 'ignore',
  };
  const r = spawnSync(snapshotPython(snapshot), ['-c', code], { env, encoding: 'utf8', timeout: 300_000, cwd: cacheDir });
  assert.equal(r.status, 0, `reader failed:\n${r.stderr.slice(-3000)}`);
  return r.stdout;
}

const needs = { models: [], datasets: [], metrics: ['glue', 'f1', 'wer', 'squad', 'nosuch'] };

for (const snapshot of ['2026-11', '2024-09']) {
  describe(`metrics offline with evaluate.load in the ${snapshot} venv`, { skip: skipReason(snapshot) }, () => {
    test(
      'the hub serves the metrics it has (refusing the one it has not), and they compute what the originals do',
      { timeout: 600_000 },
      async () => {
        const r = await buildItems(snapshot, {
          needs,
        });
        assert.deepEqual(
          r.refusals.map((x) => `${x.kind} ${x.id}`),
          ['metric nosuch'],
        );
        const out = run(
          snapshot,
          r.hubDir,
          [
            'import evaluate, json',
            'g = evaluate.load("glue", "mrpc")',
            'print(json.dumps(g.compute(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0])))',
            'print(json.dumps(evaluate.load("f1").compute(predictions=[0, 1, 2, 0], references=[0, 1, 2, 1], average="macro")))',
            'print(json.dumps(evaluate.load("wer").compute(predictions=["a b c"], references=["a x c d"])))',
            'print(json.dumps(evaluate.load("squad").compute(predictions=[{"id": "1", "prediction_text": "The Tower"}], references=[{"id": "1", "answers": {"text": ["tower"], "answer_start": [0]}}])))',
          ].join('\n'),
        );
        const [glue, f1, wer, squad] = out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        assert.deepEqual(glue, { accuracy: 0.75, f1: 2 / 3 });
        assert.ok(Math.abs(f1.f1 - 7 / 9) < 1e-9, JSON.stringify(f1));
        assert.equal(wer, 0.5);
        assert.deepEqual(squad, { exact_match: 100, f1: 100 });
      },
    );
  });
}

// datasets < 3 (load_metric): the oldest snapshot venv that has one.
const OLD = ['2023-12', '2024-04', '2023-06'].find((s) => isSnapshotVenvReady(s) || existsSync(join(snapshotPython(s))));
describe(
  'metrics offline with datasets.load_metric (datasets < 3)',
  { skip: OLD ? false : 'no snapshot venv with datasets < 3 is built' },
  () => {
    test(
      'load_metric("glue", "mrpc") and load_metric("accuracy") find the hub\'s scripts as datasets.Metric',
      { timeout: 600_000 },
      async () => {
        const snapshot = OLD!;
        // The base hub of that era may not build here: the items alone make the HF_HOME.
        mkdirSync(join(cacheDir, 'empty-base'), { recursive: true });
        const r = await buildItems(snapshot, {
          baseHubDir: join(cacheDir, 'empty-base'),
          needs: { models: [], datasets: [], metrics: ['glue', 'accuracy'] },
        });
        assert.deepEqual(r.refusals, []);
        const out = run(
          snapshot,
          r.hubDir,
          [
            'import json, datasets',
            'from datasets import load_metric',
            'm = load_metric("glue", "mrpc")',
            'assert isinstance(m, datasets.Metric), type(m).__mro__',
            'm.add_batch(predictions=[0, 1, 1, 0], references=[0, 1, 0, 0])',
            'print(json.dumps(m.compute()))',
            'print(json.dumps(load_metric("accuracy").compute(predictions=[1, 1], references=[1, 0])))',
          ].join('\n'),
        );
        const [glue, acc] = out
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l));
        assert.deepEqual(glue, { accuracy: 0.75, f1: 2 / 3 });
        assert.deepEqual(acc, { accuracy: 0.5 });
      },
    );
  },
);

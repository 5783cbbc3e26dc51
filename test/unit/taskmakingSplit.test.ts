// A `KeyError: 'test'` on a DatasetDict subscript is a missing split (the hub's dataset gets it), not a
// missing column; recorded error texts as Python prints a dict's KeyError (the script's line above it).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { candidateHubNeeds } from '../../src/env/taskmaking/hubSupply';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { datasetDictProvenance } from '../../src/env/taskmaking/splitProvenance';

const SCRIPT = [
  'from datasets import load_dataset',
  'raw_datasets = load_dataset("acme/gsm-like", "main")',
  'train = raw_datasets["train"].map(lambda r: {"q": r["question"]})',
  'eval_dataset = raw_datasets["test"].map(lambda r: {"q": r["question"]})',
  '',
].join('\n');

// Recorded (Python 3.11, datasets 2.x): a DatasetDict is a dict, so the traceback ends at the script's line.
const SPLIT_ERROR = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 4, in <module>
    eval_dataset = raw_datasets["test"].map(lambda r: {"q": r["question"]})
                   ~~~~~~~~~~~~^^^^^^^^
  File "/venv/lib/python3.11/site-packages/datasets/dataset_dict.py", line 74, in __getitem__
    return super().__getitem__(k)
           ^^^^^^^^^^^^^^^^^^^^^^
KeyError: 'test'
`;

const hubState = (splits: string[]) => ({
  needs: { models: [], datasets: [{ path: 'acme/gsm-like', config: 'main', splits, columns: { question: 'string' as const } }] },
  refusals: [],
});
const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({ script: SCRIPT, args: [], env: {}, options: undefined, ...over });

describe('dataset-split-missing', () => {
  test('a missing split of a load_dataset DatasetDict adds the split to the hub need, not a column', () => {
    const d = diagnose(SPLIT_ERROR, ctx({ hub: hubState(['train']) }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'dataset-split-missing');
    const need = d.outcome.hub?.datasets.find((x) => x.path === 'acme/gsm-like');
    assert.deepEqual(need?.splits, ['train', 'test']);
    assert.equal(need?.columns?.test, undefined);
    // The next run's needs carry the split, merged with the derived ones.
    const next = candidateHubNeeds(SCRIPT, [], {}, d.outcome.hub);
    assert.ok(next.datasets.find((x) => x.path === 'acme/gsm-like')?.splits?.includes('test'));
  });

  test('a KeyError on a row (a column) still goes to dataset-column-missing', () => {
    const script =
      'from datasets import load_dataset\nds = load_dataset("acme/x", split="train")\nds = ds.map(lambda r: {"t": r["test"]})\n';
    const out = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 3, in <lambda>\n    ds = ds.map(lambda r: {"t": r["test"]})\n                                ~^^^^^^^^\nKeyError: 'test'\n`;
    const d = diagnose(
      out,
      ctx({ script, hub: { needs: { models: [], datasets: [{ path: 'acme/x', splits: ['train'] }] }, refusals: [] } }),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'dataset-column-missing');
    assert.equal(d.outcome.hub?.datasets[0]?.columns?.test, 'string');
  });

  test('a split of a DatasetDict the script builds itself is refused with the variable; a present split is not re-added', () => {
    const script = 'from datasets import load_dataset\nparts = ds.train_test_split(test_size=0.1)\nv = parts["validation"]\n';
    const out = `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 3, in <module>\n    v = parts["validation"]\nKeyError: 'validation'\n`;
    const d = diagnose(out, ctx({ script }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'dataset-split-missing');
    assert.match(d.outcome.reason, /"validation" of parts/);
    const present = diagnose(SPLIT_ERROR, ctx({ hub: hubState(['train', 'test']) }));
    assert.ok(present && present.outcome.kind === 'refuse');
  });

  test('provenance: load_dataset with split= or indexed is a Dataset, without it a DatasetDict', () => {
    assert.equal(datasetDictProvenance('d = load_dataset(\n  "x",\n  split="train",\n)\n', 'd'), undefined);
    assert.equal(datasetDictProvenance('d = load_dataset("x")["train"]\n', 'd'), undefined);
    assert.equal(datasetDictProvenance('d = datasets.load_dataset(\n  args.name,\n  args.config,\n)\n', 'd'), 'load_dataset');
    assert.equal(datasetDictProvenance('d = DatasetDict({"train": t})\n', 'd'), 'built');
  });
});

// Known repairs of a natural drift, from the real error and the drift catalog's old -> new forms
// (src/env/taskmaking/driftRepair.ts). Tiny scripts written here; errors as the real releases print them.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { parseDriftCatalog, type DriftCatalog } from '../../src/env/fidelity/catalog';
import { driftRepairStep, newKeyword } from '../../src/env/taskmaking/driftRepair';
import { parsePython } from '../../src/env/python/parse';

const source = { type: 'pr', url: 'https://github.com/huggingface/transformers/pull/1', title: 't' };
const entry = (id: string, kind: string, api: string, old: string, neu: string) => ({
  id,
  library: api.split('.')[0],
  kind,
  api,
  deprecated_in: null,
  changed_in: '1.0.0',
  expect_after: 'error',
  source,
  old,
  new: neu,
  note: 'n',
});
const catalog: DriftCatalog = parseDriftCatalog(
  JSON.stringify({
    format: 1,
    entries: [
      entry(
        'lib-moved',
        'moved_import',
        'trl.FooTrainer',
        'from trl import FooTrainer, FooConfig\n',
        'from trl.experimental.foo import FooTrainer, FooConfig\n',
      ),
      entry(
        'lib-metric',
        'replaced_api',
        'datasets.load_metric',
        'from datasets import load_metric\n',
        'import evaluate\nload = evaluate.load\n',
      ),
      entry('lib-seed', 'removed_name', 'trl.set_seed', 'from trl import set_seed\n', 'from transformers import set_seed\n'),
      entry(
        'lib-kw',
        'renamed_kwarg',
        'transformers.Trainer(tokenizer=)',
        'Trainer(model=m, tokenizer=tok)\n',
        'Trainer(model=m, processing_class=tok)\n',
      ),
      entry(
        'lib-kw-probe',
        'renamed_kwarg',
        'trl.DPOTrainer(tokenizer=)',
        "import inspect\nif 'tokenizer' not in inspect.signature(f).parameters:\n    raise TypeError('x')\n",
        "import inspect\nassert 'processing_class' in inspect.signature(f).parameters\n",
      ),
      entry(
        'lib-hook',
        'signature_change',
        'transformers.Trainer.compute_loss(num_items_in_batch=)',
        'class T(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False):\n        pass\n',
        'class T(Trainer):\n    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):\n        pass\n',
      ),
      entry('lib-gone', 'removed_kwarg', 'transformers.Foo(bar=)', 'Foo(a=1, bar=2)\n', 'Foo(a=1)\n'),
    ],
  }),
);

const valid = (s: string) => assert.equal(parsePython(s).problem, undefined, s);

describe('drift repair: imports', () => {
  test('a moved import keeps the other names where they were', () => {
    const script = 'import os\nfrom trl import FooConfig, setup_chat_format\n\ncfg = FooConfig()\n';
    const r = driftRepairStep(script, "ImportError: cannot import name 'FooConfig' from 'trl' (site-packages/trl/__init__.py)", catalog);
    assert.equal(r?.drift_id, 'lib-moved');
    assert.equal(
      r.script,
      'import os\nfrom trl import setup_chat_format\nfrom trl.experimental.foo import FooConfig\n\ncfg = FooConfig()\n',
    );
  });
  test("a name bound to an expression in the new form keeps the script's name (and its alias)", () => {
    const script = 'from datasets import load_dataset, load_metric as lm\nm = lm("glue", "mrpc")\n';
    const r = driftRepairStep(script, "ImportError: cannot import name 'load_metric' from 'datasets' (x)", catalog);
    assert.equal(r?.drift_id, 'lib-metric');
    assert.equal(r.script, 'from datasets import load_dataset\nimport evaluate\nlm = evaluate.load\nm = lm("glue", "mrpc")\n');
  });
  test('an indented import keeps its block', () => {
    const script = 'def main():\n    from trl import set_seed\n    set_seed(1)\n';
    const r = driftRepairStep(script, "ImportError: cannot import name 'set_seed' from 'trl' (x)", catalog);
    assert.equal(r?.script, 'def main():\n    from transformers import set_seed\n    set_seed(1)\n');
  });
  test('a name the catalog does not know and the script uses as a value has no repair', () => {
    const script = 'from lib import thing\nx = thing()\n';
    assert.equal(driftRepairStep(script, "ImportError: cannot import name 'thing' from 'lib' (x)", catalog), undefined);
  });
  test('a removed name only called for its side effect loses its import and calls', () => {
    const script = 'from transformers.utils import send_it, other\n\ndef main():\n    send_it("x", 1)\n    return other\n';
    const r = driftRepairStep(script, "ImportError: cannot import name 'send_it' from 'transformers.utils' (x)", catalog);
    assert.ok(r);
    assert.equal(r.drift_id, undefined);
    assert.equal(r.script, 'from transformers.utils import other\n\ndef main():\n    pass\n    return other\n');
    valid(r.script);
  });
});

describe('drift repair: keywords', () => {
  test('the keyword the new form gains replaces the old one in the calls of the class the error names', () => {
    const script = 'tokenizer = load()\nt = BarTrainer(model=m, tokenizer=tokenizer)\nother(tokenizer=tokenizer)\n';
    const r = driftRepairStep(script, "TypeError: BarTrainer.__init__() got an unexpected keyword argument 'tokenizer'", catalog);
    assert.equal(r?.script, 'tokenizer = load()\nt = BarTrainer(model=m, processing_class=tokenizer)\nother(tokenizer=tokenizer)\n');
  });
  test('a probe-only entry gives the one identifier its new form adds', () => {
    assert.equal(newKeyword(catalog.entries[4], 'tokenizer'), 'processing_class');
    assert.equal(newKeyword(catalog.entries[3], 'tokenizer'), 'processing_class');
  });
  test('a removed keyword is dropped with its comma', () => {
    const script = 'x = Foo(a=1, bar=2, c=3)\ny = Foo(a=1, bar=2)\n';
    const r = driftRepairStep(script, "TypeError: Foo.__init__() got an unexpected keyword argument 'bar'", catalog);
    assert.equal(r?.script, 'x = Foo(a=1, c=3)\ny = Foo(a=1)\n');
    valid(r.script);
  });
  test('a keyword no catalog entry covers has no repair', () => {
    assert.equal(driftRepairStep('Foo(zzz=1)\n', "TypeError: Foo.__init__() got an unexpected keyword argument 'zzz'", catalog), undefined);
  });
});

describe('drift repair: an override of a library hook', () => {
  test("the def gains the keyword the release now passes, with the catalog's default", () => {
    const script =
      'class RT(RewardTrainer):\n    def compute_loss(self, model, inputs,\n                     return_outputs=False):\n        return model(**inputs)\n';
    const r = driftRepairStep(
      script,
      "TypeError: RewardTrainer.compute_loss() got an unexpected keyword argument 'num_items_in_batch'",
      catalog,
    );
    assert.equal(r?.drift_id, 'lib-hook');
    assert.equal(
      r.script,
      'class RT(RewardTrainer):\n    def compute_loss(self, model, inputs,\n                     return_outputs=False, num_items_in_batch=None):\n        return model(**inputs)\n',
    );
    valid(r.script);
  });
  test('a def that takes **kwargs is not this drift', () => {
    const script = 'class RT(X):\n    def compute_loss(self, model, **kw):\n        pass\n';
    assert.equal(
      driftRepairStep(script, "TypeError: RT.compute_loss() got an unexpected keyword argument 'num_items_in_batch'", catalog),
      undefined,
    );
  });
});

describe('drift repair: an enum value the release dropped', () => {
  test('the literal takes the first valid value the error lists', () => {
    const script = 'optim: str = field(default="adamw_hf")\nname = "adamw_hf_extra"\n';
    const r = driftRepairStep(
      script,
      "ValueError: adamw_hf is not a valid OptimizerNames, please select one of ['adamw_torch', 'adamw_torch_fused']",
      catalog,
    );
    assert.equal(r?.script, 'optim: str = field(default="adamw_torch")\nname = "adamw_hf_extra"\n');
  });
  test('a list cut short (a long error line) still gives its first value', () => {
    const r = driftRepairStep(
      'args = dict(optim="adamw_hf")\n',
      "ValueError: adamw_hf is not a valid OptimizerNames, please select one of ['adamw_torch', 'adamw_torch_fused', 'adam",
      catalog,
    );
    assert.equal(r?.script, 'args = dict(optim="adamw_torch")\n');
  });
});

describe('distinct drifts', () => {
  test('the same drift worded by two releases (paths, choice lists) is one', async () => {
    const { driftKey } = await import('../../src/env/taskmaking/solveNaturalDrift');
    assert.equal(
      driftKey("ImportError: cannot import name 'set_seed' from 'trl' (site-packages/trl/__init__.py)"),
      driftKey("ImportError: cannot import name 'set_seed' from 'trl' (/x/site-packages/trl/__init__.py)"),
    );
    assert.equal(
      driftKey("ValueError: adamw_hf is not a valid OptimizerNames, please select one of ['a']"),
      driftKey("ValueError: adamw_hf is not a valid OptimizerNames, please select one of ['b', 'c']"),
    );
    assert.notEqual(
      driftKey("ImportError: cannot import name 'set_seed' from 'trl' (x)"),
      driftKey("ImportError: cannot import name 'ORPOConfig' from 'trl' (x)"),
    );
  });
});

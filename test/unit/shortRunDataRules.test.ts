// Two rules about what the short CPU run leaves of a script's own choices: length-filter-emptied (a script that keeps
// only rows shorter than a length option ends with an empty training set once the short run set it to 64) and
// cpu-bnb-optimizer (a bitsandbytes optimizer named by an option cannot be made without a CUDA GPU).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';

// Recorded from torch 2.1 (RandomSampler of an empty dataset, through Trainer.get_train_dataloader); paths shortened.
const EMPTY = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 48, in <module>
    trainer.train()
  File "site-packages/torch/utils/data/sampler.py", line 143, in __init__
    raise ValueError(f"num_samples should be a positive integer value, but got num_samples={self.num_samples}")
ValueError: num_samples should be a positive integer value, but got num_samples=0
`;

// A script of our own: pairs filtered by their length in characters against --max_seq_len.
const SCRIPT = `import argparse
from datasets import load_dataset
p = argparse.ArgumentParser()
p.add_argument("--max_seq_len", type=int, default=512)
args = p.parse_args()
pairs = load_dataset("acme/pairs", split="train")
pairs = pairs.filter(
    lambda row: len(row["question"]) + len(row["answer"])
    <= args.max_seq_len
)
`;

const ctx = (over: Partial<RuleContext> = {}): RuleContext => ({
  script: SCRIPT,
  args: ['--max_seq_len', '64'],
  env: {},
  options: undefined,
  defaults: new Map([['max_seq_len', '512']]),
  ...over,
});

describe('length-filter-emptied rule', () => {
  test('an empty train set after a length filter on a shortened option raises the option (to 256 at most)', () => {
    const d = diagnose(EMPTY, ctx());
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'length-filter-emptied');
    assert.deepEqual(d.outcome.args, ['--max_seq_len', '256']);
    const small = diagnose(EMPTY, ctx({ defaults: new Map([['max_seq_len', '128']]) }));
    assert.ok(small && small.outcome.kind === 'adapt');
    assert.deepEqual(small.outcome.args, ['--max_seq_len', '128']);
  });

  test('no length filter in the script, or the option already long: not this rule', () => {
    const noFilter = diagnose(EMPTY, ctx({ script: SCRIPT.replace(/pairs = pairs\.filter\([\s\S]*\)\n/, '') }));
    assert.notEqual(noFilter?.outcome.kind === 'adapt' ? noFilter.outcome.adaptation.rule : undefined, 'length-filter-emptied');
    const long = diagnose(EMPTY, ctx({ args: ['--max_seq_len', '256'] }));
    assert.notEqual(long?.outcome.kind === 'adapt' ? long.outcome.adaptation.rule : undefined, 'length-filter-emptied');
  });
});

// Recorded from transformers 4.36 (Trainer.get_optimizer_cls_and_kwargs) with no bitsandbytes; paths shortened.
const BNB_OPTIM = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 60, in <module>
    trainer.train()
  File "site-packages/transformers/trainer.py", line 1153, in get_optimizer_cls_and_kwargs
    raise ValueError("Trainer tried to instantiate bnb optimizer but bnb is not installed!")
ValueError: Trainer tried to instantiate bnb optimizer but bnb is not installed!
`;

// The later wordings of the same error, from the real sources of the snapshots' transformers (4.45 trainer.py, 5.x
// trainer_optimizer.py); paths shortened.
const BNB_OPTIM_4_45 = BNB_OPTIM.replace(/but bnb is not installed!/g, 'but `bitsandbytes` is not installed!');
const BNB_OPTIM_5 = `Traceback (most recent call last):
  File "/tmp/run/train.py", line 60, in <module>
    trainer.train()
  File "site-packages/transformers/trainer_optimizer.py", line 249, in _get_bitsandbytes_optimizer
    raise ImportError(
ImportError: You need to install \`bitsandbytes\` in order to use bitsandbytes optimizers: \`pip install -U bitsandbytes\`
`;

describe('cpu-bnb-optimizer rule', () => {
  test('every wording of the missing-bitsandbytes optimizer error is recognised (not refused as quantization)', () => {
    const script = `from dataclasses import dataclass, field\n@dataclass\nclass Args:\n    optimizer_type: str = field(default="paged_adamw_32bit")\n`;
    for (const error of [BNB_OPTIM, BNB_OPTIM_4_45, BNB_OPTIM_5]) {
      const d = diagnose(error, { script, args: [], env: {}, options: undefined });
      assert.ok(d && d.outcome.kind === 'adapt', `${error.slice(-120)} → ${JSON.stringify(d)}`);
      assert.equal(d.outcome.adaptation.rule, 'cpu-bnb-optimizer');
      assert.deepEqual(d.outcome.args, ['--optimizer_type', 'adamw_torch']);
    }
  });

  test("a bitsandbytes optimizer from the script's default or the args becomes adamw_torch", () => {
    const script = `from dataclasses import dataclass, field\n@dataclass\nclass Args:\n    optim_name: str = field(default="paged_adamw_8bit")\n`;
    const d = diagnose(BNB_OPTIM, { script, args: ['--max_steps', '8'], env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'cpu-bnb-optimizer');
    assert.deepEqual(d.outcome.args, ['--max_steps', '8', '--optim_name', 'adamw_torch']);
    const given = diagnose(BNB_OPTIM, { script: 'x = 1\n', args: ['--optim', 'adamw_bnb_8bit'], env: {}, options: undefined });
    assert.ok(given && given.outcome.kind === 'adapt');
    assert.deepEqual(given.outcome.args, ['--optim', 'adamw_torch']);
    const inCode = diagnose(BNB_OPTIM, { script: 'TrainingArguments(optim="paged_adamw_32bit")\n', args: [], env: {}, options: undefined });
    assert.notEqual(inCode?.outcome.kind === 'adapt' ? inCode.outcome.adaptation.rule : undefined, 'cpu-bnb-optimizer');
  });
});

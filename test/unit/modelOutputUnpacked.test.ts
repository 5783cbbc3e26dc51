// The model-output-unpacked refusal (rules.ts): a script written for transformers < 4.0 unpacks a model's output as
// a tuple, which since 4.0 yields a ModelOutput's keys (strings). A recorded error text, then a tiny script of ours
// in the real venv of 2024-06 (skipped, saying why, when it is not built); run this file alone (slow).
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { diagnose, modelOutputUnpacking, type RuleContext } from '../../src/env/taskmaking/rules';
import { realRunFixture } from './realRunFixture';

const ctx = (script: string): RuleContext => ({ script, args: [], env: {}, options: undefined });

const SCRIPT = `import torch
from transformers import BertConfig, BertForQuestionAnswering

config = BertConfig(vocab_size=50, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=32)
model = BertForQuestionAnswering(config)
inputs = {
    "input_ids": torch.randint(0, 50, (2, 8)),
    "start_positions": torch.tensor([1, 2]),
    "end_positions": torch.tensor([3, 4]),
}
outputs = model(**inputs)
loss, start_logits, end_logits = outputs
loss.backward()
print("TRAINED")
`;

const RECORDED = `Traceback (most recent call last):
  File "train.py", line 13, in <module>
    loss.backward()
    ^^^^^^^^^^^^^
AttributeError: 'str' object has no attribute 'backward'
`;

describe('model-output-unpacked on error texts', () => {
  test('refused naming the unpacking line when the script unpacks a model call', () => {
    const d = diagnose(RECORDED, ctx(SCRIPT));
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'model-output-unpacked');
    assert.match(d.outcome.reason, /`loss, start_logits, end_logits = outputs`, line 12/);
    assert.match(d.outcome.reason, /ModelOutput/);
  });

  test('the direct form, an arithmetic use, and scripts that do not unpack a model output', () => {
    const direct = 'a, b = teacher(input_ids=ids, attention_mask=m)\nc = a / 2\n';
    assert.deepEqual(modelOutputUnpacking(direct)?.names, ['a', 'b']);
    const arith = diagnose(
      "Traceback (most recent call last):\n  File \"train.py\", line 3\nTypeError: unsupported operand type(s) for /: 'str' and 'int'\n",
      ctx(direct),
    );
    assert.equal(arith?.outcome.kind === 'refuse' ? arith.outcome.rule : undefined, 'model-output-unpacked');
    // A slice of the output is a tuple of tensors; a pair of strings unpacked is no model output.
    assert.equal(modelOutputUnpacking('outputs = model(**inputs)\nloss, logits = outputs[:2]\nloss.backward()\n', 'backward'), undefined);
    assert.equal(modelOutputUnpacking('a, b = "x,y".split(",")\na.upper()\n', 'upper'), undefined);
    const other = diagnose(RECORDED, ctx('name, value = line.split("=")\nname.backward()\n'));
    assert.notEqual(other?.outcome.kind === 'refuse' ? other.outcome.rule : undefined, 'model-output-unpacked');
  });
});

const { realRun } = realRunFixture('forgeenv-modeloutput-test-');
const SNAPSHOT = '2024-06';
const skip = isSnapshotVenvReady(SNAPSHOT) ? false : `the managed venv of snapshot ${SNAPSHOT} is not built`;

describe(`model-output-unpacked in the real venv of ${SNAPSHOT}`, { skip }, () => {
  test("the real transformers' error is recognised and refused", { timeout: 600_000 }, async () => {
    process.env.FORGEENV_WARM = '0';
    const run = await realRun(SNAPSHOT, SCRIPT);
    assert.notEqual(run.exit_code, 0, run.stdout);
    const d = diagnose(`${run.stdout}\n${run.stderr}`, ctx(SCRIPT));
    assert.ok(d && d.outcome.kind === 'refuse', `${JSON.stringify(d)}\n${run.stderr.slice(-2000)}`);
    assert.equal(d.outcome.rule, 'model-output-unpacked');
    // With the tuple the script means (`return_dict=False`), the same script trains: the refusal is about the unpacking.
    const fixed = await realRun(SNAPSHOT, SCRIPT.replace('model(**inputs)', 'model(**inputs, return_dict=False)'));
    assert.equal(fixed.exit_code, 0, fixed.stderr.slice(-2000));
    assert.match(fixed.stdout, /TRAINED/);
  });
});

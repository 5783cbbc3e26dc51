// ChangeReturnType and RestructureDatasetSchema: primitives about string content (metric and
// column keys) and return shapes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applySpec } from '../../src/env/primitives/registry';
import { assertRefuses, breakAndRestore, changedLines, fixture, linesWith } from './primitivesHelpers';

describe('ChangeReturnType', () => {
  test('metric_prefix strips eval_ from keys read off Trainer.evaluate(), including .get() and f-strings', () => {
    const src = fixture('trainer_text_classification.py');
    const r = breakAndRestore(src, 'ChangeReturnType', { change: 'metric_prefix' });
    assert.match(
      r.script,
      /print\(f"eval_accuracy=\{metrics\['accuracy'\]:\.4f\}"\)/,
      'the printed label (plain text in the f-string) stays',
    );
    assert.match(r.script, /metrics\.get\("loss", 0\.0\)/);
    assert.deepEqual(r.inverse.params, { change: 'metric_prefix', keys: ['accuracy', 'loss'] });
    assert.deepEqual(changedLines(src, r.script), [...linesWith(src, "metrics['eval_accuracy']"), ...linesWith(src, 'metrics.get(')]);
  });

  test('output_index: outputs.loss → outputs[0]; logits of a call with labels → [1]', () => {
    const src = fixture('custom_loop_causal_lm.py');
    const r = breakAndRestore(src, 'ChangeReturnType', { change: 'output_index' });
    assert.match(r.script, /^ {4}outputs\[0\]\.backward\(\)$/m);
    assert.match(r.script, /loss=\{outputs\[0\]\.item\(\):\.4f\}/);
    assert.match(r.script, /logits = model\(\*\*batch\)\[1\]$/m);
    assert.equal(r.inverse.primitive_type, 'RestoreReturnType');
  });

  test('refusals: no prefixed key, an unprefixed key already read, no model output read', () => {
    assertRefuses(
      fixture('custom_loop_causal_lm.py'),
      'ChangeReturnType',
      { change: 'metric_prefix' },
      /no Trainer\.evaluate\(\) result is read with a key starting with eval_/,
    );
    const both = 'trainer = Trainer(model=m)\nmetrics = trainer.evaluate()\nprint(metrics["eval_loss"], metrics["loss"])\n';
    assertRefuses(both, 'ChangeReturnType', { change: 'metric_prefix' }, /already reads the unprefixed key "loss"/);
    assertRefuses(
      fixture('trl_sft_chat.py'),
      'ChangeReturnType',
      { change: 'output_index' },
      /no model output is read as \.loss or \.logits/,
    );
    assertRefuses('x = 1\n', 'RestoreReturnType', { change: 'metric_prefix' }, /invalid params: keys: metric_prefix needs keys/);
  });
});

describe('RestructureDatasetSchema', () => {
  const src = fixture('trainer_text_classification.py');

  test('renames subscript keys and column arguments, not comments or other strings', () => {
    const r = breakAndRestore(src, 'RestructureDatasetSchema', { old_column: 'sentence', new_column: 'text' });
    assert.match(r.script, /return tokenizer\(examples\["text"\], truncation=True/);
    assert.match(r.script, /remove_columns=\["text", "idx"\]/);
    assert.match(r.script, /^ {4}# examples\["sentence"\] is a list of strings when batched=True$/m);
    assert.deepEqual(r.inverse, {
      primitive_type: 'RestoreColumn',
      category: 'schema_drift',
      params: { old_column: 'text', new_column: 'sentence' },
    });
    assert.deepEqual(changedLines(src, r.script), [
      ...linesWith(src, 'return tokenizer(examples["sentence"]'),
      ...linesWith(src, 'remove_columns=["sentence"'),
    ]);
  });

  test('keeps the quote style and the rest of the literal', () => {
    const r = breakAndRestore('def f(batch):\n    return batch[\'label\'], batch["idx"]\n', 'RestructureDatasetSchema', {
      old_column: 'label',
      new_column: 'labels',
    });
    assert.equal(r.script, 'def f(batch):\n    return batch[\'labels\'], batch["idx"]\n');
  });

  test('RestoreColumn is usable on its own as the repair', () => {
    const broken = applySpec(src, {
      primitive_type: 'RestructureDatasetSchema',
      params: { old_column: 'sentence', new_column: 'text' },
    }).script;
    assert.equal(
      applySpec(broken, { primitive_type: 'RestoreColumn', params: { old_column: 'text', new_column: 'sentence' } }).script,
      src,
    );
  });

  test('refusals: column not read, new name already used, invalid column name', () => {
    assertRefuses(src, 'RestructureDatasetSchema', { old_column: 'question', new_column: 'q' }, /no dataset column "question" is read/);
    assertRefuses(src, 'RestructureDatasetSchema', { old_column: 'sentence', new_column: 'idx' }, /already uses the column name "idx"/);
    assertRefuses(
      src,
      'RestructureDatasetSchema',
      { old_column: 'sentence', new_column: 'te"xt' },
      /invalid params: new_column: a column name without quotes/,
    );
  });
});

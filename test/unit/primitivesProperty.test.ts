// Properties over every script we have (fixtures + the task corpus, globbed) and every candidate
// of every primitive: the inverse restores the script byte for byte, and the edit stays inside
// the candidate's region. Plus a 2,000+ line script.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applicablePrimitives, applySpec, breakagePrimitives, PRIMITIVES } from '../../src/env/primitives/registry';
import { allScripts, fixture } from './primitivesHelpers';

const scripts = allScripts();

describe('every candidate of every primitive on every script', () => {
  test('there are fixture scripts in all four styles and the corpus is included when present', () => {
    const names = scripts.map((s) => s.name);
    for (const style of ['trainer_', 'custom_loop_', 'trl_sft_', 'peft_lora_'])
      assert.ok(
        names.some((n) => n.startsWith(`fixtures/${style}`)),
        style,
      );
  });

  for (const { name, script } of scripts) {
    test(name, () => {
      let checked = 0;
      for (const p of PRIMITIVES) {
        for (const c of p.candidates(script)) {
          const where = `${p.name} ${JSON.stringify(c.params)} on ${name}`;
          assert.ok(c.label.length > 0 && c.from <= c.to && c.to <= script.length, where);
          const r = applySpec(script, { primitive_type: p.name, params: c.params });
          assert.equal(applySpec(r.script, r.inverse).script, script, `inverse not exact: ${where}`);
          // Only the candidate's region changes: everything before and after it is byte-identical.
          assert.equal(r.script.slice(0, c.from), script.slice(0, c.from), `text before the region changed: ${where}`);
          assert.ok(r.script.endsWith(script.slice(c.to)), `text after the region changed: ${where}`);
          for (const e of r.edits) assert.ok(e.from >= c.from && e.to <= c.to, `edit outside the region: ${where}`);
          checked++;
        }
      }
      assert.ok(checked > 0, `no candidate at all on ${name}`);
    });
  }

  test('each breakage primitive has a candidate on at least one script', () => {
    for (const p of breakagePrimitives())
      assert.ok(
        scripts.some((s) => p.candidates(s.script).length > 0),
        p.name,
      );
  });

  test('two breakages stack and their inverses, applied in reverse order, restore the script', () => {
    const src = fixture('trainer_text_classification.py');
    const first = applySpec(src, {
      primitive_type: 'ModifyConfigField',
      params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
    });
    const second = applySpec(first.script, {
      primitive_type: 'RestructureDatasetSchema',
      params: { old_column: 'sentence', new_column: 'text' },
    });
    const back = applySpec(applySpec(second.script, second.inverse).script, first.inverse).script;
    assert.equal(back, src);
  });
});

/** A long script: a fixture followed by many generated helpers that use tokenizers, columns and configs. */
function longScript(): string {
  const parts = [fixture('trainer_text_classification.py')];
  for (let i = 0; parts.join('').split('\n').length < 2100; i++) {
    parts.push(
      `\n\ndef preprocess_${i}(examples):\n` +
        `    # variant ${i}: lower-case, then tokenize\n` +
        `    texts = [t.lower() for t in examples["sentence"]]\n` +
        `    encoded = tokenizer(\n        texts,\n        truncation=True,\n        max_length=${16 + (i % 7)},\n    )\n` +
        `    encoded["labels"] = examples["label"]\n` +
        `    return encoded\n`,
    );
  }
  return parts.join('');
}

describe('a 2,000+ line script', () => {
  test('gets candidates for every primitive that applies to its head, and they stay exact', () => {
    const big = longScript();
    assert.ok(big.split('\n').length >= 2000);
    const head = new Set(applicablePrimitives(fixture('trainer_text_classification.py')).map((a) => a.primitive.name));
    const applicable = applicablePrimitives(big);
    const names = new Set(applicable.map((a) => a.primitive.name));
    for (const n of head) assert.ok(names.has(n), `${n} applies to the long script`);
    for (const { primitive, candidates } of applicable) {
      const c = candidates[0];
      const r = applySpec(big, { primitive_type: primitive.name, params: c.params });
      assert.equal(applySpec(r.script, r.inverse).script, big, primitive.name);
    }
    const column = applicable
      .find((a) => a.primitive.name === 'RestructureDatasetSchema')!
      .candidates.find((c) => c.params.old_column === 'sentence')!;
    const edits = applySpec(big, { primitive_type: 'RestructureDatasetSchema', params: column.params }).edits;
    const helpers = big.match(/for t in examples\["sentence"\]\]/g)!.length;
    // Every helper's read, plus the fixture's tokenize() read and its remove_columns entry.
    assert.equal(edits.length, helpers + 2);
  });
});

// Applicability detection and params prefill of the lab (vscode-free core), on scripts of
// different styles: the corpus (Trainer, custom loop, TRL + PEFT) and the primitives'
// fixtures in test/fixtures/scripts when present.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applicablePrimitives, applySpec, getPrimitive } from '../../src/env/primitives/registry';
import { tasksDir } from '../../src/env/paths';
import { computeApplicable, intersectingCandidates } from '../../src/editor/lab/core/applicability';
import { CancelledError } from '../../src/editor/lab/core/computeCache';
import { candidatePickItems, checkParamsText, lineOfOffset, paramsText, primitivePickItems } from '../../src/editor/lab/core/prefill';

function scriptsIn(dir: string): Array<{ name: string; script: string }> {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => f.endsWith('.py'))
    .sort()
    .map((f) => ({ name: f, script: readFileSync(join(dir, f), 'utf8') }));
}

const corpus = scriptsIn(tasksDir());
const fixtures = scriptsIn(join(__dirname, '../fixtures/scripts'));
const all = [...corpus.map((s) => ({ ...s, name: `corpus/${s.name}` })), ...fixtures.map((s) => ({ ...s, name: `fixtures/${s.name}` }))];
const byName = (n: string) => corpus.find((s) => s.name === n)!.script;

const summary = (list: Array<{ primitive: { name: string }; candidates: Array<{ params: unknown; from: number; to: number }> }>) =>
  list.map((a) => ({ name: a.primitive.name, candidates: a.candidates.map((c) => ({ params: c.params, from: c.from, to: c.to })) }));

describe('applicability', () => {
  test('the corpus is there to test on', () => {
    assert.ok(corpus.length >= 5, `${corpus.length} corpus scripts`);
  });

  for (const s of all) {
    test(`${s.name}: the chunked scan equals the registry's applicablePrimitives, and pick items follow it`, async () => {
      const expected = applicablePrimitives(s.script);
      const got = await computeApplicable(s.script);
      assert.deepEqual(summary(got), summary(expected));
      const items = primitivePickItems(got);
      assert.deepEqual(
        items.map((i) => i.primitive),
        expected.map((a) => a.primitive.name),
      );
      for (const [i, item] of items.entries()) {
        assert.ok(item.detail.includes(expected[i].primitive.description));
        assert.ok(item.detail.includes(expected[i].primitive.models));
        assert.match(item.description, new RegExp(`^${expected[i].candidates.length} place`));
      }
    });

    test(`${s.name}: every candidate's params prefill validates with the schema and applies`, () => {
      for (const { primitive, candidates } of applicablePrimitives(s.script)) {
        for (const c of candidates) {
          const text = paramsText(c.params);
          const check = checkParamsText(primitive, text, s.script);
          assert.ok(check.ok, `${primitive.name} ${text}: ${!check.ok && check.error}`);
          assert.deepEqual(check.ok && check.params, c.params);
          // The edit starts inside the candidate's range, so the code action lands where it acts.
          const result = applySpec(s.script, { primitive_type: primitive.name, params: c.params });
          assert.notEqual(result.script, s.script);
          assert.ok(
            result.edits.some((e) => e.from >= c.from && e.from <= c.to),
            `${primitive.name} ${c.label}: no edit inside [${c.from}, ${c.to}]`,
          );
        }
        const items = candidatePickItems(candidates, s.script);
        assert.deepEqual(
          items.map((i) => i.description),
          candidates.map((c) => `line ${lineOfOffset(s.script, c.from)}`),
        );
      }
    });
  }
});

describe('prefill by script style', () => {
  test('Trainer script: ModifyConfigField offers the real eval_strategy drift on TrainingArguments', () => {
    const script = byName('distilbert_sst2.py');
    const m = applicablePrimitives(script).find((a) => a.primitive.name === 'ModifyConfigField');
    assert.ok(m, 'ModifyConfigField applies to a TrainingArguments script');
    const c = m.candidates.find((x) => x.params.old_field === 'eval_strategy');
    assert.ok(c, m.candidates.map((x) => x.label).join(' | '));
    assert.equal(c.params.new_field, 'evaluation_strategy');
    assert.match(c.drift ?? '', /eval_strategy/);
    assert.equal(script.slice(c.from, c.to).includes('eval_strategy'), true);
  });

  test('TRL + PEFT script: the SFT model class rename and the SFTConfig field are both offered', () => {
    const script = byName('gpt2_sft_lora.py');
    const applicable = applicablePrimitives(script);
    const rename = applicable.find((a) => a.primitive.name === 'RenameApiCall');
    assert.ok(rename?.candidates.some((c) => c.params.old_name === 'AutoModelForCausalLM' && c.drift));
    const config = applicable.find((a) => a.primitive.name === 'ModifyConfigField');
    assert.ok(
      config?.candidates.some((c) => c.params.config_class === 'SFTConfig'),
      config?.candidates.map((c) => c.label).join(' | '),
    );
  });

  test('custom loop script: no Trainer-only breakage is offered where there is no Trainer', () => {
    const script = byName('simple_regression.py');
    assert.ok(!/\bTrainer\b/.test(script));
    const applicable = applicablePrimitives(script);
    assert.ok(applicable.length > 0);
    for (const a of applicable)
      for (const c of a.candidates) assert.ok(!/\bTrainer\b/.test(JSON.stringify(c.params)), `${a.primitive.name}: ${c.label}`);
  });
});

describe('selection → code actions', () => {
  test('a cursor inside a candidate offers its primitive; every offered candidate meets the cursor', async () => {
    const script = byName('distilbert_sst2.py');
    const applicable = await computeApplicable(script);
    const target = applicable.find((a) => a.primitive.name === 'ModifyConfigField')!.candidates[0];
    const at = Math.floor((target.from + target.to) / 2);
    const hits = intersectingCandidates(applicable, at, at);
    assert.ok(hits.some((h) => h.primitive.name === 'ModifyConfigField'));
    for (const h of hits) for (const c of h.candidates) assert.ok(c.from <= at && at <= c.to);
    // A selection covering the whole file offers everything.
    assert.deepEqual(
      intersectingCandidates(applicable, 0, script.length).map((h) => h.primitive.name),
      applicable.map((a) => a.primitive.name),
    );
    // The module docstring (offset 1) is no candidate of anything.
    const docEnd = script.indexOf('"""', 3);
    for (const h of intersectingCandidates(applicable, 1, 1))
      for (const c of h.candidates) assert.ok(c.from <= 1 && c.to >= 1 && c.from < docEnd);
  });
});

describe('params validation messages', () => {
  const script = byName('distilbert_sst2.py');
  const rename = getPrimitive('RenameApiCall')!;
  test('bad JSON, wrong shape, schema errors and refusals are each explained', () => {
    const bad = checkParamsText(rename, '{"old_name": ', script);
    assert.ok(!bad.ok && /^Not valid JSON/.test(bad.error));
    const arr = checkParamsText(rename, '[1]', script);
    assert.ok(!arr.ok && /JSON object/.test(arr.error));
    const schema = checkParamsText(rename, '{"old_name": "Trainer"}', script);
    assert.ok(!schema.ok && /new_name/.test(schema.error), !schema.ok ? schema.error : '');
    const refused = checkParamsText(rename, '{"old_name": "NotInThisScript", "new_name": "Other"}', script);
    assert.ok(!refused.ok && /refuses/.test(refused.error), !refused.ok ? refused.error : '');
    const fine = checkParamsText(rename, '{"old_name": "Trainer", "new_name": "OldTrainer"}', script);
    assert.ok(fine.ok);
  });
});

describe('large files', () => {
  const base = byName('distilbert_sst2.py');
  const big = `${base}\n\n${Array.from({ length: 700 }, (_, i) => `def helper_${i}(x):\n    y = x + ${i}\n    return y\n`).join('\n')}`;
  test('a 2,000+ line file: same result, and the event loop runs between primitives', async () => {
    assert.ok(big.split('\n').length > 2000);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const got = await computeApplicable(big);
    clearInterval(timer);
    assert.deepEqual(summary(got), summary(applicablePrimitives(big)));
    assert.ok(ticks > 0, 'timers fired while the scan ran');
  });
  test('an aborted scan stops with CancelledError', async () => {
    const ac = new AbortController();
    const p = computeApplicable(big, undefined, ac.signal);
    ac.abort();
    await assert.rejects(p, CancelledError);
  });
});

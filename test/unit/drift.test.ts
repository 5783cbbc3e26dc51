import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { breaksUnder, DRIFT_TABLE, driftEntriesFor } from '../../src/env/drift/driftTable';
import { BaselineDriftGenerator, FALLBACK_ORDER, parseDriftOutput, primitivesForTarget } from '../../src/env/drift/generator';
import { applySpec, breakagePrimitives, getPrimitive } from '../../src/env/primitives/registry';
import { PrimitiveRefusal } from '../../src/env/primitives/types';
import { Teacher } from '../../src/env/teacher';
import { snapshotVersions } from '../../src/env/versions';
import { allScripts, fixture } from './primitivesHelpers';

const scripts = allScripts();
const BREAKAGE = breakagePrimitives().map((p) => p.name);

describe('drift table', () => {
  test('every entry names a breakage primitive, has valid params and a unique id', () => {
    assert.equal(new Set(DRIFT_TABLE.map((d) => d.id)).size, DRIFT_TABLE.length);
    for (const d of DRIFT_TABLE) {
      const p = getPrimitive(d.primitive);
      assert.equal(p?.kind, 'breakage', d.id);
      assert.ok(p!.paramsSchema.safeParse(d.params).success, `${d.id} params`);
      assert.ok(d.library && d.changedIn && d.description, d.id);
    }
    for (const name of BREAKAGE) assert.ok(driftEntriesFor(name).length > 0, `${name} models at least one real drift`);
  });

  test('breaksUnder reads the version gate', () => {
    const int8 = DRIFT_TABLE.find((d) => d.id === 'peft-int8-training')!;
    assert.equal(breaksUnder(int8, { peft: '0.10.0' }), true);
    assert.equal(breaksUnder(int8, { peft: '0.9.0' }), false);
    assert.equal(breaksUnder(int8, {}), false, 'a library the versions do not name does not reject');
    assert.equal(breaksUnder(DRIFT_TABLE.find((d) => d.rejectedWhen === 'always')!, {}), true);
    assert.equal(breaksUnder(DRIFT_TABLE.find((d) => !d.rejectedWhen)!, snapshotVersions()), false);
  });
});

describe('BaselineDriftGenerator', () => {
  test('the same seed gives the same sequence of specs', () => {
    const script = fixture('trainer_text_classification.py');
    const run = (seed: number) => {
      const g = new BaselineDriftGenerator(seed);
      return BREAKAGE.map((t) => g.propose(t, script));
    };
    assert.deepEqual(run(7), run(7));
    const picks = new Set(Array.from({ length: 12 }, (_, seed) => JSON.stringify(new BaselineDriftGenerator(seed).propose('RenameApiCall', fixture('custom_loop_causal_lm.py')))));
    assert.equal(picks.size, 1, 'only one real drift breaks there (AutoModelWithLMHead), so every seed picks it');
    const moves = new Set(Array.from({ length: 12 }, (_, seed) => JSON.stringify(new BaselineDriftGenerator(seed).propose('DeprecateImport', fixture('custom_loop_causal_lm.py')).params)));
    assert.ok(moves.size > 1, 'several breaking drifts: seeds differ');
  });

  for (const { name, script } of scripts) {
    test(`every target category proposes a spec that applies on ${name}, or falls back`, () => {
      const g = new BaselineDriftGenerator(1);
      for (const target of BREAKAGE) {
        const spec = g.propose(target, script);
        const own = getPrimitive(target)!.candidates(script);
        const anyBreaks = BREAKAGE.some((n) => getPrimitive(n)!.candidates(script).some((c) => c.breaks !== false));
        if (own.some((c) => c.breaks !== false)) assert.equal(spec.primitive_type, target);
        else if (anyBreaks) assert.notEqual(spec.primitive_type, target, 'falls back to a primitive that breaks');
        const chosen = getPrimitive(spec.primitive_type)!.candidates(script).find((c) => JSON.stringify(c.params) === JSON.stringify(spec.params));
        assert.ok(chosen, 'the spec is one of the candidates');
        if (anyBreaks) assert.notEqual(chosen.breaks, false, 'a spec that breaks whenever one exists');
        assert.equal(spec.category, getPrimitive(spec.primitive_type)!.category);
        const r = applySpec(script, spec);
        assert.equal(applySpec(r.script, r.inverse).script, script);
      }
    });
  }

  test('a target with only deprecation-only candidates falls back to one that breaks', () => {
    const script = fixture('trainer_text_classification.py');
    const own = getPrimitive('ChangeArgumentSignature')!.candidates(script);
    assert.ok(own.length > 0 && own.every((c) => c.breaks === false), 'Trainer(tokenizer=) only warns');
    const spec = new BaselineDriftGenerator(0).propose('ChangeArgumentSignature', script);
    assert.equal(spec.primitive_type, FALLBACK_ORDER.find((n) => getPrimitive(n)!.candidates(script).some((c) => c.breaks !== false)));
    const old = new BaselineDriftGenerator(0).propose('ChangeArgumentSignature', 'trainer = Trainer(model=m, processing_class=tok)\n');
    assert.equal(old.primitive_type, 'ChangeArgumentSignature', 'when nothing breaks, the deprecation-only drift is still proposed');
  });

  test('prefers the real drift that breaks under the versions', () => {
    const spec = new BaselineDriftGenerator(3).propose('ModifyConfigField', fixture('trainer_text_classification.py'));
    assert.deepEqual(spec.params, { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' });
  });

  test('a category name or any casing selects the primitive; an unknown target falls back in the fixed order', () => {
    assert.deepEqual(primitivesForTarget('api_drift').map((p) => p.name), ['RenameApiCall']);
    assert.deepEqual(primitivesForTarget('renameapicall').map((p) => p.name), ['RenameApiCall']);
    assert.deepEqual(primitivesForTarget('RestoreApiCall'), [], 'inverse primitives are not targets');
    const spec = new BaselineDriftGenerator(0).propose('NoSuchCategory', fixture('trl_sft_chat.py'));
    const firstApplicable = FALLBACK_ORDER.find((n) => getPrimitive(n)!.candidates(fixture('trl_sft_chat.py')).some((c) => c.breaks !== false));
    assert.equal(spec.primitive_type, firstApplicable);
  });

  test('throws a PrimitiveRefusal only when nothing applies, saying why', () => {
    const g = new BaselineDriftGenerator(0);
    assert.throws(() => g.propose('RenameApiCall', 'x = 1\nprint(x)\n'), (e: unknown) => e instanceof PrimitiveRefusal && /no breakage primitive applies to this script/.test(e.message));
    assert.throws(() => g.propose('RenameApiCall', 'import torch\nx = torch.zeros(\n'), (e: unknown) => e instanceof PrimitiveRefusal && /does not parse \(line 2/.test(e.message));
  });
});

describe('parseDriftOutput', () => {
  const spec = { primitive_type: 'RenameApiCall', params: { old_name: 'a', new_name: 'b' } };

  test('bare JSON, fenced JSON and JSON inside prose', () => {
    assert.deepEqual(parseDriftOutput(JSON.stringify(spec)), spec);
    assert.deepEqual(parseDriftOutput('Here you go:\n```json\n' + JSON.stringify(spec, null, 2) + '\n```\nThanks'), spec);
    assert.deepEqual(parseDriftOutput('```\n' + JSON.stringify(spec) + '\n```'), spec);
    assert.deepEqual(parseDriftOutput(`I will rename it {not json} then: ${JSON.stringify({ ...spec, params: { old_name: '}', new_name: 'b' } })} done.`), {
      ...spec,
      params: { old_name: '}', new_name: 'b' },
    });
    assert.deepEqual(parseDriftOutput(JSON.stringify({ breakage: spec })), spec);
  });

  test('params default to {}; invalid shapes are null', () => {
    assert.deepEqual(parseDriftOutput('{"primitive_type": "DeprecateImport"}'), { primitive_type: 'DeprecateImport', params: {} });
    assert.equal(parseDriftOutput(''), null);
    assert.equal(parseDriftOutput('no json here'), null);
    assert.equal(parseDriftOutput('{"params": {}}'), null);
    assert.equal(parseDriftOutput('{"primitive_type": ""}'), null);
    assert.equal(parseDriftOutput('{"primitive_type": "RenameApiCall", "params": [1]}'), null);
    assert.equal(parseDriftOutput('```json\n{broken\n```'), null);
  });
});

describe('Teacher', () => {
  test('picks applicable breakage primitives, deterministically per seed', () => {
    const script = fixture('trainer_text_classification.py');
    const picks = (seed: number) => {
      const t = new Teacher(seed);
      return Array.from({ length: 6 }, () => t.targetCategory(script));
    };
    assert.deepEqual(picks(11), picks(11));
    for (const name of picks(11)) assert.ok(getPrimitive(name)!.candidates(script).length > 0, name);
  });

  test('cycles through the primitives that break before repeating one', () => {
    const script = fixture('trainer_text_classification.py');
    const breaking = BREAKAGE.filter((n) => getPrimitive(n)!.candidates(script).some((c) => c.breaks !== false));
    const t = new Teacher(5);
    const first = Array.from({ length: breaking.length }, () => t.targetCategory(script));
    assert.deepEqual([...first].sort(), [...breaking].sort());
    assert.equal(t.counts.get(first[0]!), 1);
  });

  test('names the default category when nothing applies', () => {
    assert.equal(new Teacher(0).targetCategory('x = 1\n'), 'RenameApiCall');
  });
});

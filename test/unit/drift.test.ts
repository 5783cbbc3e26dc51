import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { breaksUnder, DRIFT_TABLE, driftEntriesFor } from '../../src/env/drift/driftTable';
import {
  BaselineDriftGenerator,
  FALLBACK_ORDER,
  parseDriftOutput,
  primitivesForTarget,
  specProvenance,
} from '../../src/env/drift/generator';
import { applySpec, breakagePrimitives, getPrimitive } from '../../src/env/primitives/registry';
import { PrimitiveRefusal } from '../../src/env/primitives/types';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JsonFileTeacherStore, MemoryTeacherStore, Teacher } from '../../src/env/episode/teacher';
import { snapshotVersions } from '../../src/env/snapshots/versions';
import { allScripts, fixture } from './primitivesHelpers';

const scripts = allScripts();
const BREAKAGE = breakagePrimitives().map((p) => p.name);

describe('drift table', () => {
  test('every entry names a breakage primitive, has valid params and a unique id', () => {
    assert.equal(new Set(DRIFT_TABLE.map((d) => d.id)).size, DRIFT_TABLE.length);
    for (const d of DRIFT_TABLE) {
      const p = getPrimitive(d.primitive);
      assert.equal(p?.kind, 'breakage', d.id);
      assert.ok(p.paramsSchema.safeParse(d.params).success, `${d.id} params`);
      assert.ok(d.library && d.changedIn && d.description, d.id);
    }
    for (const name of BREAKAGE) assert.ok(driftEntriesFor(name).length > 0, `${name} models at least one real drift`);
  });

  test('breaksUnder reads the version gate', () => {
    const int8 = DRIFT_TABLE.find((d) => d.id === 'peft-int8-training')!;
    assert.equal(breaksUnder(int8, { peft: '0.10.0' }), true);
    assert.equal(breaksUnder(int8, { peft: '0.9.0' }), false);
    assert.equal(breaksUnder(int8, {}), false, 'a library the versions do not name does not reject');
    assert.equal(
      breaksUnder(
        DRIFT_TABLE.find((d) => d.rejectedWhen === 'always')!,
        {},
      ),
      true,
    );
    assert.equal(
      breaksUnder(
        DRIFT_TABLE.find((d) => !d.rejectedWhen)!,
        snapshotVersions(),
      ),
      false,
    );
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
    const picks = new Set(
      Array.from({ length: 12 }, (_, seed) =>
        JSON.stringify(new BaselineDriftGenerator(seed).propose('RenameApiCall', fixture('custom_loop_causal_lm.py'))),
      ),
    );
    assert.equal(picks.size, 1, 'only one real drift breaks there (AutoModelWithLMHead), so every seed picks it');
    // No real drift applies: several synthetic renames, so seeds differ.
    const plain =
      'from transformers import AutoTokenizer, AutoConfig, set_seed\nset_seed(0)\ntok = AutoTokenizer.from_pretrained("x")\ncfg = AutoConfig.from_pretrained("x")\n';
    const renames = new Set(
      Array.from({ length: 12 }, (_, seed) => JSON.stringify(new BaselineDriftGenerator(seed).propose('RenameApiCall', plain).params)),
    );
    assert.ok(renames.size > 1, 'several synthetic drifts: seeds differ');
  });

  for (const { name, script } of scripts) {
    test(`every target category proposes a spec that applies on ${name}: real drifts first, synthetic only when none breaks`, () => {
      const g = new BaselineDriftGenerator(1);
      const cands = new Map(BREAKAGE.map((n) => [n, getPrimitive(n)!.candidates(script)]));
      const realBreaks = (n: string) => cands.get(n)!.some((c) => c.provenance === 'real' && c.breaks === true);
      const anyBreaks = (n: string) => cands.get(n)!.some((c) => c.breaks !== false);
      for (const target of BREAKAGE) {
        const spec = g.propose(target, script);
        const firstReal = FALLBACK_ORDER.find((n) => n !== target && realBreaks(n));
        if (realBreaks(target)) assert.equal(spec.primitive_type, target);
        else if (firstReal) assert.equal(spec.primitive_type, firstReal, 'falls back to the first primitive with a real drift that breaks');
        else if (anyBreaks(target)) assert.equal(spec.primitive_type, target);
        const chosen = cands.get(spec.primitive_type)!.find((c) => JSON.stringify(c.params) === JSON.stringify(spec.params));
        assert.ok(chosen, 'the spec is one of the candidates');
        assert.equal(spec.provenance, chosen.provenance);
        if (BREAKAGE.some(realBreaks))
          assert.ok(chosen.provenance === 'real' && chosen.breaks === true, 'a real drift that breaks whenever one exists');
        else if (BREAKAGE.some(anyBreaks)) assert.notEqual(chosen.breaks, false, 'a spec that breaks whenever one exists');
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
    assert.equal(
      spec.primitive_type,
      FALLBACK_ORDER.find((n) =>
        getPrimitive(n)!
          .candidates(script)
          .some((c) => c.provenance === 'real' && c.breaks === true),
      ),
    );
    const old = new BaselineDriftGenerator(0).propose('ChangeArgumentSignature', 'trainer = Trainer(model=m, processing_class=tok)\n');
    assert.equal(old.primitive_type, 'ChangeArgumentSignature', 'when nothing breaks, the deprecation-only drift is still proposed');
  });

  test('specs name their provenance; synthetic drifts only when no real one breaks', () => {
    const real = new BaselineDriftGenerator(0).propose('RenameApiCall', fixture('custom_loop_causal_lm.py'));
    assert.equal(real.provenance, 'real');
    const plain = 'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("x")\n';
    const synthetic = new BaselineDriftGenerator(0).propose('RenameApiCall', plain);
    assert.deepEqual(
      [synthetic.provenance, synthetic.params],
      ['synthetic', { old_name: 'AutoTokenizer', new_name: 'AutoTokenizerLegacy' }],
    );
    // The target has only a synthetic candidate, another primitive a real one: the real one wins.
    const both =
      'from transformers import AutoTokenizer, TrainingArguments\ntok = AutoTokenizer.from_pretrained("x")\nargs = TrainingArguments(output_dir="o", eval_strategy="epoch")\n';
    const spec = new BaselineDriftGenerator(0).propose('RestructureDatasetSchema', both, { ...snapshotVersions(), transformers: '4.51.0' });
    assert.deepEqual([spec.primitive_type, spec.provenance], ['ModifyConfigField', 'real']);
  });

  test('specProvenance names the real drift of any spec that matches one', () => {
    const script = fixture('trainer_text_classification.py');
    assert.deepEqual(
      specProvenance(script, {
        primitive_type: 'ModifyConfigField',
        params: { new_field: 'evaluation_strategy', old_field: 'eval_strategy', config_class: 'TrainingArguments' },
      }),
      {
        provenance: 'real',
        drift_id: 'transformers-trainingargs-evaluation-strategy',
      },
    );
    assert.deepEqual(specProvenance(script, { primitive_type: 'RenameApiCall', params: { old_name: 'Trainer', new_name: 'TrainerX' } }), {
      provenance: 'synthetic',
    });
    assert.deepEqual(specProvenance(script, { primitive_type: 'NoSuchPrimitive' }), { provenance: 'synthetic' });
  });

  test('forward-direction drifts break under the older snapshot the script runs on', () => {
    const src = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o", evaluation_strategy="epoch")\n';
    const old = new BaselineDriftGenerator(0).propose('ModifyConfigField', src, { transformers: '4.36.0' });
    assert.deepEqual(old.params, { config_class: 'TrainingArguments', old_field: 'evaluation_strategy', new_field: 'eval_strategy' });
    assert.equal(old.provenance, 'real');
    const gate = DRIFT_TABLE.find((d) => d.id === 'eval-strategy-added:TrainingArguments')!;
    assert.equal(breaksUnder(gate, { transformers: '4.40.0' }), true);
    assert.equal(breaksUnder(gate, { transformers: '4.41.0' }), false);
  });

  test('prefers the real drift that breaks under the versions', () => {
    // evaluation_strategy is rejected from transformers 4.51 (the drift catalog's probe of the real releases).
    const spec = new BaselineDriftGenerator(3).propose('ModifyConfigField', fixture('trainer_text_classification.py'), {
      ...snapshotVersions(),
      transformers: '4.51.0',
    });
    assert.deepEqual(spec.params, { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' });
  });

  test('a category name or any casing selects the primitive; an unknown target falls back in the fixed order', () => {
    assert.deepEqual(
      primitivesForTarget('api_drift').map((p) => p.name),
      ['RenameApiCall'],
    );
    assert.deepEqual(
      primitivesForTarget('renameapicall').map((p) => p.name),
      ['RenameApiCall'],
    );
    assert.deepEqual(primitivesForTarget('RestoreApiCall'), [], 'inverse primitives are not targets');
    const spec = new BaselineDriftGenerator(0).propose('NoSuchCategory', fixture('trl_sft_chat.py'));
    const cands = (n: string) => getPrimitive(n)!.candidates(fixture('trl_sft_chat.py'));
    const firstApplicable =
      FALLBACK_ORDER.find((n) => cands(n).some((c) => c.provenance === 'real' && c.breaks === true)) ??
      FALLBACK_ORDER.find((n) => cands(n).some((c) => c.breaks !== false));
    assert.equal(spec.primitive_type, firstApplicable);
  });

  test('throws a PrimitiveRefusal only when nothing applies, saying why', () => {
    const g = new BaselineDriftGenerator(0);
    assert.throws(
      () => g.propose('RenameApiCall', 'x = 1\nprint(x)\n'),
      (e: unknown) => e instanceof PrimitiveRefusal && /no breakage primitive applies to this script/.test(e.message),
    );
    assert.throws(
      () => g.propose('RenameApiCall', 'import torch\nx = torch.zeros(\n'),
      (e: unknown) => e instanceof PrimitiveRefusal && /does not parse \(line 2/.test(e.message),
    );
  });
});

describe('parseDriftOutput', () => {
  const spec = { primitive_type: 'RenameApiCall', params: { old_name: 'a', new_name: 'b' } };

  test('bare JSON, fenced JSON and JSON inside prose', () => {
    assert.deepEqual(parseDriftOutput(JSON.stringify(spec)), spec);
    assert.deepEqual(parseDriftOutput('Here you go:\n```json\n' + JSON.stringify(spec, null, 2) + '\n```\nThanks'), spec);
    assert.deepEqual(parseDriftOutput('```\n' + JSON.stringify(spec) + '\n```'), spec);
    assert.deepEqual(
      parseDriftOutput(`I will rename it {not json} then: ${JSON.stringify({ ...spec, params: { old_name: '}', new_name: 'b' } })} done.`),
      {
        ...spec,
        params: { old_name: '}', new_name: 'b' },
      },
    );
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

  test('cycles through the primitives with a real drift that breaks before repeating one', () => {
    const script = fixture('trainer_text_classification.py');
    const breaking = BREAKAGE.filter((n) =>
      getPrimitive(n)!
        .candidates(script)
        .some((c) => c.provenance === 'real' && c.breaks === true),
    );
    assert.ok(
      breaking.length >= 3 && breaking.length < BREAKAGE.filter((n) => getPrimitive(n)!.candidates(script).length > 0).length,
      breaking.join(),
    );
    const t = new Teacher(5);
    const first = Array.from({ length: breaking.length }, () => t.targetCategory(script));
    assert.deepEqual([...first].sort(), [...breaking].sort());
    assert.equal(t.counts.get(first[0]), 1);
  });

  test('names the default category when nothing applies', () => {
    assert.equal(new Teacher(0).targetCategory('x = 1\n'), 'RenameApiCall');
  });

  test('with a store, a Teacher made per episode still cycles (the original restarted every episode)', () => {
    const script = fixture('trainer_text_classification.py');
    const pool = BREAKAGE.filter((n) =>
      getPrimitive(n)!
        .candidates(script)
        .some((c) => c.provenance === 'real' && c.breaks === true),
    );
    const store = new MemoryTeacherStore();
    const perEpisode = pool.map((_, i) => new Teacher(100 + i, store).targetCategory(script));
    assert.deepEqual([...perEpisode].sort(), [...pool].sort(), 'each primitive once');
    assert.deepEqual(store.load().counts, Object.fromEntries([...pool].sort().map((n) => [n, 1])));
    const fresh = pool.map((_, i) => new Teacher(100 + i).targetCategory(script));
    assert.ok(new Set(fresh).size < pool.length || pool.length === 1, 'without a store every episode starts afresh, so picks repeat');
  });

  test('deterministic for a seed and a history; the RNG continues where it stopped', () => {
    const script = fixture('trainer_text_classification.py');
    const one = new Teacher(9);
    const straight = Array.from({ length: 5 }, () => one.targetCategory(script));
    const store = new MemoryTeacherStore();
    const split = [new Teacher(9, store).targetCategory(script), new Teacher(9, store).targetCategory(script)];
    const rest = new Teacher(9, store);
    split.push(...Array.from({ length: 3 }, () => rest.targetCategory(script)));
    assert.deepEqual(split, straight, 'same seed, same history: same picks whether or not the Teacher was rebuilt');
    assert.ok(store.load().draws >= 1);
  });

  test('the JSON file store persists across instances; a bad file is reported and ignored', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-teacher-'));
    try {
      const file = join(dir, 'sub', 'teacher.json');
      const script = fixture('trainer_text_classification.py');
      const a = new Teacher(1, new JsonFileTeacherStore(file)).targetCategory(script);
      const saved = JSON.parse(readFileSync(file, 'utf8')) as { counts: Record<string, number> };
      assert.deepEqual(saved.counts, { [a]: 1 });
      const b = new Teacher(1, new JsonFileTeacherStore(file)).targetCategory(script);
      assert.notEqual(b, a, 'the least-asked choice moves on');
      writeFileSync(file, '{"counts": {"X": -1}}');
      const problems: string[] = [];
      const t = new Teacher(1, new JsonFileTeacherStore(file, (m) => problems.push(m)));
      assert.equal(t.counts.size, 0);
      assert.equal(problems.length, 1);
      assert.match(problems[0], /not a Teacher history/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

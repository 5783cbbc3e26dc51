// The optional migration hint: the catalog's note for the episode's drift goes into the repair
// prompt only when asked for, and every record says whether it was shown.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { migrationHint } from '../../src/env/episode/migrationHint';
import { fixedDriftGenerate, noopRepairGenerate, rolloutOneEpisode } from '../../src/env/episode/rollout';
import { loadDriftCatalog } from '../../src/env/fidelity/catalog';

const spec = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};

describe('migration hint', () => {
  test('a catalogued drift gets its note only when hints are on; an unknown one gets none', () => {
    const entry = loadDriftCatalog().entries.find((e) => e.api === 'transformers.TrainingArguments(evaluation_strategy=)');
    assert.ok(entry, 'the catalog has the evaluation_strategy drift');
    const on = migrationHint({ ...spec, drift_id: entry.id }, true);
    assert.deepEqual(on, { shown: true, drift_id: entry.id, text: entry.note.trim() });
    assert.deepEqual(migrationHint({ ...spec, drift_id: entry.id }, false), { shown: false, drift_id: entry.id });
    assert.deepEqual(migrationHint({ primitive_type: 'RenameApiCall', params: { old_name: 'Foo', new_name: 'FooLegacy' } }, true), {
      shown: false,
    });
  });

  test('rollout: the repair prompt carries the note with hints on, not without; info records it', async () => {
    const env = new ForgeEnvironment({});
    try {
      const run = (hints: boolean) =>
        rolloutOneEpisode(env, {
          taskId: 'distilbert_sst2',
          driftGenerate: fixedDriftGenerate(spec.primitive_type, spec.params, 0),
          repairGenerate: noopRepairGenerate,
          migrationHints: hints,
        });
      const withHint = await run(true);
      const without = await run(false);
      const note = loadDriftCatalog()
        .entries.find((e) => e.id === (withHint.info.migration_hint as { drift_id?: string }).drift_id)
        ?.note.trim();
      assert.ok(note, 'the recorded drift id names a catalog entry');
      assert.equal((withHint.info.migration_hint as { shown: boolean }).shown, true);
      assert.ok(withHint.repair_prompt.includes('Migration note from the library release:'));
      assert.ok(withHint.repair_prompt.includes(note));
      assert.equal((without.info.migration_hint as { shown: boolean }).shown, false);
      assert.ok(!without.repair_prompt.includes(note));
      assert.ok(!without.repair_prompt.includes('Migration note'));
    } finally {
      await env.dispose();
    }
  });
});

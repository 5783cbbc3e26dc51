import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { applyRepairDiff } from '../../src/env/diff/diff';
import { noopRepairGenerate, oracleRepairGenerate, rolloutOneEpisode } from '../../src/env/episode/rollout';
import { RolloutResultSchema } from '../../src/env/schemas';

const env = new ForgeEnvironment({ timeoutMs: 30_000 });
after(() => env.dispose());

describe('rolloutOneEpisode', () => {
  for (const task of env.tasks.all.filter((t) => t.source === 'builtin')) {
    test(`oracle repair reaches success on ${task.task_id}`, async () => {
      const r = await rolloutOneEpisode(env, { taskId: task.task_id, seed: 0, repairGenerate: oracleRepairGenerate(env) });
      RolloutResultSchema.parse(r);
      assert.equal(r.task_id, task.task_id);
      assert.equal(r.success, true, `${task.task_id}/${r.primitive_type}: ${r.error_trace}`);
      assert.equal(r.held_out_breakdown.executed_cleanly, 1);
      assert.ok(r.visible_reward > 1.2, `visible reward ${r.visible_reward}`);
      assert.ok(r.drift_prompt.includes('Target category:'));
      assert.ok(r.repair_prompt.includes(task.task_id) || r.repair_prompt.includes('```python'));
      // The recorded repair is a real diff that takes the broken script back to the original.
      const broken = /```python\n([\s\S]*?)```/.exec(r.repair_prompt)![1];
      const diff = /```diff\n([\s\S]*?)```/.exec(r.repair_completion)![1];
      const applied = applyRepairDiff(broken, diff);
      assert.ok(applied.ok && applied.script === task.script_content);
    });
  }

  test('the no-op repair reaches success: false', async () => {
    const r = await rolloutOneEpisode(env, { taskId: 'distilbert_sst2', seed: 0, repairGenerate: noopRepairGenerate });
    assert.equal(r.success, false);
    assert.equal(r.repair_completion, '');
    assert.equal(r.held_out_breakdown.executed_cleanly, 0);
    assert.ok(r.error_trace.length > 0);
  });

  test('a drift completion that is not JSON falls back like the original (RenameApiCall with no params) and reports the refusal', async () => {
    const r = await rolloutOneEpisode(env, { taskId: 'simple_regression', seed: 0, driftGenerate: () => 'I refuse' });
    assert.equal(r.primitive_type, 'RenameApiCall');
    assert.equal(r.success, false);
    assert.match(r.error_trace, /RenameApiCall/);
  });
});

import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { startHumanEpisode } from '../../src/env/episode/humanEpisode';
import { buildDemonstration } from '../../src/store/demonstrationBuilder';
import { applyRepairDiff, createRepairDiff } from '../../src/env/diff/diff';
import { ObservationSchema, RolloutResultSchema } from '../../src/env/schemas';
import { recipeOf } from '../../src/env/episode/episodeRecipe';

const env = new ForgeEnvironment({ timeoutMs: 30_000 });
const TEST_PROVENANCE = {
  session_id: 's',
  annotator_id: 'tester',
  mode: 'simulated' as const,
  interpreter: 'python3',
  extension_version: '0.1.0',
  env_version: '0.1.0',
  started_at: '2025-03-01T10:00:00.000Z',
  submitted_at: '2025-03-01T10:01:00.000Z',
  active_ms: 1,
  wall_ms: 1,
  runs: 1,
};
after(() => env.dispose());

describe('ForgeEnvironment state machine', () => {
  test('reset returns a drift_gen observation with the original script and the snapshot', async () => {
    const obs = await env.reset({ taskId: 'simple_regression', seed: 7 });
    ObservationSchema.parse(obs);
    assert.equal(obs.current_phase, 'drift_gen');
    assert.equal(obs.task_id, 'simple_regression');
    assert.equal(obs.script_content, env.tasks.getById('simple_regression')!.script_content);
    assert.equal(obs.done, false);
    assert.ok(obs.library_versions.transformers, 'library_versions has transformers');
    assert.ok(obs.target_category.length > 0);
    assert.equal(obs.info.seed, 7);
  });

  test('reset accepts difficulty directly and as options.difficulty', async () => {
    const a = await env.reset({ difficulty: 'hard', seed: 1 });
    assert.equal(env.tasks.getById(a.task_id)!.difficulty, 'hard');
    const b = await env.reset({ options: { difficulty: 'easy' }, seed: 1 });
    assert.equal(env.tasks.getById(b.task_id)!.difficulty, 'easy');
  });

  test('the same seed gives the same task and target category', async () => {
    const a = await env.reset({ seed: 123 });
    const b = await env.reset({ seed: 123 });
    assert.equal(a.task_id, b.task_id);
    assert.equal(a.target_category, b.target_category);
  });

  test('reset rejects unknown tasks and bad options with a clear error', async () => {
    await assert.rejects(env.reset({ taskId: 'nope' }), /Unknown task "nope"/);
    await assert.rejects(env.reset({ difficulty: 'extreme' as never }), /Invalid reset options: difficulty/);
  });

  test('invalid and wrong-phase actions return an error and change nothing', async () => {
    await env.reset({ taskId: 'distilbert_sst2', seed: 3 });
    const before = env.state;
    const bad = await env.step({ breakage: { primitive_type: 'RenameApiCall' }, repair: { unified_diff: '' } });
    assert.match(String(bad.info.error), /Invalid action/);
    const wrong = await env.step({ repair: { unified_diff: '' } });
    assert.match(String(wrong.info.error), /only valid in phase repair/);
    assert.equal(wrong.info.error_kind, 'wrong_phase');
    const refused = await env.step({
      breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'no_such_name_here', new_name: 'x_y' } },
    });
    assert.equal(refused.info.error_kind, 'primitive_refused');
    const unknown = await env.step({ breakage: { primitive_type: 'NotAPrimitive', params: {} } });
    assert.match(String(unknown.info.error), /NotAPrimitive/);
    assert.deepEqual(env.state, before);
    assert.equal(refused.current_phase, 'drift_gen');
  });

  test('step before reset is an error, not a throw', async () => {
    const fresh = new ForgeEnvironment({}, { tasks: env.tasks });
    const obs = await fresh.step({ repair: { unified_diff: '' } });
    assert.match(String(obs.info.error), /call reset\(\)/);
  });

  test('a full episode: breakage runs the broken script, the oracle repair scores and ends it', async () => {
    const start = await startHumanEpisode(env, { taskId: 'distilbert_sst2', seed: 11 });
    assert.equal(start.observation.current_phase, 'repair');
    assert.equal(start.observation.script_content, start.brokenScript);
    assert.notEqual(start.brokenScript, start.originalScript);
    assert.notEqual(start.brokenExecution.exit_code, 0, 'the broken script fails');
    assert.match(start.errorTrace, /Error/);
    assert.match(start.repairPrompt, /```python/);
    assert.match(start.driftPrompt, /Target category: /);

    const oracle = env.oracleDiff();
    const evaluation = await env.evaluateRepair(oracle);
    assert.equal(env.state!.phase, 'repair', 'evaluateRepair does not end the episode');
    assert.equal(evaluation.reward_breakdown.script_executes, 1);
    assert.equal(evaluation.held_out_breakdown.executed_cleanly, 1);
    assert.equal(evaluation.repaired_script, start.originalScript);

    const done = await env.step({ repair: { unified_diff: oracle } });
    assert.equal(done.current_phase, 'done');
    assert.equal(done.done, true);
    assert.equal(done.reward, evaluation.reward);
    const again = await env.step({ repair: { unified_diff: oracle } });
    assert.equal(again.info.error_kind, 'wrong_phase');

    const demo = buildDemonstration({ start, final: evaluation, provenance: TEST_PROVENANCE });
    RolloutResultSchema.parse(demo);
    assert.equal(demo.info.breakage_failed, true, 'the breakage made the script fail');
    assert.equal(demo.repair_completion, oracle);
    assert.equal(demo.success, true);
    const applied = applyRepairDiff(start.brokenScript, demo.repair_completion);
    assert.ok(applied.ok);
    assert.equal(applied.ok && applied.script, start.originalScript);
  });

  test('a diff that does not apply scores zero with a clear error, never a throw', async () => {
    await startHumanEpisode(env, { taskId: 'simple_regression', seed: 2 });
    const evaluation = await env.evaluateRepair('@@ -1,1 +1,1 @@\n-this line is not there\n+x\n');
    assert.equal(evaluation.apply.ok, false);
    assert.equal(evaluation.reward, 0);
    assert.equal(evaluation.success, false);
    assert.match(evaluation.error_trace, /did not apply/);
  });

  test('state round-trips through restore (resume after a reload)', async () => {
    const start = await startHumanEpisode(env, { taskId: 'tiny_mlp_mnist', seed: 5 });
    const saved = JSON.parse(JSON.stringify(env.state));
    const other = new ForgeEnvironment({}, { tasks: env.tasks });
    other.restore(saved);
    assert.deepEqual(other.state, env.state);
    const fix = createRepairDiff(start.brokenScript, start.originalScript);
    const e = await other.evaluateRepair(fix);
    assert.equal(e.held_out_breakdown.executed_cleanly, 1);
    assert.throws(() => other.restore({ ...saved, phase: 'bogus' }), /Saved episode is invalid/);
  });

  test('recreate runs the broken script again: a forged broken_execution in the recipe is ignored', async () => {
    await startHumanEpisode(env, { taskId: 'tiny_mlp_mnist', seed: 5 });
    const real = env.state!;
    assert.ok(real.broken_execution && real.broken_execution.exit_code !== 0, 'the breakage breaks');
    const forged = {
      exit_code: 0,
      timed_out: false,
      killed: false,
      stdout: 'Traceback (most recent call last):\n  FORGED\n',
      stderr: '',
      wall_time_ms: 1,
    };
    const other = new ForgeEnvironment({ timeoutMs: 30_000 }, { tasks: env.tasks });
    try {
      const obs = await other.recreate({ ...recipeOf(real), broken_execution: forged });
      assert.equal(obs.info.restored, true);
      assert.equal(obs.info.broke, true);
      assert.ok(!JSON.stringify(obs).includes('FORGED'), 'the forged output is nowhere in the observation');
      const st = other.state!;
      assert.notEqual(st.broken_execution!.exit_code, 0);
      assert.equal(st.broken_execution!.exit_code, real.broken_execution.exit_code);
      assert.equal(st.broken_execution!.stderr, real.broken_execution.stderr);
      assert.ok(!st.broken_execution!.stdout.includes('FORGED'));
      // A malformed one (what a hostile client might send) is ignored the same way, not an error.
      const again = await other.recreate({ ...recipeOf(real), broken_execution: 'nonsense' });
      assert.equal(again.info.broke, true);
    } finally {
      await other.dispose();
    }
  });
});

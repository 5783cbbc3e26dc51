// The adversarial suite: every fake repair (fakeRepairs.ts) on every corpus task, through the real
// environment in simulated mode with the sandbox. None may succeed or earn the "it trained" part of
// the visible reward, and each says why; the oracle repair of the same episode must still succeed
// (the control that makes the suite able to fail).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createRepairDiff } from '../../../src/env/diff/diff';
import { BaselineDriftGenerator } from '../../../src/env/drift/generator';
import { ForgeEnvironment } from '../../../src/env/episode/environment';
import { FAKE_REPAIRS } from './fakeRepairs';

// The static validator off: it would refuse many of these before they run, but it is advisory (it
// has known bypasses); the verifier alone must hold.
const envs = [0, 1].map(() => new ForgeEnvironment({ timeoutMs: 30_000, validateRepairs: false }));
after(() => Promise.all(envs.map((e) => e.dispose())));
const taskIds = envs[0].tasks.all.filter((t) => t.source === 'builtin').map((t) => t.task_id);

interface Outcome {
  task: string;
  fake: string;
  success: boolean;
  reward: number;
  findings: string[];
}

async function runTask(env: ForgeEnvironment, taskId: string): Promise<{ oracle: boolean; oracleFindings: string[]; outcomes: Outcome[] }> {
  const obs = await env.reset({ task_id: taskId, seed: 11 });
  const spec = new BaselineDriftGenerator(11).propose(obs.target_category, obs.script_content, obs.library_versions);
  const broken = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params ?? {} } });
  assert.equal(broken.info.error, undefined, `${taskId}: the breakage applies`);
  const original = env.tasks.getById(taskId)!.script_content;
  const oracle = await env.evaluateRepair(env.oracleDiff());
  const outcomes: Outcome[] = [];
  for (const fake of FAKE_REPAIRS) {
    if (fake.appliesTo && !fake.appliesTo(original)) continue;
    const repaired = fake.make({ broken: broken.script_content, original, taskId });
    const ev = await env.evaluateRepair(createRepairDiff(broken.script_content, repaired));
    outcomes.push({ task: taskId, fake: fake.name, success: ev.success, reward: ev.reward, findings: ev.findings });
  }
  return { oracle: oracle.success, oracleFindings: oracle.findings, outcomes };
}

describe('fake repairs never succeed (every corpus task × every fake)', () => {
  test(`${FAKE_REPAIRS.length} fakes × the built-in tasks`, { timeout: 1_800_000 }, async () => {
    assert.ok(FAKE_REPAIRS.length >= 20, 'at least 20 fakes');
    assert.ok(taskIds.length >= 10, 'the whole corpus');
    const queue = [...taskIds];
    const results: Awaited<ReturnType<typeof runTask>>[] = [];
    await Promise.all(
      envs.map(async (env) => {
        for (let id = queue.shift(); id; id = queue.shift()) results.push(await runTask(env, id));
      }),
    );
    const controlFailures = results.filter((r) => !r.oracle).map((r) => `${r.outcomes[0]?.task}: ${r.oracleFindings.join('; ')}`);
    assert.deepEqual(controlFailures, [], 'the oracle repair succeeds on every task');
    const all = results.flatMap((r) => r.outcomes);
    assert.ok(all.length >= 20 * taskIds.length, `${all.length} fake episodes`);
    if (process.env.FORGEENV_ADVERSARIAL_REPORT)
      for (const o of all) console.log(`${o.task}\t${o.fake}\t${o.success}\t${o.reward}\t${o.findings[0]}`);
    const passed = all.filter((o) => o.success).map((o) => `${o.task}: ${o.fake}`);
    assert.deepEqual(passed, [], 'no fake succeeds');
    // The visible reward's evidence-backed part (executes 1.0 + losses 0.5 + checkpoint 0.3) is never earned.
    const rewarded = all.filter((o) => o.reward > 0).map((o) => `${o.task}: ${o.fake} (${o.reward})`);
    assert.deepEqual(rewarded, [], 'no fake earns visible reward');
    const unexplained = all.filter((o) => o.findings.length === 0).map((o) => `${o.task}: ${o.fake}`);
    assert.deepEqual(unexplained, [], 'every fake gets a finding that says why');
  });
});

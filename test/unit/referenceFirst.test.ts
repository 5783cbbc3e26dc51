// make-task's time (issue 20): the verification asks for the original's own verification (the
// reference) before any episode run, so an original that does not verify, or a check the task must
// still declare, costs no broken or oracle run; a reference that verifies is shared with the episodes.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { EnvironmentError, ForgeEnvironment } from '../../src/env/episode/environment';
import { verifyTask, breakageCandidates } from '../../src/env/taskmaking/verification';
import type { PhaseTime } from '../../src/env/phaseTimes';

const corpus = new ForgeEnvironment({ timeoutMs: 60_000 });
after(() => corpus.dispose());

describe('reference first', () => {
  test('referenceVerification needs an episode, then gives the original its verdict', async () => {
    const env = new ForgeEnvironment({ timeoutMs: 60_000 }, { tasks: corpus.tasks });
    try {
      await assert.rejects(env.referenceVerification(), EnvironmentError);
      await env.reset({ task_id: 'simple_regression', seed: 0 });
      const ref = await env.referenceVerification();
      assert.equal(ref.ok, true, ref.ok ? '' : ref.reason);
    } finally {
      await env.dispose();
    }
  });

  test('an original that fails its own verification spends no episode run', async () => {
    const base = corpus.tasks.getById('simple_regression')!;
    const task = { ...base, task_id: 'ref_first_fails', script_content: `${base.script_content}\nraise SystemExit(3)\n` };
    assert.ok(breakageCandidates(task.script_content, task.library_versions ?? {}).length > 0, 'the script has breakage candidates');
    const phases: PhaseTime[] = [];
    let failed = '';
    const verdict = await verifyTask({
      task,
      mode: 'simulated',
      snapshot: 'simulated',
      versions: task.library_versions ?? {},
      timeoutMs: 60_000,
      onPhase: (p) => phases.push(p),
      onReferenceFailed: (r) => (failed = r),
    });
    assert.equal(verdict.verified, false);
    assert.deepEqual(verdict.original_runs, { verified: 0, of: 1 });
    assert.equal(verdict.breakages.length, 0);
    assert.match(failed, /did not run cleanly/);
    assert.equal(verdict.reference_note, failed.slice(0, 1000), 'the verdict says why, not only the progress');
    assert.deepEqual(
      phases.map((p) => p.phase),
      ['reference'],
    );
  });

  test('breakage episodes side by side reach the verdict one after another reaches, in the same order', async () => {
    const task = corpus.tasks.getById('simple_regression')!;
    const verdictWith = async (lanes: number) => {
      const progress: string[] = [];
      const v = await verifyTask({
        task,
        mode: 'simulated',
        snapshot: 'simulated',
        versions: task.library_versions ?? {},
        timeoutMs: 60_000,
        lanes,
        onProgress: (m) => progress.push(m),
      });
      // Before the first oracle repair is scored, how many broken scripts were under way.
      const firstOracle = progress.findIndex((m) => /scoring the oracle repair/.test(m));
      const started = progress.slice(0, firstOracle < 0 ? progress.length : firstOracle).filter((m) => /running the broken script/.test(m));
      return { v: { ...v, checked_at: '' }, startedBeforeFirstOracle: started.length };
    };
    const one = await verdictWith(1);
    const two = await verdictWith(2);
    assert.equal(one.v.verified, true, JSON.stringify(one.v.breakages));
    assert.deepEqual(two.v, one.v);
    assert.equal(one.startedBeforeFirstOracle, 1);
    assert.equal(two.startedBeforeFirstOracle, 2, 'two episodes were under way at once');
  });
});

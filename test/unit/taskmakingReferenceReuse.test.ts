// make-task's time (issue 20): the last clean adapt run is the verification's reference only when it
// ran exactly as the environment runs the task; any difference (a shim added for the evidence, a hub
// refusal, other args, another snapshot, a verifier base model the run lacked) means a fresh reference run.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { keptRunMatchesTask, type KeptRun } from '../../src/env/taskmaking/referenceReuse';
import type { TaskMetadata } from '../../src/env/tasks/tasks';

const needs = { models: [{ id: 'acme/tiny-chat', from: 'args' }], datasets: [{ path: 'acme/prefs', from: 'args' }] };
const kept = (over: Partial<KeptRun> = {}): KeptRun => ({
  snapshot: '2025-09',
  run: { script: 'print(1)\n', args: ['--model', 'acme/tiny-chat', '--bf16', 'false'], files: {}, env: { A: '1' }, hub: needs },
  runDir: '/tmp/x',
  hub: { needs, refusals: [] },
  ...over,
});
const entry = (over: Partial<TaskMetadata> = {}): TaskMetadata => ({
  task_id: 't',
  args: ['--model', 'acme/tiny-chat', '--bf16', 'false'],
  env: { A: '1' },
  hub: needs,
  ...over,
});

describe('keptRunMatchesTask', () => {
  test('the same run as the task: reusable', () => {
    assert.equal(keptRunMatchesTask(kept(), entry(), '2025-09'), true);
    // The verifier's base model among the run's hub items changes nothing.
    assert.equal(keptRunMatchesTask(kept(), entry({ verify: { base_model: 'acme/tiny-chat', margin: 0, tolerance: 0 } }), '2025-09'), true);
  });
  test('any difference: not reusable', () => {
    assert.equal(keptRunMatchesTask(kept(), entry(), '2026-11'), false);
    assert.equal(keptRunMatchesTask(kept(), entry({ args: ['--model', 'acme/tiny-chat'] }), '2025-09'), false);
    assert.equal(keptRunMatchesTask(kept(), entry({ env: {} }), '2025-09'), false);
    assert.equal(keptRunMatchesTask(kept(), entry({ runtime: { shims: ['trained-model-evidence'] } }), '2025-09'), false);
    assert.equal(keptRunMatchesTask(kept(), entry({ mounts: ['/data/out'] }), '2025-09'), false);
    assert.equal(keptRunMatchesTask(kept(), entry({ files: { 'cfg.yaml': 'a: 1\n' } }), '2025-09'), false);
    assert.equal(
      keptRunMatchesTask(kept({ hub: { needs, refusals: [{ kind: 'model', id: 'acme/tiny-chat', reason: 'x' }] } }), entry(), '2025-09'),
      false,
    );
    assert.equal(keptRunMatchesTask(kept(), entry({ hub: { models: [], datasets: needs.datasets } }), '2025-09'), false);
    assert.equal(
      keptRunMatchesTask(kept(), entry({ verify: { base_model: 'acme/other-model', margin: 0, tolerance: 0 } }), '2025-09'),
      false,
    );
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type ForgeServer } from '../../src/cli/serve';
import { RemoteBackend } from '../../src/env/remoteBackend';

let server: ForgeServer;
before(async () => {
  server = await startServer({ port: 0, host: '127.0.0.1' });
});
after(() => server.close());

describe('OpenEnv server and remote backend (loopback)', () => {
  test('health and plain HTTP reset', async () => {
    const h = await (await fetch(`http://127.0.0.1:${server.port}/health`)).json();
    assert.deepEqual(h, { status: 'healthy' });
    const r = (await (await fetch(`http://127.0.0.1:${server.port}/reset`, { method: 'POST', body: JSON.stringify({ taskId: 'simple_regression', seed: 1 }) })).json()) as {
      observation: { current_phase: string; task_id: string };
    };
    assert.equal(r.observation.current_phase, 'drift_gen');
    assert.equal(r.observation.task_id, 'simple_regression');
  });

  test('a whole episode over the /ws session, with errors as messages', async () => {
    const remote = new RemoteBackend(`http://127.0.0.1:${server.port}`);
    try {
      const obs = await remote.reset({ taskId: 'distilbert_sst2', seed: 4 });
      assert.equal(obs.current_phase, 'drift_gen');
      const wrong = await remote.step({ repair: { unified_diff: '' } });
      assert.equal(wrong.info.error_kind, 'wrong_phase');
      const broken = await remote.step({ breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } } });
      assert.equal(broken.current_phase, 'repair');
      assert.match(broken.error_trace ?? '', /AutoTokeniser/);
      const evaluation = await remote.evaluateRepair('');
      assert.equal(evaluation.success, false);
      const state = await remote.state();
      assert.equal(state?.phase, 'repair');
      const done = await remote.step({ repair: { unified_diff: '' } });
      assert.equal(done.done, true);
    } finally {
      await remote.dispose();
    }
  });

  test('an unreachable server is a clear error', async () => {
    const remote = new RemoteBackend('http://127.0.0.1:1');
    await assert.rejects(remote.reset(), /Cannot reach the remote environment/);
    assert.throws(() => RemoteBackend.wsUrl('ftp://x'), /must be http/);
  });
});

// `forgeenv serve` on loopback: the OpenEnv wire format, isolated sessions, bounded runs and
// sessions, and bad input (each costs only its own request or connection). The same wire format is
// checked against openenv-core itself in openenvConformance.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { startServer, type ForgeServer } from '../../src/cli/serve';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { liveRunCount } from '../../src/env/run/executor';
import { RemoteBackend, RemoteEnvironmentError } from '../../src/env/openenv/remoteBackend';
import { closeCodeOf, frame, openSession, rawWebSocket } from './openenvTestUtils';

// A task whose runs last long enough to overlap with what another session does meanwhile.
const taskDir = mkdtempSync(join(tmpdir(), 'forgeenv-serve-test-'));
writeFileSync(
  join(taskDir, 'slow_task.py'),
  'import time\ntime.sleep(2)\nfrom transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("distilbert-base-uncased")\nprint("step 1 loss 1.0")\nprint("step 2 loss 0.5")\n',
);
const RENAME = { breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } } };

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

let server: ForgeServer;
let base: string;
before(async () => {
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    maxSessions: 8,
    maxRuns: 4,
    maxPendingMessages: 4,
    config: { taskDirs: [taskDir] },
  });
  base = `http://127.0.0.1:${server.port}`;
});
after(async () => {
  await server.close();
  rmSync(taskDir, { recursive: true, force: true });
});

/** The server still serves a whole reset for a fresh session. */
async function stillServes(): Promise<void> {
  const s = await openSession(base);
  const r = await s.ask({ type: 'reset', data: { task_id: 'simple_regression', seed: 1 } });
  assert.equal(r.type, 'observation');
  assert.equal(r.data.observation.current_phase, 'drift_gen');
  await s.close();
}

describe('OpenEnv wire format (HTTP)', () => {
  test('health, metadata, schema and state before any episode', async () => {
    assert.deepEqual(await (await fetch(`${base}/health`)).json(), { status: 'healthy' });
    const meta = (await (await fetch(`${base}/metadata`)).json()) as Record<string, unknown>;
    assert.equal(meta.name, 'forge_env');
    assert.equal(typeof meta.description, 'string');
    const schema = (await (await fetch(`${base}/schema`)).json()) as { action: any; observation: any; state: any };
    assert.ok(JSON.stringify(schema.action).includes('unified_diff'));
    assert.ok(schema.observation.properties.current_phase);
    assert.ok(schema.state.properties.step_count);
    assert.deepEqual(await (await fetch(`${base}/state`)).json(), { episode_id: null, step_count: 0 });
    const openapi = (await (await fetch(`${base}/openapi.json`)).json()) as { info: { version: string }; paths: Record<string, unknown> };
    assert.equal(typeof openapi.info.version, 'string');
    assert.ok(['/reset', '/step', '/state'].every((p) => p in openapi.paths));
    const mcp = async (body: unknown) => (await (await fetch(`${base}/mcp`, { method: 'POST', body: JSON.stringify(body) })).json()) as any;
    assert.deepEqual(await mcp({ jsonrpc: '2.0', id: 1, method: 'tools/list' }), { jsonrpc: '2.0', id: 1, result: { tools: [] } });
    assert.equal((await mcp({ jsonrpc: '2.0', id: 2, method: 'tools/call' })).error.code, -32601);
    assert.equal((await mcp({})).error.code, -32600);
  });

  test('reset wraps the observation, keeps reward and done beside it, and ignores unknown keys', async () => {
    const res = await fetch(`${base}/reset`, {
      method: 'POST',
      body: JSON.stringify({ task_id: 'simple_regression', seed: 1, episode_id: 'ep-http', trainer_extra: 3 }),
    });
    assert.equal(res.status, 200);
    const r = (await res.json()) as { observation: Record<string, unknown>; reward: unknown; done: unknown; metadata: unknown };
    assert.deepEqual(Object.keys(r).sort(), ['done', 'metadata', 'observation', 'reward']);
    assert.deepEqual(r.metadata, r.observation.metadata, 'metadata inside the observation and beside it, as openenv >= 0.4 sends it');
    assert.equal(r.observation.current_phase, 'drift_gen');
    assert.equal(r.observation.task_id, 'simple_regression');
    assert.equal((r.observation.info as { episode_id: string }).episode_id, 'ep-http');
    assert.ok(!('reward' in r.observation) && !('done' in r.observation));
    assert.equal(r.reward, null);
    assert.equal(r.done, false);
  });

  test('bad requests get FastAPI-shaped errors', async () => {
    const post = async (path: string, body: string) => {
      const res = await fetch(`${base}${path}`, { method: 'POST', body });
      return { status: res.status, body: (await res.json()) as any };
    };
    const badJson = await post('/reset', '{"seed": ');
    assert.equal(badJson.status, 422);
    assert.equal(badJson.body.detail[0].type, 'json_invalid');
    const badSeed = await post('/reset', JSON.stringify({ seed: -1 }));
    assert.equal(badSeed.status, 422);
    assert.deepEqual(badSeed.body.detail[0].loc, ['body', 'seed']);
    const unknownTask = await post('/reset', JSON.stringify({ task_id: 'no_such_task' }));
    assert.equal(unknownTask.status, 400);
    assert.match(unknownTask.body.detail, /Unknown task "no_such_task"/);
    const noAction = await post('/step', '{}');
    assert.equal(noAction.status, 422);
    assert.deepEqual(noAction.body.detail[0].loc, ['body', 'action']);
    const badAction = await post('/step', JSON.stringify({ action: { breakage: { primitive_type: 3 } } }));
    assert.equal(badAction.status, 422);
    const stateless = await post('/step', JSON.stringify({ action: { repair: { unified_diff: '' } }, request_id: 'r1' }));
    assert.equal(stateless.status, 409);
    assert.match(stateless.body.detail, /\/ws/);
    assert.deepEqual(await (await fetch(`${base}/nope`)).json(), { detail: 'Not Found' });
    assert.equal((await fetch(`${base}/health`, { method: 'POST' })).status, 405);
  });

  test('an oversized body is refused with 413 before it is read', async () => {
    const res = await fetch(`${base}/reset`, { method: 'POST', body: 'x'.repeat(9 * 1024 * 1024) });
    assert.equal(res.status, 413);
    await stillServes();
  });
});

describe('OpenEnv wire format (/ws)', () => {
  test('a whole episode through RemoteBackend, with invalid actions as error observations', async () => {
    const remote = new RemoteBackend(base);
    try {
      assert.equal((await remote.step(RENAME)).info.error_kind, 'no_episode');
      const obs = await remote.reset({ taskId: 'distilbert_sst2', seed: 4, episode_id: 'ep-remote' });
      assert.equal(obs.current_phase, 'drift_gen');
      assert.equal(obs.info.episode_id, 'ep-remote');
      assert.equal(typeof obs.metadata.difficulty, 'string');
      assert.deepEqual(await remote.state(), { ...(await remote.episodeState())!, step_count: 0 });
      const invalid = await remote.step({ breakage: { primitive_type: 'RenameApiCall' }, repair: { unified_diff: '' } });
      assert.equal(invalid.info.error_kind, 'invalid_action');
      assert.equal(invalid.current_phase, 'drift_gen');
      const wrong = await remote.step({ repair: { unified_diff: '' } });
      assert.equal(wrong.info.error_kind, 'wrong_phase');
      const broken = await remote.step({ ...RENAME, metadata: { from: 'test' } });
      assert.equal(broken.current_phase, 'repair');
      assert.match(broken.error_trace ?? '', /AutoTokeniser/);
      assert.equal((await remote.state()).step_count, 1);
      const diff = createRepairDiff(broken.script_content, broken.script_content.replaceAll('AutoTokeniser', 'AutoTokenizer'));
      const evaluation = await remote.evaluateRepair(diff);
      assert.equal(evaluation.success, true);
      const done = await remote.step({ repair: { unified_diff: diff } });
      assert.equal(done.done, true);
      assert.equal(done.info.success, true);
      assert.ok((done.reward ?? 0) > 0);
      assert.equal((await remote.state()).step_count, 2);
    } finally {
      await remote.dispose();
    }
  });

  test('bad messages are answered with openenv-core error codes and the session goes on', async () => {
    const s = await openSession(base);
    assert.equal((await s.ask('{"type": "reset", ')).data.code, 'INVALID_JSON');
    assert.equal((await s.ask({ type: 'teleport' })).data.code, 'UNKNOWN_TYPE');
    assert.equal((await s.ask({ data: {} })).data.code, 'UNKNOWN_TYPE');
    assert.equal((await s.ask([1, 2])).data.code, 'VALIDATION_ERROR');
    assert.equal((await s.ask({ type: 'step', data: [1] })).data.code, 'VALIDATION_ERROR');
    assert.equal((await s.ask({ type: 'state', data: {} })).data.code, 'VALIDATION_ERROR');
    assert.equal((await s.ask({ type: 'reset', data: { seed: 'seven' } })).data.code, 'VALIDATION_ERROR');
    assert.deepEqual((await s.ask({ type: 'state' })).data, { episode_id: null, step_count: 0 });
    const early = await s.ask({ type: 'step', data: RENAME });
    assert.deepEqual([early.type, early.data.code], ['error', 'EXECUTION_ERROR']);
    assert.match(early.data.message, /reset before step/);
    const unknownTask = await s.ask({ type: 'reset', data: { task_id: 'nope' } });
    assert.equal(unknownTask.data.code, 'EXECUTION_ERROR');
    const reset = await s.ask({ type: 'reset', data: { task_id: 'simple_regression', seed: 2, episode_id: 'ep-ws', whatever: [1] } });
    assert.equal(reset.type, 'observation');
    const invalid = await s.ask({ type: 'step', data: { breakage: { primitive_type: 'RenameApiCall', params: 'x' } } });
    assert.equal(invalid.data.code, 'VALIDATION_ERROR');
    assert.ok(Array.isArray(invalid.data.errors) && invalid.data.errors.length > 0);
    const state = await s.ask({ type: 'state' });
    assert.equal(state.data.episode_id, 'ep-ws');
    assert.equal(state.data.phase, 'drift_gen');
    s.ws.send(JSON.stringify({ type: 'close' }));
    assert.equal((await s.closed).code, 1000);
  });

  test('sessions past the limit get CAPACITY_REACHED; a closed one frees its slot', async () => {
    const small = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 2 });
    const url = `http://127.0.0.1:${small.port}`;
    try {
      const a = await openSession(url);
      const b = await openSession(url);
      const c = await openSession(url);
      const refused = await c.next();
      assert.equal(refused.data.code, 'CAPACITY_REACHED');
      assert.deepEqual([refused.data.active_sessions, refused.data.max_sessions], [2, 2]);
      assert.equal((await c.closed).code, 1013);
      await a.close();
      await until(() => small.stats().sessions === 1, 'the closed session to be released');
      const d = await openSession(url);
      assert.equal((await d.ask({ type: 'state' })).type, 'state');
      await Promise.all([b.close(), d.close()]);
    } finally {
      await small.close();
    }
  });
});

test('an idle session is closed (1001) and frees its slot, when a timeout is set', async () => {
  const small = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 1, sessionIdleSeconds: 0.2 });
  try {
    const s = await openSession(`http://127.0.0.1:${small.port}`);
    assert.equal((await s.ask({ type: 'state' })).type, 'state');
    assert.equal((await s.closed).code, 1001);
    await until(() => small.stats().sessions === 0, 'the idle session to be released');
  } finally {
    await small.close();
  }
});

describe('sessions are isolated', () => {
  test("disposing one environment never cancels another environment's run", async () => {
    const a = new ForgeEnvironment({ taskDirs: [taskDir] });
    const b = new ForgeEnvironment({ taskDirs: [taskDir] });
    try {
      await a.reset({ taskId: 'slow_task', seed: 1 });
      await b.reset({ taskId: 'slow_task', seed: 1 });
      const running = a.step(RENAME);
      const other = b.step(RENAME);
      // Both processes started (executeScript does not yet see an abort that lands before its spawn).
      await until(() => a.liveRunCount === 1 && b.liveRunCount === 1 && liveRunCount() === 2, 'both runs to start');
      await b.dispose();
      const obs = await running;
      const execution = obs.info.broken_execution as { exit_code: number | null };
      assert.equal(execution.exit_code, 1, 'the run of the environment that was not disposed ran to its end');
      assert.match(obs.error_trace ?? '', /AutoTokeniser/);
      assert.doesNotMatch(obs.error_trace ?? '', /cancelled|killed/);
      const cancelled = await other;
      assert.match(cancelled.error_trace ?? '', /cancelled/);
    } finally {
      await a.dispose();
    }
  });

  test('a client that disconnects mid-run ends its own run only; the other session is scored', async () => {
    const a = await openSession(base);
    const b = await openSession(base);
    await a.ask({ type: 'reset', data: { task_id: 'slow_task', seed: 1 } });
    await b.ask({ type: 'reset', data: { task_id: 'slow_task', seed: 1 } });
    b.ws.send(JSON.stringify({ type: 'step', data: RENAME }));
    a.ws.send(JSON.stringify({ type: 'step', data: RENAME }));
    await until(() => server.stats().runsRunning === 2 && liveRunCount() === 2, 'both runs to start');
    a.ws.terminate();
    const answer = await b.next();
    assert.equal(answer.type, 'observation');
    assert.equal(answer.data.observation.current_phase, 'repair');
    assert.equal(answer.data.observation.info.broken_execution.exit_code, 1);
    assert.doesNotMatch(answer.data.observation.error_trace, /cancelled|killed/);
    await until(() => server.stats().runsRunning === 0 && server.stats().sessions === 1, 'the disconnected session to be cleaned up');
    await b.close();
  });

  test('past the run queue bound a step is answered "busy" and the episode is untouched', async () => {
    const tight = await startServer({ port: 0, host: '127.0.0.1', maxRuns: 1, maxQueuedRuns: 0, config: { taskDirs: [taskDir] } });
    const url = `http://127.0.0.1:${tight.port}`;
    try {
      const a = await openSession(url);
      const b = await openSession(url);
      await a.ask({ type: 'reset', data: { task_id: 'slow_task', seed: 1 } });
      await b.ask({ type: 'reset', data: { task_id: 'simple_regression', seed: 1 } });
      a.ws.send(JSON.stringify({ type: 'step', data: RENAME }));
      await until(() => tight.stats().runsRunning === 1, 'the first run to start');
      const busy = await b.ask({
        type: 'step',
        data: { breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'torch', new_name: 'torchh' } } },
      });
      assert.equal(busy.type, 'error');
      assert.equal(busy.data.code, 'CAPACITY_REACHED');
      assert.equal(busy.data.busy, true);
      assert.match(busy.data.message, /Server busy/);
      assert.equal((await b.ask({ type: 'state' })).data.phase, 'drift_gen');
      assert.equal((await a.next()).data.observation.current_phase, 'repair');
      await Promise.all([a.close(), b.close()]);
    } finally {
      await tight.close();
    }
  });
});

describe('a bad connection costs only itself', () => {
  const cases: Array<[string, (port: number) => Buffer, number]> = [
    ['invalid UTF-8 in a text frame', () => frame(0x1, Buffer.from([0x7b, 0xff, 0xfe, 0x7d])), 1007],
    ['RSV1 set without an extension', () => frame(0x1, Buffer.from('{"type":"state"}'), { rsv1: true }), 1002],
    ['an unmasked client frame', () => frame(0x1, Buffer.from('{"type":"state"}'), { masked: false }), 1002],
    ['a header announcing more than 8 MiB', () => frame(0x1, Buffer.alloc(16), { announce: 9 * 1024 * 1024 }), 1009],
  ];
  for (const [name, make, code] of cases) {
    test(`${name}: closed with ${code}, the server serves on`, async () => {
      const other = await openSession(base);
      await other.ask({ type: 'reset', data: { task_id: 'simple_regression', seed: 3 } });
      const raw = await rawWebSocket(server.port);
      raw.socket.write(make(server.port));
      await raw.ended;
      assert.equal(closeCodeOf(raw.received()), code);
      assert.equal((await other.ask({ type: 'state' })).data.phase, 'drift_gen', 'the other session kept its episode');
      await other.close();
      await stillServes();
    });
  }

  test('an oversized message is closed with 1009', async () => {
    const s = await openSession(base);
    s.ws.send(JSON.stringify({ type: 'step', data: { repair: { unified_diff: 'x'.repeat(9 * 1024 * 1024) } } }));
    assert.equal((await s.closed).code, 1009);
    await stillServes();
  });

  test('binary frames are refused with INVALID_JSON and the session goes on', async () => {
    const s = await openSession(base);
    s.ws.send(Buffer.from('{"type":"state"}'), { binary: true });
    assert.equal((await s.next()).data.code, 'INVALID_JSON');
    assert.equal((await s.ask({ type: 'state' })).type, 'state');
    await s.close();
  });

  test('a client flooding messages past the pending bound is closed with 1008', async () => {
    const s = await openSession(base);
    await s.ask({ type: 'reset', data: { task_id: 'slow_task', seed: 1 } });
    for (let i = 0; i < 10; i++) s.ws.send(JSON.stringify({ type: 'step', data: RENAME }));
    assert.equal((await s.closed).code, 1008);
    await stillServes();
  });

  test('a slow client (half a frame sent, answers unread) does not hold up another session', async () => {
    const stalled = await rawWebSocket(server.port);
    stalled.socket.write(frame(0x1, Buffer.from('{"type":"state"}')).subarray(0, 5));
    const deaf = await openSession(base);
    (deaf.ws as unknown as { _socket: { pause(): void } })._socket.pause();
    deaf.ws.send(JSON.stringify({ type: 'reset', data: { task_id: 'simple_regression', seed: 1 } }));
    const remote = new RemoteBackend(base);
    try {
      await remote.reset({ task_id: 'simple_regression', seed: 5 });
      const broken = await remote.step({
        breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'torch', new_name: 'torchh' } },
      });
      assert.equal(broken.current_phase, 'repair');
    } finally {
      await remote.dispose();
      stalled.socket.destroy();
      deaf.ws.terminate();
    }
  });

  test("a hostile client's server errors surface as RemoteEnvironmentError with the code", async () => {
    const small = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 1 });
    const holder = await openSession(`http://127.0.0.1:${small.port}`);
    const remote = new RemoteBackend(`http://127.0.0.1:${small.port}`);
    try {
      await assert.rejects(remote.reset(), (e: unknown) => e instanceof RemoteEnvironmentError && /capacity|1013/i.test(e.message));
    } finally {
      await remote.dispose();
      await holder.close();
      await small.close();
    }
  });
});

test('an unreachable server is a clear error', async () => {
  const remote = new RemoteBackend('http://127.0.0.1:1');
  await assert.rejects(remote.reset(), /Cannot reach the remote environment/);
  assert.throws(() => RemoteBackend.wsUrl('ftp://x'), /must be http/);
  assert.ok(WebSocket);
});

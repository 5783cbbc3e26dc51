// Conformance with openenv-core itself, both directions, one suite:
// - our RemoteBackend and a raw client drive `forgeenv serve` AND a real openenv-core server (a
//   small ForgeEnv-shaped environment built with openenv-core's create_app, test/fixtures/openenv),
//   and must see the same protocol from both;
// - openenv-core's own Python client (GenericEnvClient) drives both through whole episodes.
// Needs the openenv-core test venv (bash scripts/setup-openenv.sh, run by scripts/bootstrap.sh);
// skips without it locally, fails without it under CI.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { startServer, type ForgeServer } from '../../src/cli/serve';
import { createRepairDiff } from '../../src/env/diff/diff';
import { RemoteBackend } from '../../src/env/openenv/remoteBackend';
import { ObservationSchema } from '../../src/env/schemas';
import { FIXTURE_DIR, openSession, openenvPython, openenvSkipReason, startFixtureServer } from './openenvTestUtils';

const run = promisify(execFile);
const skip = openenvSkipReason('openenvConformance.test.ts');
const RENAME = { breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } } };
const MAX_SESSIONS = 2;

interface Target {
  name: string;
  url: string;
  task: string;
}

describe('OpenEnv conformance with openenv-core', { skip }, () => {
  let ours: ForgeServer | undefined;
  let fixture: { url: string; close(): Promise<void> } | undefined;
  const targets: Record<'ours' | 'openenv', Target> = {
    ours: { name: 'forgeenv serve', url: '', task: 'distilbert_sst2' },
    openenv: { name: 'openenv-core server (fixture)', url: '', task: 'fixture_distilbert' },
  };

  before(async () => {
    [ours, fixture] = await Promise.all([
      startServer({ port: 0, host: '127.0.0.1', maxSessions: MAX_SESSIONS }),
      startFixtureServer(MAX_SESSIONS),
    ]);
    targets.ours.url = `http://127.0.0.1:${ours.port}`;
    targets.openenv.url = fixture.url;
  });
  after(async () => {
    await Promise.all([ours?.close(), fixture?.close()]);
  });

  for (const key of ['ours', 'openenv'] as const) {
    describe(`against ${targets[key].name}`, () => {
      test('RemoteBackend plays a whole episode', async () => {
        const t = targets[key];
        const remote = new RemoteBackend(t.url);
        try {
          const obs = await remote.reset({ task_id: t.task, seed: 7, episode_id: `remote-${key}` });
          assert.equal(obs.current_phase, 'drift_gen');
          assert.equal(obs.task_id, t.task);
          assert.equal(obs.done, false);
          assert.equal(obs.reward, null);
          assert.match(obs.script_content, /AutoTokenizer/);
          assert.deepEqual(pick(await remote.state(), 'episode_id', 'step_count'), { episode_id: `remote-${key}`, step_count: 0 });
          const invalid = await remote.step({ breakage: { primitive_type: 'RenameApiCall' }, repair: { unified_diff: '' } });
          assert.equal(invalid.info.error_kind, 'invalid_action');
          assert.equal(invalid.current_phase, 'drift_gen');
          const broken = await remote.step({ ...RENAME, metadata: { source: 'conformance' } });
          assert.equal(broken.current_phase, 'repair');
          assert.match(broken.error_trace ?? '', /AutoTokeniser/);
          assert.equal((await remote.state()).step_count, 1);
          const diff = createRepairDiff(broken.script_content, broken.script_content.replaceAll('AutoTokeniser', 'AutoTokenizer'));
          const done = await remote.step({ repair: { unified_diff: diff } });
          assert.equal(done.done, true);
          assert.equal(done.current_phase, 'done');
          assert.equal(done.info.success, true);
          assert.ok((done.reward ?? 0) > 0, `reward ${done.reward}`);
          assert.equal((await remote.state()).step_count, 2);
        } finally {
          await remote.dispose();
        }
      });

      test('the /ws protocol: message shapes and error codes', async () => {
        const s = await openSession(targets[key].url);
        try {
          assert.deepEqual(errorCode(await s.ask('{"type": ')), 'INVALID_JSON');
          assert.deepEqual(errorCode(await s.ask({ type: 'teleport' })), 'UNKNOWN_TYPE');
          assert.deepEqual(errorCode(await s.ask({ type: 'state', data: {} })), 'VALIDATION_ERROR');
          assert.deepEqual(errorCode(await s.ask({ type: 'step', data: [1] })), 'VALIDATION_ERROR');
          const before = await s.ask({ type: 'state' });
          assert.equal(before.type, 'state');
          assert.deepEqual(pick(before.data, 'episode_id', 'step_count'), { episode_id: null, step_count: 0 });
          assert.equal(errorCode(await s.ask({ type: 'step', data: RENAME })), 'EXECUTION_ERROR');
          const reset = await s.ask({
            type: 'reset',
            data: { task_id: targets[key].task, seed: 3, episode_id: 'raw-1', not_a_reset_option: true },
          });
          assert.equal(reset.type, 'observation');
          // openenv >= 0.4 repeats a non-empty metadata beside the observation; 0.3 does not.
          assert.deepEqual(
            Object.keys(reset.data)
              .filter((k) => k !== 'metadata')
              .sort(),
            ['done', 'observation', 'reward'],
          );
          assert.ok(
            !('reward' in reset.data.observation) && !('done' in reset.data.observation),
            'reward and done sit beside the observation',
          );
          assert.equal(reset.data.observation.current_phase, 'drift_gen');
          const invalid = await s.ask({
            type: 'step',
            data: { breakage: { primitive_type: 'RenameApiCall' }, repair: { unified_diff: '' } },
          });
          assert.equal(errorCode(invalid), 'VALIDATION_ERROR');
          assert.ok(
            Array.isArray(invalid.data.errors) &&
              invalid.data.errors.every((e: { loc?: unknown; msg?: unknown }) => Array.isArray(e.loc) && typeof e.msg === 'string'),
          );
          const stepped = await s.ask({ type: 'step', data: { ...RENAME, metadata: { k: 1 } } });
          assert.equal(stepped.type, 'observation');
          assert.equal(stepped.data.observation.current_phase, 'repair');
          const state = await s.ask({ type: 'state' });
          assert.deepEqual(pick(state.data, 'episode_id', 'step_count'), { episode_id: 'raw-1', step_count: 1 });
          s.ws.send(JSON.stringify({ type: 'close' }));
          assert.equal((await s.closed).code, 1000);
        } finally {
          s.ws.terminate();
        }
      });

      test('HTTP endpoints', async () => {
        const url = targets[key].url;
        assert.deepEqual(await (await fetch(`${url}/health`)).json(), { status: 'healthy' });
        const meta = (await (await fetch(`${url}/metadata`)).json()) as Record<string, unknown>;
        assert.deepEqual(Object.keys(meta).sort(), ['author', 'description', 'documentation_url', 'name', 'readme_content', 'version']);
        const schema = (await (await fetch(`${url}/schema`)).json()) as Record<string, { properties?: Record<string, unknown> }>;
        // openenv >= 0.4 may add `reset_observation`.
        assert.ok(
          ['action', 'observation', 'state'].every((k) => typeof schema[k] === 'object'),
          Object.keys(schema).join(', '),
        );
        assert.ok(schema.state.properties?.step_count && schema.state.properties?.episode_id);
        assert.ok(schema.observation.properties?.script_content);
        assert.deepEqual(pick((await (await fetch(`${url}/state`)).json()) as Record<string, unknown>, 'episode_id', 'step_count'), {
          episode_id: null,
          step_count: 0,
        });
        const reset = await fetch(`${url}/reset`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ seed: 1, episode_id: 'h1', extra_key: 1 }),
        });
        assert.equal(reset.status, 200);
        const body = (await reset.json()) as { observation: Record<string, unknown>; reward: unknown; done: unknown };
        assert.deepEqual([body.observation.current_phase, body.reward, body.done], ['drift_gen', null, false]);
        const post = (path: string, b: string) =>
          fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: b });
        const badSeed = await post('/reset', JSON.stringify({ seed: -1 }));
        assert.equal(badSeed.status, 422);
        assert.deepEqual(((await badSeed.json()) as { detail: Array<{ loc: unknown }> }).detail[0].loc, ['body', 'seed']);
        const badJson = await post('/reset', '{"seed": ');
        assert.equal(badJson.status, 422);
        assert.equal(((await badJson.json()) as { detail: Array<{ type: string }> }).detail[0].type, 'json_invalid');
        const noAction = await post('/step', '{}');
        assert.equal(noAction.status, 422);
        assert.deepEqual(((await noAction.json()) as { detail: Array<{ loc: unknown }> }).detail[0].loc, ['body', 'action']);
        assert.equal((await post('/step', JSON.stringify({ action: { nope: 1 } }))).status, 422);
        const missing = await fetch(`${url}/nope`);
        assert.equal(missing.status, 404);
        assert.deepEqual(await missing.json(), { detail: 'Not Found' });
        assert.equal((await fetch(`${url}/health`, { method: 'POST' })).status, 405);
      });

      test(`at most ${MAX_SESSIONS} sessions: the next one gets CAPACITY_REACHED`, async () => {
        const url = targets[key].url;
        const held = [await openSession(url), await openSession(url)];
        const extra = await openSession(url);
        try {
          const refused = await extra.next();
          assert.equal(errorCode(refused), 'CAPACITY_REACHED');
          assert.deepEqual([refused.data.active_sessions, refused.data.max_sessions], [MAX_SESSIONS, MAX_SESSIONS]);
          await extra.closed;
        } finally {
          await Promise.all(held.map((s) => s.close()));
          extra.ws.terminate();
        }
        // Sessions are released on close (the fixture does it asynchronously): wait until a new one gets in.
        await waitForFreeSession(url);
      });
    });
  }

  test("openenv-core's runtime validator (openenv validate --url) passes both servers", async () => {
    const { stdout } = await run(openenvPython(), [join(FIXTURE_DIR, 'validate_servers.py'), targets.ours.url, targets.openenv.url], {
      timeout: 300_000,
    });
    const reports = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { passed: boolean; mode: string; criteria: Array<{ id?: string; name?: string; passed: boolean }> });
    assert.equal(reports.length, 2);
    for (const [i, r] of reports.entries()) {
      const failed = r.criteria.filter((c) => !c.passed);
      assert.deepEqual(failed, [], `${i === 0 ? 'forgeenv serve' : 'fixture'}: failed criteria`);
      assert.equal(r.passed, true);
      assert.equal(r.mode, 'simulation');
      assert.ok(r.criteria.length >= 6);
    }
  });

  test("openenv-core's own client plays whole episodes on both servers and sees the whole observation", async () => {
    const args = [join(FIXTURE_DIR, 'drive_episode.py'), targets.ours.url, targets.ours.task, targets.openenv.url, targets.openenv.task];
    const { stdout } = await run(openenvPython(), args, { timeout: 300_000, maxBuffer: 64 * 1024 * 1024 });
    const results = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, any>);
    assert.equal(results.length, 2);
    const fields = Object.keys(ObservationSchema.shape).filter((k) => k !== 'reward' && k !== 'done');
    for (const [i, r] of results.entries()) {
      const name = i === 0 ? 'forgeenv serve' : 'openenv-core fixture';
      // Ours sends every ForgeEnv field; openenv-core 0.3's own serializer drops `metadata` (0.4+ keeps it).
      for (const step of ['reset', 'breakage', 'repair']) {
        const got = Object.keys(r[step].observation).filter((k) => i === 0 || k !== 'metadata');
        const expected = i === 0 ? fields : fields.filter((k) => k !== 'metadata');
        assert.deepEqual(got.sort(), [...expected].sort(), `${name}: ${step} observation fields`);
      }
      assert.deepEqual([r.reset.observation.current_phase, r.reset.reward, r.reset.done], ['drift_gen', null, false], name);
      assert.deepEqual(pick(r.state_after_reset, 'episode_id', 'step_count'), { episode_id: 'conformance-1', step_count: 0 }, name);
      assert.match(r.invalid_action_error, /VALIDATION_ERROR/, name);
      assert.equal(r.breakage.observation.current_phase, 'repair', name);
      assert.match(r.breakage.observation.error_trace, /AutoTokeniser/, name);
      assert.equal(r.state_after_breakage.step_count, 1, name);
      assert.equal(r.repair.done, true, name);
      assert.equal(r.repair.observation.current_phase, 'done', name);
      assert.equal(r.repair.observation.info.success, true, name);
      assert.ok(r.repair.reward > 0, `${name}: reward ${r.repair.reward}`);
      assert.equal(r.state_after_repair.step_count, 2, name);
      // ForgeEnv's typed Python client (clients/python) parses every observation strictly.
      assert.deepEqual(
        r.typed,
        { phases: ['drift_gen', 'repair', 'done'], reward: r.typed.reward, done: true, success: true, step_count: 2 },
        name,
      );
      assert.ok(r.typed.reward > 0, name);
    }
    assert.equal(results[0].reset.observation.metadata.difficulty !== undefined, true, 'our metadata reaches the Python client');
  });
});

function pick(o: Record<string, unknown>, ...keys: string[]): Record<string, unknown> {
  return Object.fromEntries(keys.map((k) => [k, o[k]]));
}

function errorCode(m: { type: string; data: { code?: string } }): string | undefined {
  return m.type === 'error' ? m.data.code : `not an error: ${m.type}`;
}

async function waitForFreeSession(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const s = await openSession(url);
    const r = await s.ask({ type: 'state' });
    s.ws.terminate();
    if (r.type === 'state') return;
    await new Promise((res) => setTimeout(res, 50));
  }
  throw new Error('no session slot came free');
}

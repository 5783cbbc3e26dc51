// Human episodes on a remote `forgeenv serve` (issue 10, item 4): the server's `restore`, `cancel`
// and live `output` messages, and RemoteEpisodeSession, the editor's remote EpisodeSession built on
// them, against a real server on a loopback port. The same episode on the embedded session must
// come out the same.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { WebSocketServer } from 'ws';
import { startServer, type ForgeServer } from '../../src/cli/serve';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { recipeOf } from '../../src/env/episode/episodeRecipe';
import { EmbeddedEpisodeSession } from '../../src/env/episode/episodeSession';
import type { EpisodeState } from '../../src/env/episode/episodeTypes';
import { startHumanEpisode } from '../../src/env/episode/humanEpisode';
import { RemoteBackend, RemoteEnvironmentError } from '../../src/env/openenv/remoteBackend';
import { explainRemoteError, isCancelledRemoteError, RemoteEpisodeSession } from '../../src/env/openenv/remoteEpisodeSession';
import { loadCorpus, TaskSampler } from '../../src/env/tasks/tasks';
import { openSession } from './openenvTestUtils';

// A task that prints, then takes a while: long enough to cancel mid-run and to see output before the
// answer. It trains a one-weight model, so a repaired run leaves the artifact its verifier checks.
const taskDir = mkdtempSync(join(tmpdir(), 'forgeenv-remote-episode-'));
writeFileSync(
  join(taskDir, 'slow_print_task.py'),
  [
    'import time',
    'import torch',
    'print("step 1 loss 1.0", flush=True)',
    'time.sleep(1.5)',
    'from transformers import AutoTokenizer',
    'tok = AutoTokenizer.from_pretrained("distilbert-base-uncased")',
    'model = torch.nn.Linear(1, 1)',
    'opt = torch.optim.SGD(model.parameters(), lr=0.1)',
    'x = torch.tensor([[1.0], [2.0], [3.0]])',
    'for _ in range(20):',
    '    opt.zero_grad()',
    '    loss = ((model(x) - 2 * x) ** 2).mean()',
    '    loss.backward()',
    '    opt.step()',
    'print("step 2 loss 0.5", flush=True)',
    'torch.save(model.state_dict(), "slow.pt")',
    '',
  ].join('\n'),
);
writeFileSync(
  join(taskDir, 'tasks.json'),
  JSON.stringify([
    {
      task_id: 'slow_print_task',
      verify: {
        artifact: 'slow.pt',
        model: 'nn.Linear(1, 1)',
        heldout: 'x = torch.tensor([[4.0], [5.0]])\nloss_fn = nn.MSELoss()\n\n\ndef batches():\n    yield x, 2 * x\n',
      },
    },
  ]),
);
const SLOW = 'slow_print_task';
const RENAME = { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } };
const DISTIL = {
  taskId: 'distilbert_sst2',
  seed: 11,
  primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'DataCollatorWithPadding', new_name: 'DataCollatorPadding' } },
};
const tasks = new TaskSampler(loadCorpus({ extraDirs: [taskDir] }).tasks);

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** The oracle repair of a repair-phase state: back to the original script. */
function oracle(state: EpisodeState): string {
  assert.ok(state.broken_script !== null);
  return createRepairDiff(state.broken_script, state.original_script);
}

let server: ForgeServer;
let base: string;
before(async () => {
  server = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 16, maxRuns: 4, config: { taskDirs: [taskDir] } });
  base = `http://127.0.0.1:${server.port}`;
});
after(async () => {
  await server.close();
  rmSync(taskDir, { recursive: true, force: true });
});

/** A session on `base` in the repair phase of the slow task; returns its full state. */
async function brokenSlow(remote: RemoteBackend, seed = 3): Promise<EpisodeState> {
  await remote.reset({ task_id: SLOW, seed });
  const obs = await remote.step({ breakage: RENAME });
  assert.equal(obs.current_phase, 'repair');
  const st = await remote.episodeState();
  assert.ok(st);
  return st;
}

describe('restore: a saved episode re-created in another session', () => {
  test('the restored episode is the same state, and scores a repair the same', async () => {
    const first = new RemoteBackend(base);
    const second = new RemoteBackend(base);
    try {
      await first.reset({ task_id: 'distilbert_sst2', seed: 5, episode_id: 'ep-restore' });
      const broken = await first.step({ breakage: DISTIL.primitive });
      const saved = await first.episodeState();
      assert.ok(saved && saved.phase === 'repair');
      const scored = await first.evaluateRepair(oracle(saved));
      assert.equal(scored.success, true);
      await first.dispose(); // the session, and its episode, end here (as a window reload ends them)

      const obs = await second.restore(recipeOf(saved));
      assert.equal(obs.current_phase, 'repair');
      assert.equal(obs.info.restored, true);
      assert.equal(obs.script_content, broken.script_content);
      assert.equal(obs.error_trace, broken.error_trace);
      // Everything, and the start time; the broken script ran again (never taken from the client), breaking the same way.
      const restored = await second.episodeState();
      assert.ok(restored?.broken_execution && saved.broken_execution);
      assert.deepEqual({ ...restored, broken_execution: null }, { ...saved, broken_execution: null });
      assert.equal(restored.broken_execution.exit_code, saved.broken_execution.exit_code);
      assert.equal(restored.broken_execution.stderr, saved.broken_execution.stderr);
      const again = await second.evaluateRepair(oracle(saved));
      assert.deepEqual(
        [again.reward, again.reward_breakdown, again.held_out_breakdown, again.repaired_script],
        [scored.reward, scored.reward_breakdown, scored.held_out_breakdown, scored.repaired_script],
      );
      const done = await second.step({ repair: { unified_diff: oracle(saved) } });
      assert.equal(done.done, true);
      assert.equal(done.reward, scored.reward);
    } finally {
      await Promise.all([first.dispose(), second.dispose()]);
    }
  });

  test('a forged first run is ignored: the broken script runs again and breaks for real', async () => {
    const remote = new RemoteBackend(base);
    try {
      const saved = await brokenSlow(remote, 4);
      const recipe = recipeOf(saved);
      assert.equal('broken_execution' in recipe, false, 'the client no longer sends it');
      // What an older client sent, forged: the breakage "did not break", with a made-up traceback.
      const forged = {
        exit_code: 0,
        timed_out: false,
        killed: false,
        stdout: 'Traceback (most recent call last):\n  FORGED\n',
        stderr: '',
        wall_time_ms: 1,
      };
      const obs = await remote.restore({ ...recipe, broken_execution: forged });
      assert.ok(!JSON.stringify(obs).includes('FORGED'), 'the forged output is nowhere in the observation');
      assert.equal(obs.info.broke, true);
      assert.equal(obs.current_phase, 'repair');
      const st = await remote.episodeState();
      assert.ok(st?.broken_execution);
      assert.notDeepEqual(st.broken_execution, saved.broken_execution, 'a new run (its own timing)');
      assert.equal(st.broken_execution.exit_code, saved.broken_execution?.exit_code);
      assert.match(st.broken_execution.stderr, /AutoTokeniser/);
      assert.equal(st.broken_script, saved.broken_script);
    } finally {
      await remote.dispose();
    }
  });

  test('another version of the task, an unknown task, a refusing primitive or a bad recipe is refused, and the session keeps its episode', async () => {
    const s = await openSession(base);
    try {
      const remote = new RemoteBackend(base);
      const saved = await brokenSlow(remote, 6);
      await remote.dispose();
      const recipe = recipeOf(saved);
      const ok = await s.ask({ type: 'restore', data: recipe });
      assert.equal(ok.type, 'observation');

      const otherOriginal = await s.ask({ type: 'restore', data: { ...recipe, episode_id: 'x1', original_sha256: 'a'.repeat(64) } });
      assert.deepEqual([otherOriginal.type, otherOriginal.data.code], ['error', 'EXECUTION_ERROR']);
      assert.match(otherOriginal.data.message, /another version of the task/);
      const otherBroken = await s.ask({ type: 'restore', data: { ...recipe, episode_id: 'x2', broken_sha256: 'b'.repeat(64) } });
      assert.match(otherBroken.data.message, /another broken script/);
      const unknown = await s.ask({ type: 'restore', data: { ...recipe, episode_id: 'x3', task_id: 'no_such_task' } });
      assert.equal(unknown.data.code, 'EXECUTION_ERROR');
      assert.match(unknown.data.message, /Unknown task "no_such_task"/);
      const refusing = await s.ask({
        type: 'restore',
        data: {
          ...recipe,
          episode_id: 'x4',
          breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'NotInTheScript', new_name: 'X' } },
          broken_sha256: undefined,
        },
      });
      assert.equal(refusing.data.code, 'EXECUTION_ERROR');
      assert.match(refusing.data.message, /cannot be applied again/);
      const malformed = await s.ask({ type: 'restore', data: { ...recipe, seed: -1, extra: true } });
      assert.equal(malformed.data.code, 'VALIDATION_ERROR');
      assert.ok(malformed.data.errors.some((e: { loc: unknown[] }) => e.loc.join('.') === 'data.seed'));

      // Every refusal left the restored episode as it was.
      const state = await s.ask({ type: 'state' });
      assert.equal(state.data.episode_id, saved.episode_id);
      assert.equal(state.data.phase, 'repair');
      assert.equal(state.data.broken_script, saved.broken_script);
    } finally {
      await s.close();
    }
  });
});

describe('cancel and live output', () => {
  test('output arrives before the answer and adds up to what the run printed; without asking, none is sent', async () => {
    const remote = new RemoteBackend(base);
    try {
      await remote.reset({ task_id: SLOW, seed: 7 });
      const breakOut: string[] = [];
      const obs = await remote.step({ breakage: RENAME }, { onOutput: (stream, text) => stream === 'stdout' && breakOut.push(text) });
      assert.equal(obs.current_phase, 'repair');
      assert.match(breakOut.join(''), /step 1 loss 1\.0/, 'the breakage step streamed the broken run');
      const st = await remote.episodeState();
      assert.ok(st);
      const chunks: Array<[string, string]> = [];
      const ev = await remote.evaluateRepair(oracle(st), { onOutput: (stream, text) => chunks.push([stream, text]) });
      assert.ok(ev.execution);
      assert.equal(
        chunks
          .filter(([s]) => s === 'stdout')
          .map(([, t]) => t)
          .join(''),
        ev.execution.stdout,
      );
      assert.equal(
        chunks
          .filter(([s]) => s === 'stderr')
          .map(([, t]) => t)
          .join(''),
        ev.execution.stderr,
      );
    } finally {
      await remote.dispose();
    }
    // A plain OpenEnv client never sees an `output` message.
    const s = await openSession(base);
    try {
      await s.ask({ type: 'reset', data: { task_id: SLOW, seed: 8 } });
      const answer = await s.ask({ type: 'step', data: { breakage: RENAME } });
      assert.equal(answer.type, 'observation');
      assert.equal((await s.ask({ type: 'state' })).type, 'state');
    } finally {
      await s.close();
    }
  });

  test("cancel ends only this session's run; the session goes on and the cancelled run is not a score", async () => {
    const a = new RemoteEpisodeSession(base, { tasks });
    const b = new RemoteBackend(base);
    try {
      await a.reset({ task_id: SLOW, seed: 9 });
      await a.step({ breakage: RENAME });
      const saved = a.state;
      assert.ok(saved);
      const other = await brokenSlow(b, 10);
      const abort = new AbortController();
      let started = false;
      const cancelled = a.evaluateRepair(oracle(saved), { signal: abort.signal, onOutput: () => (started = true) });
      const untouched = b.evaluateRepair(oracle(other));
      await until(() => started, 'the run to print');
      abort.abort();
      const ev = await cancelled;
      assert.ok(ev.execution?.killed);
      assert.match(ev.execution.stderr, /cancelled/);
      const full = await untouched;
      assert.equal(full.success, true, "the other session's run went on");
      const again = await a.evaluateRepair(oracle(saved));
      assert.equal(again.success, true, 'scored afresh, not the cancelled run');
      assert.equal(a.state?.phase, 'repair');
    } finally {
      await Promise.all([a.dispose(), b.dispose()]);
    }
  });

  test('a server that does not answer a cancel is given up on: the request ends as cancelled', async () => {
    const wss = new WebSocketServer({ port: 0, host: '127.0.0.1' });
    const received: string[] = [];
    wss.on('connection', (ws) => ws.on('message', (m) => received.push(String(m))));
    await new Promise<void>((r) => wss.once('listening', () => r()));
    const port = (wss.address() as { port: number }).port;
    const session = new RemoteEpisodeSession(`http://127.0.0.1:${port}`, { cancelGraceMs: 100 });
    try {
      const abort = new AbortController();
      const pending = session.evaluateRepair('', { signal: abort.signal });
      await until(() => received.length === 1, 'the request');
      abort.abort();
      await assert.rejects(pending, (e: unknown) => isCancelledRemoteError(e));
      assert.deepEqual(
        received.map((m) => JSON.parse(m).type),
        ['evaluate', 'cancel'],
      );
    } finally {
      await session.dispose();
      await new Promise((r) => wss.close(r));
    }
  });
});

describe('RemoteEpisodeSession (the editor on a remote server)', () => {
  test('a human episode starts, scores and ends as on the embedded session', async () => {
    const embedded = new EmbeddedEpisodeSession(new ForgeEnvironment({}, { tasks }));
    const remote = new RemoteEpisodeSession(base, { tasks });
    try {
      const [e, r] = [await startHumanEpisode(embedded, DISTIL), await startHumanEpisode(remote, DISTIL)];
      for (const k of [
        'seed',
        'task',
        'libraryVersions',
        'targetCategory',
        'breakageSpec',
        'inverseSpec',
        'driftPrompt',
        'driftCompletion',
        'repairPrompt',
        'originalScript',
        'brokenScript',
        'errorTrace',
      ] as const) {
        assert.deepEqual(r[k], e[k], k);
      }
      assert.deepEqual(remote.runsOn, { mode: 'simulated', interpreter: 'python3' });
      const diff = createRepairDiff(e.brokenScript, e.originalScript);
      const [ee, re] = [await embedded.evaluateRepair(diff), await remote.evaluateRepair(diff)];
      assert.deepEqual(
        [re.reward, re.reward_breakdown, re.held_out_breakdown, re.success],
        [ee.reward, ee.reward_breakdown, ee.held_out_breakdown, ee.success],
      );
      await remote.step({ repair: { unified_diff: diff } });
      assert.equal(remote.state?.phase, 'done');
      assert.equal(remote.state?.final?.reward, ee.reward);
    } finally {
      await Promise.all([embedded.dispose(), remote.dispose()]);
    }
  });

  test('a restored episode is re-created on the server when first needed, and again after the server dropped the session', async () => {
    const idle = await startServer({ port: 0, host: '127.0.0.1', sessionIdleSeconds: 1 });
    const url = `http://127.0.0.1:${idle.port}`;
    const first = new RemoteEpisodeSession(url, { tasks });
    const resumed = new RemoteEpisodeSession(url, { tasks });
    try {
      const start = await startHumanEpisode(first, DISTIL);
      const saved = first.state;
      assert.ok(saved);
      await first.dispose();
      await until(() => idle.stats().sessions === 0, 'the first session to end');

      await resumed.restore(saved);
      assert.deepEqual(resumed.state, saved);
      assert.equal(resumed.task?.task_id, DISTIL.taskId);
      assert.equal(idle.stats().sessions, 0, 'nothing sent until a run needs the episode');
      const diff = createRepairDiff(start.brokenScript, start.originalScript);
      const ev = await resumed.evaluateRepair(diff);
      assert.equal(ev.success, true);
      assert.equal(resumed.serverRestores, 1);

      await until(() => idle.stats().sessions === 0, 'the idle session to be dropped by the server');
      const done = await resumed.step({ repair: { unified_diff: diff } });
      assert.equal(done.done, true);
      assert.equal(resumed.serverRestores, 2);
      assert.equal(resumed.state?.final?.reward, ev.reward);
    } finally {
      await Promise.all([first.dispose(), resumed.dispose()]);
      await idle.close();
    }
  });

  test('a server task the editor does not have is described from the server', async () => {
    const remote = new RemoteEpisodeSession(base, { tasks: new TaskSampler([]) });
    try {
      await remote.reset({ task_id: SLOW, seed: 1 });
      assert.equal(remote.task?.task_id, SLOW);
      assert.equal(remote.task?.source, 'remote');
      assert.equal(remote.task?.script_content, remote.state?.original_script);
    } finally {
      await remote.dispose();
    }
  });

  test('server errors become clear messages: busy, at capacity, unreachable, refused', async () => {
    const tight = await startServer({
      port: 0,
      host: '127.0.0.1',
      maxSessions: 2,
      maxRuns: 1,
      maxQueuedRuns: 0,
      config: { taskDirs: [taskDir] },
    });
    const url = `http://127.0.0.1:${tight.port}`;
    const a = new RemoteEpisodeSession(url, { tasks });
    const b = new RemoteEpisodeSession(url, { tasks });
    const c = new RemoteEpisodeSession(url, { tasks });
    try {
      await a.reset({ task_id: SLOW, seed: 2 });
      await a.step({ breakage: RENAME });
      await b.reset({ task_id: SLOW, seed: 3 });
      await b.step({ breakage: RENAME });
      let running = false;
      const long = a.evaluateRepair(oracle(a.state!), { onOutput: () => (running = true) });
      await until(() => running, 'the only run slot to be taken');
      await assert.rejects(b.evaluateRepair(oracle(b.state!)), (e: unknown) => {
        assert.ok(e instanceof RemoteEnvironmentError);
        assert.equal(e.code, 'CAPACITY_REACHED');
        assert.match(
          e.message,
          /^The ForgeEnv server at http:\/\/127\.0\.0\.1:\d+ is busy \(1\/1 runs running, 0\/0 waiting\)\. Nothing was lost/,
        );
        return true;
      });
      assert.equal((await long).success, true);
      assert.equal((await b.evaluateRepair(oracle(b.state!))).success, true, 'the busy answer left the episode as it was');

      await assert.rejects(c.reset({ task_id: SLOW }), /is at capacity .*--max-sessions/);
      await assert.rejects(a.reset({ task_id: 'no_such_task' }), /ForgeEnv server at .* refused: Unknown task "no_such_task"/);
    } finally {
      await Promise.all([a.dispose(), b.dispose(), c.dispose()]);
      await tight.close();
    }
    const nowhere = new RemoteEpisodeSession('http://user:secret@127.0.0.1:1/?token=x');
    await assert.rejects(nowhere.reset(), (e: unknown) => {
      assert.match(
        (e as Error).message,
        /^Cannot reach the ForgeEnv server at http:\/\/127\.0\.0\.1:1 \(.+\)\. Is `forgeenv serve` running there\?/,
      );
      assert.doesNotMatch((e as Error).message, /secret|token/);
      return true;
    });
  });

  test('a plain OpenEnv server is named as such', () => {
    const e = explainRemoteError(
      new RemoteEnvironmentError('Remote environment: Unknown message type: evaluate (code: UNKNOWN_TYPE)', 'UNKNOWN_TYPE', {
        message: 'Unknown message type: evaluate',
      }),
      'http://h:7860',
    );
    assert.ok(e instanceof RemoteEnvironmentError);
    assert.match(
      e.message,
      /^The server at http:\/\/h:7860 does not understand ForgeEnv's own messages \(Unknown message type: evaluate\): it is a plain OpenEnv server/,
    );
    const other = new Error('not remote');
    assert.equal(explainRemoteError(other, 'http://h'), other);
  });
});

// Human episodes on a remote environment (issue 10, item 4): a real `forgeenv serve`, started here
// as a child process on a free loopback port, and forgeenv.backend=remote. The whole editor loop
// runs against it (start, Run & Score, submit, skip, resume after a reload, a restarted server) and
// writes the same records as the embedded backend.
import * as assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ScoreResult, StartResult, StoredResult } from '../../src/editor/episode/results';
import type { CommandResult } from '../../src/editor/commandArgs';
import { DemonstrationRecordSchema, SkipRecordSchema, type DemonstrationRecord } from '../../src/store/records';
import { api, datasetDir, endAnyEpisode, ok, readJsonl, replaceBuffer, setSetting, timing, useOwnDataset } from './helpers';

const DATASET = 'dataset-remote';
const TASK = 'distilbert_sst2';
const PRIMITIVE = { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokenizerFast' } };

interface Served {
  child: ChildProcess;
  url: string;
  port: number;
}

/** Starts `forgeenv serve` (the built command line) and waits for the line that names its port. */
async function serve(root: string, port = 0): Promise<Served> {
  const child = spawn(process.execPath, [join(root, 'bin', 'forgeenv.js'), 'serve', '--port', String(port), '--max-runs', '2'], {
    cwd: root,
    // The extension host of a desktop VS Code is Electron: make it behave as Node.
    env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr?.on('data', (c: Buffer) => (err += c.toString()));
  const got = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`forgeenv serve did not start within 30 s: ${out}${err}`)), 30_000);
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /serving OpenEnv on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`forgeenv serve exited with ${code}: ${out}${err}`));
    });
  });
  return { child, port: got, url: `http://127.0.0.1:${got}` };
}

async function stop(s: Served | undefined): Promise<void> {
  if (!s || s.child.exitCode !== null) return;
  const exited = new Promise((r) => s.child.once('exit', r));
  s.child.kill('SIGTERM');
  await exited;
}

/** The structure of a record (keys and value types, recursively), without its values. */
function shapeOf(v: unknown): unknown {
  if (Array.isArray(v)) return v.length ? [shapeOf(v[0])] : [];
  if (v !== null && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, shapeOf((v as Record<string, unknown>)[k])]),
    );
  }
  return v === null ? 'null' : typeof v;
}

function lastDemonstration(): DemonstrationRecord {
  return DemonstrationRecordSchema.parse(readJsonl(join(datasetDir(DATASET), 'demonstrations.jsonl')).at(-1));
}

suite('Remote backend (forgeenv serve)', () => {
  let a: Awaited<ReturnType<typeof api>>;
  let server: Served | undefined;
  let root: string;
  let remoteRecord: DemonstrationRecord;
  useOwnDataset(DATASET);

  suiteSetup(async function () {
    this.timeout(60_000);
    a = await api();
    root = a.extension.extensionPath;
    server = await serve(root);
    await setSetting('backend', 'remote');
    await setSetting('remoteUrl', server.url);
  });
  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('backend', undefined);
    await setSetting('remoteUrl', undefined);
    await stop(server);
  });

  test('a whole episode on the server: start, Run & Score twice, submit', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: 31, primitive: PRIMITIVE });
    timing('remote episode open (start command to editor + diagnostics)', s.openMs);
    assert.equal(s.broke, true);
    assert.equal(s.diagnostics, 1);
    const uri = vscode.Uri.file(s.filePath);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.match(d?.message ?? '', /AutoTokenizerFast/);
    const ep = a.episode().session.current;
    assert.deepEqual(ep?.state.backend, { kind: 'remote', url: server!.url });
    assert.deepEqual([ep?.state.mode, ep?.state.interpreter], ['simulated', 'python3'], 'as the server reports it');

    const broken = readFileSync(s.filePath, 'utf8');
    await replaceBuffer(uri, broken.replace('MODEL_NAME = ', '# looked at it\nMODEL_NAME = '));
    const first = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.deepEqual([first.run, first.success, first.cached], [1, false, false]);
    assert.equal(vscode.languages.getDiagnostics(uri).length, 1, 'still broken: the diagnostic stays');
    const fixed = broken.replace(/AutoTokenizerFast/g, 'AutoTokenizer');
    await replaceBuffer(uri, fixed);
    const second = await ok<ScoreResult>('forgeenv.runAndScore');
    timing('Run & Score on the remote server (oracle fix, simulated)', second.scoreMs);
    assert.deepEqual([second.run, second.success, second.exitCode], [2, true, 0]);
    assert.equal(vscode.languages.getDiagnostics(uri).length, 0);

    const stored = await ok<StoredResult & { recordId: string; reward: number }>('forgeenv.submitEpisode');
    assert.equal(stored.stored, true);
    remoteRecord = lastDemonstration();
    assert.equal(remoteRecord.info.record_id, stored.recordId);
    assert.equal(remoteRecord.info.episode_id, s.episodeId);
    assert.equal(remoteRecord.info.runs, 2);
    assert.equal(remoteRecord.success, true);
    assert.equal(remoteRecord.visible_reward, second.reward);
    assert.equal((remoteRecord.info as Record<string, unknown>).backend, 'remote');
    assert.equal(a.episode().session.current, undefined, 'the episode is over');
  });

  test('the same episode on the embedded backend writes the same record', async () => {
    assert.ok(remoteRecord, 'the remote episode ran');
    await setSetting('backend', 'embedded');
    try {
      const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: 31, primitive: PRIMITIVE });
      const fixed = readFileSync(s.filePath, 'utf8').replace(/AutoTokenizerFast/g, 'AutoTokenizer');
      await replaceBuffer(vscode.Uri.file(s.filePath), fixed);
      await ok<ScoreResult>('forgeenv.runAndScore');
      await ok<StoredResult>('forgeenv.submitEpisode');
    } finally {
      await setSetting('backend', 'remote');
    }
    const embedded = lastDemonstration();
    assert.equal((embedded.info as Record<string, unknown>).backend, 'embedded');
    assert.deepEqual(shapeOf(remoteRecord), shapeOf(embedded), 'same fields, same types, nested too');
    for (const k of [
      'task_id',
      'primitive_type',
      'drift_prompt',
      'drift_completion',
      'repair_prompt',
      'repair_completion',
      'visible_reward',
      'visible_breakdown',
      'held_out_breakdown',
      'success',
      'error_trace',
    ] as const) {
      assert.deepEqual(remoteRecord[k], embedded[k], k);
    }
    for (const k of [
      'seed',
      'primitive',
      'library_versions',
      'target_category',
      'task_hash',
      'record_hash',
      'mode',
      'findings',
      'repair_apply',
      'migration_hint',
    ] as const) {
      assert.deepEqual(remoteRecord.info[k], embedded.info[k], `info.${k}`);
    }
  });

  test('Skip on a remote episode records the reason', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: 'simple_regression', seed: 5 });
    const r = await ok<StoredResult>('forgeenv.skipEpisode', { reason: 'unclear_task', note: 'remote' });
    assert.equal(r.stored, true);
    const skip = readJsonl(join(datasetDir(DATASET), 'skips.jsonl'))
      .map((x) => SkipRecordSchema.parse(x))
      .find((x) => x.episode_id === s.episodeId);
    assert.ok(skip);
    assert.deepEqual([skip.task_id, skip.reason, skip.note], ['simple_regression', 'unclear_task', 'remote']);
  });

  test('after a reload the episode resumes and is re-created on the server', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: 32, primitive: PRIMITIVE });
    const uri = vscode.Uri.file(s.filePath);
    const broken = readFileSync(s.filePath, 'utf8');
    const edited = broken.replace('MODEL_NAME = ', '# still broken\nMODEL_NAME = ');
    await replaceBuffer(uri, edited);
    const run1 = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(run1.success, false);
    const before = vscode.languages.getDiagnostics(uri);

    const c1 = a.episode();
    await a.reload(); // the editor layer is torn down (its server session closes) and activated again
    const c2 = a.episode();
    assert.notEqual(c2, c1);
    const ep = c2.session.current;
    assert.ok(ep, 'episode restored');
    assert.equal(ep.episodeId, s.episodeId);
    assert.equal(ep.state.runs, 1);
    assert.equal(ep.state.backend.kind, 'remote');
    const after = vscode.languages.getDiagnostics(uri);
    assert.deepEqual(
      after.map((d) => [d.range.start.line, d.message]),
      before.map((d) => [d.range.start.line, d.message]),
      'diagnostics restored',
    );

    await replaceBuffer(uri, edited.replace(/AutoTokenizerFast/g, 'AutoTokenizer'));
    const run2 = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.deepEqual([run2.run, run2.success], [2, true]);
    const session = c2.session.current?.env as { kind: string; serverRestores?: number } | undefined;
    assert.deepEqual([session?.kind, session?.serverRestores], ['remote', 1], 're-created on the server once, by the first run');
    const stored = await ok<StoredResult>('forgeenv.submitEpisode');
    assert.equal(stored.stored, true);
    const rec = lastDemonstration();
    assert.equal(rec.info.episode_id, s.episodeId);
    assert.equal(rec.info.runs, 2);
    assert.equal(rec.success, true);
  });

  test('a stopped server is a clear error; once it is back the episode goes on', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: 33, primitive: PRIMITIVE });
    const uri = vscode.Uri.file(s.filePath);
    const fixed = readFileSync(s.filePath, 'utf8').replace(/AutoTokenizerFast/g, 'AutoTokenizer');
    await replaceBuffer(uri, fixed);
    const port = server!.port;
    await stop(server);
    const down = await vscode.commands.executeCommand<CommandResult>('forgeenv.runAndScore');
    assert.equal(down.ok, false);
    assert.match(
      !down.ok ? down.message : '',
      /ForgeEnv could not score the repair: (Cannot reach the ForgeEnv server at http:\/\/127\.0\.0\.1:\d+|The connection to the ForgeEnv server at .* closed)/,
    );
    assert.equal(a.episode().session.current?.episodeId, s.episodeId, 'the episode is still open');

    server = await serve(root, port); // a new server process: the episode is re-created there
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.success, true);
    const stored = await ok<StoredResult>('forgeenv.submitEpisode');
    assert.equal(stored.stored, true);
    assert.equal(lastDemonstration().info.episode_id, s.episodeId);
  });

  test('no server configured, or none listening: a clear refusal and no episode', async () => {
    await setSetting('remoteUrl', '');
    try {
      const none = await vscode.commands.executeCommand<CommandResult>('forgeenv.startEpisode', { taskId: TASK });
      assert.equal(none.ok, false);
      assert.match(!none.ok ? none.message : '', /no server is configured: set forgeenv\.remoteUrl/);
      await setSetting('remoteUrl', 'http://127.0.0.1:1');
      const unreachable = await vscode.commands.executeCommand<CommandResult>('forgeenv.startEpisode', { taskId: TASK });
      assert.equal(unreachable.ok, false);
      assert.match(
        !unreachable.ok ? unreachable.message : '',
        /^ForgeEnv could not start the episode: Cannot reach the ForgeEnv server at http:\/\/127\.0\.0\.1:1 .*forgeenv serve/,
      );
      assert.equal(a.episode().session.current, undefined);
    } finally {
      await setSetting('remoteUrl', server!.url);
    }
  });
});

// `forgeenv rescore` and `forgeenv evaluate`: demonstrations made by the CLI (oracle) and in the
// human style (a hand-edited repair, a failing one) re-score identically; a changed record is reported.
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { storeCliEpisode } from '../../src/cli/episodeOut';
import { runEvaluateCommand } from '../../src/cli/rescore';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { noopRepairGenerate, oracleRepairGenerate, rolloutOneEpisode, type GenerateFn } from '../../src/env/episode/rollout';
import { exportDataset } from '../../src/store/export/exportDataset';
import { rescoreDataset } from '../../src/store/rescore';
import { tempDir } from './storeTestUtils';

const env = new ForgeEnvironment({ timeoutMs: 60_000 });
after(() => env.dispose());
const dir = join(tempDir('forgeenv-rescore-'), 'ds');

/** A human-style repair: the oracle's fix plus a comment of the annotator's own. */
const humanRepair: GenerateFn = () => {
  const broken = env.state!.broken_script!;
  const fixed = env.state!.original_script.replace(/\n/, '\n# fixed by hand after reading the traceback\n');
  return createRepairDiff(broken, fixed);
};

async function episode(seed: number, repair: GenerateFn, annotator: string): Promise<void> {
  const startedAt = new Date();
  const result = await rolloutOneEpisode(env, { taskId: 'simple_regression', seed, repairGenerate: repair });
  await storeCliEpisode(env, result, dir, { annotator, startedAt, interpreter: 'python3' });
}

describe('rescore', () => {
  before(async () => {
    await episode(0, oracleRepairGenerate(env), 'oracle');
    await episode(1, humanRepair, 'human');
    await episode(2, noopRepairGenerate, 'none');
  });

  test('every demonstration re-scores identically, with progress', async () => {
    const seen: number[] = [];
    const r = await rescoreDataset(dir, { envFor: () => env, onProgress: (done) => seen.push(done) });
    assert.equal(r.total, 3);
    assert.deepEqual(r.counts, { same: 3, differs: 0, task_changed: 0, error: 0 }, JSON.stringify(r.differences));
    assert.deepEqual(seen, [1, 2, 3]);
    const lines = readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      lines.map((l) => l.success),
      [true, true, false],
      'oracle and human repairs succeed, the empty one fails',
    );
  });

  test('a record whose stored reward is not what the environment gives is reported', async () => {
    const copy = join(tempDir('forgeenv-rescore-'), 'ds');
    const first = JSON.parse(readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8').split('\n')[0]);
    // The reward is not in the record hash, so the line stays valid: only re-scoring can tell.
    first.visible_reward = 0.7;
    first.info.record_id = '00000000-0000-4000-8000-0000000000aa';
    mkdirSync(copy, { recursive: true });
    writeFileSync(join(copy, 'demonstrations.jsonl'), JSON.stringify(first) + '\n');
    const r = await rescoreDataset(copy, { envFor: () => env });
    assert.equal(r.counts.differs, 1);
    assert.match(r.differences[0].detail!, /reward 0\.7 → 1\.8/);
  });

  test('cancel stops between records and says so', async () => {
    const controller = new AbortController();
    const r = await rescoreDataset(dir, { envFor: () => env, signal: controller.signal, onProgress: () => controller.abort() });
    assert.equal(r.done, 1);
    assert.equal(r.cancelled, true);
  });

  test('evaluate scores the predictions export against the instances export', async () => {
    const root = tempDir('forgeenv-eval-');
    const preds = join(root, 'p', 'preds.jsonl');
    const inst = join(root, 'i', 'instances.jsonl');
    await exportDataset({ format: 'swebench', dir, out: preds, filters: { status: 'all' } });
    await exportDataset({ format: 'swebench-instances', dir, out: inst, filters: { status: 'all' } });
    const printed: string[] = [];
    const code = await runEvaluateCommand(
      ['--instances', inst, '--predictions', preds, '--json'],
      (s) => printed.push(s),
      () => undefined,
    );
    assert.equal(code, 0, printed.join('\n'));
    const report = JSON.parse(printed.join('\n'));
    assert.equal(report.resolved_instances, 2);
    assert.equal(report.empty_patch_instances, 1);
    writeFileSync(preds, JSON.stringify({ instance_id: 'nope', model_patch: 'x', model_name_or_path: 'm' }) + '\n');
    printed.length = 0;
    assert.equal(
      await runEvaluateCommand(
        ['--instances', inst, '--predictions', preds],
        (s) => printed.push(s),
        () => undefined,
      ),
      1,
    );
    assert.match(printed.join('\n'), /not in/);
  });
});

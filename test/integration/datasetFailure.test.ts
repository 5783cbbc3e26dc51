import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { StartResult, StoredResult } from '../../src/editor/episode/results';
import { DemonstrationRecordSchema } from '../../src/store/records';
import { api, datasetDir, endAnyEpisode, ok, readJsonl, replaceBuffer, setSetting, workspaceDir } from './helpers';

suite('Dataset folder not writable', () => {
  let a: Awaited<ReturnType<typeof api>>;
  suiteSetup(async () => {
    a = await api();
  });
  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('datasetFolder', undefined);
  });

  test('the record is kept, then written by a retry into another folder; nothing is lost', async () => {
    // A dataset folder beneath a regular file can never be created, even by root.
    const blocker = join(workspaceDir(), 'not-a-folder');
    writeFileSync(blocker, 'x');
    await setSetting('datasetFolder', join(blocker, 'dataset'));
    const s = await ok<StartResult>('forgeenv.startEpisode', {
      taskId: 'distilbert_sst2',
      seed: 2,
      primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokenizerFast' } },
    });
    const uri = vscode.Uri.file(s.filePath);
    const fixed = readFileSync(s.filePath, 'utf8').replace(/AutoTokenizerFast/g, 'AutoTokenizer');
    await replaceBuffer(uri, fixed);
    const r = await ok<StoredResult>('forgeenv.submitEpisode');
    assert.equal(r.stored, false);
    assert.match(r.error ?? '', /not writable/);
    assert.ok(r.pendingId);
    const c = a.episode();
    assert.equal(c.writer.pending.list().length, 1, 'the record waits in the queue');
    assert.equal(c.session.current, undefined, 'the episode ended anyway');

    // Survives a reload, then a retry elsewhere stores it.
    await a.reload();
    const c2 = a.episode();
    const waiting = c2.writer.pending.list();
    assert.equal(waiting.length, 1);
    const out = await c2.writer.retry(waiting[0].id, datasetDir('dataset-failure'));
    assert.equal(out.ok, true);
    const rec = DemonstrationRecordSchema.parse(readJsonl(join(datasetDir('dataset-failure'), 'demonstrations.jsonl')).at(-1));
    assert.equal(rec.info.episode_id, s.episodeId);
    assert.equal(c2.writer.pending.list().length, 0);
  });

  test("Save As writes a queued record to a file of the user's choice", async () => {
    const c = a.episode();
    await setSetting('datasetFolder', join(workspaceDir(), 'not-a-folder', 'again'));
    await ok<StartResult>('forgeenv.startEpisode', { taskId: 'simple_regression', seed: 9 });
    const r = await ok<StoredResult>('forgeenv.skipEpisode', { reason: 'too_hard' });
    assert.equal(r.stored, false);
    const target = join(workspaceDir(), 'saved-skip.jsonl');
    assert.equal(await c.writer.saveAs(r.pendingId!, target), true);
    const [line] = readJsonl(target) as Array<{ reason: string; episode_id: string }>;
    assert.equal(line.reason, 'too_hard');
    assert.equal(line.episode_id, r.episodeId);
    assert.equal(c.writer.pending.list().length, 0);
  });
});

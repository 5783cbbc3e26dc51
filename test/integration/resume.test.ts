import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ScoreResult, StartResult } from '../../src/editor/episode/results';
import { EPISODE_STATE_KEY } from '../../src/editor/episode/liveEpisode';
import { PersistedEpisodeSchema } from '../../src/editor/episode/episodeRecord';
import { api, endAnyEpisode, ok, replaceBuffer, useOwnDataset } from './helpers';

suite('Resume after reload', () => {
  useOwnDataset('dataset-resume');
  let a: Awaited<ReturnType<typeof api>>;
  suiteSetup(async () => {
    a = await api();
  });
  suiteTeardown(endAnyEpisode);

  test('an open episode survives the editor layer being torn down and activated again', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', {
      taskId: 'distilbert_sst2',
      seed: 11,
      primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokenizerFast' } },
    });
    const uri = vscode.Uri.file(s.filePath);
    const doc = await vscode.workspace.openTextDocument(uri);
    const edited = doc.getText().replace('MODEL_NAME = ', '# still broken\nMODEL_NAME = ');
    await replaceBuffer(uri, edited);
    const run = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(run.success, false);
    const before = vscode.languages.getDiagnostics(uri);
    assert.equal(before.length, 1);

    // What a reload reads back: the persisted state, validated.
    const c1 = a.episode();
    if (c1.session.current) await new Promise((r) => setTimeout(r, 50));
    const persisted = PersistedEpisodeSchema.parse(
      a.extension.exports.testing && a.context().extension.workspaceState.get(EPISODE_STATE_KEY),
    );
    assert.equal(persisted.start.episodeId, s.episodeId);
    assert.equal(persisted.runs, 1);
    assert.equal(persisted.lastScoredText, edited);

    await a.reload();
    const c2 = a.episode();
    assert.notEqual(c2, c1, 'a new editor layer');
    const ep = c2.session.current;
    assert.ok(ep, 'episode restored');
    assert.equal(ep.episodeId, s.episodeId);
    assert.equal(ep.state.runs, 1);
    assert.equal(ep.file, s.filePath);
    const after = vscode.languages.getDiagnostics(uri);
    assert.equal(after.length, 1, 'diagnostics restored');
    assert.equal(after[0].range.start.line, before[0].range.start.line);
    assert.equal(after[0].message, before[0].message);
    assert.ok(
      vscode.window.tabGroups.all.some((g) =>
        g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()),
      ),
      'train.py is open',
    );

    // The restored episode keeps working: fix it and score.
    await replaceBuffer(uri, edited.replace(/AutoTokenizerFast/g, 'AutoTokenizer'));
    const run2 = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(run2.run, 2);
    assert.equal(run2.success, true);
  });
});

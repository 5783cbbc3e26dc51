import * as assert from 'node:assert/strict';
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ScoreResult, StartResult, StoredResult } from '../../src/editor/episode/results';
import { DemonstrationRecordSchema } from '../../src/store/records';
import { api, datasetDir, EXTENSION_ID, ok, readJsonl, replaceBuffer, timing } from './helpers';

// Runs in its own VS Code launch, in two halves around a real `workbench.action.reloadWindow`
// (see index.ts): the extension host really dies and the workspace state really comes back.
const markerFile = () => join(process.env.FORGEENV_TEST_STATE_DIR ?? '', 'reloaded.json');
interface Marker {
  episodeId: string;
  filePath: string;
  text: string;
  diagnostic: { line: number; message: string };
  activeMs: number;
}

suite('Window reload (before reload)', () => {
  test('the extension is not active before anything asks for it (lazy activation)', () => {
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext);
    assert.equal(ext.isActive, false, 'no .forgeenv folder in the fresh workspace, no command run yet');
  });

  test('start an episode, edit, save, and score it', async () => {
    const a = await api();
    const s = await ok<StartResult>('forgeenv.startEpisode', {
      taskId: 'distilbert_sst2',
      seed: 21,
      primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokenizerFast' } },
    });
    const uri = vscode.Uri.file(s.filePath);
    const text = readFileSync(s.filePath, 'utf8').replace('MODEL_NAME = ', '# looked at it\nMODEL_NAME = ');
    const doc = await replaceBuffer(uri, text);
    assert.ok(await doc.save());
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.success, false);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.ok(d);
    const ep = a.episode().session.current;
    assert.equal(ep?.state.runs, 1);
    const marker: Marker = {
      episodeId: s.episodeId,
      filePath: s.filePath,
      text,
      diagnostic: { line: d.range.start.line, message: d.message },
      activeMs: ep.state.activeMs,
    };
    writeFileSync(markerFile(), JSON.stringify(marker));
  });
});

suite('Window reload (after reload)', () => {
  let marker: Marker;
  suiteSetup(() => {
    assert.ok(existsSync(markerFile()), 'the first half left its marker');
    marker = JSON.parse(readFileSync(markerFile(), 'utf8'));
  });

  test('the extension activates by itself (workspaceContains:.forgeenv) and resumes the episode', async () => {
    const t0 = Date.now();
    const ext = vscode.extensions.getExtension(EXTENSION_ID);
    assert.ok(ext);
    while (!ext.isActive && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 100));
    assert.ok(ext.isActive, 'activated without any command');
    const a = await api();
    const c = a.episode();
    const restored = await c.session.restore();
    assert.ok(restored.ok && restored.episodeId === marker.episodeId);
    timing('resume after a real window reload (restore on activation)', restored.ok ? (restored.restoreMs ?? -1) : -1);
    const ep = c.session.current;
    assert.ok(ep, 'the episode is back');
    assert.equal(ep.episodeId, marker.episodeId);
    assert.equal(ep.state.runs, 1);
    assert.equal(ep.state.lastScoredText, marker.text);
    const uri = vscode.Uri.file(marker.filePath);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.equal(d?.range.start.line, marker.diagnostic.line, 'diagnostics restored');
    assert.equal(d?.message, marker.diagnostic.message);
    assert.ok(
      vscode.window.tabGroups.all.some((g) =>
        g.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()),
      ),
      'train.py is open',
    );
  });

  test('the resumed episode scores and submits with its whole history', async () => {
    const uri = vscode.Uri.file(marker.filePath);
    const fixed = marker.text.replace(/AutoTokenizerFast/g, 'AutoTokenizer');
    await replaceBuffer(uri, fixed);
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.run, 2);
    assert.equal(r.success, true);
    const s = await ok<StoredResult>('forgeenv.submitEpisode');
    assert.equal(s.stored, true);
    const rec = DemonstrationRecordSchema.parse(readJsonl(join(datasetDir(), 'demonstrations.jsonl')).at(-1));
    assert.equal(rec.info.episode_id, marker.episodeId);
    assert.equal(rec.info.runs, 2);
    assert.ok(rec.info.active_ms >= marker.activeMs, 'active time carried over the reload');
  });
});

// Suggest Repair in the real VS Code: a tiny OpenAI-compatible server started here is the model
// (it answers the environment's own repair prompt with a diff); the environment really runs the
// proposal and the human's repair. The demonstration keeps the suggestion apart from the human's diff.
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { applyRepairDiff, createRepairDiff } from '../../src/env/diff/diff';
import type { CommandResult } from '../../src/editor/commandArgs';
import type { ScoreResult, StartResult, StoredResult } from '../../src/editor/episode/results';
import type { SuggestResult } from '../../src/editor/suggest';
import { DemonstrationRecordSchema } from '../../src/store/records';
import { api, datasetDir, endAnyEpisode, ok, readJsonl, setSetting, timing, useOwnDataset } from './helpers';

const TASK = 'distilbert_sst2';
const SEED = 11;
const PRIMITIVE = { primitive_type: 'RenameApiCall', params: { old_name: 'DataCollatorWithPadding', new_name: 'DataCollatorPadding' } };
const HUMAN_LINE = '# reviewed by a human after the model suggestion';

suite('Suggest Repair', () => {
  let a: Awaited<ReturnType<typeof api>>;
  let server: Server;
  let endpoint: string;
  /** What the model answers (set once the broken script is known), and the prompts it was sent. */
  let answer = '';
  const prompts: string[] = [];
  let start: StartResult;
  let broken: string;
  let proposed: string;
  let uri: vscode.Uri;

  suiteSetup(async () => {
    a = await api();
    server = createServer((req, res) => {
      let raw = '';
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        const body = JSON.parse(raw) as { messages: Array<{ content: string }> };
        prompts.push(body.messages.at(-1)?.content ?? '');
        res.setHeader('content-type', 'application/json');
        res.end(
          JSON.stringify({
            id: 'x',
            object: 'chat.completion',
            choices: [{ index: 0, message: { role: 'assistant', content: answer }, finish_reason: 'stop' }],
          }),
        );
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  useOwnDataset('dataset-suggest');
  suiteTeardown(async () => {
    await endAnyEpisode();
    for (const k of ['model.endpoint', 'model.name', 'model.temperature']) await setSetting(k, undefined);
    await new Promise<void>((r) => server.close(() => r()));
  });

  test('without a model configured, Suggest Repair refuses and says which setting to set', async () => {
    start = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: SEED, primitive: PRIMITIVE });
    uri = vscode.Uri.file(start.filePath);
    broken = readFileSync(start.filePath, 'utf8');
    assert.match(broken, /DataCollatorPadding/);
    const r = await vscode.commands.executeCommand<CommandResult>('forgeenv.suggestRepair');
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'no_model');
    assert.match(!r.ok ? r.message : '', /forgeenv\.model\.endpoint/);
  });

  test('an endpoint that is down is a clear error, and nothing is lost', async () => {
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await setSetting('model.endpoint', `http://127.0.0.1:${port}/v1`);
    await setSetting('model.name', 'tiny-test-model');
    const before = (await vscode.workspace.openTextDocument(uri)).getText();
    const r = await vscode.commands.executeCommand<CommandResult>('forgeenv.suggestRepair');
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'error');
    assert.match(!r.ok ? r.message : '', /gave no suggestion: the endpoint could not be reached/);
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), before, 'the script is untouched');
    assert.equal(a.episode().session.current?.episodeId, start.episodeId, 'the episode is still open');
  });

  test("Suggest Repair sends the episode's repair prompt and opens broken ↔ proposed in the diff view", async () => {
    await setSetting('model.endpoint', endpoint);
    await setSetting('model.temperature', 0.5);
    proposed = broken.replace(/DataCollatorPadding/g, 'DataCollatorWithPadding');
    answer = `The import was renamed back.\n\`\`\`diff\n${createRepairDiff(broken, proposed)}\`\`\`\n`;
    const r = await ok<SuggestResult>('forgeenv.suggestRepair');
    timing('Suggest Repair (local test model)', r.latencyMs);
    assert.equal(prompts.at(-1), a.episode().session.current?.start.repairPrompt, "the model got the episode's own repair prompt");
    assert.equal(r.answerKind, 'diff');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputTextDiff, 'a diff editor is active');
    assert.equal(tab.input.original.scheme, 'forgeenv-broken');
    assert.equal(tab.input.modified.scheme, 'forgeenv-suggestion');
    assert.equal((await vscode.workspace.openTextDocument(tab.input.original)).getText(), broken);
    assert.equal((await vscode.workspace.openTextDocument(tab.input.modified)).getText(), proposed);
    assert.equal((await vscode.workspace.openTextDocument(uri)).getText(), broken, 'nothing is applied before Accept');
  });

  test('Score Suggestion runs the proposal through the environment without submitting or touching the score', async () => {
    const r = await ok<{ n: number; success: boolean; reward: number; exit_code: number | null }>('forgeenv.scoreSuggestion');
    assert.equal(r.success, true);
    assert.equal(r.exit_code, 0);
    const live = a.episode().session.current;
    assert.ok(live);
    assert.equal(live.state.runs, 0, "the human's run count is unchanged");
    assert.equal(live.state.lastEvaluation, null);
    assert.equal(live.state.suggestions?.[0]?.score?.success, true);
  });

  test('Accept puts the proposal in train.py as an edit; the human edits on, runs and submits', async () => {
    await ok('forgeenv.acceptSuggestion');
    const doc = await vscode.workspace.openTextDocument(uri);
    assert.equal(doc.getText(), proposed);
    assert.equal(doc.isDirty, true, 'an unsaved edit the human can keep editing');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString());
    const again = await vscode.commands.executeCommand<CommandResult>('forgeenv.acceptSuggestion');
    assert.equal(again.ok, false, 'the suggestion is gone once accepted');
    // The human's own edit on top of the suggestion.
    const edit = new vscode.WorkspaceEdit();
    edit.insert(uri, new vscode.Position(0, 0), `${HUMAN_LINE}\n`);
    assert.ok(await vscode.workspace.applyEdit(edit));
    const score = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(score.success, true);
    const r = await ok<StoredResult & { recordId: string }>('forgeenv.submitEpisode');
    assert.equal(r.stored, true);
    const rec = DemonstrationRecordSchema.parse(readJsonl(join(datasetDir('dataset-suggest'), 'demonstrations.jsonl')).at(-1));
    assert.equal(rec.info.record_id, r.recordId);
    const suggestion = rec.info.suggestion as {
      agent: { endpoint: string; model: string; sampling: { temperature: number } };
      diff: string;
      accepted: boolean;
      score?: { success: boolean };
    };
    assert.equal(suggestion.accepted, true);
    assert.equal(suggestion.agent.endpoint, endpoint);
    assert.equal(suggestion.agent.model, 'tiny-test-model');
    assert.equal(suggestion.agent.sampling.temperature, 0.5);
    assert.equal(suggestion.score?.success, true);
    // The model's diff and the human's are kept apart, and each reproduces its own script.
    assert.notEqual(suggestion.diff, rec.repair_completion);
    const model = applyRepairDiff(broken, suggestion.diff);
    assert.ok(model.ok && model.script === proposed);
    const human = applyRepairDiff(broken, rec.repair_completion);
    assert.ok(human.ok && human.script === `${HUMAN_LINE}\n${proposed}`);
    assert.doesNotMatch(suggestion.diff, /reviewed by a human/);
    const fix = rec.info.time_to_verified_fix as { ms: number; run: number; with_suggestion: boolean };
    assert.equal(fix.with_suggestion, true);
    assert.equal(fix.run, 1);
    assert.ok(fix.ms > 0 && fix.ms <= rec.info.wall_ms + 1000, `time to verified fix ${fix.ms} ms within the episode's wall time`);
    timing('time to verified fix (with an accepted suggestion)', fix.ms);
  });

  test('an episode with no suggestion records its time to a verified fix without one', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: SEED + 1, primitive: PRIMITIVE });
    const u = vscode.Uri.file(s.filePath);
    const text = readFileSync(s.filePath, 'utf8');
    const edit = new vscode.WorkspaceEdit();
    const doc = await vscode.workspace.openTextDocument(u);
    edit.replace(
      u,
      new vscode.Range(doc.positionAt(0), doc.positionAt(text.length)),
      text.replace(/DataCollatorPadding/g, 'DataCollatorWithPadding'),
    );
    assert.ok(await vscode.workspace.applyEdit(edit));
    await ok('forgeenv.submitEpisode');
    const rec = DemonstrationRecordSchema.parse(readJsonl(join(datasetDir('dataset-suggest'), 'demonstrations.jsonl')).at(-1));
    assert.equal(rec.info.suggestion, undefined);
    const fix = rec.info.time_to_verified_fix as { ms: number; with_suggestion: boolean };
    assert.equal(fix.with_suggestion, false);
    assert.ok(fix.ms > 0);
  });

  test('Export Dataset as trl-dpo pairs the passing repairs with a failing attempt at the same broken script, re-executed', async () => {
    // A failing attempt at the first episode's broken script, submitted anyway.
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: SEED, primitive: PRIMITIVE });
    const u = vscode.Uri.file(s.filePath);
    const edit = new vscode.WorkspaceEdit();
    edit.insert(u, new vscode.Position(0, 0), '# looked at it, changed nothing\n');
    assert.ok(await vscode.workspace.applyEdit(edit));
    const failed = await ok<StoredResult & { success: boolean }>('forgeenv.submitEpisode', { force: true });
    assert.equal(failed.success, false);
    const out = join(datasetDir('dataset-suggest'), '..', 'exports-suggest', 'dpo.jsonl');
    const r = await ok<{ rows: number; out: string }>('forgeenv.review.export', {
      format: 'trl-dpo',
      dataset: datasetDir('dataset-suggest'),
      out,
    });
    assert.equal(r.rows, 1, 'one failure, paired once');
    const row = readJsonl(out)[0] as { prompt: string; chosen: string; rejected: string };
    assert.match(row.rejected, /changed nothing/);
    assert.match(row.chosen, /DataCollatorWithPadding/);
    assert.match(row.prompt, /DataCollatorPadding/, 'the prompt shows the broken script');
  });
});

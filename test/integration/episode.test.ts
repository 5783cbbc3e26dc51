import * as assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { applyRepairDiff } from '../../src/env/diff/diff';
import { loadCorpus } from '../../src/env/tasks/tasks';
import { DemonstrationRecordSchema, SkipRecordSchema, TimelineEventSchema } from '../../src/store/records';
import type { ScoreResult, StartResult, StoredResult } from '../../src/editor/episode/results';
import type { CommandResult } from '../../src/editor/commandArgs';
import { api, datasetDir, endAnyEpisode, ok, readJsonl, replaceBuffer, timing, useOwnDataset, workspaceDir } from './helpers';

// A fixed episode: DistilBERT/SST-2 with one import renamed to a name transformers does not have.
const TASK = 'distilbert_sst2';
const SEED = 7;
const PRIMITIVE = { primitive_type: 'RenameApiCall', params: { old_name: 'DataCollatorWithPadding', new_name: 'DataCollatorPadding' } };

suite('Episode lifecycle', () => {
  let a: Awaited<ReturnType<typeof api>>;
  let start: StartResult;
  let uri: vscode.Uri;
  let fixed: string;
  let broken: string;

  suiteSetup(async () => {
    a = await api();
    // Without the setting, the dataset goes to the workspace's .forgeenv/dataset.
    assert.equal(a.context().datasetDir(), join(workspaceDir(), '.forgeenv', 'dataset'));
  });
  useOwnDataset('dataset-episode');
  suiteTeardown(endAnyEpisode);

  test('Start Episode writes train.py, opens it and points a diagnostic at the failing line', async () => {
    start = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: SEED, primitive: PRIMITIVE });
    timing('episode open (start command to editor + diagnostics)', start.openMs);
    assert.equal(start.taskId, TASK);
    assert.equal(start.seed, SEED);
    assert.equal(start.primitive.primitive_type, 'RenameApiCall');
    assert.equal(start.broke, true);
    uri = vscode.Uri.file(start.filePath);
    assert.ok(existsSync(start.filePath), 'train.py exists on disk');
    assert.ok(start.filePath.endsWith('/train.py'));
    assert.ok(!existsSync(join(start.filePath, '..', 'original.py')), 'the original is not in the episode folder');
    broken = readFileSync(start.filePath, 'utf8');
    assert.match(broken, /from transformers import DataCollatorPadding, Trainer, TrainingArguments/);
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), uri.toString(), 'train.py is the active editor');

    const diags = vscode.languages.getDiagnostics(uri);
    assert.equal(diags.length, 1, JSON.stringify(diags.map((d) => d.message)));
    const d = diags[0];
    const importLine = broken.split('\n').findIndex((l) => l.includes('import DataCollatorPadding'));
    assert.equal(d.range.start.line, importLine, 'on the import that fails');
    assert.equal(d.source, 'forgeenv');
    assert.equal(d.severity, vscode.DiagnosticSeverity.Error);
    assert.match(d.message, /^ImportError: cannot import name 'DataCollatorPadding'/);
    assert.ok(d.relatedInformation && d.relatedInformation.length >= 1, 'traceback frames as related information');
    for (const r of d.relatedInformation) assert.equal(r.location.uri.toString(), uri.toString());
    assert.equal(d.relatedInformation[d.relatedInformation.length - 1].location.range.start.line, importLine);
  });

  test('the status bar context and the task queue show the episode in progress', async () => {
    const q = await a.episode().queue.current();
    assert.deepEqual(
      q.inProgress.map((e) => e.task.task_id),
      [TASK],
    );
    assert.ok(!q.todo.some((e) => e.task.task_id === TASK));
  });

  test('a second start is refused while an episode is open', async () => {
    const r = await vscode.commands.executeCommand<CommandResult>('forgeenv.startEpisode', { taskId: 'simple_regression' });
    assert.equal(r.ok, false);
    assert.equal(!r.ok && r.reason, 'episode_open');
  });

  test('Run & Score scores the unsaved buffer after the oracle fix', async () => {
    const ep = a.episode().session.current;
    assert.ok(ep);
    // The oracle repair: rename back, applied as an unsaved edit.
    fixed = broken.replace(/DataCollatorPadding/g, 'DataCollatorWithPadding');
    const doc = await replaceBuffer(uri, fixed);
    assert.equal(doc.isDirty, true, 'the edit is not saved');
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    timing('Run & Score (oracle fix, simulated)', r.scoreMs);
    assert.equal(r.run, 1);
    assert.equal(r.cached, false);
    assert.equal(r.reward_breakdown.script_executes, 1);
    assert.equal(r.reward_breakdown.diff_size_penalty, 0);
    assert.ok(r.reward_breakdown.loss_decreased > 0, 'losses fall');
    assert.equal(r.held_out_breakdown.executed_cleanly, 1);
    assert.equal(r.held_out_breakdown.hidden_tests_passed, 1);
    assert.equal(r.held_out_breakdown.intent_preserved, 1);
    assert.equal(r.success, true);
    assert.equal(r.exitCode, 0);
    assert.equal(vscode.languages.getDiagnostics(uri).length, 0, 'diagnostics cleared by a clean run');
    const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs);
    assert.ok(
      tabs.some((t) => t.input instanceof vscode.TabInputWebview && t.input.viewType.includes('forgeenv.score')),
      'score view open',
    );
  });

  test('Run & Score of the same buffer reuses the score', async () => {
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    timing('Run & Score (unchanged buffer, cached)', r.scoreMs);
    assert.equal(r.cached, true);
    assert.equal(r.run, 2);
    assert.equal(r.reward_breakdown.script_executes, 1);
  });

  test('Review My Changes opens broken ↔ buffer; the run output is one click away', async () => {
    await ok('forgeenv.reviewChanges');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab;
    assert.ok(tab?.input instanceof vscode.TabInputTextDiff, 'a diff editor is active');
    assert.equal(tab.input.original.scheme, 'forgeenv-broken');
    assert.equal(tab.input.modified.toString(), uri.toString());
    const left = await vscode.workspace.openTextDocument(tab.input.original);
    assert.equal(left.getText(), broken);
    const out = await ok<{ uri: string }>('forgeenv.showRunOutput');
    const outDoc = await vscode.workspace.openTextDocument(vscode.Uri.parse(out.uri));
    assert.equal(outDoc.uri.scheme, 'forgeenv-output');
    assert.match(outDoc.getText(), /TRAINING_COMPLETE/);
    await vscode.window.showTextDocument(uri);
  });

  test('Submit appends a valid demonstration whose diff reproduces the buffer', async () => {
    const r = await ok<StoredResult & { recordId: string; reward: number }>('forgeenv.submitEpisode');
    assert.equal(r.stored, true);
    assert.equal(r.datasetDir, datasetDir('dataset-episode'));
    const lines = readJsonl(join(datasetDir('dataset-episode'), 'demonstrations.jsonl'));
    assert.ok(lines.length >= 1);
    const rec = DemonstrationRecordSchema.parse(lines[lines.length - 1]);
    assert.equal(rec.info.record_id, r.recordId);
    assert.equal(rec.task_id, TASK);
    assert.equal(rec.primitive_type, 'RenameApiCall');
    assert.deepEqual(rec.info.primitive.params, PRIMITIVE.params);
    assert.equal(rec.info.seed, SEED);
    assert.equal(rec.info.episode_id, start.episodeId);
    assert.equal(rec.success, true);
    assert.equal(rec.visible_breakdown.script_executes, 1);
    const applied = applyRepairDiff(broken, rec.repair_completion);
    assert.ok(applied.ok, 'repair_completion applies to the broken script');
    assert.equal(applied.ok && applied.script, fixed, 'and gives exactly the edited buffer');
    assert.equal(rec.info.runs, 2);
    assert.equal(rec.info.mode, 'simulated');
    assert.equal(rec.info.extension_version, (a.extension.packageJSON as { version: string }).version);
    assert.ok(rec.info.annotator_id.length > 0);
    assert.ok(rec.info.active_ms <= rec.info.wall_ms + 1000, 'active time within wall time');
    assert.ok(Date.parse(rec.info.submitted_at) >= Date.parse(rec.info.started_at));
    // The edit timeline beside it.
    const timeline = readJsonl(join(datasetDir('dataset-episode'), rec.info.timeline_file)).map((e) => TimelineEventSchema.parse(e));
    assert.ok(
      timeline.some((e) => e.kind === 'change'),
      'the edit is in the timeline',
    );
    assert.equal(timeline.filter((e) => e.kind === 'run').length, 2);
    // The episode is over: diagnostics cleared, commands refuse, the queue moved the task.
    assert.equal(vscode.languages.getDiagnostics(uri).length, 0);
    const again = await vscode.commands.executeCommand<CommandResult>('forgeenv.runAndScore');
    assert.equal(!again.ok && again.reason, 'no_episode');
    const q = await a.episode().queue.current();
    assert.ok(
      q.submitted.some((e) => e.task.task_id === TASK),
      'task listed as submitted',
    );
    assert.equal(q.inProgress.length, 0);
  });

  test('Skip records the reason and the queue counts it', async () => {
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: 'simple_regression', seed: 3 });
    const r = await ok<StoredResult>('forgeenv.skipEpisode', { reason: 'unclear_task', note: 'integration test' });
    assert.equal(r.stored, true);
    const skips = readJsonl(join(datasetDir('dataset-episode'), 'skips.jsonl')).map((x) => SkipRecordSchema.parse(x));
    const mine = skips.find((x) => x.episode_id === s.episodeId);
    assert.ok(mine, 'the skip line exists');
    assert.equal(mine.reason, 'unclear_task');
    assert.equal(mine.note, 'integration test');
    assert.equal(mine.task_id, 'simple_regression');
    const q = await a.episode().queue.current();
    assert.ok(q.skipped.some((e) => e.task.task_id === 'simple_regression'));
    const listed = [...q.todo, ...q.submitted, ...q.skipped, ...q.inProgress].map((e) => e.task.task_id).sort();
    assert.deepEqual(
      listed,
      loadCorpus()
        .tasks.map((t) => t.task_id)
        .sort(),
      'every corpus task exactly once',
    );
  });
});

// Labeling, review mode, reopen and the dataset summary (issue 5), in a real VS Code, on a
// dataset built from real episodes (the environment breaks a corpus task and scores repairs).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { createRepairDiff } from '../../src/env/diff';
import { ForgeEnvironment, ENV_VERSION } from '../../src/env/environment';
import { startHumanEpisode, type HumanEpisodeStart } from '../../src/env/humanEpisode';
import { DatasetStore } from '../../src/store/datasetStore';
import { buildDemonstration } from '../../src/store/demonstrationBuilder';
import { DemonstrationRecordSchema, LabelRecordSchema, ReviewRecordSchema, type DemonstrationRecord } from '../../src/store/records';
import { api, ok, readJsonl, workspaceDir } from './helpers';

const TASK = 'roberta_sentiment';
const PRIMITIVE = { primitive_type: 'ModifyConfigField', params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' } };

interface Inspect {
  active: boolean;
  dir?: string;
  index?: number;
  total?: number;
  current?: { recordId: string; duplicates: string[]; brokenUri: string; repairedUri: string; repairedOk: boolean };
  summaryOpen: boolean;
  summaryHtml?: string;
  rejectedMessages: number;
}
const inspect = () => vscode.commands.executeCommand<Inspect>('forgeenv.review.inspect');

async function episode(seed: number): Promise<{ env: ForgeEnvironment; start: HumanEpisodeStart }> {
  const env = new ForgeEnvironment({ mode: 'simulated' });
  const start = await startHumanEpisode(env, { taskId: TASK, seed, primitive: PRIMITIVE });
  return { env, start };
}

async function record(e: { env: ForgeEnvironment; start: HumanEpisodeStart }, repaired: string, annotator: string): Promise<DemonstrationRecord> {
  const final = await e.env.evaluateRepair(createRepairDiff(e.start.brokenScript, repaired));
  const provenance = {
    session_id: 'review-test',
    annotator_id: annotator,
    mode: 'simulated' as const,
    interpreter: 'python3',
    extension_version: '0.1.0',
    env_version: ENV_VERSION,
    started_at: '2025-03-01T10:00:00.000Z',
    submitted_at: '2025-03-01T10:03:00.000Z',
    active_ms: 120_000,
    wall_ms: 180_000,
    runs: 1,
  };
  return buildDemonstration({ start: e.start, final, provenance });
}

suite('Review: label, review walk, reopen, summary', () => {
  let dir: string;
  let first: { env: ForgeEnvironment; start: HumanEpisodeStart };
  const recs: DemonstrationRecord[] = [];

  suiteSetup(async function () {
    this.timeout(120_000);
    await api();
    // A fresh folder per run, so a reused workspace never mixes runs.
    dir = mkdtempSync(join(workspaceDir(), 'review-dataset-'));
    first = await episode(3);
    const other = await episode(4);
    const store = new DatasetStore(dir);
    // 1: the oracle repair; 2: the same repair of the same task again (a duplicate); 3: another seed, a failed "repair".
    recs.push(await record(first, first.start.originalScript, 'alice'));
    recs.push(await record(first, first.start.originalScript, 'bob'));
    recs.push(await record(other, other.start.brokenScript.replace('evaluation_strategy', 'eval_strategy_typo'), 'alice'));
    for (const r of recs) await store.appendDemonstration(r);
    await first.env.dispose();
    await other.env.dispose();
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('forgeenv.review.stop');
  });

  test('Start Review opens broken ↔ repaired (broken from repair_prompt, repaired = broken + diff)', async () => {
    const r = await ok<{ total: number; index: number; recordId: string }>('forgeenv.review.start', { dataset: dir });
    assert.equal(r.total, 3);
    assert.equal(r.recordId, recs[0]!.info.record_id, 'starts at the first unreviewed record');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(tab instanceof vscode.TabInputTextDiff);
    const s = await inspect();
    assert.equal(tab.original.toString(), s.current!.brokenUri);
    assert.equal(tab.modified.toString(), s.current!.repairedUri);
    assert.equal((await vscode.workspace.openTextDocument(tab.original)).getText(), first.start.brokenScript);
    assert.equal((await vscode.workspace.openTextDocument(tab.modified)).getText(), first.start.originalScript);
    assert.equal(s.current!.repairedOk, true);
  });

  test('duplicates (same task and diff) are flagged in the walk', async () => {
    const s0 = await inspect();
    assert.ok(s0.current!.duplicates.some((d) => d.includes(recs[1]!.info.record_id)), s0.current!.duplicates.join(' | '));
    const moved = await ok<{ index: number; recordId: string }>('forgeenv.review.next');
    assert.equal(moved.recordId, recs[1]!.info.record_id);
    const s1 = await inspect();
    assert.ok(s1.current!.duplicates.some((d) => /record hash/.test(d) && d.includes(recs[0]!.info.record_id)));
    await ok('forgeenv.review.previous');
    assert.equal((await inspect()).index, 0);
  });

  test('Approve / Reject append valid review records and advance; a rejection needs a comment', async () => {
    const a = await ok<{ review: { record_id: string } }>('forgeenv.review.approve', { comment: 'minimal, correct' });
    assert.equal(a.review.record_id, recs[0]!.info.record_id);
    assert.equal((await inspect()).index, 1);
    const empty = await vscode.commands.executeCommand<{ ok: boolean; reason?: string }>('forgeenv.review.reject', { comment: '   ' });
    assert.equal(empty.ok, false);
    assert.equal(empty.reason, 'invalid_args');
    await ok('forgeenv.review.reject', { comment: 'duplicate of an approved repair' });
    const lines = readJsonl(join(dir, 'reviews.jsonl')).map((l) => ReviewRecordSchema.parse(l));
    assert.deepEqual(lines.map((l) => [l.record_id, l.verdict]), [
      [recs[0]!.info.record_id, 'approve'],
      [recs[1]!.info.record_id, 'reject'],
    ]);
    assert.ok(lines.every((l) => l.reviewer.length > 0 && !Number.isNaN(Date.parse(l.at))));
    // The demonstrations file is never edited by a review.
    assert.equal(readJsonl(join(dir, 'demonstrations.jsonl')).length, 3);
  });

  test('Label the current demonstration and a task: valid label records', async () => {
    const s = await inspect();
    const l = await ok<{ label: { target: unknown } }>('forgeenv.review.label', { difficulty: 2, tags: ['kwarg'], confidence: 4, note: 'renamed field' });
    assert.deepEqual(l.label.target, { type: 'demonstration', record_id: s.current!.recordId });
    await ok('forgeenv.review.label', { target: { type: 'task', task_id: TASK }, difficulty: 1, tags: ['kwarg', 'other'], confidence: 5, dataset: dir });
    const bad = await vscode.commands.executeCommand<{ ok: boolean; reason?: string }>('forgeenv.review.label', { difficulty: 4, tags: [], confidence: 3 });
    assert.equal(bad.ok, false);
    const labels = readJsonl(join(dir, 'labels.jsonl')).map((x) => LabelRecordSchema.parse(x));
    assert.equal(labels.length, 2);
    assert.equal(labels[0]!.difficulty, 2);
    assert.deepEqual(labels[1]!.target, { type: 'task', task_id: TASK });
  });

  test('Reopen writes a new revision that supersedes the old record; the old line stays', async function () {
    this.timeout(60_000);
    // Resubmitting the same repair is refused with a message, and the revision stays open until discarded.
    const same = await vscode.commands.executeCommand<{ ok: boolean; reason?: string; message?: string }>('forgeenv.review.reopen', {
      recordId: recs[0]!.info.record_id,
      dataset: dir,
      script: first.start.originalScript,
      submit: true,
    });
    assert.equal(same.ok, false);
    assert.equal(same.reason, 'unchanged');
    assert.match(same.message ?? '', /identical/);
    await ok('forgeenv.review.discardRevision');
    assert.equal(readJsonl(join(dir, 'demonstrations.jsonl')).length, 3, 'nothing was written');
    const revised = first.start.originalScript + '# checked by hand\n';
    const r = await ok<{ stored: { recordId: string; revision: number; supersedes: string } }>('forgeenv.review.reopen', { recordId: recs[0]!.info.record_id, dataset: dir, script: revised, submit: true });
    assert.equal(r.stored.revision, 2);
    assert.equal(r.stored.supersedes, recs[0]!.info.record_id);
    const all = readJsonl(join(dir, 'demonstrations.jsonl')).map((x) => DemonstrationRecordSchema.parse(x));
    assert.equal(all.length, 4);
    assert.deepEqual(all[0], DemonstrationRecordSchema.parse(JSON.parse(JSON.stringify(recs[0]))), 'the old line is unchanged');
    const last = all[3]!;
    assert.equal(last.info.record_id, r.stored.recordId);
    assert.equal(last.info.task_hash, recs[0]!.info.task_hash);
    assert.equal(last.success, true);
    assert.equal(last.info.timeline_file, `timelines/${recs[0]!.info.episode_id}.r2.jsonl`, 'the revision has its own timeline');
    const events = readJsonl(join(dir, last.info.timeline_file)) as Array<{ kind: string; event?: string }>;
    assert.ok(events.some((e) => e.kind === 'run') && events.some((e) => e.event === 'submit'), JSON.stringify(events));
    const snap = await new DatasetStore(dir).readAll();
    assert.ok(!snap.demonstrations.current.some((x) => x.info.record_id === recs[0]!.info.record_id));
    assert.ok(snap.demonstrations.current.some((x) => x.info.record_id === r.stored.recordId));
  });

  test('the dataset summary webview opens with a strict CSP and the dataset\'s numbers', async () => {
    await ok('forgeenv.review.summary', { dataset: dir });
    const s = await inspect();
    assert.equal(s.summaryOpen, true);
    const html = s.summaryHtml ?? '';
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'nonce-[^']+'/);
    assert.match(html, /<dt>Submitted<\/dt><dd>3<\/dd>/, 'three current demonstrations (one superseded)');
    assert.match(html, /<dt>Approved<\/dt><dd>0<\/dd>/, 'the approved record was superseded by its revision');
    assert.match(html, /<dt>Rejected<\/dt><dd>1<\/dd>/);
    assert.ok((html.match(/<svg /g) ?? []).length >= 7);
  });

  test('Export writes the chosen format through the store exporter', async () => {
    const out = join(mkdtempSync(join(workspaceDir(), 'exports-')), 'review-sft.jsonl');
    // This task's breakage does not make the script fail in its snapshot (a deprecation): the
    // default filters leave such episodes out, `breakage: any` takes them.
    const def = await ok<{ rows: number; out: string; card: string }>('forgeenv.review.export', { format: 'trl-sft', dataset: dir, out: join(dirname(out), 'default', 'sft.jsonl') });
    assert.equal(def.rows, 0);
    assert.match(readFileSync(def.card, 'utf8'), /breakage did not make the script fail \| −[1-9]/);
    const r = await ok<{ rows: number; out: string; card: string }>('forgeenv.review.export', { format: 'trl-sft', dataset: dir, out, filters: { breakage: 'any' } });
    const rows = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    assert.equal(rows.length, r.rows);
    assert.ok(r.rows >= 1);
    assert.ok(readFileSync(r.card, 'utf8').includes('trl-sft'));
  });
});

// Labeling, review mode, reopen and the dataset summary (issue 5), in a real VS Code, on a
// dataset built from real episodes (the environment breaks a corpus task and scores repairs).
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as vscode from 'vscode';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment, ENV_VERSION } from '../../src/env/episode/environment';
import { startHumanEpisode, type HumanEpisodeStart } from '../../src/env/episode/humanEpisode';
import { DatasetStore } from '../../src/store/datasetStore';
import { buildDemonstration } from '../../src/store/demonstrationBuilder';
import { DemonstrationRecordSchema, LabelRecordSchema, ReviewRecordSchema, type DemonstrationRecord } from '../../src/store/records';
import { api, ok, readJsonl, replaceBuffer, workspaceDir } from './helpers';

const TASK = 'roberta_sentiment';
const PRIMITIVE = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};

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
const sameUri = (a: vscode.Uri | string) => (b: vscode.Uri) => b.toString() === a.toString();
/** Tabs (in any group) showing `file` in a text editor. */
const tabsOf = (file: vscode.Uri) =>
  vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && sameUri(file)(t.input.uri));
/** Lines of the document the editor shows right now (a wrapped line takes several rows, so fewer lines fit). */
const linesShown = (e: vscode.TextEditor) => e.visibleRanges.reduce((n, r) => n + r.end.line - r.start.line + 1, 0);

async function until<T>(what: string, probe: () => T | undefined, ms = 10_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 50))) {
    const v = probe();
    if (v !== undefined) return v;
  }
  assert.fail(`timed out waiting for ${what}`);
}

async function episode(seed: number): Promise<{ env: ForgeEnvironment; start: HumanEpisodeStart }> {
  const env = new ForgeEnvironment({ mode: 'simulated' });
  const start = await startHumanEpisode(env, { taskId: TASK, seed, primitive: PRIMITIVE });
  return { env, start };
}

async function record(
  e: { env: ForgeEnvironment; start: HumanEpisodeStart },
  repaired: string,
  annotator: string,
): Promise<DemonstrationRecord> {
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
  /** A dataset whose one repair adds long comment lines: for the word-wrap check. */
  let wrapDir: string;
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
    wrapDir = mkdtempSync(join(workspaceDir(), 'review-wrap-'));
    // Long lines first, so they are what the diff editor opens scrolled to.
    const long = Array.from({ length: 30 }, (_, i) => `# note ${i}: ${'wrapped '.repeat(150)}\n`).join('');
    await new DatasetStore(wrapDir).appendDemonstration(await record(first, long + first.start.originalScript, 'carol'));
    await first.env.dispose();
    await other.env.dispose();
  });
  suiteTeardown(async () => {
    await vscode.commands.executeCommand('forgeenv.review.stop');
  });

  test('Start Review opens broken ↔ repaired (broken from repair_prompt, repaired = broken + diff)', async () => {
    const r = await ok<{ total: number; index: number; recordId: string }>('forgeenv.review.start', { dataset: dir });
    assert.equal(r.total, 3);
    assert.equal(r.recordId, recs[0].info.record_id, 'starts at the first unreviewed record');
    const tab = vscode.window.tabGroups.activeTabGroup.activeTab?.input;
    assert.ok(tab instanceof vscode.TabInputTextDiff);
    const s = await inspect();
    assert.equal(tab.original.toString(), s.current!.brokenUri);
    assert.equal(tab.modified.toString(), s.current!.repairedUri);
    assert.equal((await vscode.workspace.openTextDocument(tab.original)).getText(), first.start.brokenScript);
    assert.equal((await vscode.workspace.openTextDocument(tab.modified)).getText(), first.start.originalScript);
    assert.equal(s.current!.repairedOk, true);
  });

  test("the view shows the record's scores and the actions above the repaired script", async () => {
    const s = await inspect();
    const r = recs[0];
    const repaired = await vscode.workspace.openTextDocument(vscode.Uri.parse(s.current!.repairedUri));
    const broken = await vscode.workspace.openTextDocument(vscode.Uri.parse(s.current!.brokenUri));
    assert.deepEqual([broken.languageId, repaired.languageId], ['forgeenv-review', 'forgeenv-review']);
    // That language's defaults turn on CodeLens and word wrap in the diff editor, for review documents only.
    const python = { languageId: 'python' };
    assert.equal(vscode.workspace.getConfiguration('diffEditor', repaired).get('codeLens'), true);
    assert.equal(vscode.workspace.getConfiguration('diffEditor', repaired).get('wordWrap'), 'on');
    assert.equal(vscode.workspace.getConfiguration('editor', repaired).get('wordWrap'), 'on');
    assert.equal(vscode.workspace.getConfiguration('diffEditor', python).get('codeLens'), false);
    assert.notEqual(vscode.workspace.getConfiguration('diffEditor', python).get('wordWrap'), 'on');
    const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', repaired.uri);
    // One header row, right above the first change (the renamed keyword), where the diff editor opens.
    const changed = repaired
      .getText()
      .split('\n')
      .findIndex((l, i) => l !== broken.getText().split('\n')[i]);
    assert.match(repaired.lineAt(changed).text, /eval_strategy=/);
    assert.ok(
      lenses.length > 0 && lenses.every((l) => l.range.start.line === changed),
      JSON.stringify(lenses.map((l) => l.range.start.line)),
    );
    const titles = lenses.map((l) => l.command?.title ?? '');
    assert.ok(
      titles[0].startsWith(`${r.success ? '$(pass-filled) success' : '$(error) failed'} · reward ${r.visible_reward.toFixed(2)}`),
      titles[0],
    );
    assert.ok(Object.keys(r.visible_breakdown).length > 0 && Object.keys(r.held_out_breakdown).length > 0);
    for (const [k, v] of Object.entries(r.visible_breakdown))
      assert.ok(titles[1].includes(`${k} ${Math.round(v * 100) / 100}`), `${k} in ${titles[1]}`);
    for (const [k, v] of Object.entries(r.held_out_breakdown))
      assert.ok(titles[2].includes(`${k} ${Math.round(v * 100) / 100}`), `${k} in ${titles[2]}`);
    const approve = lenses.find((l) => l.command?.command === 'forgeenv.review.approve');
    assert.equal(approve?.command?.title, '$(check) Approve (Alt+A)');
    assert.ok(
      lenses.some((l) => l.command?.command === 'forgeenv.review.reject') &&
        lenses.some((l) => l.command?.command === 'forgeenv.review.label'),
    );
    assert.deepEqual(await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', broken.uri), []);
  });

  test('duplicates (same task and diff) are flagged in the walk', async () => {
    const s0 = await inspect();
    assert.ok(
      s0.current!.duplicates.some((d) => d.includes(recs[1].info.record_id)),
      s0.current!.duplicates.join(' | '),
    );
    const moved = await ok<{ index: number; recordId: string }>('forgeenv.review.next');
    assert.equal(moved.recordId, recs[1].info.record_id);
    const s1 = await inspect();
    assert.ok(s1.current!.duplicates.some((d) => /record hash/.test(d) && d.includes(recs[0].info.record_id)));
    await ok('forgeenv.review.previous');
    assert.equal((await inspect()).index, 0);
  });

  test('Approve / Reject append valid review records and advance; a rejection needs a comment', async () => {
    const a = await ok<{ review: { record_id: string } }>('forgeenv.review.approve', { comment: 'minimal, correct' });
    assert.equal(a.review.record_id, recs[0].info.record_id);
    assert.equal((await inspect()).index, 1);
    const empty = await vscode.commands.executeCommand<{ ok: boolean; reason?: string }>('forgeenv.review.reject', { comment: '   ' });
    assert.equal(empty.ok, false);
    assert.equal(empty.reason, 'invalid_args');
    await ok('forgeenv.review.reject', { comment: 'duplicate of an approved repair' });
    const lines = readJsonl(join(dir, 'reviews.jsonl')).map((l) => ReviewRecordSchema.parse(l));
    assert.deepEqual(
      lines.map((l) => [l.record_id, l.verdict]),
      [
        [recs[0].info.record_id, 'approve'],
        [recs[1].info.record_id, 'reject'],
      ],
    );
    assert.ok(lines.every((l) => l.reviewer.length > 0 && !Number.isNaN(Date.parse(l.at))));
    // The demonstrations file is never edited by a review.
    assert.equal(readJsonl(join(dir, 'demonstrations.jsonl')).length, 3);
  });

  test('Label the current demonstration and a task: valid label records', async () => {
    const s = await inspect();
    const l = await ok<{ label: { target: unknown } }>('forgeenv.review.label', {
      difficulty: 2,
      tags: ['kwarg'],
      confidence: 4,
      note: 'renamed field',
    });
    assert.deepEqual(l.label.target, { type: 'demonstration', record_id: s.current!.recordId });
    await ok('forgeenv.review.label', {
      target: { type: 'task', task_id: TASK },
      difficulty: 1,
      tags: ['kwarg', 'other'],
      confidence: 5,
      dataset: dir,
    });
    const bad = await vscode.commands.executeCommand<{ ok: boolean; reason?: string }>('forgeenv.review.label', {
      difficulty: 4,
      tags: [],
      confidence: 3,
    });
    assert.equal(bad.ok, false);
    const labels = readJsonl(join(dir, 'labels.jsonl')).map((x) => LabelRecordSchema.parse(x));
    assert.equal(labels.length, 2);
    assert.equal(labels[0].difficulty, 2);
    assert.deepEqual(labels[1].target, { type: 'task', task_id: TASK });
  });

  test('Reopen writes a new revision that supersedes the old record; the old line stays', async function () {
    this.timeout(120_000);
    // Resubmitting the same repair is refused with a message, and the revision stays open until discarded.
    const same = await vscode.commands.executeCommand<{ ok: boolean; reason?: string; message?: string }>('forgeenv.review.reopen', {
      recordId: recs[0].info.record_id,
      dataset: dir,
      script: first.start.originalScript,
      submit: true,
    });
    assert.equal(same.ok, false);
    assert.equal(same.reason, 'unchanged');
    assert.match(same.message ?? '', /identical/);
    await ok('forgeenv.review.discardRevision');
    assert.equal(readJsonl(join(dir, 'demonstrations.jsonl')).length, 3, 'nothing was written');
    // Discard closes the revision's editor, unsaved edits and all (no "Save changes?" dialog), and says what happened.
    const opened = await ok<{ file: string }>('forgeenv.review.reopen', { recordId: recs[0].info.record_id, dataset: dir });
    const file = vscode.Uri.file(opened.file);
    assert.equal(tabsOf(file).length, 1, 'the revision opens in an editor');
    await replaceBuffer(file, '# scratch that will be discarded\n');
    const discarded = await ok<{ message: string }>('forgeenv.review.discardRevision');
    assert.match(discarded.message, new RegExp(`^Revision 2 of ${TASK} · ModifyConfigField discarded; revision 1 is unchanged`));
    assert.deepEqual(tabsOf(file), [], 'no editor left on the discarded revision');
    assert.equal(vscode.workspace.textDocuments.find((d) => sameUri(file)(d.uri))?.isDirty ?? false, false);
    assert.equal(readJsonl(join(dir, 'demonstrations.jsonl')).length, 3, 'nothing was written');
    // Edit in the editor, submit: the stored revision is the edited file and its editor closes.
    const again = await ok<{ file: string }>('forgeenv.review.reopen', { recordId: recs[0].info.record_id, dataset: dir });
    assert.equal(again.file, opened.file);
    const revised = first.start.originalScript + '# checked by hand\n';
    await replaceBuffer(file, revised);
    const stored = await ok<{ recordId: string; revision: number; supersedes: string }>('forgeenv.review.submitRevision');
    assert.deepEqual(tabsOf(file), [], 'no editor left on the submitted revision');
    const r = { stored };
    assert.equal(r.stored.revision, 2);
    assert.equal(r.stored.supersedes, recs[0].info.record_id);
    const all = readJsonl(join(dir, 'demonstrations.jsonl')).map((x) => DemonstrationRecordSchema.parse(x));
    assert.equal(all.length, 4);
    assert.deepEqual(all[0], DemonstrationRecordSchema.parse(JSON.parse(JSON.stringify(recs[0]))), 'the old line is unchanged');
    const last = all[3];
    assert.equal(last.info.record_id, r.stored.recordId);
    assert.equal(last.info.task_hash, recs[0].info.task_hash);
    assert.equal(last.success, true);
    assert.equal(last.info.timeline_file, `timelines/${recs[0].info.episode_id}.r2.jsonl`, 'the revision has its own timeline');
    const events = readJsonl(join(dir, last.info.timeline_file)) as Array<{ kind: string; event?: string }>;
    assert.ok(events.some((e) => e.kind === 'run') && events.some((e) => e.event === 'submit'), JSON.stringify(events));
    const snap = await new DatasetStore(dir).readAll();
    assert.ok(!snap.demonstrations.current.some((x) => x.info.record_id === recs[0].info.record_id));
    assert.ok(snap.demonstrations.current.some((x) => x.info.record_id === r.stored.recordId));
  });

  test("the dataset summary webview opens with a strict CSP and the dataset's numbers", async () => {
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
    const def = await ok<{ rows: number; out: string; card: string }>('forgeenv.review.export', {
      format: 'trl-sft',
      dataset: dir,
      out: join(dirname(out), 'default', 'sft.jsonl'),
    });
    assert.equal(def.rows, 0);
    assert.match(readFileSync(def.card, 'utf8'), /breakage did not make the script fail \| −[1-9]/);
    const r = await ok<{ rows: number; out: string; card: string }>('forgeenv.review.export', {
      format: 'trl-sft',
      dataset: dir,
      out,
      filters: { breakage: 'any' },
    });
    const rows = readFileSync(out, 'utf8').split('\n').filter(Boolean);
    assert.equal(rows.length, r.rows);
    assert.ok(r.rows >= 1);
    assert.ok(readFileSync(r.card, 'utf8').includes('trl-sft'));
  });

  test('long changed lines wrap in the review diff instead of running off-screen', async function () {
    this.timeout(60_000);
    const started = await ok<{ recordId: string }>('forgeenv.review.start', { dataset: wrapDir });
    const s = await inspect();
    assert.equal(s.current!.recordId, started.recordId);
    const shown = () =>
      vscode.window.visibleTextEditors.find((e) => sameUri(s.current!.repairedUri)(e.document.uri) && e.visibleRanges.length > 0);
    const doc = (await until('the repaired side of the diff', shown)).document;
    assert.ok(doc.lineCount > 40 && doc.lineAt(0).text.length > 1000);
    // Each 1,200-character line takes many rows, so only a few lines fit in the view.
    const wrapped = await until('a wrapped layout', () => {
      const e = shown();
      return e && linesShown(e) <= 4 ? linesShown(e) : undefined;
    });
    // Control: with wrapping off for review documents, the same view shows many more lines.
    const cfg = vscode.workspace.getConfiguration('diffEditor', doc);
    await cfg.update('wordWrap', 'off', vscode.ConfigurationTarget.Global, true);
    try {
      const unwrapped = await until('an unwrapped layout', () => {
        const e = shown();
        return e && linesShown(e) >= wrapped + 8 ? linesShown(e) : undefined;
      });
      assert.ok(unwrapped > wrapped);
    } finally {
      await cfg.update('wordWrap', undefined, vscode.ConfigurationTarget.Global, true);
    }
  });
});

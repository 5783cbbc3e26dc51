// Review walk logic without VS Code: recovering broken/repaired scripts from records,
// duplicate flags, the label form and the summary page.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRepairDiff } from '../../src/env/diff/diff';
import { renderRepairAgentPrompt } from '../../src/env/episode/prompts';
import { DatasetStore } from '../../src/store/datasetStore';
import { createDemonstrationRecord } from '../../src/store/demonstrationBuilder';
import { LabelRecordSchema, type DemonstrationRecord } from '../../src/store/records';
import { summarizeDataset } from '../../src/store/summary';
import {
  applyRepairDiffTolerant,
  brokenScriptFromPrompt,
  buildReviewItems,
  firstChangedLine,
  firstUnreviewed,
  scoreHeader,
  scoreMarkdown,
  scoreTooltip,
  statusText,
} from '../../src/editor/review/core/reviewItems';
import { DEFAULT_LABEL_TAGS, DIFFICULTY_CHOICES, labelInput, tagsFromSetting } from '../../src/editor/review/core/labelForm';
import { histogramSvg } from '../../src/editor/review/core/summaryCharts';
import { escapeHtml, renderSummaryHtml, SummaryMessageSchema } from '../../src/editor/review/core/summaryHtml';

const ORIGINAL =
  'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="out", eval_strategy="epoch")\nprint("TRAINING_COMPLETE")\n';
const BROKEN = ORIGINAL.replace('eval_strategy', 'evaluation_strategy');
const versions = { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' };

function demo(
  n: number,
  opts: { broken?: string; repaired?: string; seed?: number; previous?: DemonstrationRecord } = {},
): DemonstrationRecord {
  const broken = opts.broken ?? BROKEN;
  const repaired = opts.repaired ?? ORIGINAL;
  const primitive = { primitive_type: 'RenameApiCall', params: { old_name: 'eval_strategy', new_name: 'evaluation_strategy' } };
  return createDemonstrationRecord({
    rollout: {
      task_id: 'task_a',
      primitive_type: 'RenameApiCall',
      drift_prompt: 'Target category: RenameApiCall\n',
      drift_completion: JSON.stringify(primitive),
      repair_prompt: renderRepairAgentPrompt({
        broken_script: broken,
        error_trace: 'TypeError: boom',
        library_versions: versions,
        target_category: 'RenameApiCall',
      }),
      repair_completion: createRepairDiff(broken, repaired),
      visible_reward: 1.8,
      visible_breakdown: { script_executes: 1, loss_decreased: 0.5, checkpoint_appeared: 0.3, diff_size_penalty: 0 },
      held_out_breakdown: { executed_cleanly: 1 },
      success: true,
      error_trace: '',
      info: {},
    },
    originalScript: ORIGINAL,
    episodeId: opts.previous?.info.episode_id ?? `ep-${n}`,
    seed: opts.seed ?? n,
    primitive,
    libraryVersions: versions,
    provenance: {
      session_id: 's',
      annotator_id: 'alice',
      mode: 'simulated',
      interpreter: 'python3',
      extension_version: '0.1.0',
      env_version: '0.1.0',
      started_at: '2025-03-01T10:00:00.000Z',
      submitted_at: '2025-03-01T10:05:00.000Z',
      active_ms: 30_000 * n,
      wall_ms: 40_000 * n,
      runs: 1,
    },
    previous: opts.previous,
    recordId: `00000000-0000-4000-8000-${n.toString(16).padStart(12, '0')}`,
  });
}

function tempDataset(): string {
  return mkdtempSync(join(tmpdir(), 'forgeenv-review-test-'));
}

describe('brokenScriptFromPrompt', () => {
  test('finds the broken script in a rendered repair prompt', () => {
    const prompt = renderRepairAgentPrompt({
      broken_script: BROKEN,
      error_trace: 'x',
      library_versions: versions,
      target_category: 'RenameApiCall',
    });
    assert.equal(brokenScriptFromPrompt(prompt), BROKEN);
  });
  test('a script containing ``` is recovered (longer fence)', () => {
    const script = 'doc = """\n```python\nx\n```\n"""\nprint(doc)\n';
    const prompt = renderRepairAgentPrompt({ broken_script: script, error_trace: 'x', library_versions: versions, target_category: 'X' });
    assert.equal(brokenScriptFromPrompt(prompt), script);
  });
  test('a prompt without a python block gives undefined', () => {
    assert.equal(brokenScriptFromPrompt('Broken script:\n```text\nhello\n```\n'), undefined);
  });
  test('a script without final newline still takes its diff', () => {
    const broken = BROKEN.trimEnd();
    const repaired = ORIGINAL.trimEnd();
    const prompt = renderRepairAgentPrompt({ broken_script: broken, error_trace: 'x', library_versions: versions, target_category: 'X' });
    const fromPrompt = brokenScriptFromPrompt(prompt)!;
    const r = applyRepairDiffTolerant(fromPrompt, createRepairDiff(broken, repaired));
    assert.ok(r.ok);
    assert.equal(r.ok && r.script, repaired);
  });
});

describe('buildReviewItems', () => {
  test('walk items: repaired = broken + diff, reviews and labels attached, duplicates flagged', async () => {
    const dir = tempDataset();
    const store = new DatasetStore(dir);
    const a = demo(1);
    const b = demo(2, { repaired: ORIGINAL.replace('"out"', '"out2"').replace('evaluation_strategy', 'eval_strategy') });
    const c = demo(3, { seed: 1 }); // same task and same diff as a: a record-hash duplicate
    for (const r of [a, b, c]) await store.appendDemonstration(r);
    await store.appendReview({ record_id: a.info.record_id, reviewer: 'rev', verdict: 'approve', comment: '' });
    await store.appendLabel({
      target: { type: 'demonstration', record_id: b.info.record_id },
      difficulty: 2,
      tags: ['rename'],
      confidence: 4,
      note: '',
      labeler: 'rev',
    });
    const items = buildReviewItems(await store.readAll());
    assert.equal(items.length, 3);
    assert.equal(items[0].broken, BROKEN);
    assert.deepEqual(items[0].repaired, { ok: true, script: ORIGINAL, warnings: [] });
    assert.equal(items[0].review?.verdict, 'approve');
    assert.equal(items[1].label?.difficulty, 2);
    assert.equal(firstUnreviewed(items), 1);
    assert.ok(
      items[2].duplicates.some((d) => d.includes(a.info.record_id) && d.includes('record hash')),
      items[2].duplicates.join(' | '),
    );
    assert.ok(items[0].duplicates.length > 0);
    assert.deepEqual(items[1].duplicates, []);
    assert.match(statusText(items[2], 3), /^Review 3\/3 · success · reward 1\.8 · duplicate$/);
    assert.match(scoreMarkdown(items[0]), /Latest review: \*\*approve\*\* by rev/);
  });

  test('a revision supersedes its predecessor in the walk', async () => {
    const dir = tempDataset();
    const store = new DatasetStore(dir);
    const first = demo(1);
    const second = demo(4, {
      previous: first,
      seed: 1,
      repaired: ORIGINAL.replace('"out"', '"o"').replace('evaluation_strategy', 'eval_strategy'),
    });
    await store.appendDemonstration(first);
    await store.appendDemonstration(second);
    const items = buildReviewItems(await store.readAll());
    assert.deepEqual(
      items.map((i) => i.record.info.record_id),
      [second.info.record_id],
    );
    assert.equal(items[0].record.info.revision, 2);
  });

  test('a diff that does not apply is reported, not thrown', async () => {
    const dir = tempDataset();
    const store = new DatasetStore(dir);
    const rec = demo(5, { broken: 'print(1)\n', repaired: 'print(2)\n' });
    const bad = createDemonstrationRecord({
      rollout: { ...rec, repair_completion: createRepairDiff('something else\n', 'entirely\n'), info: {} },
      originalScript: ORIGINAL,
      episodeId: 'ep-5',
      seed: 5,
      primitive: rec.info.primitive,
      libraryVersions: versions,
      provenance: {
        session_id: 's',
        annotator_id: 'a',
        mode: 'simulated',
        interpreter: 'python3',
        extension_version: '0',
        env_version: '0',
        started_at: rec.info.started_at,
        submitted_at: rec.info.submitted_at,
        active_ms: 1,
        wall_ms: 1,
        runs: 0,
      },
    });
    await store.appendDemonstration(bad);
    const [item] = buildReviewItems(await store.readAll());
    assert.equal(item.repaired.ok, false);
    assert.match(scoreMarkdown(item), /does not apply/);
  });
});

describe('score header (shown in the review view above the repaired script)', () => {
  test("outcome, reward and each breakdown come from the record, in the reward's order", async () => {
    const store = new DatasetStore(tempDataset());
    const a = demo(1);
    const failed = createDemonstrationRecord({
      rollout: {
        ...a,
        visible_reward: 0.25,
        visible_breakdown: { script_executes: 0, diff_size_penalty: -0.104 },
        held_out_breakdown: {},
        success: false,
        info: {},
      },
      originalScript: ORIGINAL,
      episodeId: 'ep-9',
      seed: 9,
      primitive: a.info.primitive,
      libraryVersions: versions,
      provenance: {
        session_id: 's',
        annotator_id: 'bob',
        mode: 'simulated',
        interpreter: 'python3',
        extension_version: '0',
        env_version: '0',
        started_at: a.info.started_at,
        submitted_at: a.info.submitted_at,
        active_ms: 1,
        wall_ms: 1,
        runs: 2,
      },
      recordId: '00000000-0000-4000-8000-000000000009',
    });
    await store.appendDemonstration(a);
    await store.appendDemonstration(failed);
    await store.appendReview({ record_id: a.info.record_id, reviewer: 'rev', verdict: 'reject', comment: 'too broad' });
    const [ok, bad] = buildReviewItems(await store.readAll());
    assert.deepEqual(scoreHeader(ok), [
      '$(pass-filled) success · reward 1.80 · $(close) rejected',
      'visible: script_executes 1 · loss_decreased 0.5 · checkpoint_appeared 0.3 · diff_size_penalty 0',
      'held-out: executed_cleanly 1',
    ]);
    assert.deepEqual(scoreHeader(bad), [
      '$(error) failed · reward 0.25',
      'visible: script_executes 0 · diff_size_penalty -0.1',
      'held-out: —',
    ]);
    assert.match(
      scoreTooltip(ok),
      /^task_a · RenameApiCall · revision 1\nannotator alice, active 30 s, 1 run\(s\), simulated mode\nRejected by rev: too broad$/,
    );
  });
  test('the header goes above the first changed line of the repaired script', () => {
    assert.equal(firstChangedLine(BROKEN, ORIGINAL), 1);
    assert.equal(firstChangedLine('a\nb\n', 'x\na\nb\n'), 0);
    assert.equal(firstChangedLine('a\nb\nc\n', 'a\nb\n'), 2, 'a removed last line: below the last kept line');
    assert.equal(firstChangedLine('a\nb', 'a\nb\n'), 2, 'only the final newline added: the empty last line');
    assert.equal(firstChangedLine('a\nb\nc', 'a\nb'), 1, 'last line removed, no final newline');
    assert.equal(firstChangedLine('a\n', 'a\n'), 0);
  });
  test('duplicates and an unusable diff are flagged in the header', async () => {
    const store = new DatasetStore(tempDataset());
    await store.appendDemonstration(demo(1));
    await store.appendDemonstration(demo(2, { seed: 1 }));
    const items = buildReviewItems(await store.readAll());
    assert.match(scoreHeader(items[1])[0], / · \$\(warning\) duplicate$/);
    assert.match(scoreTooltip(items[1]), /⚠ duplicate of/);
    const broken = { ...items[0], duplicates: [], repaired: { ok: false as const, error: 'hunk 1 does not match' } };
    assert.match(scoreHeader(broken)[0], /diff does not apply$/);
    assert.match(scoreTooltip(broken), /hunk 1 does not match/);
  });
});

describe('label form', () => {
  test('tags setting: cleaned, deduplicated, default when unusable', () => {
    assert.deepEqual(tagsFromSetting([' rename', 'rename', '', 'kwarg']), ['rename', 'kwarg']);
    assert.deepEqual(tagsFromSetting('rename'), [...DEFAULT_LABEL_TAGS]);
    assert.deepEqual(tagsFromSetting([]), [...DEFAULT_LABEL_TAGS]);
  });
  test('difficulty choices have one-key labels 1..3', () => {
    assert.deepEqual(
      DIFFICULTY_CHOICES.map((c) => c.label),
      ['1', '2', '3'],
    );
  });
  test('labelInput validates like the store and the stored record parses', async () => {
    const input = labelInput({
      target: { type: 'task', task_id: 't1' },
      difficulty: 3,
      tags: ['kwarg'],
      confidence: 5,
      note: '  tricky  ',
      labeler: 'rev',
    });
    assert.equal(input.note, 'tricky');
    assert.throws(
      () => labelInput({ target: { type: 'task', task_id: 't1' }, difficulty: 4, tags: [], confidence: 5, note: '', labeler: 'rev' }),
      /Invalid label: difficulty/,
    );
    assert.throws(
      () => labelInput({ target: { type: 'task', task_id: 't1' }, difficulty: 1, tags: [], confidence: 0, note: '', labeler: 'rev' }),
      /confidence/,
    );
    const dir = tempDataset();
    await new DatasetStore(dir).appendLabel(input);
    const line = readFileSync(join(dir, 'labels.jsonl'), 'utf8').trim();
    assert.equal(LabelRecordSchema.parse(JSON.parse(line)).difficulty, 3);
  });
});

describe('summary page', () => {
  test('strict CSP, nonce on the only script, tables behind plots, escaped text', async () => {
    const summary = await summarizeDataset(join(__dirname, '../fixtures/datasets/small'));
    const html = renderSummaryHtml(summary, {
      cspSource: 'vscode-resource:',
      nonce: 'N0nce',
      scriptUri: 'vscode-resource:/s.js',
      styleUri: 'vscode-resource:/s.css',
      labels: { total: 2, byTag: { '<b>x</b>': 1 } },
    });
    assert.match(
      html,
      /content="default-src 'none'; img-src vscode-resource:; style-src vscode-resource:; font-src vscode-resource:; script-src 'nonce-N0nce'"/,
    );
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    assert.deepEqual(scripts, ['<script nonce="N0nce" src="vscode-resource:/s.js">']);
    assert.doesNotMatch(html, /\sstyle=|\son\w+=/);
    const svgs = html.match(/<svg /g)?.length ?? 0;
    const tables = html.match(/<table>/g)?.length ?? 0;
    assert.ok(svgs >= 7, `${svgs} plots`);
    assert.equal(tables, svgs);
    assert.equal((html.match(/role="img" aria-labelledby=/g) ?? []).length, svgs);
    assert.ok(html.includes('&lt;b&gt;x&lt;/b&gt;'));
    assert.ok(!html.includes('<b>x</b>'));
    // Every primitive of the dataset appears in the by-primitive table.
    for (const p of Object.keys(summary.by_primitive)) assert.ok(html.includes(`<th scope="row">${escapeHtml(p)}</th>`), p);
    assert.ok(html.includes(`<dt>Submitted</dt><dd>${summary.counts.submitted}</dd>`));
  });
  test('histogram bars are proportional to counts', () => {
    const svg = histogramSvg('h', [
      { label: 'a', count: 1 },
      { label: 'b', count: 2 },
      { label: 'c', count: 0 },
    ]);
    const heights = [...svg.matchAll(/<rect class="bar-primary" [^>]*height="([\d.]+)"/g)].map((m) => Number(m[1]));
    assert.equal(heights.length, 2);
    assert.equal(heights[1] / heights[0], 2);
  });
  test('webview messages are validated', () => {
    assert.ok(SummaryMessageSchema.safeParse({ type: 'export', format: 'trl-sft' }).success);
    assert.ok(!SummaryMessageSchema.safeParse({ type: 'export', format: 'csv' }).success);
    assert.ok(!SummaryMessageSchema.safeParse({ type: 'refresh', extra: 1 }).success);
    assert.ok(!SummaryMessageSchema.safeParse('refresh').success);
  });
});

import assert from 'node:assert/strict';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runSummaryCommand } from '../../src/cli/summary';
import { DatasetStore } from '../../src/store/datasetStore';
import { countDiffLines } from '../../src/store/diffStats';
import { DATASET_FILES } from '../../src/store/records';
import { renderSummaryText, summarizeDataset } from '../../src/store/summary';
import { diffOf, makeDemo, tempDir, uuidFor } from './storeTestUtils';

/**
 * Crafted folder:
 *  1 RenameApiCall  alice  success r=1.8  60s  +1/-1   (superseded by 5)
 *  2 RenameApiCall  bob    failed  r=0.1  120s +3/-0
 *  3 DeprecateImport alice success r=1.5  30s  +2/-2   rejected
 *  4 DeprecateImport bob   success r=-0.5 600s +0/-1   approved
 *  5 RenameApiCall  alice  success r=1.0  90s  +1/-2   (revision of 1)
 *  + a corrupt line, 2 skips (DeprecateImport/alice too_hard, RenameApiCall/carol other)
 */
async function craftedFolder(): Promise<string> {
  const dir = tempDir('forgeenv-summary-');
  const store = new DatasetStore(dir);
  const d1 = makeDemo({ n: 1, annotator: 'alice', reward: 1.8, activeMs: 60_000, diff: diffOf(1, 1) });
  await store.appendDemonstration(d1);
  await store.appendDemonstration(
    makeDemo({ n: 2, taskId: 'task_b', annotator: 'bob', success: false, reward: 0.1, activeMs: 120_000, diff: diffOf(3, 0) }),
  );
  await store.appendDemonstration(
    makeDemo({
      n: 3,
      taskId: 'task_b',
      primitive: 'DeprecateImport',
      params: { old_module: 'a', new_module: 'b' },
      annotator: 'alice',
      reward: 1.5,
      activeMs: 30_000,
      diff: diffOf(2, 2),
    }),
  );
  appendFileSync(join(dir, DATASET_FILES.demonstrations), '{"task_id": "broken\n');
  await store.appendDemonstration(
    makeDemo({
      n: 4,
      taskId: 'task_c',
      primitive: 'DeprecateImport',
      params: { old_module: 'a', new_module: 'b' },
      annotator: 'bob',
      reward: -0.5,
      activeMs: 600_000,
      diff: diffOf(0, 1),
    }),
  );
  await store.appendDemonstration(makeDemo({ n: 5, previous: d1, annotator: 'alice', reward: 1.0, activeMs: 90_000, diff: diffOf(1, 2) }));
  await store.appendReview({ record_id: uuidFor(3), reviewer: 'rev', verdict: 'reject' });
  await store.appendReview({ record_id: uuidFor(4), reviewer: 'rev', verdict: 'approve' });
  await store.appendReview({ record_id: uuidFor(99), reviewer: 'rev', verdict: 'approve' });
  await store.appendSkip({
    episode_id: 'ep-s1',
    task_id: 'task_c',
    primitive: { primitive_type: 'DeprecateImport', params: {} },
    reason: 'too_hard',
    annotator_id: 'alice',
  });
  await store.appendSkip({
    episode_id: 'ep-s2',
    task_id: 'task_a',
    primitive: { primitive_type: 'RenameApiCall', params: {} },
    reason: 'other',
    note: 'lunch',
    annotator_id: 'carol',
  });
  return dir;
}

describe('countDiffLines', () => {
  test('counts hunk lines only, even removed lines that look like headers', () => {
    const diff = [
      '--- a/x.py',
      '+++ b/x.py',
      '@@ -1,3 +1,3 @@',
      ' keep',
      '--- not a header, a removed "-- " line',
      '-gone',
      '+++ added line starting with ++',
      '+new',
      '\\ No newline at end of file',
      '',
    ].join('\n');
    assert.deepEqual(countDiffLines(diff), { added: 2, removed: 2 });
    assert.deepEqual(countDiffLines(diffOf(4, 3)), { added: 4, removed: 3 });
    assert.deepEqual(countDiffLines(''), { added: 0, removed: 0 });
    assert.deepEqual(countDiffLines('@@ -1 +1 @@\r\n-a\r\n+b\r\n'), { added: 1, removed: 1 });
  });
});

describe('summarizeDataset', () => {
  test('counts, rates, distributions and problems on a crafted folder', async () => {
    const dir = await craftedFolder();
    const s = await summarizeDataset(dir);
    assert.deepEqual(s.counts, { demonstration_lines: 5, submitted: 4, success: 3, failed: 1, skipped: 2, superseded: 1 });
    assert.equal(s.success_rate, 0.75);
    assert.deepEqual(Object.keys(s.by_primitive), ['DeprecateImport', 'RenameApiCall']);
    assert.deepEqual(
      { ...s.by_primitive.RenameApiCall },
      { submitted: 2, success: 1, failed: 1, skipped: 1, success_rate: 0.5, active_ms_median: 105_000, reward_mean: 0.55 },
    );
    assert.equal(s.by_primitive.DeprecateImport.active_ms_median, 315_000);
    assert.deepEqual(s.by_task, {
      task_a: { submitted: 1, success: 1, failed: 0, skipped: 1 },
      task_b: { submitted: 2, success: 1, failed: 1, skipped: 0 },
      task_c: { submitted: 1, success: 1, failed: 0, skipped: 1 },
    });
    assert.deepEqual(s.by_annotator.alice, { submitted: 2, success: 2, failed: 0, skipped: 1, active_ms_total: 120_000 });
    assert.deepEqual(s.by_annotator.carol, { submitted: 0, success: 0, failed: 0, skipped: 1, active_ms_total: 0 });

    // Rewards of current records: 0.1, 1.5, -0.5, 1.0.
    assert.equal(s.reward.count, 4);
    assert.ok(Math.abs(s.reward.mean! - 0.525) < 1e-12);
    assert.equal(s.reward.median, 0.55);
    assert.equal(s.reward.min, -0.5);
    assert.equal(s.reward.histogram.length, 10);
    assert.deepEqual(s.reward.histogram[0], { from: -0.2, to: 0, count: 1 }, '-0.5 is clamped into the first bin');
    assert.equal(s.reward.histogram[1].count, 1); // 0.1
    assert.equal(s.reward.histogram[6].count, 1); // 1.0 in [1.0, 1.2)
    assert.equal(s.reward.histogram[8].count, 1); // 1.5 in [1.4, 1.6)
    assert.equal(
      s.reward.histogram.reduce((a, b) => a + b.count, 0),
      4,
    );

    assert.equal(s.active_ms.median, 105_000);
    assert.equal(s.active_ms.total, 840_000);
    const bin = (from: number) => s.active_ms.histogram.find((b) => b.from === from)!.count;
    assert.equal(bin(30_000), 1);
    assert.equal(bin(60_000), 1);
    assert.equal(bin(120_000), 1);
    assert.equal(bin(600_000), 1);

    // Diffs of current records: +3/-0, +2/-2, +0/-1, +1/-2.
    assert.equal(s.diff.lines_added.median, 1.5);
    assert.equal(s.diff.lines_removed.median, 1.5);
    assert.equal(s.diff.lines_added.total, 6);
    assert.equal(s.diff.lines_removed.total, 5);
    assert.equal(s.diff.lines_changed.median, 3);
    assert.equal(s.diff.empty, 0);

    assert.deepEqual(s.reviews, { approved: 1, rejected: 1, unreviewed: 2, reviews_of_unknown_records: 1 });
    assert.equal(s.problems.total, 1);
    assert.equal(s.problems.listed[0].line, 4);
    assert.equal(s.problems.listed[0].file, join(dir, DATASET_FILES.demonstrations));

    const text = renderSummaryText(s);
    assert.match(text, /4 submitted \(3 success, 1 failed; success rate 75\.0%\), 2 skipped, 1 superseded/);
    assert.match(text, /1 approved, 1 rejected, 2 unreviewed/);
    assert.match(text, new RegExp(`demonstrations\\.jsonl:4: `));
  });

  test('an empty folder summarizes to zeros and nulls', async () => {
    const s = await summarizeDataset(tempDir());
    assert.equal(s.counts.submitted, 0);
    assert.equal(s.success_rate, null);
    assert.equal(s.reward.median, null);
    assert.match(renderSummaryText(s), /0 submitted/);
  });
});

describe('forgeenv summary command', () => {
  test('--json prints the summary; text by default; bad usage and missing folders have exit codes', async () => {
    const dir = await craftedFolder();
    let printed: string[] = [];
    const out = (s: string) => printed.push(s);
    assert.equal(await runSummaryCommand([dir, '--json'], out), 0);
    assert.equal(JSON.parse(printed.join('\n')).counts.submitted, 4);
    printed = [];
    assert.equal(await runSummaryCommand([dir], out), 0);
    assert.match(printed.join('\n'), /By primitive/);
    printed = [];
    assert.equal(await runSummaryCommand([], out), 2);
    assert.match(printed.join('\n'), /Usage/);
    assert.equal(await runSummaryCommand([dir, '--bogus'], out), 2);
    printed = [];
    assert.equal(await runSummaryCommand([join(dir, 'missing')], out), 1);
    assert.match(printed.join('\n'), /does not exist/);
  });
});

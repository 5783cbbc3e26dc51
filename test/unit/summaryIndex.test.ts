// The incremental summary: after appends only the new lines are parsed, and the result always
// equals a cold read of the whole folder, whatever was appended (revisions of old records,
// repeated ids, ids superseded before they appear, new reviews of old records, torn and corrupt
// lines) and whatever happened to the files (rewritten, truncated, replaced, removed).
import assert from 'node:assert/strict';
import { appendFileSync, cpSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { realpath } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { DatasetStore } from '../../src/store/datasetStore';
import { DATASET_FILES } from '../../src/store/records';
import { summarizeDataset } from '../../src/store/summary';
import { clearSummaryIndex, readSummaryInput, summaryIndexPath } from '../../src/store/summaryIndex';
import { makeDemo, tempDir, uuidFor } from './storeTestUtils';

async function assertSameAsCold(dir: string, label: string): Promise<void> {
  const incremental = await summarizeDataset(dir);
  const cold = await summarizeDataset(dir, { index: false });
  assert.deepEqual(incremental, cold, `${label}: the indexed summary equals a cold one`);
}

describe('summary index', () => {
  test('after N appends only N lines are parsed, and the summary equals a cold one at every step', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    const first = Array.from({ length: 6 }, (_, i) =>
      makeDemo({ n: i + 1, taskId: `t${i % 3}`, success: i % 2 === 0, annotator: i % 2 ? 'bob' : 'alice' }),
    );
    for (const r of first) await store.appendDemonstration(r);
    await store.appendReview({ record_id: uuidFor(1), reviewer: 'r', verdict: 'approve' });
    await store.appendSkip({
      episode_id: 'sk-1',
      task_id: 't0',
      primitive: { primitive_type: 'RenameApiCall', params: {} },
      reason: 'too_hard',
      annotator_id: 'alice',
    });

    const cold = await readSummaryInput(dir);
    assert.equal(cold.parsedLines, 8, 'the first summary reads everything');
    await assertSameAsCold(dir, 'initial');
    assert.equal((await readSummaryInput(dir)).parsedLines, 0, 'nothing new: nothing parsed');

    // A revision of an old record, a new record, and a review of an old record.
    await store.appendDemonstration(makeDemo({ n: 20, taskId: 't1', previous: first[1], success: true }));
    await store.appendDemonstration(makeDemo({ n: 21, taskId: 't9' }));
    await store.appendReview({ record_id: uuidFor(3), reviewer: 'r', verdict: 'reject' });
    assert.equal((await readSummaryInput(dir)).parsedLines, 3);
    await assertSameAsCold(dir, 'revision + review');
    let s = await summarizeDataset(dir);
    assert.equal(s.counts.superseded, 1);
    assert.equal(s.reviews.rejected, 1);

    // A line that supersedes an id no line has yet, then that id's line (merged folders).
    const orphanTarget = makeDemo({ n: 30, taskId: 'tx' });
    const revisionFirst = makeDemo({ n: 31, taskId: 'tx', previous: orphanTarget });
    await store.appendDemonstration(revisionFirst);
    await assertSameAsCold(dir, 'dangling supersedes');
    await store.appendDemonstration(orphanTarget);
    await assertSameAsCold(dir, 'superseded id arrives later');
    s = await summarizeDataset(dir);
    assert.equal(s.counts.superseded, 2);

    // The same record written twice, a review of an unknown record, then a torn and a corrupt line.
    appendFileSync(join(dir, DATASET_FILES.demonstrations), JSON.stringify(first[0]) + '\n');
    await store.appendReview({ record_id: uuidFor(999), reviewer: 'r', verdict: 'approve' });
    await assertSameAsCold(dir, 'repeated id, unknown review');
    appendFileSync(join(dir, DATASET_FILES.demonstrations), 'not json\n' + JSON.stringify(makeDemo({ n: 40 })));
    await assertSameAsCold(dir, 'corrupt line and an unterminated (still valid) last line');
    const withTail = await summarizeDataset(dir);
    assert.equal(withTail.problems.total, 1);
    // The unterminated line was not indexed: once finished it is parsed again, and counted once.
    appendFileSync(join(dir, DATASET_FILES.demonstrations), '\n');
    assert.equal((await readSummaryInput(dir)).parsedLines, 1);
    await assertSameAsCold(dir, 'tail finished');
    assert.equal((await summarizeDataset(dir)).counts.submitted, withTail.counts.submitted);
  });

  test('a rewritten, truncated, replaced or removed file is read again from the start', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    for (let i = 1; i <= 4; i++) await store.appendDemonstration(makeDemo({ n: i, taskId: `t${i}` }));
    await store.appendReview({ record_id: uuidFor(2), reviewer: 'r', verdict: 'reject' });
    await summarizeDataset(dir);
    const file = join(dir, DATASET_FILES.demonstrations);
    const lines = readFileSync(file, 'utf8').split('\n').filter(Boolean);

    // In place: same size and inode, different bytes (a hand edit of a diff's character).
    writeFileSync(file, [lines[0].replace('"success":true', '"success":!!!!'), ...lines.slice(1)].join('\n') + '\n');
    const afterEdit = await readSummaryInput(dir);
    assert.equal(afterEdit.parsedLines, 4, 'the changed file is read whole');
    await assertSameAsCold(dir, 'edited in place');

    writeFileSync(file, lines.slice(0, 2).join('\n') + '\n'); // truncated
    await assertSameAsCold(dir, 'truncated');
    rmSync(file);
    writeFileSync(file, lines.slice(2).join('\n') + '\n'); // replaced (new inode)
    await assertSameAsCold(dir, 'replaced');
    rmSync(join(dir, DATASET_FILES.reviews));
    await assertSameAsCold(dir, 'reviews removed');
    assert.equal((await summarizeDataset(dir)).reviews.rejected, 0);
  });

  test('the summary (quick checks, index) agrees with the full-schema read of DatasetStore.readAll, corrupt lines included', async () => {
    const dir = tempDir();
    cpSync(resolve(__dirname, '../fixtures/datasets/small'), dir, { recursive: true });
    const file = join(dir, DATASET_FILES.demonstrations);
    const good = makeDemo({ n: 50, taskId: 'tz' });
    const bad = (edit: (r: Record<string, any>) => void) => {
      const r = structuredClone(good) as Record<string, any>;
      edit(r);
      return JSON.stringify(r);
    };
    appendFileSync(
      file,
      [
        bad((r) => (r.info.record_hash = 'f'.repeat(64))), // hash mismatch: inconsistent
        bad((r) => (r.info.supersedes = r.info.record_id)), // refinement: schema
        bad((r) => (r.info.seed = 1.5)), // not an integer: schema
        bad((r) => (r.visible_breakdown = { x: 'high' })),
        bad((r) => (r.extra_top_level = 1)), // stripped: still valid
        '[1,2]',
        '',
        JSON.stringify(good),
      ].join('\n') + '\n',
    );
    appendFileSync(join(dir, DATASET_FILES.reviews), '{"kind":"review"}\n');
    appendFileSync(join(dir, DATASET_FILES.skips), '{"kind":"skip","schema":"forgeenv.skip/v1"}\n');
    const legacy = await new DatasetStore(dir).readAll();
    const key = (p: { file: string; line: number; kind: string; error: string }) => `${p.file}:${p.line}:${p.kind}:${p.error}`;
    const legacyProblems = legacy.problems
      .filter((p) => !p.file.endsWith(DATASET_FILES.labels))
      .map(key)
      .sort();
    for (const opts of [{ index: false }, {}, {}]) {
      const s = await summarizeDataset(dir, opts);
      assert.equal(s.counts.demonstration_lines, legacy.demonstrations.all.length);
      assert.equal(s.counts.submitted, legacy.demonstrations.current.length);
      assert.equal(s.counts.skipped, legacy.skips.length);
      assert.equal(s.counts.success, legacy.demonstrations.current.filter((r) => r.success).length);
      assert.deepEqual(s.problems.listed.map(key).sort(), legacyProblems);
    }
    assert.ok(legacyProblems.length >= 8, 'the corrupt lines are all reported');
    await assertSameAsCold(dir, 'fixture with corrupt lines');
  });

  test('a corrupt index is ignored and rebuilt', async () => {
    const dir = tempDir();
    await new DatasetStore(dir).appendDemonstration(makeDemo({ n: 1 }));
    await summarizeDataset(dir);
    const { summaryIndexPath } = await import('../../src/store/summaryIndex');
    const { realpathSync } = await import('node:fs');
    writeFileSync(summaryIndexPath(realpathSync(dir)), 'garbage');
    assert.equal((await readSummaryInput(dir)).parsedLines, 1);
    await assertSameAsCold(dir, 'after a corrupt index');
    await clearSummaryIndex(dir);
  });

  test('a few appended lines are parsed again rather than the whole index rewritten, until they add up to 1/64 of it', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    for (let i = 1; i <= 126; i++) await store.appendDemonstration(makeDemo({ n: i, taskId: `t${i % 4}` }));
    assert.equal((await readSummaryInput(dir)).parsedLines, 126, 'built');
    const index = summaryIndexPath(await realpath(dir));
    const saved = readFileSync(index);
    await store.appendDemonstration(makeDemo({ n: 200 }));
    assert.equal((await readSummaryInput(dir)).parsedLines, 1);
    assert.deepEqual(readFileSync(index), saved, '1 line × 64 < 127 rows: the index is not rewritten');
    await assertSameAsCold(dir, 'after one unsaved append');
    await store.appendDemonstration(makeDemo({ n: 201 }));
    assert.equal((await readSummaryInput(dir)).parsedLines, 2, 'the unsaved line is parsed again, with the new one');
    assert.notDeepEqual(readFileSync(index), saved, '2 lines × 64 ≥ 128 rows: now it is saved');
    assert.equal((await readSummaryInput(dir)).parsedLines, 0);
    await assertSameAsCold(dir, 'after the save');
    await clearSummaryIndex(dir);
  });
});

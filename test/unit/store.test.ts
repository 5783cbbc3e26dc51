import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { z } from 'zod';
import { writeFileAtomic, AtomicFileWriter } from '../../src/store/atomicWrite';
import { DatasetStore } from '../../src/store/datasetStore';
import { canonicalJson, recordHash, taskHash } from '../../src/store/hashing';
import { appendJsonl, DatasetWriteError, readJsonlFile, RecordValidationError } from '../../src/store/jsonlFile';
import { DATASET_FILES, labelTargetKey } from '../../src/store/records';
import { diffOf, makeDemo, tempDir, uuidFor } from './storeTestUtils';

const Row = z.object({ i: z.number().int(), pad: z.string() });

describe('jsonl append and read', () => {
  test('round trip keeps order and values', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    await appendJsonl(
      file,
      Row,
      [
        { i: 1, pad: 'a' },
        { i: 2, pad: 'é\n"x"' },
      ],
      'row',
    );
    await appendJsonl(file, Row, [{ i: 3, pad: '' }], 'row');
    const { records, problems } = await readJsonlFile(file, Row);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      records.map((r) => [r.line, r.value.i, r.value.pad]),
      [
        [1, 1, 'a'],
        [2, 2, 'é\n"x"'],
        [3, 3, ''],
      ],
    );
    assert.equal(readFileSync(file, 'utf8').split('\n').length, 4, 'one physical line per record plus the final newline');
  });

  test('invalid records are refused before anything is written', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    await assert.rejects(
      appendJsonl(
        file,
        Row,
        [
          { i: 1, pad: 'ok' },
          { i: 'two', pad: 'x' },
        ],
        'row',
      ),
      (e: unknown) => e instanceof RecordValidationError && /i:/.test(e.message),
    );
    assert.equal(existsSync(file), false);
  });

  test('a torn last line is reported, the next append starts on a fresh line, earlier lines intact', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    await appendJsonl(
      file,
      Row,
      [
        { i: 1, pad: 'a' },
        { i: 2, pad: 'b' },
      ],
      'row',
    );
    const before = readFileSync(file, 'utf8');
    const half = JSON.stringify({ i: 3, pad: 'ccccccc' }).slice(0, 9);
    appendFileSync(file, half);
    let read = await readJsonlFile(file, Row);
    assert.deepEqual(
      read.records.map((r) => r.value.i),
      [1, 2],
    );
    assert.equal(read.problems.length, 1);
    assert.equal(read.problems[0].line, 3);
    assert.equal(read.problems[0].kind, 'truncated');

    await appendJsonl(file, Row, [{ i: 4, pad: 'd' }], 'row');
    const after = readFileSync(file, 'utf8');
    assert.ok(after.startsWith(before), 'earlier bytes untouched');
    assert.equal(after, `${before}${half}\n${JSON.stringify({ i: 4, pad: 'd' })}\n`);
    read = await readJsonlFile(file, Row);
    assert.deepEqual(
      read.records.map((r) => [r.line, r.value.i]),
      [
        [1, 1],
        [2, 2],
        [4, 4],
      ],
    );
    assert.deepEqual(
      read.problems.map((p) => [p.line, p.kind]),
      [[3, 'invalid_json']],
    );
  });

  test('corrupt and foreign lines are reported with file and line, blank lines ignored', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    writeFileSync(
      file,
      ['{"i":1,"pad":"a"}', '{not json', '', '{"kind":"skip","schema":"x"}', '[1,2]', '{"i":5,"pad":"e"}', ''].join('\n'),
    );
    const { records, problems } = await readJsonlFile(file, Row, { what: 'row' });
    assert.deepEqual(
      records.map((r) => r.line),
      [1, 6],
    );
    assert.deepEqual(
      problems.map((p) => [p.file, p.line, p.kind]),
      [
        [file, 2, 'invalid_json'],
        [file, 4, 'schema'],
        [file, 5, 'schema'],
      ],
    );
    assert.match(problems[1].error, /not a valid row/);
  });

  test('lines split across read chunks and multi-byte characters survive', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    const rows = Array.from({ length: 50 }, (_, i) => ({ i, pad: '€ü😀'.repeat(i) }));
    await appendJsonl(file, Row, rows, 'row');
    const { records, problems } = await readJsonlFile(file, Row, { chunkBytes: 7 });
    assert.deepEqual(problems, []);
    assert.deepEqual(
      records.map((r) => r.value),
      rows,
    );
  });

  test('over-long lines are skipped without buffering them', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    writeFileSync(file, `{"i":1,"pad":"a"}\n{"i":2,"pad":"${'x'.repeat(5000)}"}\n{"i":3,"pad":"c"}\n`);
    const { records, problems } = await readJsonlFile(file, Row, { chunkBytes: 64, maxLineBytes: 1000 });
    assert.deepEqual(
      records.map((r) => r.value.i),
      [1, 3],
    );
    assert.deepEqual(
      problems.map((p) => [p.line, p.kind]),
      [[2, 'too_long']],
    );
  });

  test('concurrent appends from one process never interleave', async () => {
    const file = join(tempDir(), 'rows.jsonl');
    const pad = 'y'.repeat(20_000);
    await Promise.all(Array.from({ length: 40 }, (_, i) => appendJsonl(file, Row, [{ i, pad }], 'row')));
    const { records, problems } = await readJsonlFile(file, Row);
    assert.deepEqual(problems, []);
    assert.deepEqual(
      records.map((r) => r.value.i).sort((a, b) => a - b),
      Array.from({ length: 40 }, (_, i) => i),
    );
  });

  test('an unwritable folder gives a clear error that carries the record', async () => {
    const base = tempDir();
    const blocker = join(base, 'not-a-folder');
    writeFileSync(blocker, 'a regular file');
    const dir = join(blocker, 'dataset');
    const store = new DatasetStore(dir);
    const rec = makeDemo({ n: 1 });
    await assert.rejects(store.appendDemonstration(rec), (e: unknown) => {
      assert.ok(e instanceof DatasetWriteError);
      assert.match(e.message, new RegExp(`^Dataset folder ${dir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} is not writable: ENOTDIR`));
      assert.equal(e.code, 'ENOTDIR');
      assert.deepEqual(e.records, [rec]);
      return true;
    });
  });

  test('a SIGKILL mid-append loop leaves every line but possibly the last valid', async () => {
    const dir = tempDir();
    const file = join(dir, 'rows.jsonl');
    const child = join(dir, 'child.ts');
    const modulePath = resolve(__dirname, '../../src/store/jsonlFile.ts');
    writeFileSync(
      child,
      `import { appendJsonl } from ${JSON.stringify(modulePath)};
import { z } from ${JSON.stringify(require.resolve('zod'))};
const Row = z.object({ i: z.number().int(), pad: z.string() });
const pad = 'z'.repeat(100_000);
(async () => { for (let i = 0; ; i++) await appendJsonl(${JSON.stringify(file)}, Row, [{ i, pad }, { i: -i, pad }], 'row'); })();
`,
    );
    const proc = spawn(process.execPath, ['--import', 'tsx', child], { cwd: resolve(__dirname, '../..'), stdio: 'ignore' });
    await new Promise<void>((done, fail) => {
      const started = Date.now();
      const poll = setInterval(() => {
        const size = existsSync(file) ? readFileSync(file).length : 0;
        if (size > 3_000_000) {
          clearInterval(poll);
          proc.kill('SIGKILL');
          done();
        } else if (Date.now() - started > 60_000 || proc.exitCode !== null) {
          clearInterval(poll);
          proc.kill('SIGKILL');
          fail(new Error(`child did not write enough (exit ${proc.exitCode})`));
        }
      }, 20);
    });
    await new Promise((r) => proc.once('exit', r));
    const { records, problems } = await readJsonlFile(file, Row);
    assert.ok(records.length >= 20);
    assert.ok(problems.length <= 1, `at most one bad line, got ${problems.length}`);
    if (problems.length) assert.equal(problems[0].line, records.length + 1, 'only the last line may be torn');
    records.forEach((r, idx) => assert.equal(Math.abs(r.value.i), Math.floor(idx / 2)));
  });
});

describe('atomic writes', () => {
  test('replace the file whole and leave no temp files', async () => {
    const dir = tempDir();
    const target = join(dir, 'out.jsonl');
    await writeFileAtomic(target, 'old\n');
    await writeFileAtomic(target, 'new\n');
    assert.equal(readFileSync(target, 'utf8'), 'new\n');
    assert.deepEqual(readdirSync(dir), ['out.jsonl']);
  });

  test('an aborted writer leaves the previous file untouched', async () => {
    const dir = tempDir();
    const target = join(dir, 'out.jsonl');
    await writeFileAtomic(target, 'keep me\n');
    const w = await AtomicFileWriter.create(target, { flushChars: 4 });
    await w.write('partial rows…');
    await w.abort();
    assert.equal(readFileSync(target, 'utf8'), 'keep me\n');
    assert.deepEqual(readdirSync(dir), ['out.jsonl']);
  });
});

describe('hashing', () => {
  const base = {
    script: 'print(1)\n',
    primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'a', new_name: 'b' } },
    seed: 3,
    library_versions: { transformers: '4.50.0', trl: '0.12.0' },
  };

  test('canonical JSON sorts keys at every level', () => {
    assert.equal(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: 2 }], c: null } }), '{"a":{"c":null,"d":[2,{"y":2,"z":1}]},"b":1}');
    assert.throws(() => canonicalJson({ x: Number.NaN }), /non-finite/);
  });

  test('task hash ignores key order but not content', () => {
    const h = taskHash(base);
    assert.match(h, /^[0-9a-f]{64}$/);
    assert.equal(
      taskHash({
        ...base,
        primitive: { primitive_type: 'RenameApiCall', params: { new_name: 'b', old_name: 'a' } },
        library_versions: { trl: '0.12.0', transformers: '4.50.0' },
      }),
      h,
    );
    assert.notEqual(taskHash({ ...base, seed: 4 }), h);
    assert.notEqual(taskHash({ ...base, script: 'print(2)\n' }), h);
    assert.notEqual(taskHash({ ...base, library_versions: { transformers: '4.45.0', trl: '0.12.0' } }), h);
    assert.notEqual(taskHash({ ...base, primitive: { primitive_type: 'RenameApiCall', params: { old_name: 'a', new_name: 'c' } } }), h);
  });

  test('record hash depends on the exact diff', () => {
    const t = taskHash(base);
    assert.equal(recordHash(t, 'x\n'), recordHash(t, 'x\n'));
    assert.notEqual(recordHash(t, 'x\n'), recordHash(t, 'x\r\n'));
    assert.notEqual(recordHash(t, 'x\n'), recordHash(taskHash({ ...base, seed: 9 }), 'x\n'));
  });
});

describe('DatasetStore', () => {
  test('supersession: a revision replaces the record it names', async () => {
    const store = new DatasetStore(tempDir());
    const r1 = makeDemo({ n: 1, success: false });
    const other = makeDemo({ n: 2, taskId: 'task_b' });
    const r1b = makeDemo({ n: 3, previous: r1, success: true });
    for (const r of [r1, other, r1b]) await store.appendDemonstration(r);
    const snap = await store.readAll();
    assert.equal(r1b.info.revision, 2);
    assert.equal(r1b.info.supersedes, r1.info.record_id);
    assert.equal(r1b.info.episode_id, r1.info.episode_id);
    assert.deepEqual(
      snap.demonstrations.all.map((r) => r.info.record_id),
      [uuidFor(1), uuidFor(2), uuidFor(3)],
    );
    assert.deepEqual(
      snap.demonstrations.current.map((r) => r.info.record_id),
      [uuidFor(2), uuidFor(3)],
    );
    assert.ok(snap.demonstrations.superseded.has(uuidFor(1)));
    assert.deepEqual(snap.problems, []);
    assert.deepEqual(snap.duplicates.taskHashes, [], 'revisions of one episode are not duplicates');
  });

  test('a revision of a different task is refused', () => {
    const r1 = makeDemo({ n: 1 });
    assert.throws(() => makeDemo({ n: 2, previous: r1, seed: 99 }), /same task/);
  });

  test('latest review per record and latest label per target win', async () => {
    const store = new DatasetStore(tempDir());
    const rid = uuidFor(1);
    await store.appendReview({ record_id: rid, reviewer: 'bob', verdict: 'approve', at: '2025-03-02T10:00:00Z' });
    await store.appendReview({ record_id: rid, reviewer: 'carol', verdict: 'reject', comment: 'hack', at: '2025-03-02T12:00:00+01:00' });
    // carol's 12:00+01:00 is 11:00Z, so dan (11:30Z) is latest, though comparing strings would pick carol.
    await store.appendReview({ record_id: rid, reviewer: 'dan', verdict: 'approve', at: '2025-03-02T11:30:00Z' });
    await store.appendReview({ record_id: uuidFor(2), reviewer: 'bob', verdict: 'reject', at: '2025-03-02T10:00:00Z' });
    await store.appendLabel({
      target: { type: 'task', task_id: 'task_a' },
      difficulty: 1,
      tags: ['easy'],
      confidence: 3,
      labeler: 'bob',
      at: '2025-03-02T10:00:00Z',
    });
    await store.appendLabel({
      target: { type: 'task', task_id: 'task_a' },
      difficulty: 3,
      tags: [],
      confidence: 5,
      labeler: 'bob',
      at: '2025-03-03T10:00:00Z',
    });
    await store.appendLabel({ target: { type: 'demonstration', record_id: rid }, difficulty: 2, confidence: 4, labeler: 'eve' });
    const snap = await store.readAll();
    assert.equal(snap.reviews.all.length, 4);
    assert.equal(snap.reviews.latest.get(rid)?.reviewer, 'dan');
    assert.equal(snap.reviews.latest.get(uuidFor(2))?.verdict, 'reject');
    assert.equal(snap.labels.latest.get(labelTargetKey({ type: 'task', task_id: 'task_a' }))?.difficulty, 3);
    assert.equal(snap.labels.latest.get(`demonstration:${rid}`)?.labeler, 'eve');
    assert.equal(snap.labels.all.length, 3);
  });

  test('equal timestamps: the later line wins', async () => {
    const store = new DatasetStore(tempDir());
    const at = '2025-03-02T10:00:00Z';
    await store.appendReview({ record_id: uuidFor(1), reviewer: 'a', verdict: 'reject', at });
    await store.appendReview({ record_id: uuidFor(1), reviewer: 'b', verdict: 'approve', at });
    assert.equal((await store.readAll()).reviews.latest.get(uuidFor(1))?.reviewer, 'b');
  });

  test('duplicate record hashes, task hashes and repeated ids are flagged', async () => {
    const store = new DatasetStore(tempDir());
    const a = makeDemo({ n: 1, annotator: 'alice' });
    const sameAnswer = makeDemo({ n: 2, annotator: 'bob' });
    const otherAnswer = makeDemo({ n: 3, annotator: 'carol', diff: diffOf(2, 0) });
    const otherTask = makeDemo({ n: 4, seed: 8 });
    for (const r of [a, sameAnswer, otherAnswer, otherTask, a]) await store.appendDemonstration(r);
    const snap = await store.readAll();
    assert.deepEqual(snap.duplicates.recordHashes, [{ hash: a.info.record_hash, record_ids: [uuidFor(1), uuidFor(2)] }]);
    assert.deepEqual(snap.duplicates.taskHashes, [{ hash: a.info.task_hash, record_ids: [uuidFor(1), uuidFor(2), uuidFor(3)] }]);
    assert.deepEqual(snap.duplicates.recordIds, [uuidFor(1)]);
    assert.equal(snap.demonstrations.current.length, 4, 'a repeated record id counts once');
  });

  test('a record whose diff was edited after scoring is reported, not used', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    const good = makeDemo({ n: 1 });
    await store.appendDemonstration(good);
    const tampered = { ...makeDemo({ n: 2 }), repair_completion: diffOf(5, 5) };
    await assert.rejects(store.appendDemonstration(tampered), /record_hash/);
    appendFileSync(join(dir, DATASET_FILES.demonstrations), JSON.stringify(tampered) + '\n');
    appendFileSync(join(dir, DATASET_FILES.demonstrations), JSON.stringify({ kind: 'review', schema: 'forgeenv.review/v1' }) + '\n');
    const snap = await store.readAll();
    assert.deepEqual(
      snap.demonstrations.all.map((r) => r.info.record_id),
      [uuidFor(1)],
    );
    assert.deepEqual(
      snap.problems.map((p) => [p.file, p.line, p.kind]),
      [
        [join(dir, DATASET_FILES.demonstrations), 2, 'inconsistent'],
        [join(dir, DATASET_FILES.demonstrations), 3, 'schema'],
      ],
    );
    assert.match(snap.problems[1].error, /foreign line: a "review" record, not a demonstration/);
  });

  test('schema invariants: revision/supersedes pairing and matching task ids', async () => {
    const store = new DatasetStore(tempDir());
    const r = makeDemo({ n: 1 });
    await assert.rejects(store.appendDemonstration({ ...r, info: { ...r.info, revision: 2 } }), /supersedes/);
    await assert.rejects(store.appendDemonstration({ ...r, task_id: 'task_z' }), /info\.task_id/);
    await assert.rejects(store.appendDemonstration({ ...r, info: { ...r.info, timeline_file: '../escape.jsonl' } }), /timeline_file/);
    const extra = { ...r, info: { ...r.info, repair_apply: { ok: true, mode: 'strict' } } };
    await store.appendDemonstration(extra);
    const snap = await store.readAll();
    assert.deepEqual(snap.demonstrations.all[0].info.repair_apply, { ok: true, mode: 'strict' }, 'extra info keys pass through');
  });

  test('skips and timelines round trip; bad episode ids are refused', async () => {
    const dir = tempDir();
    const store = new DatasetStore(dir);
    await store.appendSkip({
      episode_id: 'ep-9',
      task_id: 'task_a',
      primitive: { primitive_type: 'DeprecateImport', params: {} },
      reason: 'too_hard',
      annotator_id: 'alice',
    });
    await assert.rejects(
      store.appendSkip({
        episode_id: 'ep-9',
        task_id: 'task_a',
        primitive: { primitive_type: 'X', params: {} },
        reason: 'bored' as never,
        annotator_id: 'alice',
      }),
      /reason/,
    );
    await store.appendTimelineEvents('ep-9', [
      { t_ms: 0, kind: 'focus' },
      {
        t_ms: 150,
        kind: 'change',
        changes: [{ range: { start: { line: 3, character: 0 }, end: { line: 3, character: 4 } }, text: 'eval' }],
        file: 'train.py',
      },
    ]);
    await store.appendTimelineEvents('ep-9', [{ t_ms: 900, kind: 'run' }]);
    const tl = await store.readTimeline('ep-9');
    assert.deepEqual(
      tl.events.map((e) => e.kind),
      ['focus', 'change', 'run'],
    );
    assert.equal(tl.events[1].file, 'train.py');
    assert.ok(existsSync(join(dir, 'timelines', 'ep-9.jsonl')));
    await assert.rejects(store.appendTimelineEvents('../../etc/passwd', [{ t_ms: 0, kind: 'run' }]), /Invalid episode id/);
    const snap = await store.readAll();
    assert.equal(snap.skips.length, 1);
    assert.equal(snap.skips[0].note, '');
  });

  test('an empty or missing folder reads as an empty snapshot', async () => {
    const snap = await new DatasetStore(join(tempDir(), 'nothing-here')).readAll();
    assert.equal(snap.demonstrations.all.length, 0);
    assert.equal(snap.problems.length, 0);
  });
});

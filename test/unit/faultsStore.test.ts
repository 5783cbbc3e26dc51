import { strict as assert } from 'node:assert';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { hostname } from 'node:os';
import { acquireDirLock } from '../../src/env/dirLock';
import { mulberry32 } from '../../src/env/random';
import { appendJsonl, appendLockPath, DatasetWriteError, readJsonlFile } from '../../src/store/jsonlFile';
import { WriterRow } from '../fixtures/store/appendWriter';
import { tempDir } from './storeTestUtils';

// The store under concurrency and crashes, with real child processes appending through the real
// code path (test/fixtures/store/appendWriter.ts): killed with SIGKILL at random moments, and
// two at once on one file.
const ROOT = resolve(__dirname, '../..');
const WRITER = join(ROOT, 'test/fixtures/store/appendWriter.ts');

function startWriter(file: string, id: string, count: number, seed: number, bigEvery = 8): ChildProcess {
  return spawn(process.execPath, ['--require', 'tsx/cjs', WRITER, file, id, String(count), String(seed), String(bigEvery)], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** Resolves when the child prints `word` on a line; rejects if it exits first. */
function waitForLine(child: ChildProcess, word: string, timeoutMs = 60_000): Promise<void> {
  return new Promise((done, fail) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => fail(new Error(`no "${word}" from the writer within ${timeoutMs} ms: ${err}`)), timeoutMs);
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.split('\n').includes(word)) {
        clearTimeout(timer);
        done();
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (!out.split('\n').includes(word)) fail(new Error(`the writer exited (${code}) before "${word}": ${err}`));
    });
  });
}

const exited = (child: ChildProcess) =>
  new Promise<number | null>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r(child.exitCode) : child.once('exit', (c) => r(c)),
  );
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Groups the valid records by writer and checks each writer's sequence is 0, 1, 2, … with no gap. */
function sequencesByWriter(records: Array<{ value: { w: string; seq: number } }>): Map<string, number> {
  const next = new Map<string, number>();
  for (const { value } of records) {
    const expected = next.get(value.w) ?? 0;
    assert.equal(value.seq, expected, `writer ${value.w}: record ${value.seq} where ${expected} was next (a line lost or out of order)`);
    next.set(value.w, expected + 1);
  }
  return next;
}

describe('store faults: kill -9', () => {
  test(
    'a writer killed 30 times at random moments never changes an earlier byte and loses at most the line being written',
    { timeout: 300_000 },
    async (t) => {
      const file = join(tempDir(), 'rows.jsonl');
      const rng = mulberry32(4242);
      const KILLS = 30;
      let before = Buffer.alloc(0);
      for (let run = 0; run < KILLS; run++) {
        const child = startWriter(file, `run${run}`, 0, run + 1);
        await waitForLine(child, 'ready');
        await sleep(Math.floor(rng() * 120));
        child.kill('SIGKILL');
        await exited(child);
        // A kill rarely lands inside one write() (the kernel copies a few hundred KiB in well under a
        // millisecond), so every tenth run also leaves what such a kill leaves: half a record, no newline.
        if (run % 10 === 9) appendFileSync(file, JSON.stringify({ w: `run${run}`, seq: 99_999, pad: 'torn' }).slice(0, 20));
        const now = readFileSync(file);
        assert.ok(now.length >= before.length, `run ${run}: the file shrank`);
        assert.ok(now.subarray(0, before.length).equals(before), `run ${run}: a byte written before this run changed`);
        before = now;
      }
      // A later append (this process) takes over the lock the last victim may have left behind.
      await appendJsonl(file, WriterRow, [{ w: 'final', seq: 0, pad: '' }], 'row');
      assert.ok(readFileSync(file).subarray(0, before.length).equals(before));

      const { records, problems } = await readJsonlFile(file, WriterRow);
      const counts = sequencesByWriter(records);
      for (let run = 0; run < KILLS; run++) assert.ok((counts.get(`run${run}`) ?? 0) >= 1, `run ${run} wrote its first record`);
      assert.equal(counts.get('final'), 1);
      assert.ok(
        problems.length >= 3 && problems.length <= KILLS,
        `the three simulated torn lines, and at most one per kill (${problems.length})`,
      );
      const byLine = new Map(records.map((r) => [r.line, r.value]));
      for (const p of problems) {
        assert.ok(p.kind === 'invalid_json' || p.kind === 'truncated', `${p.kind}: ${p.error}`);
        // A torn line is the victim's last: the next line is the next writer's first record (or the final one).
        const next = byLine.get(p.line + 1);
        assert.ok(next && next.seq === 0, `line ${p.line + 1} after a torn line starts a new writer`);
      }
      t.diagnostic(`${records.length} whole records, ${problems.length} torn lines over ${KILLS} kills, ${before.length} bytes`);
    },
  );
});

describe('store faults: concurrent writers', () => {
  test('two writer processes appending 1,000 records each at once keep every line whole and in order', { timeout: 300_000 }, async (t) => {
    const file = join(tempDir(), 'rows.jsonl');
    const a = startWriter(file, 'A', 1000, 11, 50);
    const b = startWriter(file, 'B', 1000, 12, 50);
    const [ca, cb] = await Promise.all([exited(a), exited(b)]);
    assert.equal(ca, 0);
    assert.equal(cb, 0);
    const { records, problems } = await readJsonlFile(file, WriterRow);
    assert.deepEqual(problems, []);
    const counts = sequencesByWriter(records);
    assert.equal(counts.get('A'), 1000);
    assert.equal(counts.get('B'), 1000);
    const text = readFileSync(file, 'utf8');
    assert.equal(text.split('\n').length, 2001, 'one physical line per record');
    let switches = 0;
    for (let i = 1; i < records.length; i++) if (records[i].value.w !== records[i - 1].value.w) switches++;
    t.diagnostic(`${switches} switches between writers`);
    assert.ok(switches > 1, 'the writers really ran at the same time');
  });

  test('an append waits while another process holds the dataset lock', { timeout: 120_000 }, async () => {
    const file = join(tempDir(), 'rows.jsonl');
    const release = await acquireDirLock(appendLockPath(file), { abortError: () => new Error('aborted') });
    const child = startWriter(file, 'W', 1, 1, 0);
    try {
      await waitForLine(child, 'start');
      await sleep(400);
      assert.equal(existsSync(file) ? readFileSync(file, 'utf8') : '', '', 'nothing written while the lock is held');
      assert.equal(child.exitCode, null, 'the writer is still waiting');
    } finally {
      release();
    }
    assert.equal(await exited(child), 0);
    const { records } = await readJsonlFile(file, WriterRow);
    assert.deepEqual(
      records.map((r) => r.value.w),
      ['W'],
    );
  });

  test('a lock left by a dead process is taken over; one held by a live process times out with the records kept', async () => {
    const dir = tempDir();
    const file = join(dir, 'rows.jsonl');
    const dead = spawn(process.execPath, ['-e', '0']);
    await exited(dead);
    mkdirSync(appendLockPath(file));
    writeFileSync(join(appendLockPath(file), 'pid'), JSON.stringify({ pid: dead.pid, host: hostname(), token: 'x' }));
    await appendJsonl(file, WriterRow, [{ w: 'after-dead', seq: 0, pad: '' }], 'row');
    assert.equal(existsSync(appendLockPath(file)), false, 'released after the append');

    const release = await acquireDirLock(appendLockPath(file), { abortError: () => new Error('aborted') });
    try {
      const rec = { w: 'blocked', seq: 0, pad: '' };
      await assert.rejects(appendJsonl(file, WriterRow, [rec], 'row', { lockTimeoutMs: 200 }), (e: unknown) => {
        assert.ok(e instanceof DatasetWriteError);
        assert.equal(e.code, 'ELOCKED');
        assert.match(e.message, /is busy: process \d+ has been appending/);
        assert.deepEqual(e.records, [rec]);
        return true;
      });
    } finally {
      release();
    }
    const { records } = await readJsonlFile(file, WriterRow);
    assert.deepEqual(
      records.map((r) => r.value.w),
      ['after-dead'],
    );
  });
});

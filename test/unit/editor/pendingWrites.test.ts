import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { PendingWrites, type KeyValueStore } from '../../../src/editor/episode/pendingWrites';

const root = mkdtempSync(join(tmpdir(), 'forgeenv-pending-'));
after(() => rmSync(root, { recursive: true, force: true }));

function memento(): KeyValueStore & { data: Map<string, unknown> } {
  const data = new Map<string, unknown>();
  return {
    data,
    get: <T>(k: string) => structuredClone(data.get(k)) as T | undefined,
    update: async (k, v) => void data.set(k, structuredClone(v)),
  };
}

const skip = (episode_id: string) => ({
  episode_id,
  task_id: 'task_a',
  primitive: { primitive_type: 'RenameApiCall', params: {} },
  reason: 'too_hard',
  note: 'n',
  annotator_id: 'me',
});
const events = [
  { t_ms: 1, kind: 'change' as const },
  { t_ms: 2, kind: 'run' as const, n: 1 },
];

describe('PendingWrites', () => {
  test('a successful write stores timeline then record and empties the queue', async () => {
    const dir = join(root, 'ok');
    const q = new PendingWrites(memento());
    const p = await q.enqueue({
      kind: 'skip',
      datasetDir: dir,
      episodeId: 'ep-1',
      taskId: 'task_a',
      record: skip('ep-1'),
      timeline: events,
    });
    const out = await q.attempt(p.id);
    assert.equal(out.ok, true);
    assert.equal(q.list().length, 0);
    const skips = readFileSync(join(dir, 'skips.jsonl'), 'utf8').trim().split('\n');
    assert.equal(skips.length, 1);
    assert.equal(JSON.parse(skips[0]).reason, 'too_hard');
    assert.equal(readFileSync(join(dir, 'timelines/ep-1.jsonl'), 'utf8').trim().split('\n').length, 2);
  });

  test('an unwritable folder keeps the record (surviving a new instance) and a retry elsewhere writes the timeline once', async () => {
    const blocker = join(root, 'a-file');
    writeFileSync(blocker, 'not a folder');
    const store = memento();
    const q = new PendingWrites(store);
    const p = await q.enqueue({
      kind: 'skip',
      datasetDir: join(blocker, 'dataset'),
      episodeId: 'ep-2',
      taskId: 'task_a',
      record: skip('ep-2'),
      timeline: events,
    });
    const failed = await q.attempt(p.id);
    assert.equal(failed.ok, false);
    assert.ok(!failed.ok && failed.kind === 'not_writable', 'reported as not writable');
    const again = new PendingWrites(store).list();
    assert.equal(again.length, 1, 'still queued for a later session');
    assert.match(again[0].lastError ?? '', /not writable/);
    const dir = join(root, 'elsewhere');
    const ok = await new PendingWrites(store).attempt(p.id, dir);
    assert.equal(ok.ok, true);
    assert.equal(readFileSync(join(dir, 'timelines/ep-2.jsonl'), 'utf8').trim().split('\n').length, 2);
    assert.equal(new PendingWrites(store).list().length, 0);
  });

  test('an invalid record is never dropped', async () => {
    const q = new PendingWrites(memento());
    const p = await q.enqueue({
      kind: 'skip',
      datasetDir: join(root, 'inv'),
      episodeId: 'ep-3',
      taskId: 'task_a',
      record: { nope: true },
      timeline: [],
    });
    const out = await q.attempt(p.id);
    assert.ok(!out.ok && out.kind === 'invalid');
    assert.equal(q.list().length, 1);
    assert.equal(existsSync(join(root, 'inv', 'skips.jsonl')), false);
  });

  test('an invalid record with a timeline leaves no orphan timeline behind', async () => {
    const q = new PendingWrites(memento());
    const p = await q.enqueue({
      kind: 'skip',
      datasetDir: join(root, 'inv2'),
      episodeId: 'ep-4',
      taskId: 'task_a',
      record: { nope: true },
      timeline: events,
    });
    const out = await q.attempt(p.id);
    assert.ok(!out.ok && out.kind === 'invalid');
    assert.equal(existsSync(join(root, 'inv2', 'timelines', 'ep-4.jsonl')), false);
  });
});

describe('PendingWrites concurrency', () => {
  test('two racing attempts on one entry write the record once', async () => {
    const dir = join(root, 'race');
    const store = memento();
    const p = await new PendingWrites(store).enqueue({
      kind: 'skip',
      datasetDir: dir,
      episodeId: 'ep-5',
      taskId: 'task_a',
      record: skip('ep-5'),
      timeline: events,
    });
    const [a, b] = await Promise.all([new PendingWrites(store).attempt(p.id), new PendingWrites(store).attempt(p.id)]);
    assert.equal([a, b].filter((o) => o.ok).length, 1, 'exactly one attempt wrote it');
    assert.equal(readFileSync(join(dir, 'skips.jsonl'), 'utf8').trim().split('\n').length, 1);
    assert.equal(readFileSync(join(dir, 'timelines/ep-5.jsonl'), 'utf8').trim().split('\n').length, 2);
  });
});

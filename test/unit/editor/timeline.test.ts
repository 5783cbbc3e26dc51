import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { TimelineRecorder, readTimelineFile } from '../../../src/editor/episode/timeline';

const root = mkdtempSync(join(tmpdir(), 'forgeenv-timeline-'));
after(() => rmSync(root, { recursive: true, force: true }));

describe('TimelineRecorder', () => {
  test('batches events into one file, timestamped from the episode start', async () => {
    let now = 5_000;
    const file = join(root, 'a', '.timeline.jsonl');
    const r = new TimelineRecorder({ file, startedAtMs: 1_000, now: () => now, flushDelayMs: 60_000 });
    r.record({ kind: 'change', changes: [{ range: { start: { line: 0, character: 0 }, end: { line: 0, character: 1 } }, text: 'x' }] });
    now = 6_500;
    r.record({ kind: 'run', n: 1, reward: 1.8 });
    assert.equal(r.pending, 2);
    await r.flush();
    assert.equal(r.written, 2);
    const { events, skipped } = await readTimelineFile(file);
    assert.equal(skipped, 0);
    assert.deepEqual(
      events.map((e) => [e.kind, e.t_ms]),
      [
        ['change', 4000],
        ['run', 5500],
      ],
    );
    assert.equal(events[1].reward, 1.8, 'extra keys are kept');
  });

  test('a failed flush keeps the events and retries; a resumed recorder continues the count', async () => {
    const blocker = join(root, 'blocker');
    writeFileSync(blocker, '');
    const errors: Error[] = [];
    const r = new TimelineRecorder({ file: join(blocker, 'x.jsonl'), startedAtMs: 0, written: 7, onError: (e) => errors.push(e) });
    r.record({ kind: 'focus' });
    await r.flush();
    assert.equal(errors.length, 1);
    assert.equal(r.pending, 1);
    assert.equal(r.written, 7);
  });

  test('a torn last line is skipped, not fatal', async () => {
    const file = join(root, 'torn.jsonl');
    writeFileSync(file, JSON.stringify({ t_ms: 1, kind: 'save' }) + '\n');
    appendFileSync(file, '{"t_ms": 2, "ki');
    const { events, skipped } = await readTimelineFile(file);
    assert.equal(events.length, 1);
    assert.equal(skipped, 1);
    assert.deepEqual(await readTimelineFile(join(root, 'missing.jsonl')), { events: [], skipped: 0 });
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { RunStream } from '../../../src/editor/episode/runStream';

describe('RunStream', () => {
  test('batches chunks into few appends and keeps their order', async () => {
    const appended: string[] = [];
    const s = new RunStream({ append: (t: string) => void appended.push(t) }, 1000, 20);
    for (let i = 0; i < 50; i++) s.write('stdout', `${i},`);
    await new Promise((r) => setTimeout(r, 60));
    assert.equal(appended.length, 1);
    assert.equal(appended[0], Array.from({ length: 50 }, (_, i) => `${i},`).join(''));
  });

  test('stops at the limit with a pointer to the full output', () => {
    const appended: string[] = [];
    const s = new RunStream({ append: (t: string) => void appended.push(t) }, 100, 1000);
    s.write('stdout', 'x'.repeat(80));
    s.write('stderr', 'y'.repeat(80));
    s.write('stdout', 'z'.repeat(80));
    s.flush();
    const text = appended.join('');
    const [shown, note] = text.split('\n…');
    assert.equal(shown, 'x'.repeat(80) + 'y'.repeat(20), 'exactly the first 100 characters');
    assert.ok(note && !note.includes('zzz'), 'nothing after the cut');
    assert.match(text, /Show Last Run Output/);
  });
});

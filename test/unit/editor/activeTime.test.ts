import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ActiveTimeTracker, formatElapsed } from '../../../src/editor/episode/activeTime';

function clock(start = 1_000_000) {
  let t = start;
  return { now: () => t, advance: (ms: number) => void (t += ms) };
}

describe('ActiveTimeTracker', () => {
  test('counts only while focused', () => {
    const c = clock();
    const a = new ActiveTimeTracker({ now: c.now, idleMs: 60_000 });
    c.advance(10_000);
    assert.equal(a.activeMs, 0, 'not focused yet');
    a.setFocused(true);
    c.advance(5_000);
    assert.equal(a.activeMs, 5_000);
    a.setFocused(false);
    c.advance(30_000);
    assert.equal(a.activeMs, 5_000, 'blurred time is not counted');
    a.setFocused(true);
    c.advance(2_000);
    assert.equal(a.activeMs, 7_000);
  });

  test('stops the clock after the idle threshold and restarts on activity', () => {
    const c = clock();
    const a = new ActiveTimeTracker({ now: c.now, idleMs: 60_000 });
    a.setFocused(true);
    c.advance(45_000);
    assert.equal(a.activeMs, 45_000, 'a pause shorter than the threshold counts');
    c.advance(5 * 60_000);
    assert.equal(a.activeMs, 60_000, 'only the first 60 s of a long pause count');
    assert.equal(a.isCounting, false);
    a.activity();
    c.advance(10_000);
    assert.equal(a.activeMs, 70_000);
    assert.equal(a.isCounting, true);
  });

  test('resumes from an initial value and ignores activity while blurred', () => {
    const c = clock();
    const a = new ActiveTimeTracker({ now: c.now, idleMs: 1000, initialMs: 12_345 });
    a.activity();
    c.advance(500);
    assert.equal(a.activeMs, 12_345);
    a.setFocused(true);
    c.advance(800);
    a.activity();
    c.advance(800);
    assert.equal(a.activeMs, 12_345 + 1600);
  });
});

describe('formatElapsed', () => {
  test('minutes and hours', () => {
    assert.equal(formatElapsed(0), '0:00');
    assert.equal(formatElapsed(42_900), '0:42');
    assert.equal(formatElapsed(309_000), '5:09');
    assert.equal(formatElapsed(3_909_000), '1:05:09');
  });
});

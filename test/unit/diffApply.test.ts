import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { applyPatch, structuredPatch } from 'diff';
import { applyHunks, WorkBudget, WorkBudgetExceeded } from '../../src/env/diff/diffApply';
import { mulberry32, randomIndex } from '../../src/env/random';

// applyHunks must give exactly jsdiff's answer for every in-range diff (it replaces jsdiff's
// applyPatch only to bound the work). Random scripts over a small vocabulary (so lines repeat and
// hunks have several candidate places), random edits, then the diff applied to the script and to
// perturbed copies of it (hunks shifted, context changed, lines missing). Only claims inside the
// script are compared: past its end jsdiff pads with blank lines where applyHunks clamps.
// Few distinct lines (one differing only in trailing spaces), so hunks fit in several places.
const VOCAB = ['x = 1', 'y = 2', '', 'print(x)', 'x = 1  '];

function randomScript(rng: () => number, n: number): string {
  const lines = Array.from({ length: n }, () => VOCAB[randomIndex(rng, VOCAB.length)]);
  return lines.join('\n') + (rng() < 0.8 ? '\n' : '');
}

function edit(rng: () => number, text: string, edits: number): string {
  const lines = text.split('\n');
  for (let k = 0; k < edits; k++) {
    const i = randomIndex(rng, lines.length);
    const r = rng();
    if (r < 0.4) lines[i] = `changed_${k} = ${i}`;
    else if (r < 0.7) lines.splice(i, 0, `added_${k}()`);
    else if (lines.length > 2) lines.splice(i, 1);
  }
  return lines.join('\n');
}

const trimEnd = (l: string) => l.trimEnd();
const jsdiffTrimEnd = (_n: number, line: string | undefined, _op: string, content: string) =>
  typeof line === 'string' && line.trimEnd() === content.trimEnd();

describe('applyHunks agrees with jsdiff', () => {
  test('exact and fuzzy application over 3,000 random cases', () => {
    const rng = mulberry32(20240611);
    let compared = 0;
    let applied = 0;
    for (let c = 0; c < 1000; c++) {
      const before = randomScript(rng, 5 + randomIndex(rng, 40));
      const after = edit(rng, before, 1 + randomIndex(rng, 4));
      if (before === after) continue;
      const patch = structuredPatch('a', 'b', before, after, undefined, undefined, { context: randomIndex(rng, 4) });
      for (const source of [before, edit(rng, before, 1), edit(rng, before, 3)]) {
        const lastLine = source.split('\n').length - 1;
        if (patch.hunks.some((h) => h.oldStart + h.oldLines > lastLine)) continue;
        const exact = applyHunks(source, patch.hunks, { budget: new WorkBudget(1e9) });
        assert.equal(exact, applyPatch(source, patch), `exact, case ${c}`);
        for (const hunk of patch.hunks) {
          const fuzzy = applyHunks(source, [hunk], { fuzz: 2, key: trimEnd, budget: new WorkBudget(1e9) });
          const expected = applyPatch(source, { ...patch, hunks: [hunk] }, { fuzzFactor: 2, compareLine: jsdiffTrimEnd });
          assert.equal(fuzzy, expected, `fuzzy, case ${c}`);
          if (fuzzy !== false) applied++;
        }
        compared++;
      }
    }
    assert.ok(compared > 1500, `compared ${compared}`);
    assert.ok(applied > 500, `some fuzzy hunks applied (${applied})`);
  });
});

describe('applyHunks bounds', () => {
  const script = Array.from({ length: 300 }, (_, i) => `line ${i}`).join('\n') + '\n';

  test('a claimed start far past the end costs no more than the script is long', () => {
    for (const start of [1e6, 1e20, Number.MAX_VALUE, Infinity]) {
      const budget = new WorkBudget(1e9);
      const r = applyHunks(script, [{ oldStart: start, oldLines: 3, lines: [' line 10', '-line 11', '+LINE 11', ' line 12'] }], { budget });
      assert.ok(r !== false && r.includes('LINE 11\nline 12'), `applied for start ${start}`);
      assert.ok(budget.spent < 3000, `start ${start}: ${budget.spent} steps`);
    }
  });

  test('an insertion claimed past the end goes where jsdiff puts one claimed just past it, without padding', () => {
    const budget = new WorkBudget(1e6);
    const r = applyHunks('a\nb\n', [{ oldStart: 1e20, oldLines: 0, lines: ['+c'] }], { budget });
    assert.equal(r, applyPatch('a\nb\n', '@@ -3,0 +4,1 @@\n+c\n'));
    assert.ok(budget.spent < 50, `${budget.spent} steps`);
  });

  test('the budget stops a search and says so', () => {
    const hunk = { oldStart: 1, oldLines: 3, lines: [' nowhere', '-line 5', ' line 6'] };
    assert.throws(() => applyHunks(script, [hunk], { fuzz: 2, key: trimEnd, budget: new WorkBudget(500) }), WorkBudgetExceeded);
    const budget = new WorkBudget(1e9);
    applyHunks(script, [hunk], { fuzz: 2, key: trimEnd, budget });
    assert.ok(budget.spent > 500, `the full search needs more (${budget.spent})`);
  });
});

import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  applyRepairDiff,
  applyRepairDiffCounted,
  createRepairDiff,
  DEFAULT_MAX_DIFF_BYTES,
  DIFF_WORK_BUDGET,
  stripFence,
} from '../../src/env/diff/diff';
import { applyRepairDiffAsync, INLINE_STEPS, type AsyncApplyInfo } from '../../src/env/diff/diffAsync';

// Hostile repair submissions: each attack of issue 11 and its outcome. Work is asserted with the
// step counter (applyRepairDiffCounted), never with wall-clock time, except for a generous test
// timeout where the old code hung for minutes.
const SCRIPT = Array.from({ length: 300 }, (_, i) => `x${i} = ${i}`).join('\n') + '\n';
const FIX = '@@ -%START%,3 +%START%,3 @@\n x10 = 10\n-x11 = 11\n+x11 = 111\n x12 = 12\n';
const fixAt = (start: string) => FIX.replaceAll('%START%', start);

describe('diff faults: hunk positions', () => {
  test('a hunk header claiming line 99999999999999999999 is answered in a few hundred steps and still applies', () => {
    const near = applyRepairDiffCounted(SCRIPT, fixAt('11'));
    for (const start of ['1000000', '99999999999999999999', '9'.repeat(400)]) {
      const { result, cost } = applyRepairDiffCounted(SCRIPT, fixAt(start));
      assert.ok(result.ok && result.script.includes('x11 = 111\n'), `start ${start.slice(0, 20)}: ${!result.ok ? result.error : ''}`);
      // The claimed start costs nothing: the search starts at the end of the script, not at the claim.
      assert.ok(cost.steps < 2000, `start ${start.slice(0, 20)}: ${cost.steps} steps`);
      assert.ok(
        cost.steps <= near.cost.steps + 2 * 300 + 50,
        `no more than a pass over the script beyond a correct claim (${cost.steps} vs ${near.cost.steps})`,
      );
    }
  });

  test('an insertion claimed far past the end lands at the end, not after 10^20 blank lines', () => {
    const { result, cost } = applyRepairDiffCounted(SCRIPT, '@@ -99999999999999999999,0 +99999999999999999999,1 @@\n+print("end")\n');
    assert.ok(result.ok, !result.ok ? result.error : '');
    assert.ok(result.script.length < SCRIPT.length + 20);
    assert.ok(result.script.includes('print("end")'));
    assert.ok(cost.steps < 2000, `${cost.steps} steps`);
  });
});

describe('diff faults: size', () => {
  test('a 50 MB diff is refused at once, before any parsing', () => {
    const { result, cost } = applyRepairDiffCounted(SCRIPT, '+x\n'.repeat((50 * 1024 * 1024) / 3));
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error : '', /^the submission is at least 50\.0 MiB, over the 2\.0 MiB limit; nothing was applied$/);
    assert.equal(cost.steps, 0);
  });

  test('the limit is in UTF-8 bytes and follows the option', () => {
    const wide = 'é'.repeat(DEFAULT_MAX_DIFF_BYTES / 2 + 10); // fewer characters than the limit, more bytes
    const r = applyRepairDiff(SCRIPT, wide);
    assert.match(!r.ok ? r.error : '', /over the 2\.0 MiB limit/);
    assert.equal(applyRepairDiff(SCRIPT, fixAt('11'), { maxBytes: 20 }).ok, false);
    assert.equal(applyRepairDiff(SCRIPT, fixAt('11'), { maxBytes: 4096 }).ok, true);
  });

  test('1 MB of non-matching hunks stays within the work budget and gives a short error', () => {
    let sub = '';
    for (let i = 0; sub.length < 1_000_000; i++)
      sub += `@@ -${(i % 300) + 1},3 +1,3 @@\n x${i % 300} = ${i % 300}\n-nothing_${i} = 0\n+y = 1\n x${(i + 2) % 300} = 5\n`;
    const { result, cost } = applyRepairDiffCounted(SCRIPT, sub);
    assert.equal(result.ok, false);
    assert.ok(cost.steps <= 2 * DIFF_WORK_BUDGET, `${cost.steps} steps`);
    const error = !result.ok ? result.error : '';
    assert.ok(error.length < 1500, `error is ${error.length} characters`);
    assert.match(error, /and \d+ more$/);
  });

  test('hunks whose lines all exist but never in order exhaust the budget and say so', () => {
    let sub = '';
    for (let i = 0; sub.length < 200_000; i++) {
      const a = (i * 7) % 300;
      sub += `@@ -${a + 1},4 +${a + 1},4 @@\n x${(a + 5) % 300} = ${(a + 5) % 300}\n x${(a + 9) % 300} = ${(a + 9) % 300}\n-x${(a + 2) % 300} = ${(a + 2) % 300}\n+z = 0\n x${(a + 13) % 300} = ${(a + 13) % 300}\n x${a} = ${a}\n`;
    }
    const { result, cost } = applyRepairDiffCounted(SCRIPT, sub);
    assert.ok(cost.budgetHit, 'the budget was reached');
    assert.ok(cost.steps <= 2 * DIFF_WORK_BUDGET + 10_000, `${cost.steps} steps`);
    assert.equal(result.ok, false);
    assert.match(!result.ok ? result.error : '', /work limit/);
  });

  test('quoted content is cut: a hunk with a 100 KB line gives an error of a few hundred characters', () => {
    const r = applyRepairDiff(SCRIPT, `@@ -1,1 +1,1 @@\n-${'q'.repeat(100_000)}\n+x\n`);
    assert.equal(r.ok, false);
    assert.ok(!r.ok && r.error.length < 400, !r.ok ? `${r.error.length}` : '');
    assert.match(!r.ok ? r.error : '', /"-q{79}…"/);
  });

  test('a fenced submission with a 200 KB first line is answered (the old fence regex was quadratic)', { timeout: 20_000 }, () => {
    const r = applyRepairDiff(SCRIPT, '```' + 'a'.repeat(200_000));
    assert.equal(r.ok, false);
  });
});

describe('diff faults: file operations', () => {
  const refused: Array<[string, string, RegExp]> = [
    [
      'a new file',
      'diff --git a/x.py b/x.py\nnew file mode 100644\n--- /dev/null\n+++ b/x.py\n@@ -0,0 +1 @@\n+print(1)\n',
      /creates a new file/,
    ],
    [
      'a diff against /dev/null without git headers',
      '--- /dev/null\n+++ b/train.py\n@@ -0,0 +1,2 @@\n+import os\n+print(os.environ)\n',
      /creates a new file \(--- \/dev\/null\)/,
    ],
    [
      'a symlink',
      'diff --git a/train.py b/train.py\nnew file mode 120000\n--- /dev/null\n+++ b/train.py\n@@ -0,0 +1 @@\n+/etc/passwd\n\\ No newline at end of file\n',
      /symbolic link/,
    ],
    ['a file turned into a symlink', 'diff --git a/train.py b/train.py\nold mode 100644\nnew mode 120000\n', /symbolic link/],
    [
      'a mode-only change',
      'diff --git a/train.py b/train.py\nold mode 100644\nnew mode 100755\n',
      /only changes a file mode \(100644 → 100755\) and has no hunks/,
    ],
    ['a binary patch', 'diff --git a/train.py b/train.py\nindex 1..2 100644\nGIT binary patch\nliteral 0\nHcmV?d00001\n', /binary patch/],
    ['a copy', 'diff --git a/train.py b/copy.py\nsimilarity index 100%\ncopy from train.py\ncopy to copy.py\n', /copies a file/],
    [
      'a deletion',
      'diff --git a/train.py b/train.py\ndeleted file mode 100644\n--- a/train.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x0 = 0\n',
      /deletes train\.py/,
    ],
  ];
  for (const [what, sub, reason] of refused) {
    test(`${what} is refused with the reason`, () => {
      const r = applyRepairDiff(SCRIPT, sub);
      assert.equal(r.ok, false, `${what} was applied`);
      assert.match(!r.ok ? r.error : '', reason);
    });
  }

  test('a mode change that comes with hunks applies the hunks and says the mode part was ignored', () => {
    const d = createRepairDiff(SCRIPT, SCRIPT.replace('x11 = 11\n', 'x11 = 111\n')).replace(
      'diff --git a/train.py b/train.py\n',
      'diff --git a/train.py b/train.py\nold mode 100644\nnew mode 100755\n',
    );
    const r = applyRepairDiff(SCRIPT, d);
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.ok(r.script.includes('x11 = 111\n'));
    assert.ok(r.warnings.some((w) => /file mode \(100644 → 100755\); that part was ignored/.test(w)));
  });
});

describe('diff faults: off the event loop', () => {
  test('small submissions run inline within the inline step budget', async () => {
    const info: AsyncApplyInfo = { where: 'worker' };
    const r = await applyRepairDiffAsync(SCRIPT, fixAt('99999999999999999999'), {}, info);
    assert.ok(r.ok);
    assert.equal(info.where, 'inline');
    assert.ok(applyRepairDiffCounted(SCRIPT, fixAt('99999999999999999999')).cost.steps <= INLINE_STEPS);
  });

  test('a 1 MB submission is applied in the worker thread with the same answer as on the main thread', { timeout: 120_000 }, async () => {
    let sub = createRepairDiff(SCRIPT, SCRIPT.replace('x11 = 11\n', 'x11 = 111\n'));
    for (let i = 0; sub.length < 1_000_000; i++) sub += `@@ -1,1 +1,1 @@\n-nothing_${i}\n+y\n`;
    const info: AsyncApplyInfo = { where: 'inline' };
    const r = await applyRepairDiffAsync(SCRIPT, sub, {}, info);
    assert.equal(info.where, 'worker');
    assert.deepEqual(r, applyRepairDiff(SCRIPT, sub));
    assert.ok(r.ok && r.mode === 'lenient' && r.script.includes('x11 = 111\n'));
  });

  test('a small submission that needs more search than the inline budget moves to the worker', { timeout: 120_000 }, async () => {
    // Context that matches nowhere exactly: the tolerant search scans the whole (long) script.
    const long = Array.from({ length: 20_000 }, (_, i) => `v${i} = ${i}`).join('\n') + '\n';
    const sub = '@@ -1,5 +1,5 @@\n v19990 = 19990\n extra_a\n extra_b\n-v19991 = 19991\n+v19991 = 0\n v19992 = 19992\n';
    const { cost } = applyRepairDiffCounted(long, sub, { workBudget: INLINE_STEPS });
    assert.ok(cost.budgetHit, 'more than the inline budget');
    const info: AsyncApplyInfo = { where: 'inline' };
    const r = await applyRepairDiffAsync(long, sub, {}, info);
    assert.equal(info.where, 'worker');
    assert.deepEqual(r, applyRepairDiff(long, sub));
  });

  test('a 50 MB submission is refused without a worker', async () => {
    const info: AsyncApplyInfo = { where: 'inline' };
    const r = await applyRepairDiffAsync(SCRIPT, 'x'.repeat(50 * 1024 * 1024), {}, info);
    assert.equal(info.where, 'refused');
    assert.equal(r.ok, false);
  });

  test('a cancelled application answers at once', async () => {
    const ac = new AbortController();
    ac.abort();
    let sub = '';
    for (let i = 0; sub.length < 100_000; i++) sub += `@@ -1,1 +1,1 @@\n-nothing_${i}\n+y\n`;
    const r = await applyRepairDiffAsync(SCRIPT, sub, { signal: ac.signal });
    assert.deepEqual(r, { ok: false, error: 'the diff application was cancelled' });
  });
});

// The fence is found by scanning the text's two ends; this is the regular expression it replaces,
// kept as the reference on inputs short enough for its quadratic backtracking.
const OLD_FENCE = /^\s*(`{3,})[\w+-]*[^\n]*\n([\s\S]*?)\n?\1\s*$/;
describe('diff faults: fence stripping', () => {
  test('matches the old regular expression on 20,000 random short inputs', () => {
    const parts = ['```', '````', '`', '\n', ' ', 'python', 'diff', 'x', '\t', '@@ -1 +1 @@\n-a\n+b\n', 'print(1)'];
    let seed = 1;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) % n;
    let matched = 0;
    for (let i = 0; i < 20_000; i++) {
      // Half open with a fence line and half of those end with one, so most cases are near-fences.
      let s = rnd(2) ? ['', ' ', '\n '][rnd(3)] + ['```', '````', '``'][rnd(3)] + ['', 'python', 'diff x'][rnd(3)] + '\n' : '';
      for (let k = rnd(6); k >= 0; k--) s += parts[rnd(parts.length)];
      if (rnd(2)) s += ['', '\n'][rnd(2)] + ['```', '````', '``'][rnd(3)] + ['', ' \n', '\n\n'][rnd(3)];
      const m = OLD_FENCE.exec(s);
      if (m) matched++;
      assert.deepEqual(stripFence(s), m ? { text: m[2] + '\n', fenced: true } : { text: s, fenced: false }, JSON.stringify(s));
    }
    assert.ok(matched > 500, `fenced inputs among them: ${matched}`);
  });
});

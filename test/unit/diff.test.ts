import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { applyRepairDiff, createRepairDiff, diffStats, lineChangeRatio } from '../../src/env/diff/diff';

// Golden cases: before.py/after.py per folder; expected.diff is the committed output of
// createRepairDiff (regenerate with UPDATE_GOLDENS=1 after checking it still applies).
const FIXTURES = join(__dirname, '..', 'fixtures', 'diffs');
const CASES = readdirSync(FIXTURES)
  .filter((n) => statSync(join(FIXTURES, n)).isDirectory())
  .sort();
const read = (...p: string[]) => readFileSync(join(FIXTURES, ...p), 'utf8');

const scratch = mkdtempSync(join(tmpdir(), 'forgeenv-diff-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

function applyWith(tool: 'git' | 'patch', before: string, diff: string): { status: number | null; out: string; stderr: string } {
  const dir = mkdtempSync(join(scratch, `${tool}-`));
  writeFileSync(join(dir, 'train.py'), before);
  writeFileSync(join(dir, 'fix.diff'), diff);
  const r =
    tool === 'git'
      ? spawnSync('git', ['apply', '--whitespace=nowarn', 'fix.diff'], {
          cwd: dir,
          encoding: 'utf8',
          env: { ...process.env, GIT_CEILING_DIRECTORIES: scratch },
        })
      : spawnSync('patch', ['-p1', '--batch', '--forward', '-i', 'fix.diff'], { cwd: dir, encoding: 'utf8' });
  return { status: r.status, out: readFileSync(join(dir, 'train.py'), 'utf8'), stderr: r.stderr ?? '' };
}

const hasGit = spawnSync('git', ['--version']).status === 0;
const hasPatch = spawnSync('patch', ['--version']).status === 0;

describe('createRepairDiff golden cases', () => {
  test('there are golden cases', () => assert.ok(CASES.length >= 10, `found ${CASES.length}`));
  for (const name of CASES) {
    const before = read(name, 'before.py');
    const afterText = read(name, 'after.py');
    const diff = createRepairDiff(before, afterText);

    test(`${name}: matches the golden diff`, () => {
      const golden = join(FIXTURES, name, 'expected.diff');
      if (process.env.UPDATE_GOLDENS === '1' || !existsSync(golden)) writeFileSync(golden, diff);
      assert.equal(diff, readFileSync(golden, 'utf8'));
      assert.ok(diff.startsWith('diff --git a/train.py b/train.py\n--- a/train.py\n+++ b/train.py\n@@ '), 'git-style headers');
    });
    test(`${name}: git apply reproduces after.py`, { skip: hasGit ? false : 'git not installed' }, () => {
      const r = applyWith('git', before, diff);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.out, afterText);
    });
    test(`${name}: patch -p1 reproduces after.py`, { skip: hasPatch ? false : 'GNU patch not installed' }, () => {
      const r = applyWith('patch', before, diff);
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.out, afterText);
    });
    test(`${name}: applyRepairDiff applies it strictly`, () => {
      const r = applyRepairDiff(before, diff);
      assert.ok(r.ok, !r.ok ? r.error : '');
      assert.equal(r.script, afterText);
      assert.equal(r.mode, 'strict');
    });
  }

  test('identical texts give an empty diff', () => {
    assert.equal(createRepairDiff('a\nb\n', 'a\nb\n'), '');
  });

  test('a missing final newline is marked', () => {
    const d = createRepairDiff('a\nb', 'a\nc');
    assert.match(d, /-b\n\\ No newline at end of file\n\+c\n\\ No newline at end of file\n$/);
  });

  test('three lines of context and a custom file name', () => {
    const before = Array.from({ length: 20 }, (_, i) => `line${i + 1}`).join('\n') + '\n';
    const d = createRepairDiff(before, before.replace('line10\n', 'LINE10\n'), 'script.py');
    assert.match(d, /^diff --git a\/script\.py b\/script\.py\n--- a\/script\.py\n\+\+\+ b\/script\.py\n@@ -7,7 \+7,7 @@\n/);
    assert.deepEqual(
      d.split('\n').filter((l) => l.startsWith(' ')),
      [' line7', ' line8', ' line9', ' line11', ' line12', ' line13'],
    );
  });
});

const SCRIPT = [
  'import torch',
  'from transformers import Trainer',
  '',
  'args = dict(eval_strategy="epoch")',
  '',
  'trainer = Trainer(args)',
  'trainer.train()',
  'print("done")',
  '',
].join('\n');
const FIXED = SCRIPT.replace('Trainer(args)', 'Trainer(args=args)');

describe('applyRepairDiff', () => {
  test('empty and whitespace submissions leave the script unchanged', () => {
    for (const s of ['', '   \n\t\n']) {
      const r = applyRepairDiff(SCRIPT, s);
      assert.deepEqual(r, { ok: true, script: SCRIPT, mode: 'empty', warnings: [] });
    }
  });

  test('a whole script replaces the file', () => {
    const r = applyRepairDiff(SCRIPT, FIXED);
    assert.ok(r.ok);
    assert.equal(r.mode, 'whole_script');
    assert.equal(r.script, FIXED);
  });

  test('a whole script in a python fence replaces the file without the fence', () => {
    const r = applyRepairDiff(SCRIPT, '```python\n' + FIXED + '```\n');
    assert.ok(r.ok);
    assert.equal(r.mode, 'whole_script');
    assert.equal(r.script, FIXED);
  });

  test('prose is neither a diff nor a script', () => {
    const r = applyRepairDiff(SCRIPT, 'I could not find the problem, sorry.');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /neither a unified diff/);
  });

  test('diff lines without a hunk header are rejected with a clear error', () => {
    const r = applyRepairDiff(SCRIPT, '-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /no "@@ -a,b \+c,d @@" hunk header/);
  });

  test('accepted header forms: a/b prefixes, bare names, diff --git with index, none at all', () => {
    const body = '@@ -6,2 +6,2 @@\n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n trainer.train()\n';
    const forms = [
      `--- a/train.py\n+++ b/train.py\n${body}`,
      `--- train.py\n+++ train.py\n${body}`,
      `diff --git a/train.py b/train.py\nindex 1111111..2222222 100644\n--- a/train.py\n+++ b/train.py\n${body}`,
      body,
    ];
    for (const f of forms) {
      const r = applyRepairDiff(SCRIPT, f);
      assert.ok(r.ok, !r.ok ? r.error : '');
      assert.equal(r.script, FIXED);
      assert.equal(r.mode, 'strict');
    }
  });

  test('a diff fenced as ```diff is unwrapped, with a warning', () => {
    const r = applyRepairDiff(SCRIPT, '```diff\n' + createRepairDiff(SCRIPT, FIXED) + '```');
    assert.ok(r.ok);
    assert.equal(r.script, FIXED);
    assert.ok(r.warnings.some((w) => /code fence/.test(w)));
  });

  test('a multi-file diff touching another file is rejected', () => {
    const d = createRepairDiff(SCRIPT, FIXED) + '--- a/utils.py\n+++ b/utils.py\n@@ -1 +1 @@\n-x\n+y\n';
    const r = applyRepairDiff(SCRIPT, d);
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /touches other files \(utils\.py\); only train\.py may be changed/);
  });

  test('a diff that deletes the script is rejected', () => {
    const d = 'diff --git a/train.py b/train.py\ndeleted file mode 100644\n--- a/train.py\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-import torch\n';
    const r = applyRepairDiff(SCRIPT, d);
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /deletes train\.py/);
  });

  test('shifted hunk line numbers still apply strictly', () => {
    const r = applyRepairDiff(SCRIPT, '@@ -40,2 +40,2 @@\n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n trainer.train()\n');
    assert.ok(r.ok);
    assert.equal(r.mode, 'strict');
    assert.equal(r.script, FIXED);
  });

  test('wrong header counts fall back to lenient, with a note', () => {
    const r = applyRepairDiff(
      SCRIPT,
      '--- a/train.py\n+++ b/train.py\n@@ -4,9 +4,2 @@\n args = dict(eval_strategy="epoch")\n \n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n',
    );
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.mode, 'lenient');
    assert.equal(r.script, FIXED);
    assert.ok(r.warnings.some((w) => /counts were recomputed/.test(w)));
  });

  test('blank context lines that lost their space, and trailing whitespace differences, apply leniently', () => {
    const r = applyRepairDiff(
      SCRIPT,
      '@@ -3,4 +3,4 @@\n\n args = dict(eval_strategy="epoch")   \n\n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n',
    );
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.script, FIXED);
  });

  test('an extra context line away from the change is tolerated (fuzz)', () => {
    // jsdiff still requires the lines right next to a change to match exactly.
    const r = applyRepairDiff(
      SCRIPT,
      '@@ -4,4 +4,5 @@\n args = dict(eval_strategy="epoch")\n # a comment the script does not have\n \n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n trainer.train()\n',
    );
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.mode, 'lenient');
    assert.equal(r.script, FIXED);
  });

  test('hunks apply one by one; the failing one is reported', () => {
    const d =
      '@@ -1,1 +1,1 @@\n-import torch\n+import torch  # 2.5\n@@ -7,1 +7,1 @@\n-trainer.fit()\n+trainer.train(resume_from_checkpoint=True)\n';
    const r = applyRepairDiff(SCRIPT, d);
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.mode, 'lenient');
    assert.equal(r.script, SCRIPT.replace('import torch\n', 'import torch  # 2.5\n'));
    assert.ok(
      r.warnings.some((w) =>
        /^hunk 2 \(@@ -7,1 \+7,1 @@, submission line 4\) did not apply: line 1 of the hunk \("-trainer\.fit\(\)"\) is not in the script$/.test(
          w,
        ),
      ),
      r.warnings.join('\n'),
    );
  });

  test('a diff none of whose hunks fit is an error naming the hunk and the line', () => {
    const r = applyRepairDiff(SCRIPT, '@@ -1,2 +1,2 @@\n import torch\n-import tensorflow\n+import jax\n');
    assert.equal(r.ok, false);
    assert.match(
      !r.ok ? r.error : '',
      /hunk 1 \(@@ -1,2 \+1,2 @@, submission line 1\) did not apply: line 2 of the hunk \("-import tensorflow"\) is not in the script/,
    );
  });

  test('lines in the wrong order are explained', () => {
    const r = applyRepairDiff(SCRIPT, '@@ -1,2 +1,1 @@\n-from transformers import Trainer\n-import torch\n+import torch\n');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /not in this order/);
  });

  test('a non-diff line inside a hunk spoils only that hunk (never half-applied)', () => {
    const r = applyRepairDiff(SCRIPT, '@@ -6,1 +6,1 @@\n-trainer = Trainer(args)\nthis is prose\n+trainer = Trainer(args=args)\n');
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.error : '', /submission line 3 is not a diff line: "this is prose"/);
  });

  test('prose around a diff is ignored', () => {
    const r = applyRepairDiff(
      SCRIPT,
      'Here is the fix:\n\n@@ -6,1 +6,1 @@\n-trainer = Trainer(args)\n+trainer = Trainer(args=args)\n\nThis passes the args by keyword.\n',
    );
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.script, FIXED);
  });

  test('a CRLF script takes an LF diff', () => {
    const crlf = SCRIPT.replace(/\n/g, '\r\n');
    const r = applyRepairDiff(crlf, createRepairDiff(SCRIPT, FIXED));
    assert.ok(r.ok, !r.ok ? r.error : '');
    assert.equal(r.script, FIXED.replace(/\n/g, '\r\n'));
  });

  test('a diff with CRLF line ends, without its final newline, or fenced inside prose still applies', () => {
    const d = createRepairDiff(SCRIPT, FIXED);
    for (const sub of [d.replace(/\n/g, '\r\n'), d.trimEnd(), 'Sure, here it is:\n```diff\n' + d + '```\nDone.', '```\n' + d + '```']) {
      const r = applyRepairDiff(SCRIPT, sub);
      assert.ok(r.ok, !r.ok ? r.error : '');
      assert.equal(r.script, FIXED);
    }
  });

  test('garbage never throws', () => {
    const inputs = [
      '@@',
      '@@ -x +y @@\n',
      '@@ -1 +1 @@\n',
      '--- a\n+++ b\n@@ -1,1 +1,1 @@\n\\ nothing\n',
      '\u0000\u0001@@ -1 +1 @@\n-\n+\n',
      'diff --git a/train.py b/train.py\n',
    ];
    for (const s of inputs) {
      const r = applyRepairDiff(SCRIPT, s);
      assert.equal(typeof r.ok, 'boolean');
      if (!r.ok) assert.ok(r.error.length > 0);
    }
  });
});

describe('diffStats and lineChangeRatio', () => {
  test('counts added, removed and changed lines', () => {
    assert.deepEqual(diffStats('a\nb\nc\n', 'a\nB\nc\n'), { added: 1, removed: 1, changedLines: 1 });
    assert.deepEqual(diffStats('a\nb\nc\n', 'a\nc\nd\ne\n'), { added: 2, removed: 1, changedLines: 3 });
    assert.deepEqual(diffStats('a\nb\nc\n', 'a\nb\nc\n'), { added: 0, removed: 0, changedLines: 0 });
    assert.deepEqual(diffStats('a\nb\nc\nd\n', 'a\nX\n'), { added: 1, removed: 3, changedLines: 3 });
  });

  test('ratio = (added + removed) / max(1, original lines)', () => {
    assert.equal(lineChangeRatio('a\nb\nc\nd\n', 'a\nB\nc\nd\n'), 2 / 4);
    assert.equal(lineChangeRatio('a\nb\n', 'x\ny\n'), 4 / 2);
    assert.equal(lineChangeRatio('', 'x\n'), 1);
    assert.equal(lineChangeRatio('a\nb', 'a\nb'), 0);
  });
});

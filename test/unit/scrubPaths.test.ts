import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { executeScript } from '../../src/env/run/executor';
import { simlibsDir } from '../../src/env/paths';
import { INLINE_SCRUB_CHARS, scrubPathsAsync, type ScrubAsyncInfo } from '../../src/env/run/scrubAsync';
import { scrubPaths, type ScrubWork } from '../../src/env/run/scrubPaths';
import { parseTraceback } from '../../src/env/scoring/traceback';

const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-scrub-test-'));
after(() => rmSync(parentDir, { recursive: true, force: true }));

/** What must never reach a trace, a prompt or a saved demonstration. */
function assertNoMachinePath(text: string, runDir: string): void {
  assert.ok(!text.includes(tmpdir()), `temp folder in:\n${text}`);
  assert.ok(!text.includes(runDir), `run folder in:\n${text}`);
  assert.ok(!text.includes(`${homedir()}/`), `home folder in:\n${text}`);
  assert.ok(!text.includes(simlibsDir()), `stand-ins folder in:\n${text}`);
  assert.doesNotMatch(text, /simlibs|_forgeenv_sim/);
}

describe('scrubPaths', () => {
  const run = '/tmp/forgeenv-run-AbC123';
  const sim = '/opt/ext/resources/simlibs';
  const ctx = { runDir: run, standInDirs: [sim, `${sim}-fallback`], homeDir: '/home/ann' };

  test('run folder, stand-ins, site-packages, stdlib and home become portable', () => {
    const trace = [
      'Traceback (most recent call last):',
      `  File "${run}/train.py", line 12, in <module>`,
      '    trainer.train()',
      `  File "${sim}/transformers/trainer.py", line 40, in train`,
      '    self._loop()',
      `  File "${sim}-fallback/numpy/core.py", line 3, in f`,
      '    g()',
      '  File "/home/ann/.venv/lib/python3.11/site-packages/peft/tuners/lora.py", line 7, in g',
      '    h()',
      '  File "/usr/lib/python3.12/dist-packages/yaml/x.py", line 1, in h',
      '    i()',
      '  File "/root/.pyenv/versions/3.11.7/lib/python3.11/json/decoder.py", line 353, in raw_decode',
      '    obj, end = self.scan_once(s, idx)',
      `FileNotFoundError: [Errno 2] No such file or directory: '${run}/data/train.csv' (cwd ${run}, notes /home/ann/notes.txt, home /home/ann)`,
    ].join('\n');
    assert.equal(
      scrubPaths(trace, ctx),
      [
        'Traceback (most recent call last):',
        '  File "train.py", line 12, in <module>',
        '    trainer.train()',
        '  File "site-packages/transformers/trainer.py", line 40, in train',
        '    self._loop()',
        '  File "site-packages/numpy/core.py", line 3, in f',
        '    g()',
        '  File "site-packages/peft/tuners/lora.py", line 7, in g',
        '    h()',
        '  File "site-packages/yaml/x.py", line 1, in h',
        '    i()',
        '  File "lib/python3.11/json/decoder.py", line 353, in raw_decode',
        '    obj, end = self.scan_once(s, idx)',
        "FileNotFoundError: [Errno 2] No such file or directory: 'data/train.csv' (cwd ., notes ~/notes.txt, home ~)",
      ].join('\n'),
    );
  });

  test('frames inside _forgeenv_sim are dropped with their code and marker lines; other mentions are renamed', () => {
    const trace = [
      'Traceback (most recent call last):',
      `  File "${run}/train.py", line 8, in <module>`,
      '    img.convert("XYZ")',
      `  File "${sim}/_forgeenv_sim/imaging.py", line 50, in convert`,
      '    raise ValueError("conversion from %s to %s not supported" % (self.mode, mode))',
      '    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      'ValueError: bad <_forgeenv_sim.imaging.Image object at 0x1>',
      `${sim}/_forgeenv_sim/synthetic.py:3: UserWarning: from _forgeenv_sim`,
    ].join('\n');
    const out = scrubPaths(trace, ctx);
    assert.equal(
      out,
      [
        'Traceback (most recent call last):',
        '  File "train.py", line 8, in <module>',
        '    img.convert("XYZ")',
        'ValueError: bad <PIL.Image.Image object at 0x1>',
        'site-packages/datasets/builder.py:3: UserWarning: from transformers.utils',
      ].join('\n'),
    );
    assert.equal(parseTraceback(out)?.location?.line, 8);
  });

  test('exception-group frames inside _forgeenv_sim are dropped too', () => {
    const trace = [
      '  | Traceback (most recent call last):',
      `  |   File "${run}/train.py", line 2, in <module>`,
      '  |     f()',
      `  |   File "${sim}/_forgeenv_sim/warn.py", line 9, in f`,
      '  |     raise KeyError(1)',
      '  | KeyError: 1',
    ].join('\n');
    assert.equal(
      scrubPaths(trace, ctx),
      ['  | Traceback (most recent call last):', '  |   File "train.py", line 2, in <module>', '  |     f()', '  | KeyError: 1'].join('\n'),
    );
  });

  test('a longer name that merely starts like the run folder is not cut', () => {
    assert.equal(scrubPaths(`${run}-other/x.py and ${run}/y.py`, { runDir: run }), `${run}-other/x.py and y.py`);
  });

  test('text without machine paths is unchanged', () => {
    const text = "step=1 loss=2.5 learning_rate=5e-05 epoch=1.0\nTypeError: f() got an unexpected keyword argument 'x'\n";
    assert.equal(scrubPaths(text, ctx), text);
  });
});

// The regexes scrubPaths used before it scanned tokens (quadratic in a token's length): the
// reference the token scans must agree with, on inputs short enough for them.
const P = `[^\\s"'<>()\\[\\]]`;
const REFERENCE: Array<[RegExp, string]> = [
  [new RegExp(`(?:(?:[A-Za-z]:)?[\\\\/]?${P}*?[\\\\/])?simlibs(?:-fallback)?[\\\\/]`, 'g'), 'site-packages/'],
  [new RegExp(`(?:[A-Za-z]:)?[\\\\/]${P}*?[\\\\/](?:site|dist)-packages[\\\\/]`, 'g'), 'site-packages/'],
  [new RegExp(`(?:[A-Za-z]:)?[\\\\/]${P}*?[\\\\/]lib[\\\\/](python3\\.\\d+)(?![\\w.])`, 'g'), 'lib/$1'],
];
const reference = (text: string) =>
  REFERENCE.reduce((t, [re, by]) => t.replace(re, by), text).replace(/simlibs(?:-fallback)?/g, 'site-packages');

describe('scrubPaths is linear in the output', () => {
  test('the token scans give what the former regexes gave (seeded random inputs)', () => {
    const parts = [
      '/',
      '\\',
      'C:',
      'c',
      ':',
      'simlibs',
      '-fallback',
      'site',
      'dist',
      '-packages',
      'lib',
      'python3.',
      '1',
      '12',
      '.',
      'x',
      '_',
      ' ',
      '"',
      '(',
      '\n',
      'simlibs/',
      '/lib/python3.11',
      '/site-packages/',
      'a/',
    ];
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed % n);
    for (let i = 0; i < 20_000; i++) {
      let text = '';
      for (let k = 1 + rnd(14); k > 0; k--) text += parts[rnd(parts.length)];
      assert.equal(scrubPaths(text), reference(text), JSON.stringify(text));
    }
  });

  /** Scrubs `text`, checks the work was at most `perChar` steps per character, returns the output. */
  const scrubCounted = (text: string, perChar = 4): string => {
    const work: ScrubWork = { steps: 0 };
    const out = scrubPaths(
      text,
      { runDir: '/tmp/forgeenv-run-1', standInDirs: ['/opt/ext/resources/simlibs'], homeDir: '/home/ann' },
      work,
    );
    assert.ok(work.steps <= perChar * text.length, `${work.steps} steps for ${text.length} characters`);
    return out;
  };
  const MiB = 1 << 20;
  /** assert.equal without a megabyte-long diff on failure. */
  const same = (actual: string, expected: string) => {
    if (actual === expected) return;
    let i = 0;
    while (actual[i] === expected[i]) i++;
    assert.fail(
      `differs at ${i} (lengths ${actual.length} and ${expected.length}): ${JSON.stringify(actual.slice(i, i + 60))} vs ${JSON.stringify(expected.slice(i, i + 60))}`,
    );
  };

  test('a 1 MiB token without spaces or slashes', () => {
    const text = 'x'.repeat(MiB);
    same(scrubCounted(text), text);
  });

  test('1 MiB of /a/a/a… (no known folder anywhere after a slash)', () => {
    const text = '/a'.repeat(MiB / 2);
    same(scrubCounted(text), text);
    const withTail = `${text}/lib/python3.11x`;
    same(scrubCounted(withTail), withTail);
  });

  test('1 MiB of /a/a/a… ending in a known folder is one rewrite', () => {
    assert.equal(scrubCounted(`${'/a'.repeat(MiB / 2)}/site-packages/peft/x.py`), 'site-packages/peft/x.py');
    assert.equal(scrubCounted(`C:${'\\a'.repeat(MiB / 2)}\\lib\\python3.12 next`), 'lib/python3.12 next');
  });

  test('1 MiB of simlibs/, site-packages/ and stdlib folders repeated', () => {
    same(scrubCounted('x/simlibs/y '.repeat(MiB / 12)), 'site-packages/y '.repeat(MiB / 12));
    same(scrubCounted('/a/site-packages/'.repeat(MiB / 17)), 'site-packages/'.repeat(MiB / 17));
    same(scrubCounted('/u/lib/python3.1'.repeat(MiB / 16)), 'lib/python3.1'.repeat(MiB / 16));
    // Within one token the lazy `P*?` reaches the next folder and the passes run into each other (as
    // with the former regexes, checked on a short prefix): only the shape is asserted at 1 MiB.
    for (const unit of ['simlibs/', '/x/simlibs-fallback', '/simlibs/a']) {
      assert.equal(scrubPaths(unit.repeat(7)), reference(unit.repeat(7)));
      const out = scrubCounted(unit.repeat(Math.floor(MiB / unit.length)));
      assert.match(out, /^(?:site-packages\/?)+(?:x\/site-packages|a)?$/, out.slice(0, 100));
    }
  });

  test('a 1 MiB line of exception-group bars next to a private helper frame', () => {
    const text = `${'  | '.repeat(MiB / 4)}\n  File "/opt/ext/resources/simlibs/_forgeenv_sim/warn.py", line 1\n    x\n`;
    same(scrubCounted(text), `${'  | '.repeat(MiB / 4)}\n`);
  });
});

describe('large outputs are scrubbed off the event loop', () => {
  const ctx = { runDir: '/tmp/forgeenv-run-AbC123', standInDirs: ['/opt/ext/resources/simlibs'], homeDir: '/home/ann' };
  const line = '  File "/opt/ext/resources/simlibs/transformers/trainer.py", line 4, in f /tmp/forgeenv-run-AbC123/x.py /home/ann/y\n';

  test('a small output is scrubbed inline, a large one in the worker, with the same result', async () => {
    const info: ScrubAsyncInfo = { where: 'inline' };
    assert.equal(await scrubPathsAsync(line, [ctx], info), scrubPaths(line, ctx));
    assert.equal(info.where, 'inline');
    const big = line.repeat(Math.ceil((2 * INLINE_SCRUB_CHARS) / line.length)) + '/x'.repeat(1 << 19);
    const scrubbed = await scrubPathsAsync(big, [{ runDir: '/tmp/forgeenv-run-AbC123' }, ctx], info);
    assert.equal(info.where, 'worker');
    assert.equal(scrubbed, scrubPaths(scrubPaths(big, { runDir: '/tmp/forgeenv-run-AbC123' }), ctx));
    assert.doesNotMatch(scrubbed.slice(0, 10_000), /simlibs|forgeenv-run|\/home\/ann/);
  });

  test('the event loop keeps turning while a large output is scrubbed', async () => {
    // Work, not time: count the timer ticks that fire while the worker scrubs 8 MiB.
    const big = `${'/a/site-packages/'.repeat(1 << 19)} ${'x'.repeat(1 << 20)}`;
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const info: ScrubAsyncInfo = { where: 'inline' };
    const out = await scrubPathsAsync(big, [ctx], info);
    clearInterval(timer);
    assert.equal(info.where, 'worker');
    assert.ok(out.startsWith('site-packages/site-packages/'));
    assert.ok(ticks > 0, 'no timer ran while the output was scrubbed');
  });
});

describe('the executor scrubs what a run printed', () => {
  test('a traceback through the stand-ins and the stdlib shows no machine path, and the failing line is still found', async () => {
    const script = [
      'import json, os',
      'from datasets import load_dataset',
      'print("cwd", os.getcwd(), "file", __file__, "home", os.path.expanduser("~"))',
      'ds = load_dataset("imdb", split="train")',
      'print(ds[0]["label"] in (0, 1))',
      'def load(name):',
      '    return load_dataset(name)',
      'load("no_such_dataset_anywhere")',
    ].join('\n');
    const r = await executeScript({
      script,
      mode: 'simulated',
      libraryVersions: { datasets: '3.2.0' },
      parentDir,
      keepRunDir: true,
      validate: false,
    });
    assert.equal(r.exit_code, 1, r.stderr);
    assert.ok(r.run_dir.startsWith(parentDir));
    assertNoMachinePath(r.stdout, r.run_dir);
    assertNoMachinePath(r.stderr, r.run_dir);
    // HOME is the run folder (the clean environment, sandbox/cleanEnv.ts), so `~` is the run folder too.
    assert.match(r.stdout, /^cwd \. file train\.py home \.$/m);
    assert.match(r.stderr, /File "train\.py", line 8, in <module>/);
    assert.match(r.stderr, /File "train\.py", line 7, in load/);
    assert.match(r.stderr, /File "site-packages\/datasets\/load\.py", line \d+, in load_dataset/);
    const parsed = parseTraceback(r.stderr, 'train.py', script);
    assert.equal(parsed?.exception_type, 'datasets.exceptions.DatasetNotFoundError');
    assert.equal(parsed?.location?.line, 7, 'the innermost frame of train.py');
    assert.deepEqual(
      parsed?.frames.filter((f) => f.inScript).map((f) => f.line),
      [8, 7],
    );
    rmSync(r.run_dir, { recursive: true, force: true });
  });

  test('a frame inside _forgeenv_sim is dropped and the stdlib frame is relative', async () => {
    const script = [
      'import json',
      'from datasets import load_dataset',
      'img = load_dataset("cifar10", split="train")[0]["img"]',
      'try:',
      '    img.convert("NOPE")',
      'except ValueError as e:',
      '    print("caught", type(e).__name__)',
      'json.loads("{")',
    ].join('\n');
    const r = await executeScript({ script, mode: 'simulated', libraryVersions: { datasets: '3.2.0' }, parentDir, validate: false });
    assert.equal(r.exit_code, 1, r.stderr);
    assertNoMachinePath(r.stderr, r.run_dir);
    assert.match(r.stdout, /caught ValueError/);
    assert.match(r.stderr, /File "lib\/python3\.\d+\/json\/decoder\.py", line \d+/);
    assert.equal(parseTraceback(r.stderr, 'train.py', script)?.location?.line, 8);
  });

  test('a run printing a 1 MiB token without spaces (the flood that blocked the server) is scrubbed whole', async () => {
    const script = 'import sys\nsys.stdout.write("/x" * (1 << 19))\nsys.stdout.write("\\n" + __file__ + "\\n")\n';
    const r = await executeScript({
      script,
      mode: 'simulated',
      libraryVersions: { datasets: '3.2.0' },
      parentDir,
      validate: false,
      outputCapBytes: 2 << 20,
    });
    assert.equal(r.exit_code, 0, r.stderr);
    assert.equal(r.stdout, `${'/x'.repeat(1 << 19)}\ntrain.py\n`);
  });

  test('the stand-ins frame itself is dropped when it raises', async () => {
    const script = 'from datasets import load_dataset\nimg = load_dataset("cifar10", split="train")[0]["img"]\nimg.convert("NOPE")\n';
    const r = await executeScript({ script, mode: 'simulated', libraryVersions: { datasets: '3.2.0' }, parentDir, validate: false });
    assert.equal(r.exit_code, 1);
    assertNoMachinePath(r.stderr, r.run_dir);
    const parsed = parseTraceback(r.stderr, 'train.py', script);
    assert.equal(parsed?.exception_type, 'ValueError');
    assert.equal(parsed?.location?.line, 3);
    assert.deepEqual(
      parsed?.frames.map((f) => f.file),
      ['train.py'],
    );
  });
});

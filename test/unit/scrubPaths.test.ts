import { strict as assert } from 'node:assert';
import { mkdtempSync, rmSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { executeScript } from '../../src/env/executor';
import { simlibsDir } from '../../src/env/paths';
import { scrubPaths } from '../../src/env/scrubPaths';
import { parseTraceback } from '../../src/env/traceback';

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
      "ValueError: bad <_forgeenv_sim.imaging.Image object at 0x1>",
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
    assert.equal(scrubPaths(trace, ctx), ['  | Traceback (most recent call last):', '  |   File "train.py", line 2, in <module>', '  |     f()', '  | KeyError: 1'].join('\n'));
  });

  test('a longer name that merely starts like the run folder is not cut', () => {
    assert.equal(scrubPaths(`${run}-other/x.py and ${run}/y.py`, { runDir: run }), `${run}-other/x.py and y.py`);
  });

  test('text without machine paths is unchanged', () => {
    const text = 'step=1 loss=2.5 learning_rate=5e-05 epoch=1.0\nTypeError: f() got an unexpected keyword argument \'x\'\n';
    assert.equal(scrubPaths(text, ctx), text);
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
    const r = await executeScript({ script, mode: 'simulated', libraryVersions: { datasets: '3.2.0' }, parentDir, keepRunDir: true, validate: false });
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
    assert.deepEqual(parsed?.frames.filter((f) => f.inScript).map((f) => f.line), [8, 7]);
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

  test('the stand-ins frame itself is dropped when it raises', async () => {
    const script = 'from datasets import load_dataset\nimg = load_dataset("cifar10", split="train")[0]["img"]\nimg.convert("NOPE")\n';
    const r = await executeScript({ script, mode: 'simulated', libraryVersions: { datasets: '3.2.0' }, parentDir, validate: false });
    assert.equal(r.exit_code, 1);
    assertNoMachinePath(r.stderr, r.run_dir);
    const parsed = parseTraceback(r.stderr, 'train.py', script);
    assert.equal(parsed?.exception_type, 'ValueError');
    assert.equal(parsed?.location?.line, 3);
    assert.deepEqual(parsed?.frames.map((f) => f.file), ['train.py']);
  });
});

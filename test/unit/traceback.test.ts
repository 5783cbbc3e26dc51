import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { parseTraceback, type ParsedError } from '../../src/env/scoring/traceback';

const FIXTURES = join(__dirname, '..', 'fixtures', 'tracebacks');
const stderrOf = (name: string) => readFileSync(join(FIXTURES, name, 'stderr.txt'), 'utf8');
const scriptOf = (name: string) => readFileSync(join(FIXTURES, name, 'train.py'), 'utf8');

interface Expectation {
  type: string;
  message: string;
  line?: number;
  /** With the script passed: columns from the start of the source line. */
  column?: number;
  endColumn?: number;
  frames: number;
  inScript: boolean[];
}

// Hand-written expectations for the committed captures (CPython 3.11 output).
const CASES: Record<string, Expectation> = {
  syntax_unclosed: { type: 'SyntaxError', message: "'(' was never closed", line: 4, column: 9, endColumn: 10, frames: 1, inScript: [true] },
  syntax_invalid: { type: 'SyntaxError', message: 'invalid syntax', line: 2, column: 15, endColumn: 16, frames: 1, inScript: [true] },
  syntax_range: {
    type: 'SyntaxError',
    message: "Missing parentheses in call to 'print'. Did you mean print(...)?",
    line: 2,
    column: 1,
    endColumn: 14,
    frames: 1,
    inScript: [true],
  },
  indentation: {
    type: 'IndentationError',
    message: "expected an indented block after 'if' statement on line 1",
    line: 2,
    column: 1,
    endColumn: 2,
    frames: 1,
    inScript: [true],
  },
  library_frame: { type: 'KeyError', message: "'missing'", line: 5, column: 12, endColumn: 29, frames: 3, inScript: [true, true, false] },
  chained_cause: { type: 'ValueError', message: 'bad value\nsecond line', line: 4, frames: 1, inScript: [true] },
  chained_during: {
    type: 'NameError',
    message: "name 'undefined_name' is not defined",
    line: 4,
    column: 5,
    endColumn: 19,
    frames: 1,
    inScript: [true],
  },
  keyboard_interrupt: { type: 'KeyboardInterrupt', message: '', line: 2, frames: 2, inScript: [true, true] },
  caret_range: { type: 'IndexError', message: 'list index out of range', line: 2, column: 14, endColumn: 18, frames: 1, inScript: [true] },
  module_not_found: {
    type: 'ModuleNotFoundError',
    message: "No module named 'transformers_not_installed_anywhere'",
    line: 1,
    frames: 1,
    inScript: [true],
  },
  recursion: {
    type: 'RecursionError',
    message: 'maximum recursion depth exceeded',
    line: 2,
    column: 12,
    endColumn: 20,
    frames: 4,
    inScript: [true, true, true, true],
  },
  dotted_exception: { type: 'lib_mod.CustomError', message: 'boom', line: 3, frames: 2, inScript: [true, false] },
  syntax_in_import: { type: 'SyntaxError', message: 'invalid syntax', line: 1, frames: 2, inScript: [true, false] },
  exception_group: { type: 'ExceptionGroup', message: 'several (2 sub-exceptions)', line: 2, frames: 2, inScript: [true, true] },
  indented_frame: { type: 'KeyError', message: "'b'", line: 4, column: 16, endColumn: 26, frames: 2, inScript: [true, true] },
};

function check(name: string, got: ParsedError | null, want: Expectation, withColumns: boolean): void {
  assert.ok(got, `${name}: expected a parsed error`);
  assert.equal(got.exception_type, want.type, name);
  assert.equal(got.message, want.message, name);
  assert.equal(got.frames.length, want.frames, `${name}: frame count`);
  assert.deepEqual(
    got.frames.map((f) => f.inScript),
    want.inScript,
    `${name}: inScript`,
  );
  assert.equal(got.location?.line, want.line, `${name}: location line`);
  if (withColumns) {
    assert.equal(got.location?.column, want.column, `${name}: column`);
    assert.equal(got.location?.endColumn, want.endColumn, `${name}: endColumn`);
  }
  assert.equal(got.truncated, undefined, `${name}: not truncated`);
}

describe('parseTraceback on captured CPython output', () => {
  for (const [name, want] of Object.entries(CASES)) {
    test(name, () => check(name, parseTraceback(stderrOf(name), 'train.py', scriptOf(name)), want, true));
  }

  test('frames carry file, line, function and code', () => {
    const p = parseTraceback(stderrOf('library_frame'))!;
    assert.deepEqual(
      p.frames.map((f) => [f.file.split('/').pop(), f.line, f.function, f.code]),
      [
        ['train.py', 8, '<module>', 'go({"a": 1})'],
        ['train.py', 5, 'go', 'return lib_mod.helper(d)'],
        ['lib_mod.py', 2, 'helper', 'return x["missing"]'],
      ],
    );
  });

  test('without the script, columns count from the first non-blank character', () => {
    const p = parseTraceback(stderrOf('syntax_unclosed'))!;
    // `    x = (1,` is printed dedented: the caret is under `(`, column 5 of `x = (1,`.
    assert.equal(p.location?.column, 5);
    assert.equal(p.location?.line, 4);
  });

  test('the SyntaxError pseudo-frame has no function', () => {
    const p = parseTraceback(stderrOf('syntax_invalid'))!;
    assert.equal(p.frames[0].function, '');
    assert.equal(p.frames[0].code, 'return 1 +* 2');
  });

  test('a script name other than train.py decides inScript', () => {
    const p = parseTraceback(stderrOf('library_frame'), 'lib_mod.py')!;
    assert.deepEqual(
      p.frames.map((f) => f.inScript),
      [false, false, true],
    );
    assert.equal(p.location?.line, 2);
  });

  test('no traceback at all gives null', () => {
    assert.equal(parseTraceback(stderrOf('no_traceback')), null);
    assert.equal(parseTraceback(''), null);
    assert.equal(parseTraceback('some warning\nanother line\n'), null);
  });

  test('a traceback cut off before its exception line is reported as truncated', () => {
    const lines = stderrOf('library_frame').split('\n');
    const cut = lines.slice(0, 6).join('\n'); // header + two frames, stops inside the stack
    const p = parseTraceback(cut)!;
    assert.equal(p.truncated, true);
    assert.equal(p.exception_type, 'Unknown');
    assert.equal(p.frames.length, 2);
    assert.equal(p.location?.line, 5);
  });

  test('executor notes after the traceback do not join the message', () => {
    const s = stderrOf('module_not_found') + '[forgeenv] timed out after 1000 ms: the process group was killed\n';
    const p = parseTraceback(s)!;
    assert.equal(p.message, "No module named 'transformers_not_installed_anywhere'");
  });

  test('CRLF output parses the same', () => {
    const p = parseTraceback(stderrOf('caret_range').replace(/\n/g, '\r\n'), 'train.py', scriptOf('caret_range'))!;
    check('caret_range (crlf)', p, CASES.caret_range, true);
  });
});

describe('parseTraceback on a live python3 run', () => {
  // Same scripts, run now: types, messages and lines must hold on whatever Python 3 is installed
  // (columns are version-dependent, so they are checked only on the captures above).
  const probe = spawnSync('python3', ['--version']);
  const work = mkdtempSync(join(tmpdir(), 'forgeenv-tb-test-'));
  for (const [name, want] of Object.entries(CASES)) {
    test(name, { skip: probe.status !== 0 ? 'python3 not available' : false }, () => {
      const dir = join(work, name);
      cpSync(join(FIXTURES, name), dir, { recursive: true });
      const r = spawnSync('python3', ['-u', 'train.py'], {
        cwd: dir,
        encoding: 'utf8',
        env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1' },
      });
      check(name, parseTraceback(r.stderr, 'train.py', scriptOf(name)), want, false);
    });
  }
  test('cleanup', () => {
    rmSync(work, { recursive: true, force: true });
    assert.ok(true);
  });
});

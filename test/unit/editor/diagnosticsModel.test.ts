import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { abnormalEndNote, diagnosticsForRun, unbrokenBreakageNote } from '../../../src/editor/episode/diagnosticsModel';

const script = [
  'from transformers import Trainer, TrainingArguments',
  '',
  'def build():',
  '    args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")',
  '    return Trainer(args=args)',
  '',
  'trainer = build()',
  'trainer.train()',
  '',
].join('\n');

const base = { exit_code: 1, timed_out: false, output_truncated: false, killed: false, violations: [] as string[] };

describe('diagnosticsForRun', () => {
  test('puts the exception on the innermost script frame and lists every script frame', () => {
    const stderr = [
      'Traceback (most recent call last):',
      '  File "/tmp/run/train.py", line 7, in <module>',
      '    trainer = build()',
      '  File "/tmp/run/train.py", line 4, in build',
      '    args = TrainingArguments(output_dir="out", evaluation_strategy="epoch")',
      '  File "/sim/transformers/training_args.py", line 88, in __init__',
      '    raise TypeError(msg)',
      "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
      '',
    ].join('\n');
    const [d, ...rest] = diagnosticsForRun({ ...base, stderr }, script);
    assert.equal(rest.length, 0);
    assert.equal(d.severity, 'error');
    assert.equal(d.line, 3, '0-based line of "args = ..."');
    assert.equal(d.startCharacter, 4, 'starts after the indentation');
    assert.equal(d.code, 'TypeError');
    assert.match(d.message, /^TypeError: TrainingArguments.__init__\(\) got an unexpected keyword argument 'evaluation_strategy'$/);
    assert.deepEqual(
      d.related.map((r) => r.line),
      [6, 3],
    );
    assert.match(d.related[1].message, /frame 2 of 2 in build/);
  });

  test('a SyntaxError is underlined at its column range', () => {
    const src = 'x = 1\nprint("a" "b"\n';
    const stderr = ['  File "/tmp/r/train.py", line 2', '    print("a" "b"', '         ^', "SyntaxError: '(' was never closed", ''].join(
      '\n',
    );
    const [d] = diagnosticsForRun({ ...base, stderr }, src);
    assert.equal(d.code, 'SyntaxError');
    assert.equal(d.line, 1);
    assert.equal(d.startCharacter, 5);
    assert.equal(d.endCharacter, 6);
  });

  test('forbidden constructs land on their lines and nothing else is reported', () => {
    const src = 'import json\nimport os\nprint(1)\n';
    const ds = diagnosticsForRun(
      { ...base, exit_code: null, violations: ["line 2: import of forbidden module 'os'"], stderr: 'ForgeEnv did not run train.py' },
      src,
    );
    assert.equal(ds.length, 1);
    assert.equal(ds[0].line, 1);
    assert.equal(ds[0].code, 'forbidden');
    assert.match(ds[0].message, /forbidden module 'os'/);
  });

  test('a timeout without a traceback is reported at the top of the file', () => {
    const ds = diagnosticsForRun(
      {
        ...base,
        exit_code: null,
        timed_out: true,
        killed: true,
        stderr: '[forgeenv] timed out after 1000 ms: the process group was killed\n',
      },
      script,
    );
    assert.equal(ds.length, 1);
    assert.equal(ds[0].code, 'timeout');
    assert.equal(ds[0].line, 0);
    assert.match(ds[0].message, /timed out/);
  });

  test('an error raised outside the script says where', () => {
    const stderr = ['Traceback (most recent call last):', '  File "<string>", line 1, in <module>', 'ImportError: boom', ''].join('\n');
    const [d] = diagnosticsForRun({ ...base, stderr }, script);
    assert.equal(d.line, 0);
    assert.match(d.message, /ImportError: boom \(raised outside train.py in <string>\)/);
  });

  test('a clean exit has no diagnostics; a bare non-zero exit has one', () => {
    assert.deepEqual(diagnosticsForRun({ ...base, exit_code: 0, stderr: '' }, script), []);
    const [d] = diagnosticsForRun({ ...base, exit_code: 3, stderr: 'bye\n' }, script);
    assert.match(d.message, /exited with code 3: bye/);
  });
});

describe('abnormalEndNote', () => {
  test('names the reason', () => {
    assert.equal(abnormalEndNote({ ...base, exit_code: 0, stderr: '' }), undefined);
    assert.match(abnormalEndNote({ ...base, exit_code: null, output_truncated: true, killed: true, stderr: '' }) ?? '', /output cap/);
    assert.match(abnormalEndNote({ ...base, exit_code: null, killed: true, stderr: '[forgeenv] cancelled: x' }) ?? '', /cancelled/);
  });
});

describe('unbrokenBreakageNote', () => {
  const broken = script.replace('evaluation_strategy="epoch"', 'eval_strategy="epoch"');
  test('a clean run of the broken script is a warning on the first line the breakage changed', () => {
    const d = unbrokenBreakageNote({ ...base, exit_code: 0, stderr: '' }, script, broken, 'RenameKwarg');
    assert.ok(d);
    assert.equal(d.severity, 'warning');
    assert.equal(d.line, 3, 'the TrainingArguments line (0-based)');
    assert.equal(d.code, 'breakage-did-not-break');
    assert.match(d.message, /RenameKwarg/);
  });
  test('a failing or abnormal broken run has no note', () => {
    assert.equal(unbrokenBreakageNote({ ...base, stderr: 'TypeError: x' }, script, broken, 'RenameKwarg'), undefined);
    assert.equal(unbrokenBreakageNote({ ...base, exit_code: 0, timed_out: true, stderr: '' }, script, broken, 'RenameKwarg'), undefined);
  });
});

describe('unbrokenBreakageNote on removed lines', () => {
  test('a removed keyword line is noted on the line above it, inside the call', () => {
    const original = ['args = TrainingArguments(', '    output_dir="out",', '    report_to="none",', ')', 'print(args)', ''].join('\n');
    const broken = ['args = TrainingArguments(', '    output_dir="out",', ')', 'print(args)', ''].join('\n');
    const d = unbrokenBreakageNote({ ...base, exit_code: 0, stderr: '' }, original, broken, 'ChangeDefaultValue');
    assert.equal(d?.line, 1);
  });
});

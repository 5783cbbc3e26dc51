import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { FORBIDDEN_CALLS, FORBIDDEN_MODULES, findCalls, findImports, validateScript } from '../../src/env/validator';

describe('validateScript', () => {
  test('the documented lists', () => {
    assert.deepEqual([...FORBIDDEN_MODULES].sort(), ['os', 'socket', 'subprocess']);
    assert.deepEqual([...FORBIDDEN_CALLS].sort(), ['eval', 'exec']);
  });

  test('every spelling of a forbidden import is reported with its line', () => {
    const script = [
      'import os',
      'import sys, subprocess as sp',
      'import os.path',
      'from os import path',
      'from socket import socket as s',
      'from os.path import (join,',
      '    exists)',
      "__import__('socket')",
      'importlib.import_module("subprocess")',
    ].join('\n');
    assert.deepEqual(validateScript(script), [
      "line 1: import of forbidden module 'os'",
      "line 2: import of forbidden module 'subprocess'",
      "line 3: import of forbidden module 'os'",
      "line 4: import of forbidden module 'os'",
      "line 5: import of forbidden module 'socket'",
      "line 6: import of forbidden module 'os'",
      "line 8: import of forbidden module 'socket' (via __import__)",
      "line 9: import of forbidden module 'subprocess' (via importlib.import_module)",
    ]);
  });

  test('eval and exec calls, also through builtins', () => {
    assert.deepEqual(validateScript('x = eval("1+1")\n\nbuiltins.exec(code)\n'), [
      "line 1: call to forbidden function 'eval'",
      "line 3: call to forbidden function 'exec'",
    ]);
  });

  test('strings, comments and look-alike names do not trigger', () => {
    const script = [
      '# import os',
      'doc = "import subprocess; eval(x)"',
      "'''",
      'import socket',
      "'''",
      'import socketserver, ossaudiodev',
      'from . import os',
      'model.eval()',
      'cursor.exec()',
      'evaluate = 1',
      'import shutil',
      'shutil.rmtree("out", ignore_errors=True)',
    ].join('\n');
    assert.deepEqual(validateScript(script), []);
  });

  test('a script that does not parse is not itself a violation', () => {
    assert.deepEqual(validateScript('def f(:\n    pass\nprint("x"\n'), []);
  });

  test('constructs in the parts that parse are still reported when another part does not', () => {
    assert.deepEqual(validateScript('import subprocess\ndef f(:\n    pass\n'), ["line 1: import of forbidden module 'subprocess'"]);
  });

  test('a typical training script is allowed', () => {
    const script = [
      'from transformers import AutoModelForSequenceClassification, Trainer, TrainingArguments',
      'from datasets import load_dataset',
      'import torch, sys, json, pathlib',
      'args = TrainingArguments(output_dir="out", eval_strategy="epoch")',
      'trainer = Trainer(model=model, args=args)',
      'trainer.train()',
      'model.eval()',
    ].join('\n');
    assert.deepEqual(validateScript(script), []);
  });
});

describe('syntax helpers', () => {
  test('findImports reports module, names, relativity and line', () => {
    assert.deepEqual(findImports('import a.b as c, d\nfrom .m import x as y, z\nfrom p import *\n'), [
      { module: 'a.b', names: [], relative: false, line: 1 },
      { module: 'd', names: [], relative: false, line: 1 },
      { module: 'm', names: ['x', 'z'], relative: true, line: 2 },
      { module: 'p', names: ['*'], relative: false, line: 3 },
    ]);
  });

  test('findCalls gives dotted callees', () => {
    assert.deepEqual(
      findCalls('trainer.train()\nprint(a.b.c(1))\nx().y()\n').map((c) => [c.callee, c.line]),
      [
        ['trainer.train', 1],
        ['print', 2],
        ['a.b.c', 2],
        ['.y', 3],
        ['x', 3],
      ],
    );
  });
});

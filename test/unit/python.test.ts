import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { applyEdits, spanOfEdits } from '../../src/env/python/edits';
import { isDottedName, isIdentifier } from '../../src/env/python/identifiers';
import { endsLine, indentationAt, lineNumberAt, lineStarts, startsLine } from '../../src/env/python/lines';
import { describeProblem, maskGrammarGaps, parsePython } from '../../src/env/python/parse';
import { indexScript } from '../../src/env/python/scriptIndex';
import { readStringLiteral } from '../../src/env/python/strings';

const index = (src: string) => indexScript(parsePython(src));

describe('parsePython: syntax problems', () => {
  test('a valid script has no problem', () => {
    assert.equal(parsePython('import torch\n\ndef f(x):\n    return x + 1\n').problem, undefined);
  });

  test('an unclosed bracket is reported on the line that opens it', () => {
    const p = parsePython('import a\nx = foo(1,\ny = 2\n').problem;
    assert.ok(p);
    assert.equal(p.line, 2);
    assert.match(p.message, /'\(' is never closed/);
  });

  test('an unterminated string is a problem even though Lezer accepts it', () => {
    const p = parsePython('x = 1\ny = "abc\nz = 2\n').problem;
    assert.ok(p);
    assert.equal(p.line, 2);
    assert.match(p.message, /unterminated string/);
  });

  test('a dedent to an unknown level is a problem', () => {
    const p = parsePython('def f(x):\n    return x\n  y = 1\n').problem;
    assert.ok(p);
    assert.equal(p.line, 3);
    assert.match(describeProblem(p), /^line 3, column 3: indentation/);
  });

  test('garbage is reported with a line', () => {
    const p = parsePython('x = 1\ndef (:\n').problem;
    assert.ok(p);
    assert.equal(p.line, 2);
  });

  test('valid Python that the Lezer grammar misses is not a problem: bare yield, 24. floats, form feeds', () => {
    const src = 'def gen():\n    yield\n    x = (yield)\n    yield 1\n\f\nscale = 24.*3600. + 1.e5\n';
    assert.equal(parsePython(src).problem, undefined);
    assert.equal(maskGrammarGaps(src).length, src.length, 'masking keeps every offset');
    assert.equal(parsePython('s = "24."\nt = "yield"\n').problem, undefined);
  });

  test('inline bodies and escaped quotes are fine', () => {
    assert.equal(parsePython('if x: y = 1\ns = "a\\"b"\nr = r"\\d+"\n').problem, undefined);
  });
});

describe('indexScript', () => {
  test('names in strings and comments are not names', () => {
    const idx = index('import evaluate\n# evaluate here\ns = "evaluate"\nm = trainer.evaluate()\n');
    const roles = (idx.namesByText.get('evaluate') ?? []).map((n) => n.role);
    assert.deepEqual(roles, ['import', 'property']);
  });

  test('keyword-argument names, parameters and module paths have their own roles', () => {
    const idx = index('from torch.optim import AdamW\nimport a.b\ndef f(lr, n=lr):\n    return g(lr=lr)\n');
    const role = (name: string) => (idx.namesByText.get(name) ?? []).map((n) => n.role);
    assert.deepEqual(role('torch'), ['module']);
    assert.deepEqual(role('AdamW'), ['import']);
    assert.deepEqual(role('a'), ['import']);
    assert.deepEqual(role('b'), ['module']);
    assert.deepEqual(role('lr'), ['parameter', 'name', 'keyword', 'name']);
  });

  test('calls record callee chains, methods and arguments with ranges', () => {
    const src = 'x = tok.encode_plus(a, b=1, *c, **d)\n';
    const [call] = index(src).calls;
    assert.ok(call);
    assert.equal(call.callee, 'tok.encode_plus');
    assert.equal(call.method?.name, 'encode_plus');
    assert.deepEqual(
      call.args.map((a) => a.kind),
      ['positional', 'keyword', 'star', 'double_star'],
    );
    const kw = call.args[1];
    assert.equal(kw.name, 'b');
    assert.equal(src.slice(kw.from, kw.to), 'b=1');
    assert.equal(src[kw.commaAfter!], ',');
    assert.equal(src[call.closeParen], ')');
  });

  test('imports record module, names and aliases', () => {
    const idx = index('from transformers import (\n    AutoTokenizer,\n    Trainer as T,\n)\nimport torch.nn as nn, os\n');
    const [a, b] = idx.imports;
    assert.equal(a.module, 'transformers');
    assert.deepEqual(
      a.names.map((n) => [n.name, n.alias]),
      [
        ['AutoTokenizer', undefined],
        ['Trainer', 'T'],
      ],
    );
    assert.equal(b.kind, 'import');
    assert.deepEqual(
      b.names.map((n) => [n.name, n.alias]),
      [
        ['torch.nn', 'nn'],
        ['os', undefined],
      ],
    );
  });

  test('subscripts with a string key, attributes and assignments', () => {
    const src = 'm = trainer.evaluate()\nprint(m["eval_loss"], f"{m[\'eval_acc\']}")\nout = model(**b).logits\n';
    const idx = index(src);
    assert.deepEqual(
      idx.subscripts.filter((s) => s.key).map((s) => `${s.object}[${s.key!.raw}]`),
      ['m[eval_loss]', 'm[eval_acc]'],
    );
    assert.ok(idx.attributes.some((a) => a.property === 'logits' && a.objectNode.name === 'CallExpression'));
    assert.deepEqual(
      idx.assignments.map((a) => [a.target, a.call?.callee ?? null]),
      [
        ['m', 'trainer.evaluate'],
        ['out', null],
      ],
    );
  });
});

describe('string literals, identifiers, lines and edits', () => {
  test('readStringLiteral splits prefix, quote and content; plain excludes escapes and f-strings', () => {
    const src = `r'abc' "x\\ny" f"z" "a" + "b"`;
    const lit = readStringLiteral(src, 0, 6)!;
    assert.deepEqual([lit.prefix, lit.quote, lit.raw, lit.plain], ['r', "'", 'abc', true]);
    assert.equal(readStringLiteral(src, 7, 13)!.plain, false);
    assert.equal(readStringLiteral(src, 14, 18)!.plain, false);
    assert.equal(readStringLiteral(src, 19, src.length)!.plain, false, 'two literals joined by + are not one plain literal');
  });

  test('identifiers', () => {
    assert.ok(isIdentifier('AdamW'));
    assert.ok(!isIdentifier('class'));
    assert.ok(!isIdentifier('1x'));
    assert.ok(isDottedName('torch.optim'));
    assert.ok(!isDottedName('torch..optim'));
  });

  test('line helpers', () => {
    const src = 'a\n    b = 1  # c\n';
    const starts = lineStarts(src);
    assert.deepEqual(starts, [0, 2, 17]);
    assert.equal(lineNumberAt(starts, 7), 2);
    assert.equal(indentationAt(src, 8), '    ');
    assert.ok(startsLine(src, 6));
    assert.ok(endsLine(src, 11));
    assert.ok(!endsLine(src, 9));
  });

  test('applyEdits applies sorted edits and rejects overlaps', () => {
    assert.equal(
      applyEdits('hello world', [
        { from: 6, to: 11, insert: 'there' },
        { from: 0, to: 0, insert: '> ' },
      ]),
      '> hello there',
    );
    assert.throws(
      () =>
        applyEdits('abcdef', [
          { from: 0, to: 3, insert: '' },
          { from: 2, to: 4, insert: 'x' },
        ]),
      /overlapping/,
    );
    assert.deepEqual(
      spanOfEdits([
        { from: 4, to: 5, insert: '' },
        { from: 1, to: 2, insert: '' },
      ]),
      { from: 1, to: 5 },
    );
  });
});

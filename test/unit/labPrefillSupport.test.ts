// The lab's vscode-free helpers: the per-version computation cache, run problems from a
// traceback, snapshot-drift explanations and the check-results model.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { CancelledError, VersionedComputeCache } from '../../src/editor/lab/core/computeCache';
import { runOutcome } from '../../src/editor/lab/core/runDiagnostics';
import { explainError, quotedNames } from '../../src/editor/lab/core/knownChanges';
import { checkExport, countRows, groupByScript, rowDescription, rowStatus } from '../../src/editor/lab/core/checkResults';
import { firstMismatch } from '../../src/editor/lab/core/inverseCheck';
import type { CheckRow } from '../../src/env/primitives/checkPrimitives';
import type { ExecutionResult } from '../../src/env/schemas';

function deferred<T>() {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe('VersionedComputeCache', () => {
  test('same version computes once; a new version aborts the stale run', async () => {
    const calls: Array<{ text: string; signal: AbortSignal; d: ReturnType<typeof deferred<string>> }> = [];
    const cache = new VersionedComputeCache<string>((text, signal) => {
      const d = deferred<string>();
      calls.push({ text, signal, d });
      signal.addEventListener('abort', () => d.resolve('aborted-result'));
      return d.promise;
    });
    const p1 = cache.get('file:///a.py', 1, () => 'v1');
    const p1b = cache.get('file:///a.py', 1, () => 'never read');
    assert.equal(calls.length, 1);
    assert.equal(p1, p1b);
    const p2 = cache.get('file:///a.py', 2, () => 'v2');
    assert.equal(calls.length, 2);
    assert.equal(calls[0].signal.aborted, true);
    assert.equal(calls[1].signal.aborted, false);
    calls[1].d.resolve('R2');
    assert.equal(await p2, 'R2');
    assert.equal(cache.peek('file:///a.py', 2), 'R2');
    assert.equal(cache.peek('file:///a.py', 1), undefined);
    await p1; // the stale computation resolved after abort; its callers still get a value
  });

  test('a rejected run after abort surfaces as CancelledError and is not cached', async () => {
    const cache = new VersionedComputeCache<number>(
      (_t, signal) =>
        new Promise((resolve, reject) => {
          signal.addEventListener('abort', () => reject(new Error('stop')));
          setTimeout(() => resolve(1), 50);
        }),
    );
    const stale = cache.get('k', 1, () => '');
    void cache.get('k', 2, () => '');
    await assert.rejects(stale, CancelledError);
  });

  test('least recently used documents are evicted beyond capacity', async () => {
    let n = 0;
    const cache = new VersionedComputeCache<number>(async () => ++n, 2);
    await cache.get('a', 1, () => '');
    await cache.get('b', 1, () => '');
    await cache.get('a', 1, () => ''); // touch a
    await cache.get('c', 1, () => '');
    assert.equal(cache.size, 2);
    assert.equal(cache.peek('b', 1), undefined);
    assert.equal(cache.peek('a', 1), 1);
    assert.equal(n, 3);
  });
});

function exec(partial: Partial<ExecutionResult>): ExecutionResult {
  return {
    exit_code: 1,
    stdout: '',
    stderr: '',
    wall_time_ms: 10,
    checkpoint_exists: false,
    peak_memory_mb: 0,
    script_content: '',
    timed_out: false,
    output_truncated: false,
    killed: false,
    violations: [],
    mode: 'simulated',
    interpreter: 'python3',
    ...partial,
  };
}

describe('runOutcome', () => {
  const script = 'import transformers\n\nargs = transformers.TrainingArguments(output_dir="o", evaluation_strategy="epoch")\n';
  test('the traceback location becomes a ranged problem on the script line', () => {
    const stderr = [
      'Traceback (most recent call last):',
      '  File "/tmp/run/train.py", line 3, in <module>',
      '    args = transformers.TrainingArguments(output_dir="o", evaluation_strategy="epoch")',
      '           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
      "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
    ].join('\n');
    const o = runOutcome(exec({ stderr }), script);
    assert.equal(o.ok, false);
    assert.equal(o.problems.length, 1);
    const p = o.problems[0];
    assert.equal(p.line, 2);
    assert.equal(p.startCharacter, 7);
    assert.equal(p.code, 'TypeError');
    assert.match(p.message, /unexpected keyword argument 'evaluation_strategy'/);
    assert.match(o.headline, /^TypeError: /);
  });
  test('a clean run has no problems; violations point at their line', () => {
    assert.deepEqual(runOutcome(exec({ exit_code: 0 }), script).problems, []);
    const v = runOutcome(exec({ exit_code: null, violations: ["line 1: import of forbidden module 'os'"] }), 'import os\nprint(1)\n');
    assert.equal(v.ok, false);
    assert.equal(v.problems[0].line, 0);
    assert.equal(v.problems[0].code, 'violation');
  });
  test('a timeout without a traceback is reported on the first line', () => {
    const o = runOutcome(exec({ exit_code: null, timed_out: true, wall_time_ms: 5000 }), script);
    assert.equal(o.problems[0].code, 'timeout');
    assert.match(o.headline, /timed out/);
  });
});

describe('snapshot drift explanations', () => {
  test('quoted names, dotted tails included', () => {
    assert.deepEqual(
      quotedNames("cannot import name 'AdamW' from 'transformers.optimization'").sort(),
      ['AdamW', 'optimization', 'transformers.optimization'].sort(),
    );
  });
  test('a renamed kwarg maps to the known change; the drift table wins when it knows the name', () => {
    const err = { exception_type: 'TypeError', message: "TrainingArguments.__init__() got an unexpected keyword argument 'eval_strategy'" };
    const e = explainError(err);
    assert.equal(e.source, 'known-changes');
    assert.match(e.change, /evaluation_strategy=\) was renamed to eval_strategy/);
    const t = explainError(err, [{ names: ['eval_strategy'], description: 'from the table' }]);
    assert.deepEqual([t.source, t.change], ['drift-table', 'from the table']);
  });
  test('unknown names fall back to the kind of error', () => {
    const e = explainError({ exception_type: 'KeyError', message: "'sentence'" });
    assert.equal(e.source, 'exception-kind');
    assert.match(e.change, /schema drift/);
  });
});

function row(p: Partial<CheckRow>): CheckRow {
  return {
    script: 'a.py',
    primitive: 'RenameApiCall',
    applied: true,
    original_runs: true,
    broke: true,
    restored: true,
    passes_after_repair: true,
    diff_lines: 2,
    params: {},
    broken_error: null,
    ...p,
  };
}

describe('check results model', () => {
  test('status, description and grouping', () => {
    const rows = [
      row({}),
      row({ primitive: 'DeprecateImport', broke: false }),
      row({
        primitive: 'ModifyConfigField',
        applied: false,
        broke: null,
        restored: null,
        passes_after_repair: null,
        diff_lines: null,
        params: null,
        error: 'no candidate',
      }),
      row({ script: 'b.py', restored: false }),
      row({ script: 'b.py', primitive: 'X', error: 'internal: boom' }),
    ];
    assert.deepEqual(rows.map(rowStatus), ['broke', 'not-broken', 'not-applicable', 'not-restored', 'internal-error']);
    assert.equal(rowDescription(rows[0]), 'applied · broke · restored · passes after repair · 2 lines');
    assert.equal(rowDescription(rows[2]), 'not applicable');
    const groups = groupByScript(rows);
    assert.deepEqual(
      groups.map((g) => [g.script, g.rows.length, g.applied, g.broke, g.restored]),
      [
        ['a.py', 3, 2, 1, 2],
        ['b.py', 2, 2, 2, 1],
      ],
    );
    assert.deepEqual(countRows(rows), { rows: 5, applied: 4, broke: 3, restored: 3, passes_after_repair: 4, internal_errors: 1 });
  });
  test('the export validates its own shape', () => {
    const summary = {
      scripts: 1,
      primitives: 1,
      rows: 1,
      applied: 1,
      broke: 1,
      restored: 1,
      passes_after_repair: 1,
      not_runnable: 0,
      internal_errors: 0,
      wall_time_ms: 5,
    };
    const out = checkExport({ source: 'corpus', mode: 'simulated', noRun: false, summary, results: [row({})], now: new Date(0) });
    assert.equal(out.generated_at, '1970-01-01T00:00:00.000Z');
    assert.throws(() => checkExport({ source: 'x', mode: 'simulated', noRun: false, summary: { ...summary, rows: 1.5 }, results: [] }));
  });
  test('firstMismatch names the first differing line', () => {
    assert.deepEqual(firstMismatch('a\nb\nc', 'a\nB\nc'), { line: 2, expected: 'b', actual: 'B' });
    assert.deepEqual(firstMismatch('a\n', 'a'), { line: 2, expected: '', actual: '(end of file)' });
  });
});

describe('snapshot drift explanations from the drift table', () => {
  test('the environment drift table explains a removed import by its API name, not by the module', async () => {
    const { driftTableHints } = await import('../../src/editor/lab/core/driftHints');
    const hints = driftTableHints();
    assert.ok(hints.length > 0);
    const e = explainError({ exception_type: 'ImportError', message: "cannot import name 'load_metric' from 'datasets'" }, hints);
    assert.equal(e.source, 'drift-table');
    assert.match(e.change, /load_metric/);
    const kw = explainError(
      { exception_type: 'TypeError', message: "TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'" },
      hints,
    );
    assert.equal(kw.source, 'drift-table');
    assert.match(kw.change, /eval_strategy/);
    const onlyModule = explainError({ exception_type: 'ModuleNotFoundError', message: "No module named 'transformers'" }, hints);
    assert.equal(onlyModule.source, 'exception-kind');
  });
});

import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { ScoreResult, StartResult } from '../../src/editor/episode/results';
import { endAnyEpisode, ok, replaceBuffer, setSetting, timing, useOwnDataset } from './helpers';

// Scripts that misbehave: each is typed into the episode buffer and run with Run & Score.
suite('Diagnostics for misbehaving scripts', () => {
  useOwnDataset('dataset-runs');
  let uri: vscode.Uri;
  suiteSetup(async () => {
    await setSetting('runTimeoutSeconds', 3);
    await setSetting('outputCapKiB', 64);
    const s = await ok<StartResult>('forgeenv.startEpisode', { taskId: 'simple_regression', seed: 5 });
    uri = vscode.Uri.file(s.filePath);
  });
  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('runTimeoutSeconds', undefined);
    await setSetting('outputCapKiB', undefined);
  });

  test('a traceback through functions: error on the innermost line, every frame related', async () => {
    await replaceBuffer(uri, 'def inner():\n    raise ValueError("boom")\n\n\ndef outer():\n    inner()\n\n\nouter()\n');
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.reward_breakdown.script_executes, 0);
    const [d, ...more] = vscode.languages.getDiagnostics(uri);
    assert.equal(more.length, 0);
    assert.equal(d.range.start.line, 1);
    assert.equal(d.message, 'ValueError: boom');
    assert.deepEqual(
      d.relatedInformation?.map((x) => x.location.range.start.line),
      [8, 5, 1],
    );
  });

  test('a SyntaxError is underlined at its columns', async () => {
    await replaceBuffer(uri, 'x = 1\ny = (x +\nprint(y)\n');
    await ok<ScoreResult>('forgeenv.runAndScore');
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.match(d.message, /^SyntaxError: /);
    assert.ok(d.range.end.character > d.range.start.character, 'a column range');
  });

  test('a hanging script is killed at the timeout and reported', async () => {
    await replaceBuffer(uri, 'import time\nwhile True:\n    time.sleep(0.05)\n');
    const t0 = Date.now();
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    timing('Run & Score (hanging script, 3 s timeout)', Date.now() - t0);
    assert.equal(r.exitCode, null);
    assert.equal(r.success, false);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.equal(d.code && typeof d.code === 'object' ? d.code.value : d.code, 'timeout');
    assert.match(d.message, /timed out/);
  });

  test('a flooding script is cut at the output cap and reported', async () => {
    await replaceBuffer(uri, 'while True:\n    print("x" * 1000)\n');
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.exitCode, null);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.match(d.message, /output cap/);
  });

  test('forbidden constructs are reported on their line and not run', async () => {
    await replaceBuffer(uri, 'import json\nimport subprocess\nprint("TRAINING_COMPLETE")\n');
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    assert.equal(r.held_out_breakdown.hidden_tests_passed, 0);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.equal(d.range.start.line, 1);
    assert.match(d.message, /subprocess/);
  });

  test('a script that deletes itself and leaves a child process still ends and is scored', async () => {
    const script = [
      // A process pool, not `multiprocessing` itself: a repair may not add that module (its helpers can exec binaries).
      'import concurrent.futures, pathlib, time',
      'if __name__ == "__main__":',
      '    pathlib.Path(__file__).unlink()',
      '    concurrent.futures.ProcessPoolExecutor(1).submit(time.sleep, 600)',
      '    raise RuntimeError("gone")',
      '',
    ].join('\n');
    await replaceBuffer(uri, script);
    const t0 = Date.now();
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    timing('Run & Score (self-deleting script with a child)', Date.now() - t0);
    assert.equal(r.reward_breakdown.script_executes, 0);
    const [d] = vscode.languages.getDiagnostics(uri);
    assert.match(d.message, /RuntimeError: gone/);
    assert.equal(d.range.start.line, 4);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { renderScoreBody, renderScoreHtml, WebviewMessageSchema } from '../../../src/editor/episode/scoreHtml';
import { scoreModel } from '../../../src/editor/episode/scoreModel';
import type { RepairEvaluation } from '../../../src/env/episode/episodeTypes';

const evaluation: RepairEvaluation = {
  unified_diff: 'diff',
  apply: { ok: true, mode: 'strict', warnings: [] },
  repaired_script: 'print(1)\n',
  reward: 1.3,
  reward_breakdown: { script_executes: 1, loss_decreased: 0.5, checkpoint_appeared: 0, diff_size_penalty: -0.2 },
  held_out_breakdown: {
    executed_cleanly: 1,
    checkpoint_valid: 0,
    loss_decreased: 0.7,
    metrics_in_range: 0.5,
    no_forbidden_workarounds: 1,
    intent_preserved: 0.9,
    hidden_tests_passed: 1,
  },
  success: true,
  error_trace: '',
  findings: ['printed <b>fake</b> loss lines'],
  execution: {
    exit_code: null,
    stdout: '',
    stderr: '[forgeenv] timed out after 1000 ms: the process group was killed\n',
    wall_time_ms: 1000,
    checkpoint_exists: false,
    peak_memory_mb: 0,
    script_content: '',
    timed_out: true,
    output_truncated: false,
    killed: true,
    violations: [],
    mode: 'simulated',
    interpreter: 'python3',
  },
};
const res = { cspSource: 'https://x.vscode-cdn.net', nonce: 'abc123', styleUri: 'https://x/score.css', scriptUri: 'https://x/score.js' };

describe('score view', () => {
  const model = scoreModel({
    state: 'scored',
    taskId: 'task<1>',
    taskDescription: 'desc & more',
    primitive: 'RenameApiCall',
    mode: 'simulated',
    evaluation,
    runNumber: 3,
  });
  const html = renderScoreHtml(model, res);

  test('strict CSP: nothing by default, nonce-only scripts, no inline styles', () => {
    assert.match(html, /default-src 'none'/);
    assert.match(html, /script-src 'nonce-abc123'/);
    assert.doesNotMatch(html, /unsafe-inline|unsafe-eval/);
    assert.doesNotMatch(html, /style="/);
    assert.match(html, /<script nonce="abc123" src="https:\/\/x\/score.js">/);
    assert.equal((html.match(/<script/g) ?? []).length, 1);
  });

  test('escapes everything that comes from data', () => {
    assert.match(html, /task&lt;1&gt;/);
    assert.match(html, /desc &amp; more/);
    assert.match(html, /printed &lt;b&gt;fake&lt;\/b&gt; loss lines/);
    assert.doesNotMatch(html, /<b>fake/);
  });

  test('real tables with captions and row headers, every component listed', () => {
    assert.equal((html.match(/<caption>/g) ?? []).length, 2);
    assert.match(html, /<th scope="row"><span class="label">Script executes/);
    for (const k of ['Loss decreased', 'Checkpoint written', 'Diff size penalty', 'Hidden tests passed', 'Intent preserved'])
      assert.ok(html.includes(k), k);
    assert.match(html, /aria-label="Visible reward 1.30 of 1.80"/);
    assert.match(html, /−0.20 … 0/, 'the penalty shows its negative range');
  });

  test('abnormal ends are explained', () => {
    assert.ok(model.run?.notes.some((n) => /timed out/.test(n)));
    assert.match(html, /timed out and was killed/);
  });

  test('running disables the run and submit buttons', () => {
    const busy = renderScoreHtml({ ...model, state: 'running' }, res);
    assert.match(busy, /data-action="runAndScore" disabled/);
    assert.match(busy, /data-action="submit" class="primary" disabled/);
    assert.match(busy, /aria-busy="true"/);
  });

  test('an ended episode disables every button: its commands only answer "no episode open"', () => {
    for (const state of ['skipped', 'submitted'] as const) {
      const body = renderScoreBody({ ...model, state });
      const actions = [...body.matchAll(/<button [^>]*data-action="(\w+)"([^>]*)>/g)];
      assert.equal(actions.length, 5, 'all five buttons are rendered');
      for (const [, action, rest] of actions) assert.match(rest ?? '', /disabled/, `${state}: ${action} is disabled`);
    }
  });

  test('updates carry the same body the page starts with, and never a script', () => {
    const body = renderScoreBody(model);
    assert.ok(html.includes(body), 'the page embeds the body');
    assert.doesNotMatch(body, /<script|on\w+=/i);
    assert.match(renderScoreBody({ ...model, state: 'skipped' }), /episode skipped/);
  });

  test('webview messages are validated', () => {
    assert.equal(WebviewMessageSchema.safeParse({ type: 'runAndScore' }).success, true);
    assert.equal(WebviewMessageSchema.safeParse({ type: 'runAndScore', extra: 1 }).success, false);
    assert.equal(WebviewMessageSchema.safeParse({ type: 'eval', code: 'x' }).success, false);
    assert.equal(WebviewMessageSchema.safeParse('submit').success, false);
  });
});

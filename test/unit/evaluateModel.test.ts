// evaluate-model against a tiny OpenAI-compatible server started here with scripted completions
// (the request's `model` picks the script: a correct diff, a useless diff, garbage, a hang, a flaky
// 503, a malformed answer). Only the model is scripted: the environment really breaks the task,
// applies each answer, runs it in simulated mode and verifies it.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { chatComplete, chatCompletionsUrl } from '../../src/env/agent/chatEndpoint';
import { evaluateModel, exampleIdOf, problemOf, type AgentIdentity } from '../../src/env/agent/modelEvaluation';
import { passAtK } from '../../src/env/agent/passAtK';
import { parseRepairAnswer } from '../../src/env/agent/repairAnswer';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { prepareRepairPhase } from '../../src/env/episode/rollout';
import { main } from '../../src/cli/main';
import { readAnswersFile } from '../../src/store/answersFile';
import { tempDir } from './storeTestUtils';

const TASK = 'simple_regression';
const SEED = 0;

/** n choose k exactly, for checking the estimator against its definition. */
function choose(n: number, k: number): bigint {
  if (k < 0 || k > n) return 0n;
  let r = 1n;
  for (let i = 1; i <= k; i++) r = (r * BigInt(n - k + i)) / BigInt(i);
  return r;
}

describe('pass@k (unbiased estimator)', () => {
  test('matches 1 - C(n-c,k)/C(n,k) computed exactly', () => {
    for (const n of [1, 2, 5, 10, 20]) {
      for (let c = 0; c <= n; c++) {
        for (const k of [1, 2, 5, 10].filter((x) => x <= n)) {
          const exact = 1 - Number((choose(n - c, k) * 1_000_000_000n) / choose(n, k)) / 1e9;
          assert.ok(Math.abs(passAtK(n, c, k) - exact) < 1e-6, `n=${n} c=${c} k=${k}: ${passAtK(n, c, k)} vs ${exact}`);
        }
      }
    }
  });
  test('pass@1 is the share of passing samples; bad arguments are refused', () => {
    assert.ok(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-12);
    assert.equal(passAtK(4, 0, 4), 0);
    assert.throws(() => passAtK(3, 1, 4), RangeError);
    assert.throws(() => passAtK(3, 4, 1), RangeError);
  });
});

describe('parseRepairAnswer', () => {
  const diff = '--- a/train.py\n+++ b/train.py\n@@ -1 +1 @@\n-a\n+b\n';
  test('reads a ```diff block, a bare diff and a fenced whole script', () => {
    assert.deepEqual(parseRepairAnswer('Here:\n```diff\n' + diff + '```\n'), { ok: true, kind: 'diff', submission: diff });
    assert.deepEqual(parseRepairAnswer('Try this\n' + diff), { ok: true, kind: 'diff', submission: diff });
    const r = parseRepairAnswer('Fixed:\n```python\nimport torch\nprint(1)\n```');
    assert.deepEqual(r, { ok: true, kind: 'script', submission: 'import torch\nprint(1)\n' });
  });
  test('refuses prose, an empty answer and a diff block without hunks, saying why', () => {
    const prose = parseRepairAnswer('You should upgrade transformers and try again.');
    assert.equal(prose.ok, false);
    assert.match(!prose.ok ? prose.reason : '', /no unified diff and no fenced script/);
    assert.deepEqual(parseRepairAnswer('  \n'), { ok: false, reason: 'the completion is empty' });
    const hollow = parseRepairAnswer('```diff\nchange foo to bar\n```');
    assert.match(!hollow.ok ? hollow.reason : '', /holds no unified diff/);
  });
  test('example ids round-trip task_id@seed', () => {
    assert.deepEqual(problemOf(exampleIdOf({ task_id: 'a@b', seed: 7 })), { task_id: 'a@b', seed: 7 });
    assert.equal(problemOf('no-seed'), undefined);
    assert.equal(problemOf('t@x1'), undefined);
  });
  test('endpoint URLs: a base gets /chat/completions, a full URL is kept, other schemes refused', () => {
    assert.equal(chatCompletionsUrl('http://127.0.0.1:1/v1'), 'http://127.0.0.1:1/v1/chat/completions');
    assert.equal(chatCompletionsUrl('http://h/v1/chat/completions/'), 'http://h/v1/chat/completions');
    assert.throws(() => chatCompletionsUrl('file:///etc/passwd'), /http/);
  });
});

describe('evaluate-model against a scripted local endpoint (the environment really runs)', () => {
  let server: Server;
  let base = '';
  let oracle = '';
  const hits = new Map<string, number>();
  const hanging = new Set<ServerResponse>();

  before(async () => {
    // The correct answer is the environment's own oracle for the same problem (task, seed).
    const env = new ForgeEnvironment({ mode: 'simulated' });
    try {
      const phase = await prepareRepairPhase(env, { taskId: TASK, seed: SEED });
      assert.equal(phase.driftError, undefined);
      oracle = env.oracleDiff();
    } finally {
      await env.dispose();
    }
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const { model, messages } = JSON.parse(body) as { model: string; messages: Array<{ role: string; content: string }> };
        hits.set(model, (hits.get(model) ?? 0) + 1);
        const reply = (content: string) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(
            JSON.stringify({
              choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }],
              usage: { prompt_tokens: 10, completion_tokens: 5 },
            }),
          );
        };
        // The prompt the model sees is the environment's own repair prompt.
        assert.match(messages[1].content, /Broken script \(train\.py\):/);
        if (model === 'oracle') return reply('Here is the fix.\n```diff\n' + oracle + '```\n');
        if (model === 'useless')
          return reply('```diff\n--- a/train.py\n+++ b/train.py\n@@ -1,1 +1,2 @@\n+# looked at it\n' + firstLine() + '```\n');
        if (model === 'garbage') return reply('I am not sure. Maybe reinstall your libraries?');
        if (model === 'hang') return void hanging.add(res);
        if (model === 'flaky' && hits.get(model)! % 2 === 1) {
          res.writeHead(503, { 'content-type': 'application/json' });
          return res.end('{"error":{"message":"busy"}}');
        }
        if (model === 'flaky') return reply('no diff here either');
        if (model === 'malformed') {
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ choices: [] }));
        }
        res.writeHead(404);
        res.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  after(async () => {
    for (const r of hanging) r.destroy();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  let brokenFirstLine = '';
  function firstLine(): string {
    return ` ${brokenFirstLine}\n`;
  }

  const agent = (model: string): AgentIdentity => ({
    endpoint: base,
    model,
    sampling: { temperature: 0.2, max_tokens: 256, seed: 5 },
    source: 'endpoint',
  });
  const answerVia =
    (model: string, timeoutMs = 20_000, retries = 1) =>
    (p: { system: string; user: string }, _pr: unknown, i: number) =>
      chatComplete({ endpoint: base, model, timeoutMs, retries, backoffMs: () => 10 }, p.system, p.user, {
        temperature: 0.2,
        max_tokens: 256,
        seed: 5 + i,
      });

  test('a correct diff passes both checks (pass@1 = 1); every attempt carries info.agent', async () => {
    const env = new ForgeEnvironment({ mode: 'simulated' });
    const seen: Array<Record<string, unknown>> = [];
    try {
      const report = await evaluateModel(env, {
        problems: [{ task_id: TASK, seed: SEED }],
        n: 1,
        k: 1,
        agent: agent('oracle'),
        answer: answerVia('oracle'),
        onAttempt: (a) => void seen.push(a.agent),
      });
      assert.equal(report.attempts, 1);
      assert.equal(report.problems[0].held_out_passes, 1, JSON.stringify(report.problems[0]));
      assert.equal(report.overall.held_out['pass@1'], 1);
      assert.equal(report.overall.visible['pass@1'], 1);
      assert.equal(report.requests.total, 1);
      assert.equal(seen[0].model, 'oracle');
      assert.equal(seen[0].endpoint, base);
      assert.deepEqual(seen[0].sampling, { temperature: 0.2, max_tokens: 256, seed: 5 });
      assert.ok(report.by_primitive[report.problems[0].primitive_type!]);
      assert.ok(report.by_snapshot[report.problems[0].snapshot!]);
    } finally {
      await env.dispose();
    }
  });

  test('a useless diff that applies is run and fails: pass@1 = 0, no attempt is a success', async () => {
    const env = new ForgeEnvironment({ mode: 'simulated' });
    try {
      const phase = await prepareRepairPhase(env, { taskId: TASK, seed: SEED });
      brokenFirstLine = phase.broken.script_content.split('\n')[0]!;
      const successes: boolean[] = [];
      const ran: boolean[] = [];
      const report = await evaluateModel(env, {
        problems: [{ task_id: TASK, seed: SEED }],
        n: 2,
        k: 2,
        agent: agent('useless'),
        answer: answerVia('useless'),
        onAttempt: (a) => {
          successes.push(a.evaluation.success);
          ran.push(a.evaluation.apply.ok && a.evaluation.execution !== null);
        },
      });
      assert.deepEqual(successes, [false, false]);
      assert.deepEqual(ran, [true, true], 'the useless diff applied and the script ran');
      assert.equal(report.unparseable, 0, 'the diff was read and run');
      assert.equal(report.overall.held_out['pass@1'], 0);
      assert.equal(report.overall.held_out['pass@2'], 0);
      assert.equal(report.overall.visible['pass@1'], 0);
    } finally {
      await env.dispose();
    }
  });

  test('garbage is a scored failure with its reason; a hang times out, is retried and reported', async () => {
    const env = new ForgeEnvironment({ mode: 'simulated' });
    try {
      const garbage = await evaluateModel(env, {
        problems: [{ task_id: TASK, seed: SEED }],
        n: 1,
        k: 1,
        agent: agent('garbage'),
        answer: answerVia('garbage'),
      });
      assert.equal(garbage.unparseable, 1);
      assert.match(Object.keys(garbage.unparseable_reasons)[0], /no unified diff and no fenced script/);
      assert.equal(garbage.overall.held_out['pass@1'], 0);

      const errors: string[] = [];
      const hang = await evaluateModel(env, {
        problems: [{ task_id: TASK, seed: SEED }],
        n: 1,
        k: 1,
        agent: agent('hang'),
        answer: answerVia('hang', 300, 1),
        onAttempt: (a) => void errors.push(a.evaluation.error_trace),
      });
      assert.equal(hang.endpoint_failures, 1);
      assert.deepEqual(hang.requests.total, 2);
      assert.equal(hang.requests.retries, 1);
      assert.equal(hang.requests.timeouts, 2);
      assert.match(errors[0], /did not answer within/);
      assert.equal(hang.overall.held_out['pass@1'], 0);
    } finally {
      await env.dispose();
    }
  });

  test('a 503 is retried; a malformed answer is refused by the schema without retrying', async () => {
    const flaky = await chatComplete(
      { endpoint: base, model: 'flaky', timeoutMs: 5000, retries: 2, backoffMs: () => 10 },
      's',
      'Broken script (train.py):',
      { temperature: 0, max_tokens: 8 },
    );
    assert.equal(flaky.ok, true);
    assert.equal(flaky.stats.retries, 1);
    const bad = await chatComplete(
      { endpoint: base, model: 'malformed', timeoutMs: 5000, retries: 2, backoffMs: () => 10 },
      's',
      'Broken script (train.py):',
      { temperature: 0, max_tokens: 8 },
    );
    assert.equal(bad.ok, false);
    assert.match(!bad.ok ? bad.error : '', /not an OpenAI chat completion: choices/);
    assert.equal(bad.stats.requests, 1);
  });

  test('CLI: attempts stored as demonstrations with info.agent, answers exported and imported back', async () => {
    const dir = tempDir('forgeenv-evalmodel-');
    const answers = join(dir, 'answers.jsonl');
    const out: string[] = [];
    const code = await main(
      ['evaluate-model', '--endpoint', base, '--model', 'oracle', '--tasks', TASK, '--out', dir, '--export-answers', answers, '--json'],
      (s) => out.push(s),
      () => undefined,
    );
    assert.equal(code, 0, out.join('\n'));
    const report = JSON.parse(out.join('\n')) as { overall: { held_out: Record<string, number> }; attempts: number };
    assert.equal(report.attempts, 1);
    assert.equal(report.overall.held_out['pass@1'], 1);
    const records = readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { success: boolean; repair_completion: string; info: Record<string, any> });
    assert.equal(records.length, 1);
    assert.equal(records[0].info.agent.model, 'oracle');
    assert.equal(records[0].info.agent.source, 'endpoint');
    assert.equal(records[0].info.annotator_id, 'model:oracle');
    assert.equal(records[0].success, true);
    assert.equal(records[0].repair_completion, oracle);
    assert.equal(
      records[0].info.agent.completion,
      'Here is the fix.\n```diff\n' + oracle + '```\n',
      'the raw completion is kept beside the scored diff',
    );
    const rows = readAnswersFile(answers);
    assert.deepEqual(
      rows.map((r) => r.example_id),
      [`${TASK}@${SEED}`],
    );

    // The exported file scored again, plus a garbage second sample: pass@1 halves, pass@2 stays 1.
    writeFileSync(answers, readFileSync(answers, 'utf8') + JSON.stringify({ example_id: `${TASK}@${SEED}`, answer: 'no idea' }) + '\n');
    const out2: string[] = [];
    const code2 = await main(
      ['evaluate-model', '--import-answers', answers, '--k', '2', '--json'],
      (s) => out2.push(s),
      () => undefined,
    );
    assert.equal(code2, 0, out2.join('\n'));
    const r2 = JSON.parse(out2.join('\n')) as {
      overall: { held_out: Record<string, number> };
      unparseable: number;
      agent: { source: string };
    };
    assert.equal(r2.agent.source, 'answers-file');
    assert.equal(r2.unparseable, 1);
    assert.equal(r2.overall.held_out['pass@1'], 0.5);
    assert.equal(r2.overall.held_out['pass@2'], 1);
  });

  test('CLI: bad input gets a clear error', async () => {
    const out: string[] = [];
    assert.equal(
      await main(
        ['evaluate-model', '--model', 'x'],
        (s) => out.push(s),
        () => undefined,
      ),
      2,
    );
    assert.match(out.join('\n'), /--endpoint and --model are required/);
    out.length = 0;
    assert.equal(
      await main(
        ['evaluate-model', '--endpoint', base, '--model', 'x', '--tasks', 'nope'],
        (s) => out.push(s),
        () => undefined,
      ),
      1,
    );
    assert.match(out.join('\n'), /unknown task\(s\) nope/);
    out.length = 0;
    assert.equal(
      await main(
        ['evaluate-model', '--endpoint', base, '--model', 'x', '--k', '3', '--n', '2'],
        (s) => out.push(s),
        () => undefined,
      ),
      2,
    );
    assert.match(out.join('\n'), /--n 2 is below --k 3/);
    assert.ok(!existsSync(join(process.cwd(), 'model-evaluations')));
  });
});

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { applyRepairDiff, createRepairDiff } from '../../../src/env/diff/diff';
import { parseSettings } from '../../../src/editor/settingsSchema';
import { askForRepair, modelChoiceOf, type ModelChoice } from '../../../src/editor/suggest/askModel';
import { suggestionInfo, verifiedFixAfterRun, type Suggestion } from '../../../src/editor/suggest/suggestionRecord';

const BROKEN = 'from transformers import DataCollatorPadding\nprint("hi")\nprint("TRAINING_COMPLETE")\n';
const FIXED = BROKEN.replace('DataCollatorPadding', 'DataCollatorWithPadding');

/** A tiny OpenAI-compatible server: answers what `reply` returns, and keeps what it was asked. */
function chatServer(reply: (body: { messages: Array<{ role: string; content: string }>; temperature: number; model: string }) => string) {
  const asked: unknown[] = [];
  const server: Server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw);
      asked.push(body);
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: reply(body) }, finish_reason: 'stop' }] }));
    });
  });
  return { server, asked, url: () => `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1` };
}

const choiceFor = (endpoint: string): ModelChoice => ({
  endpoint,
  model: 'tiny',
  sampling: { temperature: 0.3, max_tokens: 256 },
  timeoutMs: 5000,
  retries: 0,
});

describe('Suggest Repair: the model settings', () => {
  test('no endpoint, a bad endpoint or no model name each name the setting to open', () => {
    const none = modelChoiceOf(parseSettings(() => undefined).settings);
    assert.equal(none.ok, false);
    assert.equal(!none.ok && none.setting, 'model.endpoint');
    const bad = parseSettings((k) => (k === 'model.endpoint' ? 'ftp://x' : undefined));
    assert.match(bad.problems.join('\n'), /forgeenv\.model\.endpoint/);
    const noName = modelChoiceOf(parseSettings((k) => (k === 'model.endpoint' ? 'http://127.0.0.1:1/v1' : undefined)).settings);
    assert.equal(!noName.ok && noName.setting, 'model.name');
    const raw: Record<string, unknown> = {
      'model.endpoint': ' http://127.0.0.1:8089/v1 ',
      'model.name': 'smol',
      'model.temperature': 0.7,
      'model.temperature2': 1,
    };
    const ok = modelChoiceOf(parseSettings((k) => raw[k]).settings);
    assert.ok(ok.ok);
    assert.equal(ok.choice.endpoint, 'http://127.0.0.1:8089/v1');
    assert.deepEqual(ok.choice.sampling, { temperature: 0.7, max_tokens: 1024 });
    assert.match(parseSettings((k) => (k === 'model.temperature' ? 3 : undefined)).problems.join('\n'), /forgeenv\.model\.temperature/);
  });
});

describe('Suggest Repair: asking the model', () => {
  let diffServer: ReturnType<typeof chatServer>;
  let chattyServer: ReturnType<typeof chatServer>;
  before(async () => {
    diffServer = chatServer(() => `Here is the fix:\n\`\`\`diff\n${createRepairDiff(BROKEN, FIXED)}\`\`\`\n`);
    chattyServer = chatServer(() => 'I think you should upgrade transformers.');
    await Promise.all([diffServer, chattyServer].map((s) => new Promise<void>((r) => s.server.listen(0, '127.0.0.1', r))));
  });
  after(() => {
    diffServer.server.close();
    chattyServer.server.close();
  });

  test("a diff answer becomes the proposed script and a diff against the broken script; the prompt is the episode's", async () => {
    const out = await askForRepair(choiceFor(diffServer.url()), {
      brokenScript: BROKEN,
      repairPrompt: 'REPAIR PROMPT OF THE EPISODE',
      maxDiffBytes: 1 << 20,
    });
    assert.ok(out.ok, !out.ok ? out.message : '');
    assert.equal(out.proposal.script, FIXED);
    assert.equal(out.proposal.answerKind, 'diff');
    const re = applyRepairDiff(BROKEN, out.proposal.diff);
    assert.ok(re.ok && re.script === FIXED, 'the stored diff reproduces the proposal');
    assert.deepEqual(out.proposal.agent, {
      kind: 'model',
      source: 'endpoint',
      endpoint: diffServer.url(),
      model: 'tiny',
      sampling: { temperature: 0.3, max_tokens: 256 },
    });
    const body = diffServer.asked.at(-1) as { messages: Array<{ role: string; content: string }>; temperature: number };
    assert.equal(body.messages.at(-1)?.content, 'REPAIR PROMPT OF THE EPISODE');
    assert.equal(body.temperature, 0.3);
  });

  test('an answer with no repair, and an endpoint that is down, are clear failures', async () => {
    const chatty = await askForRepair(choiceFor(chattyServer.url()), { brokenScript: BROKEN, repairPrompt: 'p', maxDiffBytes: 1 << 20 });
    assert.equal(chatty.ok, false);
    assert.equal(!chatty.ok && chatty.stage, 'answer');
    assert.match(!chatty.ok ? chatty.message : '', /no repair: no unified diff/);
    const closed = createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const down = await askForRepair(choiceFor(`http://127.0.0.1:${port}/v1`), {
      brokenScript: BROKEN,
      repairPrompt: 'p',
      maxDiffBytes: 1 << 20,
    });
    assert.equal(down.ok, false);
    assert.equal(!down.ok && down.stage, 'endpoint');
    assert.match(!down.ok ? down.message : '', /gave no suggestion: the endpoint could not be reached: ECONNREFUSED/);
  });
});

describe('Suggest Repair: what the demonstration keeps', () => {
  const s = (n: number, accepted: boolean): Suggestion => ({
    agent: { kind: 'model', source: 'endpoint', endpoint: 'http://x/v1', model: 'm', sampling: { temperature: 0.2, max_tokens: 16 } },
    diff: `diff ${n}`,
    answer_kind: 'diff',
    completion: `c${n}`,
    asked_at: '2026-01-01T00:00:00.000Z',
    latency_ms: 5,
    n,
    accepted,
    decision: accepted ? 'accepted' : 'discarded',
  });

  test('the accepted suggestion is kept (not a later discarded one), with the count asked', () => {
    const info = suggestionInfo({ suggestions: [s(1, true), s(2, false)] }) as {
      suggestion: { diff: string; accepted: boolean; asked: number };
      time_to_verified_fix: unknown;
    };
    assert.equal(info.suggestion.diff, 'diff 1');
    assert.equal(info.suggestion.accepted, true);
    assert.equal(info.suggestion.asked, 2);
    assert.deepEqual(info.time_to_verified_fix, { ms: null, run: null, with_suggestion: true });
    assert.deepEqual(suggestionInfo({}), { time_to_verified_fix: { ms: null, run: null, with_suggestion: false } });
  });

  test('only the first successful run marks the verified fix, with whether a suggestion was accepted before it', () => {
    const startedAt = '2026-01-01T00:00:00.000Z';
    const t = Date.parse(startedAt);
    assert.equal(verifiedFixAfterRun({ startedAt }, 1, false, t + 10), undefined);
    assert.deepEqual(verifiedFixAfterRun({ startedAt }, 2, true, t + 1500), { ms: 1500, run: 2, with_suggestion: false });
    assert.deepEqual(verifiedFixAfterRun({ startedAt, suggestions: [s(1, true)] }, 1, true, t + 900), {
      ms: 900,
      run: 1,
      with_suggestion: true,
    });
    assert.equal(verifiedFixAfterRun({ startedAt, verifiedFix: { ms: 1, run: 1, with_suggestion: false } }, 3, true, t + 2000), undefined);
  });
});

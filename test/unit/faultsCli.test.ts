import { strict as assert } from 'node:assert';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, test } from 'node:test';
import { main } from '../../src/cli/main';
import { breakagePrimitives } from '../../src/env/primitives/registry';
import { RolloutResultSchema } from '../../src/env/schemas';

// The command line's small faults: a closed pipe, an unknown primitive, a broken task script.
const root = resolve(__dirname, '../..');
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
const tempFolder = () => {
  const d = mkdtempSync(join(tmpdir(), 'forgeenv-cli-faults-'));
  made.push(d);
  return d;
};

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(
    argv,
    (s) => void (out += s + '\n'),
    (s) => void (err += s + '\n'),
  );
  return { code, out, err };
}

/** Runs the real `forgeenv` with its stdout closed before it writes: every write meets EPIPE. */
function runWithClosedStdout(...argv: string[]): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(root, 'bin/forgeenv.js'), ...argv], {
      cwd: root,
      env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => done({ code, stderr }));
  });
}

describe('CLI faults', () => {
  test(
    '`forgeenv primitives | head` and `forgeenv tasks | head`: a closed pipe ends the command quietly',
    { timeout: 120_000 },
    async () => {
      for (const argv of [['primitives'], ['tasks'], ['tasks', '--json']]) {
        const r = await runWithClosedStdout(...argv);
        assert.equal(r.stderr, '', `${argv.join(' ')}: ${r.stderr}`);
        assert.equal(r.code, 0, argv.join(' '));
      }
    },
  );

  test('an unknown --primitive is a usage error (exit 2) that lists the breakage primitives', async () => {
    const names = breakagePrimitives().map((p) => p.name);
    for (const argv of [
      ['episode', '--primitive', 'NoSuchPrimitive', '--params', '{}', '--repair', 'none'],
      ['episode', '--primitive', 'NoSuchPrimitive', '--repair', 'none'],
      ['check-primitives', '--primitive', 'NoSuchPrimitive', '--no-run'],
    ]) {
      const r = await run(...argv);
      assert.equal(r.code, 2, argv.join(' '));
      assert.equal(r.out, '');
      assert.match(r.err, /unknown primitive "NoSuchPrimitive"; the breakage primitives are: /);
      for (const n of names) assert.ok(r.err.includes(n), `${n} listed`);
    }
  });

  test('a task script with a syntax error exits 1 with file:line:column', { timeout: 120_000 }, async () => {
    const d = tempFolder();
    writeFileSync(join(d, 'broken_task.py'), 'import torch\ndef f(:\n    pass\n');
    const r = await run('episode', '--task', 'broken_task', '--task-dir', d, '--seed', '1', '--repair', 'none');
    assert.equal(r.code, 1, r.err);
    assert.match(
      r.err,
      new RegExp(`^forgeenv: ${join(d, 'broken_task.py').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:2:\\d+: the task script does not parse`),
    );
  });

  test('output larger than a pipe buffer reaches the reader whole (exit waits for the flush)', { timeout: 120_000 }, async () => {
    const d = tempFolder();
    const diff = join(d, 'big.diff');
    let text = '';
    for (let i = 0; text.length < 400_000; i++) text += `@@ -1,1 +1,1 @@\n-nothing_${i}\n+y\n`;
    writeFileSync(diff, text);
    const out = await new Promise<{ code: number | null; stdout: string }>((done) => {
      const child = spawn(
        process.execPath,
        [join(root, 'bin/forgeenv.js'), 'episode', '--task', 'simple_regression', '--repair', diff, '--seed', '1'],
        {
          cwd: root,
          env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
          stdio: ['ignore', 'pipe', 'ignore'],
        },
      );
      let stdout = '';
      child.stdout.on('data', (b: Buffer) => (stdout += b.toString()));
      child.on('close', (code) => done({ code, stdout }));
    });
    assert.equal(out.code, 0);
    const rec = RolloutResultSchema.parse(JSON.parse(out.stdout));
    assert.equal(rec.repair_completion, text);
    assert.match(rec.error_trace, /did not apply/);
  });

  test('a --repair file over the diff size limit is refused before it is read', async () => {
    const d = tempFolder();
    const big = join(d, 'huge.diff');
    writeFileSync(big, '');
    truncateSync(big, 50 * 1024 * 1024);
    const r = await run('episode', '--task', 'simple_regression', '--repair', big, '--seed', '1');
    assert.equal(r.code, 1, r.err);
    assert.match(r.err, /--repair: .*huge\.diff is 52428800 bytes, over the 2097152-byte limit/);
  });
});

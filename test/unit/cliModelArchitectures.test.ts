// `--model-architectures FILE.json`: a malformed map is a usage error naming the file, before any run.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';

const root = resolve(__dirname, '../..');
const forgeenv = (...args: string[]) =>
  spawnSync(process.execPath, [join(root, 'bin/forgeenv.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
    timeout: 120_000,
  });

test('--model-architectures: a file that is not an id -> architecture map is refused with a usage error', () => {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-archmap-'));
  try {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, JSON.stringify({ 'acme/secret-7b': 7 }));
    const r = forgeenv('episode', '--task', 'bert_ner', '--repair', 'oracle', '--model-architectures', bad);
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /--model-architectures .*bad\.json: expected a JSON object of model id -> model_type/);
    const missing = forgeenv('episode', '--task', 'bert_ner', '--repair', 'oracle', '--model-architectures', join(dir, 'nope.json'));
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /nope\.json: ENOENT/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

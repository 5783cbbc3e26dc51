// The environment's shape, kept by tests (docs/architecture.md): at most 15 files at the root of
// src/env, every room documented, and the core layers free of `vscode`.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';

const root = resolve(__dirname, '../..');
const envDir = join(root, 'src/env');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

describe('environment layout', () => {
  test('at most 15 files at the root of src/env; the rest live in rooms', () => {
    const rootFiles = readdirSync(envDir).filter((n) => statSync(join(envDir, n)).isFile());
    assert.ok(rootFiles.length <= 15, `src/env has ${rootFiles.length} files at its root: ${rootFiles.join(', ')}`);
  });

  test('every room of src/env is in docs/architecture.md, and every room named there exists', () => {
    const rooms = readdirSync(envDir).filter((n) => statSync(join(envDir, n)).isDirectory());
    const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');
    const documented = [...doc.matchAll(/^\| `([a-z]+)\/` \|/gm)].map((m) => m[1]);
    assert.deepEqual([...rooms].sort(), [...documented].sort());
  });

  test('src/env, src/store and src/cli never import vscode', () => {
    const offenders = ['src/env', 'src/store', 'src/cli']
      .flatMap((d) => walk(join(root, d)))
      .filter((f) => /from 'vscode'|require\('vscode'\)|import\('vscode'\)/.test(readFileSync(f, 'utf8')))
      .map((f) => f.slice(root.length + 1));
    assert.deepEqual(offenders, []);
  });
});

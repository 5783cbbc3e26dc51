// A warm run's prompt exit (zygote.ts) never finalizes the import-time heap, which a cold run's
// shutdown does. Same outcome only while the stand-ins have no finalizer at all: this test keeps
// it so. (The real libraries' import-time heap, measured: no finalizer a script could observe,
// docs/sandbox.md "Prompt exit".)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { simlibsDir } from '../../src/env/paths';

function pythonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    if (n === '__pycache__') return [];
    return statSync(p).isDirectory() ? pythonFiles(p) : p.endsWith('.py') ? [p] : [];
  });
}

test('the stand-ins define no finalizer: no __del__, weakref.finalize, atexit or gc callback', () => {
  const root = simlibsDir();
  const files = [...pythonFiles(root), ...pythonFiles(`${root}-fallback`)];
  assert.ok(files.length > 20, `stand-in files found: ${files.length}`);
  const offenders = files.flatMap((f) =>
    readFileSync(f, 'utf8')
      .split('\n')
      .map((line, i) => ({ line, at: `${relative(root, f)}:${i + 1}` }))
      .filter(({ line }) => /\bdef __del__\b|\bfinalize\(|\batexit\b|gc\.callbacks|__del__\s*=/.test(line))
      .map(({ at, line }) => `${at}: ${line.trim()}`),
  );
  assert.deepEqual(offenders, []);
});

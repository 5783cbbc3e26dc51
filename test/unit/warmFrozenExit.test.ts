// A simulated zygote keeps the import-time heap frozen at exit (zygote.ts WARM_UNFREEZE_AT_EXIT):
// its shutdown then never finalizes import-time objects in reference cycles, which a cold run's
// does. Same outcome only while the stand-ins have no finalizer at all: this test keeps it so.
// (Real mode unfreezes: its libraries have finalizers, and triton's nanobind prints "leaked".)
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { simlibsDir } from '../../src/env/paths';
import { WARM_UNFREEZE_AT_EXIT, zygoteArgv } from '../../src/env/warm/zygote';

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

test('real zygotes unfreeze at exit, simulated ones stay frozen; the choice reaches the zygote argv', () => {
  assert.deepEqual(WARM_UNFREEZE_AT_EXIT, { simulated: false, real: true });
  const argv = (unfreeze: boolean) => zygoteArgv('python3', ['torch'], [], [], unfreeze);
  assert.equal(argv(true)[4], 'unfreeze');
  assert.equal(argv(false)[4], 'frozen');
  assert.deepEqual(argv(false).slice(5), ['torch', '--', '--']);
});

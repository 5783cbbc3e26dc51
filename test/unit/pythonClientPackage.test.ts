// The Python client's declared dependency is the openenv distribution the conformance tests run
// against, in a range that admits the locked version and not the next minor series: installing the
// client must not replace openenv-core with another distribution of the same `openenv` package.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

const ROOT = join(__dirname, '..', '..');

const parts = (v: string) => v.split('.').map(Number);
function cmp(a: string, b: string): number {
  const [x, y] = [parts(a), parts(b)];
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) < (y[i] ?? 0) ? -1 : 1;
  return 0;
}
/** PEP 440 comparison clauses (>=, >, <=, <, ==), enough for the client's dependency. */
function admits(spec: string, version: string): boolean {
  return spec
    .split(',')
    .map((c) => c.trim())
    .filter(Boolean)
    .every((c) => {
      const m = /^(>=|<=|==|>|<)\s*([\d.]+)$/.exec(c);
      assert.ok(m, `unsupported clause ${c}`);
      const d = cmp(version, m[2]);
      return { '>=': d >= 0, '<=': d <= 0, '==': d === 0, '>': d > 0, '<': d < 0 }[m[1] as '>='];
    });
}

test('the client depends on openenv-core in a range that admits the locked version and not the next minor', () => {
  const toml = readFileSync(join(ROOT, 'clients', 'python', 'pyproject.toml'), 'utf8');
  const deps = JSON.parse(/^dependencies\s*=\s*(\[[^\]]*\])/m.exec(toml)![1]) as string[];
  const openenv = deps.filter((d) => /^openenv\b/i.test(d));
  assert.equal(openenv.length, 1, `one openenv dependency: ${deps.join(', ')}`);
  const m = /^([A-Za-z0-9_.-]+)(\[[^\]]*\])?\s*(.*)$/.exec(openenv[0])!;
  assert.equal(m[1].toLowerCase().replace(/_/g, '-'), 'openenv-core', 'the distribution the conformance tests lock, not `openenv`');
  assert.equal(m[2], undefined, 'no extras that pull in another distribution');
  const locked = /^openenv-core==([\d.]+)$/m.exec(readFileSync(join(ROOT, 'test', 'fixtures', 'openenv', 'requirements.lock'), 'utf8'))![1];
  assert.ok(admits(m[3], locked), `${m[3]} admits the locked ${locked}`);
  const [major, minor] = parts(locked);
  assert.ok(!admits(m[3], `${major}.${(minor ?? 0) + 1}.0`), `${m[3]} stops before the next minor series`);
});

// The trusted step that fills the bytecode cache also builds the stand-ins' API-surface cache
// (sandbox/bytecodeCache.ts): runs read it read-only, and a JSON file without its cache entry is
// parsed in every run (2.5 times the memory, slower start and shutdown). Data added after the step
// ran once must make it run again.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { simlibsDir } from '../../src/env/paths';
import { warmBytecodeCache } from '../../src/env/sandbox/bytecodeCache';

test('API data added after the surface cache was built gets its cache entry on the next run', async () => {
  const root = mkdtempSync(join(tmpdir(), 'forgeenv-surface-stamp-'));
  try {
    const cacheDir = join(root, 'cache');
    const api = join(root, 'api');
    mkdirSync(join(api, 'snap-x'), { recursive: true });
    const data = JSON.stringify({ version: '1.0', modules: { 'pkg.sub': {} }, objects: {} });
    writeFileSync(join(api, 'snap-x', 'alpha.json'), data);
    const req = () => ({
      python: 'python3',
      cacheDir,
      stdlib: [],
      libraries: [],
      surface: { simlibs: simlibsDir(), env: { FORGEENV_API_DIR: api, FORGEENV_SNAPSHOT: 'snap-x' } },
      env: { PATH: process.env.PATH ?? '', PYTHONPYCACHEPREFIX: cacheDir },
    });
    const entries = (pkg: string) =>
      existsSync(join(cacheDir, 'forgeenv-surface'))
        ? readdirSync(join(cacheDir, 'forgeenv-surface')).filter((f) => f.startsWith(`v2-snap-x-${pkg}-`) && f.endsWith('.idx'))
        : [];
    assert.equal(await warmBytecodeCache(req()), true);
    assert.equal(entries('alpha').length, 1, 'the first step caches alpha');
    writeFileSync(join(api, 'snap-x', 'beta.json'), data);
    assert.equal(await warmBytecodeCache(req()), true);
    assert.equal(entries('beta').length, 1, 'beta, added later, is cached too');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

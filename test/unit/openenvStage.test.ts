// `openenv push` takes the folder scripts/openenv-stage.mjs lays out: checked with openenv-core's
// own validation (the function push runs first), and the Dockerfile finds everything it copies.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { openenvPython, openenvSkipReason } from './openenvTestUtils';

const root = resolve(__dirname, '../..');

test('the staged folder passes openenv push validation and holds the Docker build context', { skip: openenvSkipReason(__filename) }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-stage-'));
  try {
    const out = join(dir, 'space');
    execFileSync(process.execPath, [join(root, 'scripts/openenv-stage.mjs'), out], { cwd: root });
    const py = [
      'import json, sys',
      'from pathlib import Path',
      'from openenv.cli.commands.push import _validate_openenv_directory',
      'name, manifest = _validate_openenv_directory(Path(sys.argv[1]))',
      'print(json.dumps({"name": name, "port": manifest.get("port")}))',
    ].join('\n');
    const verdict = JSON.parse(execFileSync(openenvPython(), ['-c', py, out], { encoding: 'utf8' }).trim().split('\n').at(-1)!) as {
      name: string;
      port: number;
    };
    assert.deepEqual(verdict, { name: 'forge_env', port: 8000 });
    // A Docker Space's front matter, on the port the image listens on.
    const readme = readFileSync(join(out, 'README.md'), 'utf8');
    assert.match(readme, /^---\n(?:.*\n)*?sdk: docker\n(?:.*\n)*?app_port: 8000\n(?:.*\n)*?---\n/);
    // Every COPY source of the build stage is in the context.
    const docker = readFileSync(join(out, 'Dockerfile'), 'utf8');
    assert.match(docker, /COPY \. \./);
    for (const f of [
      'package.json',
      'package-lock.json',
      'scripts/build.mjs',
      'bin/forgeenv.js',
      'src/extension.ts',
      'resources/drifts/catalog.json',
    ])
      assert.ok(existsSync(join(out, f)), f);
    // Tests and benches stay out of the Space.
    assert.equal(existsSync(join(out, 'test')), false);
    // A second stage into a non-empty folder is refused instead of mixing two layouts.
    assert.throws(
      () => execFileSync(process.execPath, [join(root, 'scripts/openenv-stage.mjs'), out], { cwd: root, stdio: 'pipe' }),
      /not empty/,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

// The Docker image without Docker: its runtime layout is assembled from the Dockerfile's final
// stage (`COPY --from=build` sources, `ENV`, `EXPOSE`, `CMD`), from a production build, and
// started the way the container starts it. It must serve on $PORT (the port it EXPOSEs, the one
// OpenEnv's Docker launcher maps), pass OpenEnv's own runtime validation, run an episode, and
// write nothing into its install folder.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { freePort, openenvPython } from './openenvTestUtils';

const ROOT = join(__dirname, '..', '..');
const TOKEN = 'docker-layout-token-0123456789';

interface FinalStage {
  from: string;
  copies: Array<{ sources: string[]; dest: string }>;
  env: Record<string, string>;
  expose: string[];
  cmd: string[];
  apt: string[];
}

/** The last stage of the Dockerfile, with line continuations joined. */
function finalStage(text: string): FinalStage {
  const lines = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const start = lines
    .map((l, i) => (/^FROM\s/i.test(l) ? i : -1))
    .filter((i) => i >= 0)
    .at(-1)!;
  const stage: FinalStage = { from: lines[start].split(/\s+/)[1], copies: [], env: {}, expose: [], cmd: [], apt: [] };
  for (const l of lines.slice(start + 1)) {
    const [op, ...rest] = l.split(/\s+/);
    if (op === 'COPY' && rest[0] === '--from=build') stage.copies.push({ sources: rest.slice(1, -1), dest: rest.at(-1)! });
    else if (op === 'ENV') {
      const m = /^(\w+)[= ](.*)$/.exec(rest.join(' '));
      if (m) stage.env[m[1]] = m[2]!;
    } else if (op === 'EXPOSE') stage.expose.push(...rest);
    else if (op === 'CMD') stage.cmd = JSON.parse(rest.join(' ')) as string[];
    else if (op === 'RUN' && /apt-get install/.test(l))
      stage.apt.push(
        ...l
          .replace(/.*apt-get install/, '')
          .split('&&')[0]
          .split(/\s+/)
          .filter((w) => w && !w.startsWith('-')),
      );
  }
  return stage;
}

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? files(p) : [relative(dir, p)];
  });
}

describe('the Docker image, started from its runtime layout', () => {
  const stage = finalStage(readFileSync(join(ROOT, 'Dockerfile'), 'utf8'));
  let scratch: string;
  let app: string;
  let child: ChildProcess | undefined;
  let port: number;
  let stderr = '';
  let before_: string[];

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'forgeenv-docker-layout-'));
    const build = join(scratch, 'build');
    await promisify(execFile)(
      process.execPath,
      [join(ROOT, 'scripts', 'build.mjs'), '--production', '--no-tests', '--outdir', join(build, 'dist')],
      { cwd: ROOT },
    );
    app = join(scratch, 'app');
    mkdirSync(app);
    // `/app/<x>` in the build stage: dist/ from the production build, everything else from the repository.
    const sourceOf = (p: string) => {
      const rel = relative('/app', p);
      return rel.startsWith('dist') ? join(build, rel) : join(ROOT, rel);
    };
    for (const c of stage.copies) {
      const dest = join(app, c.dest.replace(/^\.\/?/, ''));
      for (const src of c.sources) {
        const from = sourceOf(src);
        assert.ok(existsSync(from), `COPY source ${src} exists in the build (${from})`);
        const to =
          c.dest.endsWith('/') && c.sources.length > 1
            ? join(dest, basename(src))
            : c.dest.endsWith('/') && statSync(from).isFile()
              ? join(dest, basename(src))
              : dest;
        mkdirSync(dirname(to), { recursive: true });
        cpSync(from, to, { recursive: true });
      }
    }
    before_ = files(app).sort();
    port = await freePort();
    // The container's environment: its ENV lines, the token a deployer sets, and PORT as a platform sets it.
    const env = {
      PATH: process.env.PATH ?? '',
      HOME: scratch,
      ...stage.env,
      FORGEENV_TOKEN: TOKEN,
      PORT: String(port),
      FORGEENV_CACHE_DIR: join(scratch, 'cache'),
    };
    child = spawn(stage.cmd[0], stage.cmd.slice(1), { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'] });
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    child.stdout!.on('data', (d: Buffer) => (stderr += d.toString()));
    for (let i = 0; i < 400; i++) {
      try {
        if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.fail(`the image's CMD did not serve /health on $PORT=${port}: ${stderr}`);
  });

  after(() => {
    child?.kill('SIGTERM');
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('a supported Node base, bubblewrap installed, and it serves on the port it exposes', () => {
    const major = Number(/^node:(\d+)/.exec(stage.from)?.[1]);
    assert.ok(major >= 22, `Node ${major} is past end of life (base ${stage.from})`);
    assert.ok(stage.apt.includes('bubblewrap'), `apt-get installs ${stage.apt.join(', ')}`);
    assert.deepEqual(stage.expose, [stage.env.PORT], 'EXPOSE is the PORT it serves on');
    assert.equal(stage.env.PORT, '8000', "OpenEnv's Docker launcher maps container port 8000");
    const yaml = readFileSync(join(ROOT, 'openenv.yaml'), 'utf8');
    assert.match(yaml, new RegExp(`^port: ${stage.env.PORT}$`, 'm'), 'openenv.yaml names the same port');
    assert.match(
      stderr,
      new RegExp(`serving OpenEnv on http://0\\.0\\.0\\.0:${port} .*token required.*sandbox ${stage.env.FORGEENV_SANDBOX}`),
    );
  });

  test('an episode over HTTP: token required, reset runs the script', async () => {
    assert.equal(
      (await fetch(`http://127.0.0.1:${port}/reset`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } }))
        .status,
      401,
    );
    const r = await fetch(`http://127.0.0.1:${port}/reset`, {
      method: 'POST',
      body: JSON.stringify({ seed: 3 }),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
    });
    assert.equal(r.status, 200, await r.clone().text());
    const body = (await r.json()) as { observation?: { task_id?: string } };
    assert.ok(body.observation?.task_id, JSON.stringify(body).slice(0, 400));
  });

  test(
    "OpenEnv's runtime validation passes against the layout's server",
    { skip: existsSync(openenvPython()) || process.env.CI ? false : 'the openenv-core venv is missing (scripts/setup-openenv.sh)' },
    async () => {
      // `openenv validate` sends no token, so it checks the same install served on loopback, where none is needed.
      const local = await freePort();
      const server = spawn(process.execPath, ['bin/forgeenv.js', 'serve', '--port', String(local)], {
        cwd: app,
        env: { PATH: process.env.PATH ?? '', HOME: scratch, FORGEENV_CACHE_DIR: join(scratch, 'cache') },
        stdio: 'ignore',
      });
      try {
        for (
          let i = 0;
          i < 400 &&
          !(await fetch(`http://127.0.0.1:${local}/health`).then(
            (r) => r.ok,
            () => false,
          ));
          i++
        )
          await new Promise((r) => setTimeout(r, 50));
        const cli = join(dirname(openenvPython()), 'openenv');
        const { stdout } = await promisify(execFile)(cli, ['validate', '--url', `http://127.0.0.1:${local}`], { timeout: 120_000 }).catch(
          (e: { stdout?: string }) => ({ stdout: e.stdout ?? '' }),
        );
        const report = JSON.parse(stdout) as { passed: boolean; summary: { failed_criteria: unknown[] } };
        assert.equal(report.passed, true, JSON.stringify(report.summary));
      } finally {
        server.kill('SIGTERM');
      }
    },
  );

  test('nothing is written into the install folder', () => {
    assert.deepEqual(files(app).sort(), before_);
  });
});

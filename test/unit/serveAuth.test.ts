// `forgeenv serve`'s token and Origin check, on the real server on loopback: who may reset, step and
// open a /ws session. The wire format itself is serve.test.ts's.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import WebSocket from 'ws';
import { runServeCommand, startServer, type ForgeServer } from '../../src/cli/serve';
import { isLoopbackHost, normalizeOrigin, tokensEqual } from '../../src/env/openenv/serverAuth';
import { defaultSettings, parseSettings, remoteTokenOf } from '../../src/editor/settingsSchema';
import { RemoteBackend, RemoteEnvironmentError } from '../../src/env/openenv/remoteBackend';
import { openenvPython, openenvSkipReason } from './openenvTestUtils';

const TOKEN = 'test-token-0123456789abcdef';
const ALLOWED = 'https://studio.example.org';

/** The HTTP status a /ws handshake gets (101 when it opens). */
function handshake(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => {
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('error', (e) => (/closed before the connection/.test(e.message) ? undefined : reject(e)));
  });
}

let server: ForgeServer;
let base: string;
let ws: string;
// The CLI reads FORGEENV_TOKEN: one set where the tests run would let `--host 0.0.0.0` start and wait for Ctrl-C.
const envToken = process.env.FORGEENV_TOKEN;
delete process.env.FORGEENV_TOKEN;
before(async () => {
  server = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 4, maxRuns: 2, token: TOKEN, allowedOrigins: [ALLOWED] });
  base = `http://127.0.0.1:${server.port}`;
  ws = `ws://127.0.0.1:${server.port}/ws`;
});
after(async () => {
  await server.close();
  if (envToken !== undefined) process.env.FORGEENV_TOKEN = envToken;
});

const bearer = (t: string) => ({ authorization: `Bearer ${t}` });

describe('forgeenv serve --token', () => {
  test('without the token every endpoint but /health answers 401', async () => {
    assert.equal((await fetch(`${base}/health`)).status, 200);
    for (const path of ['/metadata', '/schema', '/state', '/openapi.json', '/no-such-path']) {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, 401, path);
      assert.equal(res.headers.get('www-authenticate'), 'Bearer');
    }
    for (const path of ['/reset', '/step', '/mcp'])
      assert.equal((await fetch(`${base}${path}`, { method: 'POST', body: '{}' })).status, 401, path);
    assert.equal(await handshake(ws), 401);
  });

  test('a wrong token answers 401, over HTTP and on the /ws handshake (header or query)', async () => {
    for (const wrong of ['x', `${TOKEN}x`, TOKEN.slice(0, -1), TOKEN.toUpperCase()]) {
      assert.equal((await fetch(`${base}/metadata`, { headers: bearer(wrong) })).status, 401, wrong);
      assert.equal(await handshake(ws, bearer(wrong)), 401);
      assert.equal(await handshake(`${ws}?token=${encodeURIComponent(wrong)}`), 401);
    }
    assert.equal((await fetch(`${base}/metadata`, { headers: { authorization: `Basic ${TOKEN}` } })).status, 401);
    // The query form is for the WebSocket handshake only.
    assert.equal((await fetch(`${base}/metadata?token=${TOKEN}`)).status, 401);
  });

  test('the right token opens HTTP and /ws (header or query)', async () => {
    assert.equal((await fetch(`${base}/metadata`, { headers: bearer(TOKEN) })).status, 200);
    assert.equal((await fetch(`${base}/metadata`, { headers: { authorization: `bearer  ${TOKEN}` } })).status, 200);
    const reset = await fetch(`${base}/reset`, {
      method: 'POST',
      headers: bearer(TOKEN),
      body: JSON.stringify({ task_id: 'simple_regression', seed: 1 }),
    });
    assert.equal(reset.status, 200);
    assert.equal(((await reset.json()) as { observation: { current_phase: string } }).observation.current_phase, 'drift_gen');
    assert.equal(await handshake(ws, bearer(TOKEN)), 101);
    assert.equal(await handshake(`${ws}?token=${encodeURIComponent(TOKEN)}`), 101);
  });

  test('RemoteBackend sends the token; without it or with a wrong one the error says so', async () => {
    const remote = new RemoteBackend(base, 60_000, 10_000, TOKEN);
    try {
      const obs = await remote.reset({ task_id: 'simple_regression', seed: 3 });
      assert.equal(obs.current_phase, 'drift_gen');
    } finally {
      await remote.dispose();
    }
    for (const [token, said] of [
      [undefined, /requires a token/],
      ['wrong-token-0123456789', /not the one/],
    ] as const) {
      const r = new RemoteBackend(base, 60_000, 10_000, token);
      await assert.rejects(
        r.reset(),
        (e: unknown) =>
          e instanceof RemoteEnvironmentError &&
          e.code === 'UNAUTHORIZED' &&
          said.test(e.message) &&
          /forgeenv\.remoteToken/.test(e.message),
      );
      await r.dispose();
    }
  });
});

describe('forgeenv serve: browser origins', () => {
  test('a foreign Origin is refused with 403 on HTTP and /ws, even with the token', async () => {
    for (const origin of ['https://evil.example', 'null', 'http://127.0.0.1:1234', `${ALLOWED}.evil.example`]) {
      assert.equal((await fetch(`${base}/metadata`, { headers: { origin, ...bearer(TOKEN) } })).status, 403, origin);
      assert.equal((await fetch(`${base}/health`, { headers: { origin } })).status, 403, origin);
      assert.equal(await handshake(`${ws}?token=${TOKEN}`, { origin }), 403, origin);
    }
  });

  test('an allowed Origin passes (with the token), gets CORS headers, and its preflight is answered', async () => {
    const res = await fetch(`${base}/metadata`, { headers: { origin: ALLOWED, ...bearer(TOKEN) } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('access-control-allow-origin'), ALLOWED);
    // Default port and case do not matter; the token is still required.
    assert.equal((await fetch(`${base}/metadata`, { headers: { origin: 'HTTPS://Studio.Example.org:443' } })).status, 401);
    const pre = await fetch(`${base}/reset`, {
      method: 'OPTIONS',
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization' },
    });
    assert.equal(pre.status, 204);
    assert.match(pre.headers.get('access-control-allow-headers') ?? '', /authorization/);
    assert.equal(await handshake(`${ws}?token=${TOKEN}`, { origin: ALLOWED }), 101);
  });

  test('without a token (loopback) requests without Origin work and foreign origins are still refused', async () => {
    const open = await startServer({ port: 0, host: '127.0.0.1', maxSessions: 2 });
    try {
      const at = `http://127.0.0.1:${open.port}`;
      assert.equal((await fetch(`${at}/metadata`)).status, 200);
      assert.equal(await handshake(`ws://127.0.0.1:${open.port}/ws`), 101);
      assert.equal((await fetch(`${at}/metadata`, { headers: { origin: 'https://evil.example' } })).status, 403);
      assert.equal(await handshake(`ws://127.0.0.1:${open.port}/ws`, { origin: 'http://localhost:8080' }), 403);
    } finally {
      await open.close();
    }
  });
});

describe('forgeenv serve: exposure', () => {
  test('binding beyond loopback without a token is refused at start', async () => {
    for (const host of ['0.0.0.0', '::', '192.168.1.10', 'example.org']) {
      await assert.rejects(startServer({ port: 0, host }), /refusing to serve on .* without a token/, host);
    }
    const lines: string[] = [];
    const code = await runServeCommand(
      ['--host', '0.0.0.0', '--port', '0'],
      (s) => lines.push(s),
      (s) => lines.push(s),
    );
    assert.equal(code, 2);
    assert.match(lines.join('\n'), /refusing to serve on 0\.0\.0\.0 without a token: .*FORGEENV_TOKEN/);
  });

  test('the CLI refuses a short token and an origin that is not one', async () => {
    const lines: string[] = [];
    assert.equal(
      await runServeCommand(
        ['--token', 'short', '--port', '0'],
        (s) => lines.push(s),
        (s) => lines.push(s),
      ),
      2,
    );
    assert.match(lines.join('\n'), /--token: the token must have at least 16 characters/);
    assert.equal(
      await runServeCommand(
        ['--allow-origin', 'https://a.example/path', '--port', '0'],
        (s) => lines.push(s),
        (s) => lines.push(s),
      ),
      2,
    );
    assert.match(lines.join('\n'), /--allow-origin: an origin such as/);
  });

  test('the CLI serves on PORT when no --port is given, and takes --sandbox', async () => {
    const free = await new Promise<number>((res) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const port = (probe.address() as AddressInfo).port;
        probe.close(() => res(port));
      });
    });
    const saved = process.env.PORT;
    process.env.PORT = String(free);
    try {
      const lines: string[] = [];
      const done = runServeCommand(
        ['--sandbox', 'off'],
        (s) => lines.push(s),
        (s) => lines.push(s),
      );
      for (let i = 0; i < 200 && !lines.some((l) => l.includes('serving OpenEnv')); i++) await new Promise((r) => setTimeout(r, 25));
      assert.match(lines.join('\n'), new RegExp(`serving OpenEnv on http://127\\.0\\.0\\.1:${free} .*sandbox off`));
      const health = await fetch(`http://127.0.0.1:${free}/health`);
      assert.equal(health.status, 200);
      process.emit('SIGINT');
      assert.equal(await done, 0);
      const bad: string[] = [];
      process.env.PORT = 'http';
      assert.equal(
        await runServeCommand(
          [],
          (s) => bad.push(s),
          (s) => bad.push(s),
        ),
        2,
      );
      assert.match(bad.join('\n'), /PORT must be a port number/);
      assert.equal(
        await runServeCommand(
          ['--port', '0', '--sandbox', 'maybe'],
          (s) => bad.push(s),
          (s) => bad.push(s),
        ),
        2,
      );
      assert.match(bad.join('\n'), /--sandbox must be one of auto, bubblewrap, off, not "maybe"/);
    } finally {
      if (saved === undefined) delete process.env.PORT;
      else process.env.PORT = saved;
    }
  });

  test('loopback hosts, origins and the constant-time comparison', () => {
    for (const h of ['127.0.0.1', '127.1.2.3', 'localhost', '::1', '[::1]', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1'])
      assert.ok(isLoopbackHost(h), h);
    for (const h of ['0.0.0.0', '::', '10.0.0.1', 'localhost.example.org', '128.0.0.1']) assert.ok(!isLoopbackHost(h), h);
    assert.equal(normalizeOrigin('HTTPS://Studio.Example.org:443/'), 'https://studio.example.org');
    assert.equal(normalizeOrigin('http://localhost:3000'), 'http://localhost:3000');
    for (const bad of ['https://a.example/x', 'https://a.example?q', 'ftp://a.example', 'a.example', 'https://u:p@a.example'])
      assert.equal(normalizeOrigin(bad), undefined, bad);
    assert.ok(tokensEqual(TOKEN, TOKEN));
    assert.ok(!tokensEqual(TOKEN, ''));
    assert.ok(!tokensEqual(TOKEN, `${TOKEN}${TOKEN}`));
  });
});

describe("ForgeEnv's Python client sends the token", { skip: openenvSkipReason('serveAuth.test.ts') }, () => {
  test('token= (or FORGEENV_TOKEN) opens the session; without it the connection is refused', async () => {
    // One interpreter for every case: importing openenv-core alone takes seconds.
    const script = [
      'import json, os, sys',
      `sys.path.insert(0, ${JSON.stringify(join(__dirname, '..', '..', 'clients', 'python'))})`,
      'from forge_env import ForgeEnv',
      'url, token = sys.argv[1], sys.argv[2]',
      'def attempt(tok, env_token=""):',
      '    os.environ["FORGEENV_TOKEN"] = env_token',
      '    try:',
      '        with ForgeEnv(base_url=url, token=tok).sync() as env:',
      '            return env.reset(task_id="simple_regression", seed=1).observation.current_phase',
      '    except Exception as e:',
      '        return str(e)',
      'print(json.dumps([attempt(token), attempt(None, token), attempt(None), attempt("wrong-token-0123456789")]))',
    ].join('\n');
    const { stdout } = await promisify(execFile)(openenvPython(), ['-c', script, base, TOKEN], { timeout: 120_000 });
    const [given, fromEnv, none, wrong] = JSON.parse(stdout.trim().split('\n').pop()!) as string[];
    assert.equal(given, 'drift_gen');
    assert.equal(fromEnv, 'drift_gen');
    assert.match(none, /401/);
    assert.match(wrong, /401/);
  });
});

describe('the editor sends the token', () => {
  test('forgeenv.remoteToken, else FORGEENV_TOKEN, else none; a bad value is a problem, not a token', () => {
    assert.equal(remoteTokenOf(defaultSettings(), {}), undefined);
    assert.equal(remoteTokenOf(defaultSettings(), { FORGEENV_TOKEN: ` ${TOKEN} ` }), TOKEN);
    assert.equal(remoteTokenOf(defaultSettings(), { FORGEENV_TOKEN: 'short' }), undefined);
    const { settings, problems } = parseSettings((k) => (k === 'remoteToken' ? `  ${TOKEN}  ` : undefined));
    assert.deepEqual(problems, []);
    assert.equal(remoteTokenOf(settings, { FORGEENV_TOKEN: 'other-token-0123456789' }), TOKEN);
    const bad = parseSettings((k) => (k === 'remoteToken' ? 'has a space in it 0123' : undefined));
    assert.equal(bad.settings.remoteToken, '');
    assert.match(bad.problems.join('\n'), /forgeenv\.remoteToken/);
  });
});

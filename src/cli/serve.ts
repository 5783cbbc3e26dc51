// `forgeenv serve`: the embedded environment as an OpenEnv server (openenvServer.ts), for remote
// trainers (openenv-core clients, TRL) and our own remote backend. Binds to loopback by default:
// the server runs arbitrary training scripts. Beyond loopback it needs a token (serveAuth.ts);
// browser origins are refused unless allowed.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { SandboxModeSchema } from '../env/sandbox/options';
import { isKnownSnapshot, snapshotIds } from '../env/snapshots/registry';
import { startServer } from '../env/openenv/server';
import { OriginSchema, ServeTokenSchema, exposureProblem, isLoopbackHost } from '../env/openenv/serverAuth';

export { startServer, type ForgeServer, type ServerOptions } from '../env/openenv/server';

export const SERVE_USAGE = `forgeenv serve [--port 7860 (or env PORT)] [--host 127.0.0.1] [--mode simulated|real] [--python python3]
               [--sandbox auto|bubblewrap|off]
               [--max-sessions 64] [--max-runs <cores>] [--max-queued-runs <max-sessions>]
               [--session-idle-timeout SECONDS] [--task-dir DIR ...]
               [--token TOKEN (or env FORGEENV_TOKEN)] [--allow-origin ORIGIN ...]
               [--warm SNAPSHOT[,SNAPSHOT...]]`;

function intOption(name: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value)) throw new Error(`--${name} must be a whole number, not "${value}"`);
  return Number(value);
}

export async function runServeCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        port: { type: 'string' },
        sandbox: { type: 'string', default: 'auto' },
        host: { type: 'string', default: '127.0.0.1' },
        mode: { type: 'string', default: 'simulated' },
        python: { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-runs': { type: 'string' },
        'max-queued-runs': { type: 'string' },
        'session-idle-timeout': { type: 'string' },
        'task-dir': { type: 'string', multiple: true },
        token: { type: 'string' },
        'allow-origin': { type: 'string', multiple: true },
        warm: { type: 'string', multiple: true },
      },
    }));
  } catch (e) {
    err(`${(e as Error).message}\nusage: ${SERVE_USAGE}`);
    return 2;
  }
  if (values.mode !== 'simulated' && values.mode !== 'real') {
    err(`--mode must be simulated or real, not "${values.mode}"`);
    return 2;
  }
  // PORT is what container platforms set (OpenEnv's Docker launcher maps 8000; a Space's app_port); the flag wins.
  const portText = values.port ?? (process.env.PORT?.trim() || '7860');
  if (!/^\d+$/.test(portText) || Number(portText) > 65535) {
    err(`forgeenv serve: ${values.port !== undefined ? '--port' : 'PORT'} must be a port number (0-65535), not "${portText}"`);
    return 2;
  }
  // Containers that cannot nest namespaces take `--sandbox off` (the warning then stops; limits still apply).
  const sandbox = SandboxModeSchema.safeParse(values.sandbox);
  if (!sandbox.success) {
    err(`forgeenv serve: --sandbox must be one of ${SandboxModeSchema.options.join(', ')}, not "${values.sandbox}"`);
    return 2;
  }
  // The environment variable keeps the token out of `ps` and shell history; the flag wins when both are set.
  const rawToken = values.token ?? (process.env.FORGEENV_TOKEN || undefined);
  const token = rawToken === undefined ? undefined : ServeTokenSchema.safeParse(rawToken);
  if (token && !token.success) {
    err(
      `forgeenv serve: ${values.token !== undefined ? '--token' : 'FORGEENV_TOKEN'}: ${token.error.issues.map((i) => i.message).join('; ')}`,
    );
    return 2;
  }
  const origins = z.array(OriginSchema).safeParse(values['allow-origin'] ?? []);
  if (!origins.success) {
    err(`forgeenv serve: --allow-origin: ${origins.error.issues.map((i) => i.message).join('; ')}`);
    return 2;
  }
  // --warm 2026-11,2025-09 (or repeated): warm zygotes of these snapshots start with the server.
  const warm = (values.warm ?? [])
    .flatMap((w) => w.split(','))
    .map((w) => w.trim())
    .filter(Boolean);
  const unknown = warm.filter((w) => !isKnownSnapshot(w));
  if (unknown.length) {
    err(
      `forgeenv serve: --warm: unknown snapshot ${unknown.join(', ')}; known: ${snapshotIds().join(', ')} (or a derived environment such as 2025-03+datasets@2.20.0)`,
    );
    return 2;
  }
  const exposed = exposureProblem(values.host, token?.data);
  if (exposed) {
    err(`forgeenv serve: ${exposed}`);
    return 2;
  }
  if (!isLoopbackHost(values.host))
    err(
      `note: serving beyond loopback on ${values.host}; the token travels in clear over http:// and ws://: beyond a trusted network, put TLS in front`,
    );
  let server;
  try {
    server = await startServer({
      port: Number(portText),
      host: values.host,
      maxSessions: intOption('max-sessions', values['max-sessions']),
      maxRuns: intOption('max-runs', values['max-runs']),
      maxQueuedRuns: intOption('max-queued-runs', values['max-queued-runs']),
      sessionIdleSeconds: intOption('session-idle-timeout', values['session-idle-timeout']),
      token: token?.data,
      allowedOrigins: origins.data,
      warm,
      config: {
        mode: values.mode,
        sandbox: { mode: sandbox.data },
        ...(values.python ? { interpreter: values.python } : {}),
        taskDirs: values['task-dir'] ?? [],
      },
      log: (line) => err(line),
    });
  } catch (e) {
    err(`forgeenv serve: ${(e as Error).message}`);
    return 1;
  }
  const access = token ? 'token required' : 'no token: loopback only';
  const browsers = origins.data.length ? `browser origins allowed: ${origins.data.join(', ')}` : 'no browser origin allowed';
  out(
    `ForgeEnv serving OpenEnv on http://${values.host}:${server.port} (WebSocket session at /ws; ${access}; ${browsers}; sandbox ${sandbox.data}). Ctrl-C to stop.`,
  );
  await new Promise<void>((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  await server.close();
  return 0;
}

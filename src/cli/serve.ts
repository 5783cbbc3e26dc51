// `forgeenv serve`: the embedded environment as an OpenEnv server (openenvServer.ts), for remote
// trainers (openenv-core clients, TRL) and our own remote backend. Binds to loopback by default:
// the server runs arbitrary training scripts.
import { parseArgs } from 'node:util';
import { startServer } from './openenvServer';

export { startServer, type ForgeServer, type ServerOptions } from './openenvServer';

export const SERVE_USAGE = `forgeenv serve [--port 7860] [--host 127.0.0.1] [--mode simulated|real] [--python python3]
               [--max-sessions 64] [--max-runs <cores>] [--max-queued-runs <max-sessions>]
               [--session-idle-timeout SECONDS] [--task-dir DIR ...]`;

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
        port: { type: 'string', default: '7860' },
        host: { type: 'string', default: '127.0.0.1' },
        mode: { type: 'string', default: 'simulated' },
        python: { type: 'string' },
        'max-sessions': { type: 'string' },
        'max-runs': { type: 'string' },
        'max-queued-runs': { type: 'string' },
        'session-idle-timeout': { type: 'string' },
        'task-dir': { type: 'string', multiple: true },
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
  if (values.host !== '127.0.0.1' && values.host !== 'localhost' && values.host !== '::1') {
    err('warning: serving beyond loopback lets anyone who reaches this port run Python scripts on this machine');
  }
  let server;
  try {
    server = await startServer({
      port: intOption('port', values.port)!,
      host: values.host!,
      maxSessions: intOption('max-sessions', values['max-sessions']),
      maxRuns: intOption('max-runs', values['max-runs']),
      maxQueuedRuns: intOption('max-queued-runs', values['max-queued-runs']),
      sessionIdleSeconds: intOption('session-idle-timeout', values['session-idle-timeout']),
      config: { mode: values.mode, ...(values.python ? { interpreter: values.python } : {}), taskDirs: values['task-dir'] ?? [] },
      log: (line) => err(line),
    });
  } catch (e) {
    err(`forgeenv serve: ${(e as Error).message}`);
    return 1;
  }
  out(`ForgeEnv serving OpenEnv on http://${values.host}:${server.port} (WebSocket session at /ws). Ctrl-C to stop.`);
  await new Promise<void>((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  await server.close();
  return 0;
}

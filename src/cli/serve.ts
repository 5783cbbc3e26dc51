// `forgeenv serve`: the embedded environment behind OpenEnv's interface (`/health`, `/reset`,
// `/step`, `/state`, and the `/ws` session), so remote trainers and our own remote backend can use it.
// Binds to loopback by default: the server runs arbitrary training scripts.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { parseArgs } from 'node:util';
import { WebSocketServer, type WebSocket } from 'ws';
import { ForgeEnvironment } from '../env/environment';
import type { EnvironmentConfig } from '../env/episodeTypes';
import { ClientMessageSchema, type ServerMessage } from '../env/openenvProtocol';
import { formatZodError } from '../env/schemas';
import { TaskSampler, loadCorpus } from '../env/tasks';

export interface ForgeServer {
  port: number;
  close(): Promise<void>;
}

export async function startServer(opts: { port: number; host: string; config?: Partial<EnvironmentConfig> }): Promise<ForgeServer> {
  const { tasks } = loadCorpus({ extraDirs: opts.config?.taskDirs ?? [] });
  const sampler = new TaskSampler(tasks);
  const newEnv = () => new ForgeEnvironment(opts.config ?? {}, { tasks: sampler });
  const envs = new Set<ForgeEnvironment>();

  const http = createServer((req, res) => void handleHttp(req, res));
  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const send = (code: number, body: unknown) => {
      res.writeHead(code, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    try {
      if (req.method === 'GET' && (req.url === '/health' || req.url === '/healthz')) return send(200, { status: 'healthy' });
      if (req.method === 'GET' && req.url === '/state') return send(200, { state: null, note: 'plain HTTP has no session; use /ws' });
      if (req.method === 'POST' && (req.url === '/reset' || req.url === '/step')) {
        const body = await readBody(req);
        // As in OpenEnv, plain HTTP builds a fresh environment per request.
        const env = newEnv();
        try {
          const obs = req.url === '/reset' ? await env.reset(body as never) : await env.step((body as { action?: unknown }).action ?? body);
          return send(200, { observation: obs, reward: obs.reward, done: obs.done });
        } finally {
          await env.dispose();
        }
      }
      send(404, { error: `no route ${req.method} ${req.url}` });
    } catch (e) {
      send(400, { error: e instanceof Error ? e.message : String(e) });
    }
  }

  const wss = new WebSocketServer({ noServer: true, maxPayload: 8 * 1024 * 1024 });
  http.on('upgrade', (req, socket, head) => {
    if (req.url !== '/ws') return socket.destroy();
    wss.handleUpgrade(req, socket, head, (ws) => session(ws));
  });
  function session(ws: WebSocket): void {
    const env = newEnv();
    envs.add(env);
    let queue = Promise.resolve();
    const reply = (m: ServerMessage): void => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
    };
    ws.on('message', (raw) => {
      // One message at a time per session: the environment is a state machine.
      queue = queue.then(async () => {
        let msg;
        try {
          msg = ClientMessageSchema.safeParse(JSON.parse(String(raw)));
        } catch {
          return reply({ type: 'error', data: { message: 'message is not JSON' } });
        }
        if (!msg.success) return reply({ type: 'error', data: { message: `invalid message: ${formatZodError(msg.error)}` } });
        const m = msg.data;
        try {
          if (m.type === 'reset') reply({ type: 'observation', data: await env.reset(m.data as never) });
          else if (m.type === 'step') reply({ type: 'observation', data: await env.step(m.data) });
          else if (m.type === 'evaluate') reply({ type: 'evaluation', data: await env.evaluateRepair(m.data.unified_diff) });
          else if (m.type === 'state') reply({ type: 'state', data: env.state ?? null });
          else ws.close();
        } catch (e) {
          reply({ type: 'error', data: { message: e instanceof Error ? e.message : String(e) } });
        }
      });
    });
    ws.on('close', () => {
      envs.delete(env);
      void env.dispose();
    });
  }

  await new Promise<void>((res, rej) => {
    http.once('error', rej);
    http.listen(opts.port, opts.host, () => res());
  });
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    port,
    async close() {
      for (const c of wss.clients) c.terminate();
      await Promise.all([...envs].map((e) => e.dispose()));
      await new Promise<void>((res) => http.close(() => res()));
    },
  };
}

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((res, rej) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > 8 * 1024 * 1024) rej(new Error('request body too large'));
      else chunks.push(c);
    });
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8').trim();
      try {
        res(text ? JSON.parse(text) : {});
      } catch {
        rej(new Error('request body is not JSON'));
      }
    });
    req.on('error', rej);
  });
}

export async function runServeCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  const { values } = parseArgs({
    args,
    options: {
      port: { type: 'string', default: '7860' },
      host: { type: 'string', default: '127.0.0.1' },
      mode: { type: 'string', default: 'simulated' },
      python: { type: 'string', default: 'python3' },
    },
  });
  if (values.host !== '127.0.0.1' && values.host !== 'localhost' && values.host !== '::1') {
    err('warning: serving beyond loopback lets anyone who reaches this port run Python scripts on this machine');
  }
  const server = await startServer({ port: Number(values.port), host: values.host!, config: { mode: values.mode as 'simulated' | 'real', interpreter: values.python } });
  out(`ForgeEnv serving OpenEnv on http://${values.host}:${server.port} (WebSocket session at /ws). Ctrl-C to stop.`);
  await new Promise<void>((res) => {
    process.once('SIGINT', res);
    process.once('SIGTERM', res);
  });
  await server.close();
  return 0;
}

// The ForgeEnv environment behind OpenEnv's server interface, wire-compatible with openenv-core:
// `/health`, `/metadata`, `/schema`, `/state`, `/reset`, `/step` over HTTP and the `/ws` session
// (see openenvProtocol.ts). Each WebSocket session owns one ForgeEnvironment; its runs are its own,
// so a session ending never touches another's. Runs across sessions share a RunLimiter (bounded
// concurrency and queue); sessions are bounded too. A bad frame, an oversized message or a slow
// client costs only its own connection.
// Who may connect is decided before any of that (serveAuth.ts): a browser Origin that is not
// allowed gets 403, a request without the token (when there is one) 401.
import { availableParallelism } from 'node:os';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { z } from 'zod';
import { prewarmDiffWorker } from '../diff/diffAsync';
import { warmPool } from '../run/executor';
import { prewarmScrubWorker } from '../run/scrubAsync';
import { ENV_VERSION, EnvironmentError, ForgeEnvironment } from '../episode/environment';
import { EpisodeStateSchema, type EnvironmentConfigInput, type StepOptions } from '../episode/episodeTypes';
import {
  WireActionSchema,
  parseClientMessage,
  parseWireAction,
  parseWireReset,
  toWireResult,
  toWireState,
  validationError,
  wantsOutput,
  zodIssues,
  type ServerMessage,
  type WireOutput,
  type WireError,
  type WireValidationIssue,
} from './protocol';
import { RunLimiter, RunQueueFullError } from '../run/runLimiter';
import { ObservationSchema } from '../schemas';
import { TaskSampler, loadCorpus } from '../tasks/tasks';
import { OriginSchema, RequestGate, ServeTokenSchema, exposureProblem } from './serverAuth';

export const ServerOptionsSchema = z.object({
  port: z.number().int().min(0).max(65535),
  host: z.string().min(1),
  /** Concurrent WebSocket sessions (OpenEnv's max_concurrent_envs); past it a new one gets CAPACITY_REACHED. */
  maxSessions: z.number().int().min(1).max(100_000).default(64),
  /** Script runs executing at once across all sessions (default: the number of cores). */
  maxRuns: z.number().int().min(1).max(1024).optional(),
  /** Runs waiting for a slot; past it a step is answered "busy" (default: maxSessions, so only a smaller bound can refuse). */
  maxQueuedRuns: z.number().int().min(0).max(100_000).optional(),
  /** Largest WebSocket message or HTTP body accepted. */
  maxMessageBytes: z.number().int().min(1024).max(256 * 1024 * 1024).default(8 * 1024 * 1024),
  /** Messages a session may have waiting behind the one being handled (the protocol is request/response). */
  maxPendingMessages: z.number().int().min(1).max(1024).default(16),
  /** Close a session idle this long (no message, nothing running), freeing its slot; 0: never (openenv-core's default). */
  sessionIdleSeconds: z.number().min(0).max(7 * 24 * 3600).default(0),
  /** Answers a client may leave unread before the server drops it as too slow. */
  maxBufferedBytes: z.number().int().min(1024).default(32 * 1024 * 1024),
  /** Required as `Authorization: Bearer` (or `?token=` on /ws) by every request but /health (serveAuth.ts). */
  token: ServeTokenSchema.optional(),
  /** Browser origins allowed to connect; a request with any other Origin header gets 403. */
  allowedOrigins: z.array(OriginSchema).max(100).default([]),
  /** Snapshots whose warm zygotes start with the server (`--warm`); any given turns the warm runtime on for every run. */
  warm: z.array(z.string().min(1)).max(50).default([]),
});
export type ServerOptions = z.input<typeof ServerOptionsSchema> & { config?: EnvironmentConfigInput; log?: (line: string) => void };

export interface ServerStats {
  sessions: number;
  runsRunning: number;
  runsQueued: number;
  /** Connections closed because of a protocol error (bad frame, oversize, slow reader, flood). */
  connectionsDropped: number;
}

export interface ForgeServer {
  port: number;
  stats(): ServerStats;
  close(): Promise<void>;
}

/** OpenEnv's EnvironmentMetadata for ForgeEnv. */
export function environmentMetadata(): Record<string, unknown> {
  return {
    name: 'forge_env',
    description:
      'ForgeEnv: a two-phase drift/repair environment for Hugging Face training scripts. In drift_gen the agent breaks a working script with a breakage primitive; in repair it submits a unified diff that makes the broken script train again, scored by execution.',
    readme_content: null,
    version: ENV_VERSION,
    author: 'ForgeEnv Studio',
    documentation_url: null,
  };
}

/**
 * A minimal OpenAPI document: openenv-core's runtime validator (`openenv validate --url`) reads
 * `info.version` and the paths (simulation mode: /reset, /step and /state present).
 */
export function openApiDocument(): Record<string, unknown> {
  const op = (method: 'get' | 'post', summary: string) => ({ [method]: { summary, responses: { '200': { description: 'OK' } } } });
  return {
    openapi: '3.1.0',
    info: { title: 'ForgeEnv (OpenEnv environment)', version: ENV_VERSION },
    paths: {
      '/health': op('get', 'Health check'),
      '/metadata': op('get', 'Environment metadata'),
      '/schema': op('get', 'JSON schemas of action, observation and state'),
      '/state': op('get', 'State of a fresh environment (episodes live in /ws sessions)'),
      '/reset': op('post', 'Reset a fresh environment and return its first observation'),
      '/step': op('post', 'Validate an action (a stateless step has no episode: use /ws)'),
      '/mcp': op('post', 'MCP JSON-RPC endpoint (ForgeEnv offers no tools)'),
    },
  };
}

/** OpenEnv's /schema: JSON schemas of the action, the observation and the state. */
export function environmentSchemas(): Record<string, unknown> {
  const state = z.object({ episode_id: z.string().nullable(), step_count: z.number().int().nonnegative() }).extend(EpisodeStateSchema.partial().omit({ episode_id: true }).shape);
  return {
    action: z.toJSONSchema(WireActionSchema, { unrepresentable: 'any' }),
    observation: z.toJSONSchema(ObservationSchema, { unrepresentable: 'any' }),
    state: z.toJSONSchema(state, { unrepresentable: 'any' }),
  };
}

export async function startServer(options: ServerOptions): Promise<ForgeServer> {
  const parsed = ServerOptionsSchema.safeParse(options);
  if (!parsed.success) throw new Error(`Invalid server options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const opts = parsed.data;
  const exposed = exposureProblem(opts.host, opts.token);
  if (exposed) throw new Error(exposed);
  const gate = new RequestGate({ token: opts.token, allowedOrigins: opts.allowedOrigins });
  const log = options.log ?? (() => undefined);
  const { tasks } = loadCorpus({ extraDirs: options.config?.taskDirs ?? [] });
  const sampler = new TaskSampler(tasks);
  const limiter = new RunLimiter(opts.maxRuns ?? availableParallelism(), opts.maxQueuedRuns ?? opts.maxSessions);
  const warm = opts.warm.length > 0 || options.config?.warm === true;
  const config = { ...options.config, ...(warm ? { warm: true } : {}) };
  const newEnv = () => new ForgeEnvironment(config, { tasks: sampler, runLimiter: limiter });
  if (warm) warmPool.setLog(log);
  const envs = new Set<ForgeEnvironment>();
  let dropped = 0;
  // Schemas never change: computed once, not per request.
  const schemaBody = JSON.stringify(environmentSchemas());
  const metadataBody = JSON.stringify(environmentMetadata());
  const openApiBody = JSON.stringify(openApiDocument());

  // ---- HTTP ----------------------------------------------------------------------------------
  const http = createServer((req, res) => {
    handleHttp(req, res).catch((e: unknown) => {
      log(`http ${req.method} ${req.url}: ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) sendJson(res, 500, { detail: 'Internal Server Error' });
    });
  });
  // Slowloris and stuck uploads cost a socket for a bounded time only.
  http.headersTimeout = 20_000;
  http.requestTimeout = 60_000;

  async function handleHttp(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const get = req.method === 'GET' || req.method === 'HEAD';
    const routes: Record<string, 'GET' | 'POST'> = {
      '/health': 'GET',
      '/metadata': 'GET',
      '/schema': 'GET',
      '/openapi.json': 'GET',
      '/state': 'GET',
      '/reset': 'POST',
      '/step': 'POST',
      '/mcp': 'POST',
    };
    // Before anything else: a foreign web page, then a client without the token.
    const origin = gate.origin(req);
    if (!origin.ok) return sendJson(res, 403, { detail: `Origin ${origin.origin} is not allowed (forgeenv serve --allow-origin)` });
    if (origin.origin) {
      res.setHeader('access-control-allow-origin', origin.origin);
      res.setHeader('vary', 'Origin');
      if (req.method === 'OPTIONS') {
        // A CORS preflight carries no credentials: it is answered, and says what the real request may send.
        res.writeHead(204, { 'access-control-allow-methods': 'GET, HEAD, POST', 'access-control-allow-headers': 'authorization, content-type', 'access-control-max-age': '600' });
        res.end();
        return;
      }
    }
    if (path !== '/health' && !gate.authorized(req, false)) return sendUnauthorized(res);
    const method = routes[path];
    if (!method) return sendJson(res, 404, { detail: 'Not Found' });
    if ((method === 'GET' && !get) || (method === 'POST' && req.method !== 'POST')) return sendJson(res, 405, { detail: 'Method Not Allowed' });
    // The warm pool by label (snapshot and mode): zygotes parked and ready, claims, misses, memory.
    if (path === '/health') return sendJson(res, 200, warm ? { status: 'healthy', warm: warmPool.stats() } : { status: 'healthy' });
    if (path === '/metadata') return sendRaw(res, 200, metadataBody);
    if (path === '/schema') return sendRaw(res, 200, schemaBody);
    if (path === '/openapi.json') return sendRaw(res, 200, openApiBody);
    // As in openenv-core, plain HTTP builds a fresh environment per request: no episode survives it.
    if (path === '/state') return sendJson(res, 200, toWireState(undefined));

    const body = await readJsonBody(req, res, opts.maxMessageBytes);
    if (body === undefined) return; // already answered
    if (path === '/mcp') return sendJson(res, 200, mcpAnswer(body.value));
    if (path === '/reset') {
      const r = parseWireReset(body.value ?? {});
      if (!r.ok) return sendJson(res, 422, { detail: bodyIssues(r.issues) });
      const env = newEnv();
      try {
        return sendJson(res, 200, toWireResult(await env.reset(r.options)));
      } catch (e) {
        if (e instanceof EnvironmentError) return sendJson(res, 400, { detail: e.message });
        throw e;
      } finally {
        await env.dispose();
      }
    }
    // /step: openenv's StepRequest is {action, timeout_s?, request_id?, ...}; the action is checked first (422).
    const step = z.object({ action: z.record(z.string(), z.unknown()) }).passthrough().safeParse(body.value);
    if (!step.success) return sendJson(res, 422, { detail: bodyIssues(zodIssues(step.error)) });
    const action = parseWireAction(step.data.action);
    if (!action.ok) return sendJson(res, 422, { detail: bodyIssues(action.issues.map((i) => ({ ...i, loc: ['action', ...i.loc] }))) });
    return sendJson(res, 409, {
      detail: 'No episode: plain HTTP /step runs on a fresh environment. ForgeEnv episodes have two steps; hold them in a WebSocket session at /ws (reset, then step).',
    });
  }

  // ---- WebSocket sessions --------------------------------------------------------------------
  const wss = new WebSocketServer({ noServer: true, maxPayload: opts.maxMessageBytes, perMessageDeflate: false });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy()); // a reset during the handshake must not escape as an uncaught error
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const origin = gate.origin(req);
    if (!origin.ok) return refuseUpgrade(socket, '403 Forbidden');
    if (!gate.authorized(req, true)) return refuseUpgrade(socket, '401 Unauthorized', 'WWW-Authenticate: Bearer\r\n');
    if (path !== '/ws') return refuseUpgrade(socket, '404 Not Found');
    wss.handleUpgrade(req, socket, head, (ws) => session(ws));
  });

  let sessions = 0;
  function session(ws: WebSocket): void {
    // Errors (invalid UTF-8, RSV1, unmasked or oversized frames, resets) close this connection with
    // the code ws chose (1002/1007/1009); without this listener one would crash the whole server.
    ws.on('error', (e) => {
      dropped++;
      log(`ws session error: ${e.message}`);
    });
    if (sessions >= opts.maxSessions) {
      send(ws, {
        type: 'error',
        data: { message: `Server at capacity: ${sessions}/${opts.maxSessions} sessions active. Cannot accept new connections.`, code: 'CAPACITY_REACHED', active_sessions: sessions, max_sessions: opts.maxSessions },
      });
      ws.close(1013, 'at capacity');
      return;
    }
    sessions++;
    const env = newEnv();
    envs.add(env);
    const pending: Array<{ data: RawData; isBinary: boolean }> = [];
    let busy = false;
    let closing = false;
    let idleTimer: NodeJS.Timeout | undefined;
    const armIdle = () => {
      clearTimeout(idleTimer);
      if (opts.sessionIdleSeconds > 0 && !closing) {
        idleTimer = setTimeout(() => {
          if (busy || pending.length) return armIdle();
          closing = true;
          ws.close(1001, `idle for ${opts.sessionIdleSeconds} s`);
        }, opts.sessionIdleSeconds * 1000);
        idleTimer.unref();
      }
    };
    armIdle();

    // The run of the message being handled: `cancel` aborts it; its output goes to the client when asked for.
    let run: AbortController | undefined;
    let out: WireOutput | undefined;
    let outTimer: NodeJS.Timeout | undefined;
    const flushOutput = (): void => {
      clearTimeout(outTimer);
      outTimer = undefined;
      const o = out;
      out = undefined;
      if (o) reply({ type: 'output', data: o });
    };
    /** Options for one run-carrying message; output is batched (one message per 100 ms or 64 KiB, per stream). */
    const runOptions = (streamOutput: boolean | undefined): StepOptions => {
      const mine = new AbortController();
      run = mine;
      const onOutput = (stream: 'stdout' | 'stderr', text: string): void => {
        if (run !== mine || closing) return;
        if (out && out.stream !== stream) flushOutput();
        out = { stream, text: (out?.text ?? '') + text };
        if (out.text.length >= 64 * 1024) flushOutput();
        else outTimer ??= setTimeout(flushOutput, 100);
      };
      return { signal: mine.signal, ...(streamOutput ? { onOutput } : {}) };
    };

    const reply = (m: ServerMessage): void => {
      if (m.type !== 'output') flushOutput(); // a run's output always comes before its answer
      if (ws.readyState !== ws.OPEN) return;
      if (ws.bufferedAmount > opts.maxBufferedBytes) {
        dropped++;
        log('ws session dropped: the client is not reading its answers');
        ws.terminate();
        return;
      }
      send(ws, m);
    };

    const handle = async (data: RawData, isBinary: boolean): Promise<void> => {
      if (isBinary) return reply({ type: 'error', data: { message: 'Binary frames are not supported: send each message as JSON in a text frame.', code: 'INVALID_JSON' } });
      const parsed = parseClientMessage(rawText(data));
      if (!parsed.ok) return reply({ type: 'error', data: parsed.error });
      const m = parsed.message;
      try {
        switch (m.type) {
          case 'reset': {
            const r = parseWireReset(m.data);
            if (!r.ok) return reply({ type: 'error', data: validationError(r.issues.map((i) => ({ ...i, loc: ['data', ...i.loc] })), 'reset parameters') });
            return reply({ type: 'observation', data: toWireResult(await env.reset(r.options)) });
          }
          case 'step': {
            const a = parseWireAction(m.data);
            if (!a.ok) return reply({ type: 'error', data: validationError(a.issues) });
            if (!env.state) return reply({ type: 'error', data: { message: 'No episode: send reset before step.', code: 'EXECUTION_ERROR' } });
            return reply({ type: 'observation', data: toWireResult(await env.step(a.action, runOptions(wantsOutput(m.data)))) });
          }
          case 'evaluate':
            return reply({ type: 'evaluation', data: await env.evaluateRepair(m.data.unified_diff, runOptions(m.data.stream_output)) });
          case 'restore': {
            const { stream_output, ...recipe } = m.data;
            return reply({ type: 'observation', data: toWireResult(await env.recreate(recipe, runOptions(stream_output))) });
          }
          case 'cancel':
            return; // acted on when it arrived (see the message listener); never answered
          case 'state':
            return reply({ type: 'state', data: toWireState(env.state) });
          case 'close':
            closing = true;
            pending.length = 0;
            ws.close(1000);
            return;
        }
      } catch (e) {
        reply({ type: 'error', data: errorData(e) });
        if (!(e instanceof EnvironmentError) && !(e instanceof RunQueueFullError)) log(`ws session: ${(e as Error).stack ?? String(e)}`);
      } finally {
        run = undefined;
      }
    };

    // One message at a time per session (the environment is a state machine, answers keep order);
    // a client that floods past the bound is dropped rather than buffered without end.
    const pump = async (): Promise<void> => {
      if (busy) return;
      busy = true;
      try {
        for (let next = pending.shift(); next && !closing; next = pending.shift()) await handle(next.data, next.isBinary);
      } finally {
        busy = false;
        armIdle();
      }
    };
    ws.on('message', (data, isBinary) => {
      if (closing) return;
      // `cancel` cannot wait behind the run it ends: it acts on arrival (and is never answered).
      if (!isBinary && isCancel(data)) {
        run?.abort();
        return;
      }
      if (pending.length >= opts.maxPendingMessages) {
        dropped++;
        closing = true;
        pending.length = 0;
        ws.close(1008, `more than ${opts.maxPendingMessages} messages waiting for an answer`);
        return;
      }
      pending.push({ data, isBinary });
      void pump();
    });
    ws.on('close', () => {
      clearTimeout(idleTimer);
      clearTimeout(outTimer);
      closing = true;
      pending.length = 0;
      sessions--;
      envs.delete(env);
      // Ends this session's own runs only.
      void env.dispose();
    });
  }

  await new Promise<void>((res, rej) => {
    http.once('error', rej);
    http.listen(opts.port, opts.host, () => {
      http.off('error', rej);
      res();
    });
  });
  http.on('error', (e) => log(`http server error: ${e.message}`));
  // Large repairs are applied, and large outputs scrubbed, in workers; start them now so the first
  // one does not pay for the start.
  prewarmDiffWorker();
  prewarmScrubWorker();
  // Warm zygotes of the snapshots named with --warm, in the background (real mode builds the venv first).
  for (const id of opts.warm) {
    const env = newEnv();
    void env.prewarm(id, (m) => log(`[warm] ${id}: ${m}`)).then(
      (r) => log('error' in r ? `[warm] ${id}: not warmed: ${r.error}` : `[warm] ${r.label}: zygotes starting`),
      (e: unknown) => log(`[warm] ${id}: not warmed: ${(e as Error).message}`),
    ).finally(() => void env.dispose());
  }
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    port,
    stats: () => ({ sessions, runsRunning: limiter.running, runsQueued: limiter.queued, connectionsDropped: dropped }),
    async close() {
      for (const c of wss.clients) c.terminate();
      await Promise.all([...envs].map((e) => e.dispose()));
      if (warm) await warmPool.clear();
      await new Promise<void>((res) => {
        http.close(() => res());
        http.closeAllConnections();
      });
      wss.close();
    },
  };
}

/**
 * The MCP JSON-RPC endpoint every OpenEnv server has. ForgeEnv's actions are not tools, so
 * `tools/list` is empty and every other method is unknown; malformed requests get JSON-RPC errors.
 */
export function mcpAnswer(request: unknown): Record<string, unknown> {
  const r = z.object({ jsonrpc: z.literal('2.0'), method: z.string(), id: z.union([z.string(), z.number(), z.null()]).optional() }).passthrough().safeParse(request);
  if (!r.success) return { jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request' } };
  const id = r.data.id ?? null;
  if (r.data.method === 'tools/list') return { jsonrpc: '2.0', id, result: { tools: [] } };
  return { jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${r.data.method}` } };
}

function send(ws: WebSocket, m: ServerMessage): void {
  ws.send(JSON.stringify(m));
}

/** A small text frame holding a valid `cancel` message. */
function isCancel(data: RawData): boolean {
  const size = Buffer.isBuffer(data) ? data.length : Array.isArray(data) ? data.reduce((n, b) => n + b.length, 0) : data.byteLength;
  if (size > 1024) return false;
  const parsed = parseClientMessage(rawText(data));
  return parsed.ok && parsed.message.type === 'cancel';
}

function rawText(data: RawData): string {
  if (Buffer.isBuffer(data)) return data.toString('utf8');
  if (Array.isArray(data)) return Buffer.concat(data).toString('utf8');
  return Buffer.from(data).toString('utf8');
}

function errorData(e: unknown): WireError {
  if (e instanceof RunQueueFullError) {
    return { message: e.message, code: 'CAPACITY_REACHED', busy: true, runs_running: e.running, runs_queued: e.queued, max_runs: e.maxRunning, max_queued_runs: e.maxQueued };
  }
  return { message: e instanceof Error ? e.message : String(e), code: 'EXECUTION_ERROR' };
}

/** A 422 `detail` list as FastAPI writes it: locations start at "body". */
function bodyIssues(issues: WireValidationIssue[]): WireValidationIssue[] {
  return issues.map((i) => ({ ...i, loc: ['body', ...i.loc] }));
}

function sendUnauthorized(res: ServerResponse): void {
  res.setHeader('www-authenticate', 'Bearer');
  sendJson(res, 401, { detail: 'Unauthorized: send Authorization: Bearer <token> (the token forgeenv serve was started with)' });
}

/** Ends a WebSocket handshake with an HTTP error instead of the upgrade. */
function refuseUpgrade(socket: Duplex, status: string, headers = ''): void {
  socket.end(`HTTP/1.1 ${status}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
}

function sendJson(res: ServerResponse, code: number, body: unknown): void {
  sendRaw(res, code, JSON.stringify(body));
}

function sendRaw(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/**
 * Reads a JSON body of at most `max` bytes. Answers (and returns undefined) on an oversized body
 * (413, connection closed so the rest is never read) or one that is not JSON (422, as FastAPI does).
 */
async function readJsonBody(req: IncomingMessage, res: ServerResponse, max: number): Promise<{ value: unknown } | undefined> {
  const tooLarge = () => {
    res.setHeader('connection', 'close');
    sendJson(res, 413, { detail: `Request body larger than ${max} bytes` });
    res.once('finish', () => req.socket.destroy());
  };
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > max) {
    tooLarge();
    return undefined;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  const ok = await new Promise<boolean>((resolve) => {
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.pause();
        resolve(false);
      } else chunks.push(c);
    });
    req.on('end', () => resolve(true));
    req.on('error', () => resolve(false));
  });
  if (!ok) {
    if (size > max) tooLarge();
    else req.socket.destroy();
    return undefined;
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return { value: undefined };
  try {
    return { value: JSON.parse(text) };
  } catch (e) {
    sendJson(res, 422, { detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', ctx: { error: (e as Error).message } }] });
    return undefined;
  }
}

// The ForgeEnv environment behind OpenEnv's server interface, wire-compatible with openenv-core:
// `/health`, `/metadata`, `/schema`, `/state`, `/reset`, `/step` over HTTP (httpRoutes.ts) and the
// `/ws` session (wsSessions.ts; the wire format is protocol.ts). Each WebSocket session owns one
// ForgeEnvironment; runs across sessions share a RunLimiter (bounded concurrency and queue);
// sessions are bounded too. Who may connect is decided before any of that (serverAuth.ts): a
// browser Origin that is not allowed gets 403, a request without the token (when there is one) 401.
// This module only composes them and owns the server's lifetime.
import { availableParallelism } from 'node:os';
import { createServer, type IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer } from 'ws';
import { z } from 'zod';
import { prewarmDiffWorker } from '../diff/diffAsync';
import { warmPool } from '../run/executor';
import { prewarmScrubWorker } from '../run/scrubAsync';
import { ForgeEnvironment } from '../episode/environment';
import type { EnvironmentConfigInput } from '../episode/episodeTypes';
import { RunLimiter } from '../run/runLimiter';
import { TaskSampler, loadCorpus } from '../tasks/tasks';
import { handleHttp, sendJson } from './httpRoutes';
import type { ServerContext } from './serverContext';
import { environmentMetadata, environmentSchemas, openApiDocument } from './serverDocuments';
import { OriginSchema, RequestGate, ServeTokenSchema, exposureProblem } from './serverAuth';
import { refuseUpgrade, startSession } from './wsSessions';

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
  maxMessageBytes: z
    .number()
    .int()
    .min(1024)
    .max(256 * 1024 * 1024)
    .default(8 * 1024 * 1024),
  /** Messages a session may have waiting behind the one being handled (the protocol is request/response). */
  maxPendingMessages: z.number().int().min(1).max(1024).default(16),
  /** Close a session idle this long (no message, nothing running), freeing its slot; 0: never (openenv-core's default). */
  sessionIdleSeconds: z
    .number()
    .min(0)
    .max(7 * 24 * 3600)
    .default(0),
  /** Answers a client may leave unread before the server drops it as too slow. */
  maxBufferedBytes: z
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /** Required as `Authorization: Bearer` (or `?token=` on /ws) by every request but /health (serveAuth.ts). */
  token: ServeTokenSchema.optional(),
  /** Browser origins allowed to connect; a request with any other Origin header gets 403. */
  allowedOrigins: z.array(OriginSchema).max(100).default([]),
  /** Snapshots whose warm zygotes start with the server (`--warm`); any given turns the warm runtime on for every run. */
  warm: z.array(z.string().min(1)).max(50).default([]),
});
export type ParsedServerOptions = z.output<typeof ServerOptionsSchema>;
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

export async function startServer(options: ServerOptions): Promise<ForgeServer> {
  const parsed = ServerOptionsSchema.safeParse(options);
  if (!parsed.success)
    throw new Error(`Invalid server options: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  const opts = parsed.data;
  const exposed = exposureProblem(opts.host, opts.token);
  if (exposed) throw new Error(exposed);
  const log = options.log ?? (() => undefined);
  const ctx = serverContext(opts, options.config, log);
  const http = listenHttp(ctx);
  const wss = acceptSessions(ctx, http);
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
  prewarmSnapshots(ctx);
  const address = http.address();
  const port = typeof address === 'object' && address ? address.port : opts.port;
  return {
    port,
    stats: () => ({
      sessions: ctx.counters.sessions,
      runsRunning: ctx.limiter.running,
      runsQueued: ctx.limiter.queued,
      connectionsDropped: ctx.counters.dropped,
    }),
    async close() {
      for (const c of wss.clients) c.terminate();
      await Promise.all([...ctx.envs].map((e) => e.dispose()));
      if (ctx.warm) await warmPool.clear();
      await new Promise<void>((res) => {
        http.close(() => res());
        http.closeAllConnections();
      });
      wss.close();
    },
  };
}

/** What every request and session of one server shares. */
function serverContext(
  opts: ServerContext['opts'],
  baseConfig: EnvironmentConfigInput | undefined,
  log: (line: string) => void,
): ServerContext {
  const { tasks } = loadCorpus({ extraDirs: baseConfig?.taskDirs ?? [] });
  const sampler = new TaskSampler(tasks);
  const limiter = new RunLimiter(opts.maxRuns ?? availableParallelism(), opts.maxQueuedRuns ?? opts.maxSessions);
  const warm = opts.warm.length > 0 || baseConfig?.warm === true;
  const config = { ...baseConfig, ...(warm ? { warm: true } : {}) };
  if (warm) warmPool.setLog(log);
  return {
    opts,
    gate: new RequestGate({ token: opts.token, allowedOrigins: opts.allowedOrigins }),
    log,
    warm,
    limiter,
    newEnv: () => new ForgeEnvironment(config, { tasks: sampler, runLimiter: limiter }),
    envs: new Set(),
    counters: { sessions: 0, dropped: 0 },
    // Schemas never change: computed once, not per request.
    documents: {
      schema: JSON.stringify(environmentSchemas()),
      metadata: JSON.stringify(environmentMetadata()),
      openApi: JSON.stringify(openApiDocument()),
    },
  };
}

function listenHttp(ctx: ServerContext): ReturnType<typeof createServer> {
  const http = createServer((req, res) => {
    handleHttp(ctx, req, res).catch((e: unknown) => {
      ctx.log(`http ${req.method} ${req.url}: ${(e as Error).stack ?? String(e)}`);
      if (!res.headersSent) sendJson(res, 500, { detail: 'Internal Server Error' });
    });
  });
  // Slowloris and stuck uploads cost a socket for a bounded time only.
  http.headersTimeout = 20_000;
  http.requestTimeout = 60_000;
  return http;
}

/** WebSocket upgrades on /ws, gated like every HTTP request; each becomes a session. */
function acceptSessions(ctx: ServerContext, http: ReturnType<typeof createServer>): WebSocketServer {
  const wss = new WebSocketServer({ noServer: true, maxPayload: ctx.opts.maxMessageBytes, perMessageDeflate: false });
  http.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    socket.on('error', () => socket.destroy()); // a reset during the handshake must not escape as an uncaught error
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const origin = ctx.gate.origin(req);
    if (!origin.ok) return refuseUpgrade(socket, '403 Forbidden');
    if (!ctx.gate.authorized(req, true)) return refuseUpgrade(socket, '401 Unauthorized', 'WWW-Authenticate: Bearer\r\n');
    if (path !== '/ws') return refuseUpgrade(socket, '404 Not Found');
    wss.handleUpgrade(req, socket, head, (ws) => startSession(ctx, ws));
  });
  return wss;
}

/** Warm zygotes of the snapshots named with --warm, in the background (real mode builds the venv first). */
function prewarmSnapshots(ctx: ServerContext): void {
  for (const id of ctx.opts.warm) {
    const env = ctx.newEnv();
    void env
      .prewarm(id, (m) => ctx.log(`[warm] ${id}: ${m}`))
      .then(
        (r) => ctx.log('error' in r ? `[warm] ${id}: not warmed: ${r.error}` : `[warm] ${r.label}: zygotes starting`),
        (e: unknown) => ctx.log(`[warm] ${id}: not warmed: ${(e as Error).message}`),
      )
      .finally(() => void env.dispose());
  }
}

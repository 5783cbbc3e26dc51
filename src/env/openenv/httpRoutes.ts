// The plain HTTP side of the OpenEnv server: who may call (the gate, before anything else), the
// routes openenv-core serves, and bodies read with a bound. Episodes live in /ws sessions
// (wsSessions.ts): over plain HTTP every request gets a fresh environment, as in openenv-core.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { EnvironmentError } from '../episode/environment';
import { parseWireAction, parseWireReset, toWireResult, toWireState, zodIssues, type WireValidationIssue } from './protocol';
import { mcpAnswer } from './serverDocuments';
import type { ServerContext } from './serverContext';
import { warmPool } from '../run/executor';

export async function handleHttp(ctx: ServerContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const { gate, opts, warm } = ctx;
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
      res.writeHead(204, {
        'access-control-allow-methods': 'GET, HEAD, POST',
        'access-control-allow-headers': 'authorization, content-type',
        'access-control-max-age': '600',
      });
      res.end();
      return;
    }
  }
  if (path !== '/health' && !gate.authorized(req, false)) return sendUnauthorized(res);
  const method = routes[path];
  if (!method) return sendJson(res, 404, { detail: 'Not Found' });
  if ((method === 'GET' && !get) || (method === 'POST' && req.method !== 'POST'))
    return sendJson(res, 405, { detail: 'Method Not Allowed' });
  // The warm pool by label (snapshot and mode): zygotes parked and ready, claims, misses, memory.
  if (path === '/health') return sendJson(res, 200, warm ? { status: 'healthy', warm: warmPool.stats() } : { status: 'healthy' });
  if (path === '/metadata') return sendRaw(res, 200, ctx.documents.metadata);
  if (path === '/schema') return sendRaw(res, 200, ctx.documents.schema);
  if (path === '/openapi.json') return sendRaw(res, 200, ctx.documents.openApi);
  // As in openenv-core, plain HTTP builds a fresh environment per request: no episode survives it.
  if (path === '/state') return sendJson(res, 200, toWireState(undefined));

  const body = await readJsonBody(req, res, opts.maxMessageBytes);
  if (body === undefined) return; // already answered
  if (path === '/mcp') return sendJson(res, 200, mcpAnswer(body.value));
  if (path === '/reset') {
    const r = parseWireReset(body.value ?? {});
    if (!r.ok) return sendJson(res, 422, { detail: bodyIssues(r.issues) });
    const env = ctx.newEnv();
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
  const step = z
    .object({ action: z.record(z.string(), z.unknown()) })
    .passthrough()
    .safeParse(body.value);
  if (!step.success) return sendJson(res, 422, { detail: bodyIssues(zodIssues(step.error)) });
  const action = parseWireAction(step.data.action);
  if (!action.ok) return sendJson(res, 422, { detail: bodyIssues(action.issues.map((i) => ({ ...i, loc: ['action', ...i.loc] }))) });
  return sendJson(res, 409, {
    detail:
      'No episode: plain HTTP /step runs on a fresh environment. ForgeEnv episodes have two steps; hold them in a WebSocket session at /ws (reset, then step).',
  });
}

/** A 422 `detail` list as FastAPI writes it: locations start at "body". */
function bodyIssues(issues: WireValidationIssue[]): WireValidationIssue[] {
  return issues.map((i) => ({ ...i, loc: ['body', ...i.loc] }));
}

function sendUnauthorized(res: ServerResponse): void {
  res.setHeader('www-authenticate', 'Bearer');
  sendJson(res, 401, { detail: 'Unauthorized: send Authorization: Bearer <token> (the token forgeenv serve was started with)' });
}

export function sendJson(res: ServerResponse, code: number, body: unknown): void {
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
    sendJson(res, 422, {
      detail: [{ type: 'json_invalid', loc: ['body', 0], msg: 'JSON decode error', ctx: { error: (e as Error).message } }],
    });
    return undefined;
  }
}

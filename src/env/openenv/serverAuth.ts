// Who may talk to `forgeenv serve`. The server runs whatever Python a client sends, so:
// - a token (`--token` / FORGEENV_TOKEN): every request needs `Authorization: Bearer <token>`,
//   except `GET /health` (it says only "healthy", and container health checks and load balancers
//   probe it without credentials) and CORS preflights (browsers never send credentials on them).
//   The `/ws` upgrade also accepts `?token=<token>`, for clients that cannot set a header on a
//   WebSocket (browsers, openenv-core's EnvClient; our Python client uses it). Compared in constant time.
// - Binding beyond loopback without a token is refused: anyone who reaches the port could run code.
// - Origin: a browser sends `Origin` with every WebSocket handshake and cross-site request, and a
//   WebSocket is not protected by CORS, so any web page the user opens could otherwise drive a
//   loopback server. A request whose Origin is not in `--allow-origin` is refused with 403; requests
//   without Origin (Node, Python, curl) are unaffected.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { z } from 'zod';
import { ServeTokenSchema } from './protocol';

export { ServeTokenSchema };

/** A browser origin as it arrives in the Origin header: scheme://host[:port], nothing after. */
export const OriginSchema = z
  .string()
  .transform((s) => s.trim())
  .refine(
    (s) => s === 'null' || normalizeOrigin(s) !== undefined,
    'an origin such as https://example.org or http://localhost:3000 (scheme, host and port only)',
  )
  .transform((s) => (s === 'null' ? s : normalizeOrigin(s)!));

/** `scheme://host[:port]` lowercased with the default port dropped, or undefined if `s` is not exactly an origin. */
export function normalizeOrigin(s: string): string | undefined {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return undefined;
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
  // An origin has no path, query, fragment or credentials (a trailing slash alone is tolerated).
  if (u.username || u.password || u.search || u.hash || (u.pathname !== '/' && u.pathname !== '')) return undefined;
  if (!/^[a-z][a-z0-9+.-]*:\/\/[^/?#]+\/?$/i.test(s)) return undefined;
  return u.origin;
}

/** 127.0.0.0/8, ::1 and `localhost`: only this machine can connect. */
export function isLoopbackHost(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[|\]$/g, '');
  if (h === 'localhost') return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) return h === '::1' || /^::ffff:127\./.test(h) || /^(0{1,4}:){7}0{0,3}1$/.test(h);
  return false;
}

/** Equal in constant time whatever the lengths: both sides are hashed first. */
export function tokensEqual(expected: string, presented: string): boolean {
  const a = createHash('sha256').update(expected, 'utf8').digest();
  const b = createHash('sha256').update(presented, 'utf8').digest();
  return timingSafeEqual(a, b);
}

export interface GateOptions {
  token?: string;
  allowedOrigins: readonly string[];
}

export type OriginVerdict = { ok: true; origin?: string } | { ok: false; origin: string };

export class RequestGate {
  private readonly origins: ReadonlySet<string>;

  constructor(private readonly options: GateOptions) {
    this.origins = new Set(options.allowedOrigins);
  }

  get requiresToken(): boolean {
    return this.options.token !== undefined;
  }

  /** No Origin (not a browser): fine. An Origin: fine only if allowed. */
  origin(req: IncomingMessage): OriginVerdict {
    const raw = req.headers.origin;
    if (raw === undefined) return { ok: true };
    const origin = raw === 'null' ? raw : (normalizeOrigin(raw) ?? raw);
    return this.origins.has(origin) ? { ok: true, origin } : { ok: false, origin: raw };
  }

  /** The request carries the token (always true without one). `allowQuery`: the /ws upgrade. */
  authorized(req: IncomingMessage, allowQuery: boolean): boolean {
    const token = this.options.token;
    if (token === undefined) return true;
    const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(req.headers.authorization ?? '');
    if (m) return tokensEqual(token, m[1]);
    if (allowQuery) {
      const q = new URL(req.url ?? '/', 'http://localhost').searchParams.get('token');
      if (q !== null) return tokensEqual(token, q);
    }
    return false;
  }
}

/** Why start refuses these options, or undefined. */
export function exposureProblem(host: string, token: string | undefined): string | undefined {
  if (token !== undefined || isLoopbackHost(host)) return undefined;
  return (
    `refusing to serve on ${host} without a token: anyone who can reach this port could run Python on this machine. ` +
    'Set FORGEENV_TOKEN (or --token) to a long random secret, e.g. `export FORGEENV_TOKEN=$(openssl rand -hex 32)`, and give it to the clients; ' +
    'or serve on 127.0.0.1 only.'
  );
}

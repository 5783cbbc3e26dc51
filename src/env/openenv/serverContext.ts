// What every request and WebSocket session of one OpenEnv server shares (server.ts builds it).
import type { ForgeEnvironment } from '../episode/environment';
import type { RunLimiter } from '../run/runLimiter';
import type { ParsedServerOptions } from './server';
import type { RequestGate } from './serverAuth';

export interface ServerContext {
  readonly opts: ParsedServerOptions;
  readonly gate: RequestGate;
  readonly log: (line: string) => void;
  /** The warm runtime is on for every run (`--warm` or the config). */
  readonly warm: boolean;
  readonly limiter: RunLimiter;
  newEnv(): ForgeEnvironment;
  /** Live sessions' environments, disposed when the server closes. */
  readonly envs: Set<ForgeEnvironment>;
  readonly counters: { sessions: number; dropped: number };
  /** Bodies of /schema, /metadata and /openapi.json, computed once. */
  readonly documents: { readonly schema: string; readonly metadata: string; readonly openApi: string };
}

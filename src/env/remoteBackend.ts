// Client for a remote OpenEnv server over its WebSocket `/ws` session (plain HTTP reset/step
// would get a fresh environment per request). Every message from the server is validated.
import WebSocket from 'ws';
import type { EnvironmentBackend, EpisodeState, RepairEvaluation, StepOptions } from './episodeTypes';
import { ServerMessageSchema, type ClientMessage, type ServerMessage } from './openenvProtocol';
import { formatZodError, type Observation, type ResetOptions } from './schemas';

export class RemoteEnvironmentError extends Error {
  override readonly name = 'RemoteEnvironmentError';
}

export class RemoteBackend implements EnvironmentBackend {
  readonly kind = 'remote' as const;
  private socket: WebSocket | undefined;
  private pending: Array<{ resolve: (m: ServerMessage) => void; reject: (e: Error) => void }> = [];
  private queue: Promise<unknown> = Promise.resolve();

  /** `url`: the server's base URL (`http://host:7860`) or its `ws://host:7860/ws` endpoint. */
  constructor(
    readonly url: string,
    private readonly timeoutMs = 120_000,
  ) {}

  static wsUrl(url: string): string {
    const u = new URL(url);
    if (u.protocol === 'http:') u.protocol = 'ws:';
    else if (u.protocol === 'https:') u.protocol = 'wss:';
    else if (u.protocol !== 'ws:' && u.protocol !== 'wss:') throw new RemoteEnvironmentError(`Remote URL must be http(s):// or ws(s)://, not ${u.protocol}`);
    if (!u.pathname.endsWith('/ws')) u.pathname = u.pathname.replace(/\/$/, '') + '/ws';
    return u.toString();
  }

  async reset(options: ResetOptions = {}): Promise<Observation> {
    return this.expect(await this.request({ type: 'reset', data: options as Record<string, unknown> }), 'observation') as Observation;
  }

  async step(action: unknown, _options: StepOptions = {}): Promise<Observation> {
    return this.expect(await this.request({ type: 'step', data: action }), 'observation') as Observation;
  }

  /** Our server's extension; a plain OpenEnv server answers with an error. */
  async evaluateRepair(unifiedDiff: string): Promise<RepairEvaluation> {
    return this.expect(await this.request({ type: 'evaluate', data: { unified_diff: unifiedDiff } }), 'evaluation') as RepairEvaluation;
  }

  async state(): Promise<EpisodeState | null> {
    return this.expect(await this.request({ type: 'state' }), 'state') as EpisodeState | null;
  }

  async dispose(): Promise<void> {
    const s = this.socket;
    this.socket = undefined;
    if (s && s.readyState === WebSocket.OPEN) {
      s.send(JSON.stringify({ type: 'close' }));
      s.close();
    }
    this.failPending(new RemoteEnvironmentError('connection closed'));
  }

  /** The payload of an answer of the expected type; an `error` answer or another type throws. */
  private expect(m: ServerMessage, type: ServerMessage['type']): unknown {
    if (m.type === 'error') throw new RemoteEnvironmentError(`Remote environment: ${m.data.message}`);
    if (m.type !== type) throw new RemoteEnvironmentError(`Remote environment answered "${m.type}" where "${type}" was expected`);
    return m.data;
  }

  private request(msg: ClientMessage): Promise<ServerMessage> {
    // Requests are strictly sequential: the protocol has no request ids.
    const p = this.queue.then(async () => {
      const socket = await this.connect();
      return new Promise<ServerMessage>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.pending = this.pending.filter((x) => x.resolve !== resolve);
          reject(new RemoteEnvironmentError(`Remote environment did not answer "${msg.type}" within ${this.timeoutMs} ms`));
        }, this.timeoutMs);
        this.pending.push({
          resolve: (m) => (clearTimeout(timer), resolve(m)),
          reject: (e) => (clearTimeout(timer), reject(e)),
        });
        socket.send(JSON.stringify(msg));
      });
    });
    this.queue = p.catch(() => undefined);
    return p;
  }

  private connect(): Promise<WebSocket> {
    if (this.socket && this.socket.readyState === WebSocket.OPEN) return Promise.resolve(this.socket);
    return new Promise((resolve, reject) => {
      let url: string;
      try {
        url = RemoteBackend.wsUrl(this.url);
      } catch (e) {
        return reject(e);
      }
      const s = new WebSocket(url, { handshakeTimeout: 10_000, maxPayload: 64 * 1024 * 1024 });
      s.once('open', () => {
        this.socket = s;
        resolve(s);
      });
      s.once('error', (e) => reject(new RemoteEnvironmentError(`Cannot reach the remote environment at ${url}: ${e.message}`)));
      s.on('message', (raw) => {
        const next = this.pending.shift();
        if (!next) return;
        let parsed;
        try {
          parsed = ServerMessageSchema.safeParse(JSON.parse(String(raw)));
        } catch {
          return next.reject(new RemoteEnvironmentError('Remote environment sent a message that is not JSON'));
        }
        if (!parsed.success) next.reject(new RemoteEnvironmentError(`Remote environment sent an invalid message: ${formatZodError(parsed.error)}`));
        else next.resolve(parsed.data);
      });
      s.on('close', () => {
        if (this.socket === s) this.socket = undefined;
        this.failPending(new RemoteEnvironmentError('Remote environment closed the connection'));
      });
    });
  }

  private failPending(e: Error): void {
    const p = this.pending;
    this.pending = [];
    for (const x of p) x.reject(e);
  }
}

// Client for a remote OpenEnv server over its WebSocket `/ws` session (plain HTTP reset/step get a
// fresh environment per request). Speaks openenv-core's wire format (openenvProtocol.ts), so it
// drives both `forgeenv serve` and any OpenEnv server of a ForgeEnv-shaped environment. Every
// message from the server is validated.
import WebSocket from 'ws';
import type { EnvironmentBackend, EpisodeRecipe, EpisodeState, RepairEvaluation, StepOptions } from '../episode/episodeTypes';
import {
  rawText,
  ServerMessageSchema,
  episodeStateOf,
  fromWireResult,
  resetToWire,
  type ClientMessage,
  type ParsedServerMessage,
  type WireState,
} from './protocol';
import { emptyObservation, formatZodError, type Observation, type ResetOptions } from '../schemas';

/** What went wrong on our side of the wire (the server's own errors carry its WSErrorCode instead). */
export type TransportErrorCode = 'UNREACHABLE' | 'UNAUTHORIZED' | 'FORBIDDEN' | 'CONNECTION_CLOSED' | 'TIMEOUT' | 'BAD_RESPONSE';

export class RemoteEnvironmentError extends Error {
  override readonly name = 'RemoteEnvironmentError';
  /**
   * `code`: the server's error code (openenv's WSErrorCode, e.g. CAPACITY_REACHED) when it sent one,
   * else a TransportErrorCode. `data`: the server's error data (e.g. `busy`, `max_sessions`) or the close code.
   */
  constructor(
    message: string,
    readonly code?: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

interface RequestOptions {
  /** Aborting sends `cancel`: the server ends the run in progress, whose answer then says it was cancelled. */
  signal?: AbortSignal;
  /** Receives the run's `output` messages (the request must have asked for them). */
  onOutput?: (stream: 'stdout' | 'stderr', chunk: string) => void;
}

export class RemoteBackend implements EnvironmentBackend {
  readonly kind = 'remote' as const;
  private socket: WebSocket | undefined;
  private pending: Array<{ resolve: (m: ParsedServerMessage) => void; reject: (e: Error) => void; onOutput?: RequestOptions['onOutput'] }> =
    [];
  private queue: Promise<unknown> = Promise.resolve();
  /** The last observation of the current remote session's episode; a dropped connection loses the episode. */
  private lastObservation: Observation | undefined;

  /** `url`: the server's base URL (`http://host:7860`) or its `ws://host:7860/ws` endpoint. */
  constructor(
    readonly url: string,
    private readonly timeoutMs = 300_000,
    /** How long a cancelled request waits for the server's answer before the connection is closed. */
    private readonly cancelGraceMs = 10_000,
    /** `forgeenv serve --token`: sent as `Authorization: Bearer` on the WebSocket handshake. */
    private readonly token?: string,
  ) {}

  static wsUrl(url: string): string {
    const u = new URL(url);
    if (u.protocol === 'http:') u.protocol = 'ws:';
    else if (u.protocol === 'https:') u.protocol = 'wss:';
    else if (u.protocol !== 'ws:' && u.protocol !== 'wss:')
      throw new RemoteEnvironmentError(`Remote URL must be http(s):// or ws(s)://, not ${u.protocol}`);
    if (!u.pathname.endsWith('/ws')) u.pathname = u.pathname.replace(/\/$/, '') + '/ws';
    return u.toString();
  }

  async reset(options: ResetOptions = {}): Promise<Observation> {
    const m = await this.request({ type: 'reset', data: resetToWire(options) });
    this.lastObservation = this.observationOf(m);
    return structuredClone(this.lastObservation);
  }

  /**
   * As the embedded environment: bad input (no episode, an action the server rejects as invalid)
   * yields an observation carrying `info.error`; transport failures and server errors throw.
   * `options.signal` and `options.onOutput` use ForgeEnv's `cancel` and `stream_output` (the output
   * request rides in the action's OpenEnv `metadata`, which a plain OpenEnv server ignores).
   */
  async step(action: unknown, options: StepOptions = {}): Promise<Observation> {
    const before = this.lastObservation;
    if (!before) return noEpisodeObservation();
    if (action === null || typeof action !== 'object' || Array.isArray(action)) {
      return withError(before, 'Invalid action: expected an object {breakage: {...}} or {repair: {unified_diff}}', 'invalid_action');
    }
    let data = action as Record<string, unknown>;
    if (options.onOutput) {
      const meta =
        data.metadata !== null && typeof data.metadata === 'object' && !Array.isArray(data.metadata)
          ? (data.metadata as Record<string, unknown>)
          : {};
      data = { ...data, metadata: { ...meta, stream_output: true } };
    }
    const m = await this.request({ type: 'step', data }, options);
    if (m.type === 'error' && m.data.code === 'VALIDATION_ERROR') {
      return withError(
        before,
        `Invalid action (expected exactly one of {breakage: {primitive_type, params}} or {repair: {unified_diff}}): ${m.data.message}`,
        'invalid_action',
      );
    }
    this.lastObservation = this.observationOf(m);
    return structuredClone(this.lastObservation);
  }

  /** Our server's extension; a plain OpenEnv server answers with an UNKNOWN_TYPE error. */
  async evaluateRepair(unifiedDiff: string, options: StepOptions = {}): Promise<RepairEvaluation> {
    const data = { unified_diff: unifiedDiff, ...(options.onOutput ? { stream_output: true } : {}) };
    return this.expect(await this.request({ type: 'evaluate', data }, options), 'evaluation') as RepairEvaluation;
  }

  /**
   * Our server's extension: re-creates a saved episode in this session from its recipe
   * (episodeRecipe.ts), e.g. after a reload ended the session that held it.
   */
  async restore(recipe: EpisodeRecipe, options: StepOptions = {}): Promise<Observation> {
    const m = await this.request({ type: 'restore', data: { ...recipe, ...(options.onOutput ? { stream_output: true } : {}) } }, options);
    this.lastObservation = this.observationOf(m);
    return structuredClone(this.lastObservation);
  }

  /** Whether this client's session holds an episode (a dropped connection loses it). */
  get hasEpisode(): boolean {
    return this.lastObservation !== undefined;
  }

  /** OpenEnv's state: `episode_id` (null before reset) and `step_count`, plus whatever else the server keeps. */
  async state(): Promise<WireState> {
    return this.expect(await this.request({ type: 'state' }), 'state') as WireState;
  }

  /** The whole ForgeEnv episode state, when the server sends it (`forgeenv serve` does); null before reset. */
  async episodeState(): Promise<EpisodeState | null> {
    const s = await this.state();
    if (s.episode_id === null) return null;
    const full = episodeStateOf(s);
    if (!full)
      throw new RemoteEnvironmentError(
        'The remote environment keeps no ForgeEnv episode state (a plain OpenEnv server sends only episode_id and step_count).',
      );
    return full;
  }

  async dispose(): Promise<void> {
    const s = this.socket;
    this.socket = undefined;
    this.lastObservation = undefined;
    if (s && s.readyState === WebSocket.OPEN) {
      s.send(JSON.stringify({ type: 'close' }));
      s.close(1000);
    }
    this.failPending(new RemoteEnvironmentError('connection closed', 'CONNECTION_CLOSED'));
  }

  private observationOf(m: ParsedServerMessage): Observation {
    const data = this.expect(m, 'observation') as { observation: Record<string, unknown>; reward: number | null; done: boolean };
    const r = fromWireResult(data);
    if (!r.ok)
      throw new RemoteEnvironmentError(`Remote environment sent an observation that is not ForgeEnv's: ${r.error}`, 'BAD_RESPONSE');
    return r.observation;
  }

  /** The payload of an answer of the expected type; an `error` answer or another type throws. */
  private expect(m: ParsedServerMessage, type: ParsedServerMessage['type']): unknown {
    if (m.type === 'error')
      throw new RemoteEnvironmentError(`Remote environment: ${m.data.message} (code: ${m.data.code})`, m.data.code, m.data);
    if (m.type !== type)
      throw new RemoteEnvironmentError(`Remote environment answered "${m.type}" where "${type}" was expected`, 'BAD_RESPONSE');
    return m.data;
  }

  private request(msg: ClientMessage, options: RequestOptions = {}): Promise<ParsedServerMessage> {
    // Requests are strictly sequential: the protocol has no request ids.
    const p = this.queue.then(async () => {
      const socket = await this.connect();
      return new Promise<ParsedServerMessage>((resolve, reject) => {
        const { signal } = options;
        // Cancel is sent at most once, and only while this request waits for its answer. A server
        // that does not answer soon after is given up on: the connection closes (ending its runs).
        let giveUp: NodeJS.Timeout | undefined;
        const cancel = () => {
          if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: 'cancel' }));
          giveUp = setTimeout(() => socket.terminate(), this.cancelGraceMs);
        };
        const settle = () => {
          clearTimeout(timer);
          clearTimeout(giveUp);
          signal?.removeEventListener('abort', cancel);
        };
        const timer = setTimeout(() => {
          // Without request ids a late answer would be taken for the next request's: end the session.
          socket.terminate();
          reject(new RemoteEnvironmentError(`Remote environment did not answer "${msg.type}" within ${this.timeoutMs} ms`, 'TIMEOUT'));
        }, this.timeoutMs);
        this.pending.push({
          resolve: (m) => (settle(), resolve(m)),
          reject: (e) => (settle(), reject(e)),
          onOutput: options.onOutput,
        });
        socket.send(JSON.stringify(msg));
        if (signal?.aborted) cancel();
        else signal?.addEventListener('abort', cancel, { once: true });
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
        return reject(e instanceof Error ? e : new Error(String(e)));
      }
      const headers = this.token ? { authorization: `Bearer ${this.token}` } : undefined;
      const s = new WebSocket(url, { handshakeTimeout: 10_000, maxPayload: 64 * 1024 * 1024, ...(headers ? { headers } : {}) });
      // A refused handshake (401: no or wrong token; 403: an Origin the server does not allow) says so,
      // instead of ws's generic "Unexpected server response".
      s.once('unexpected-response', (_req, res) => {
        const status = res.statusCode ?? 0;
        res.resume();
        s.terminate(); // the rejection below comes first; the 'error' this emits then changes nothing
        if (status === 401) {
          reject(
            new RemoteEnvironmentError(
              `The remote environment at ${url} refused the connection (401): ${this.token ? 'the token is not the one the server was started with' : 'it requires a token'}. Set forgeenv.remoteToken (or FORGEENV_TOKEN) to the token of its \`forgeenv serve\`.`,
              'UNAUTHORIZED',
              { status, token_sent: Boolean(this.token) },
            ),
          );
        } else if (status === 403) {
          reject(
            new RemoteEnvironmentError(
              `The remote environment at ${url} refused the connection (403): the request's Origin is not allowed there.`,
              'FORBIDDEN',
              { status },
            ),
          );
        } else {
          reject(
            new RemoteEnvironmentError(
              `Cannot reach the remote environment at ${url}: it answered HTTP ${status} instead of opening a WebSocket`,
              'UNREACHABLE',
              { cause: `HTTP ${status}` },
            ),
          );
        }
      });
      s.once('open', () => {
        this.socket = s;
        resolve(s);
      });
      s.on('error', (e) =>
        reject(
          new RemoteEnvironmentError(`Cannot reach the remote environment at ${url}: ${e.message}`, 'UNREACHABLE', { cause: e.message }),
        ),
      );
      s.on('message', (raw) => {
        let parsed;
        try {
          parsed = ServerMessageSchema.safeParse(JSON.parse(rawText(raw)));
        } catch {
          return this.pending
            .shift()
            ?.reject(new RemoteEnvironmentError('Remote environment sent a message that is not JSON', 'BAD_RESPONSE'));
        }
        // Output belongs to the request in progress and does not answer it.
        if (parsed.success && parsed.data.type === 'output')
          return this.pending[0]?.onOutput?.(parsed.data.data.stream, parsed.data.data.text);
        const next = this.pending.shift();
        if (!next) return;
        if (!parsed.success)
          next.reject(
            new RemoteEnvironmentError(`Remote environment sent an invalid message: ${formatZodError(parsed.error)}`, 'BAD_RESPONSE'),
          );
        else next.resolve(parsed.data);
      });
      s.on('close', (code, reason) => {
        if (this.socket === s) {
          this.socket = undefined;
          this.lastObservation = undefined; // the server's session, and its episode, are gone
        }
        this.failPending(
          new RemoteEnvironmentError(
            `Remote environment closed the connection (${code}${reason.length ? `: ${reason.toString()}` : ''})`,
            'CONNECTION_CLOSED',
            { close_code: code, reason: reason.toString() },
          ),
        );
      });
    });
  }

  private failPending(e: Error): void {
    const p = this.pending;
    this.pending = [];
    for (const x of p) x.reject(e);
  }
}

function withError(obs: Observation, message: string, kind: string): Observation {
  return { ...structuredClone(obs), info: { ...obs.info, error: message, error_kind: kind } };
}

/** What the embedded environment answers to a step before reset. */
const noEpisodeObservation = (): Observation =>
  emptyObservation({ error: 'No episode: call reset() before step().', error_kind: 'no_episode' });

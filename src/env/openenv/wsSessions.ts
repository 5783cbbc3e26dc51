// One OpenEnv WebSocket session (`/ws`): it owns one ForgeEnvironment, handles one message at a
// time (the environment is a state machine and answers keep order), streams a run's output in
// batches, and ends only its own runs. A flooding, slow or idle client costs only its connection.
import type { Duplex } from 'node:stream';
import type { RawData, WebSocket } from 'ws';
import { EnvironmentError } from '../episode/environment';
import type { StepOptions } from '../episode/episodeTypes';
import { RunQueueFullError } from '../run/runLimiter';
import {
  parseClientMessage,
  parseWireAction,
  parseWireReset,
  toWireResult,
  toWireState,
  validationError,
  wantsOutput,
  rawText,
  type ServerMessage,
  type WireError,
  type WireOutput,
} from './protocol';
import type { ServerContext } from './serverContext';

export function startSession(ctx: ServerContext, ws: WebSocket): void {
  const { opts, log } = ctx;
  // Errors (invalid UTF-8, RSV1, unmasked or oversized frames, resets) close this connection with
  // the code ws chose (1002/1007/1009); without this listener one would crash the whole server.
  ws.on('error', (e) => {
    ctx.counters.dropped++;
    log(`ws session error: ${e.message}`);
  });
  if (ctx.counters.sessions >= opts.maxSessions) {
    send(ws, {
      type: 'error',
      data: {
        message: `Server at capacity: ${ctx.counters.sessions}/${opts.maxSessions} sessions active. Cannot accept new connections.`,
        code: 'CAPACITY_REACHED',
        active_sessions: ctx.counters.sessions,
        max_sessions: opts.maxSessions,
      },
    });
    ws.close(1013, 'at capacity');
    return;
  }
  ctx.counters.sessions++;
  const env = ctx.newEnv();
  ctx.envs.add(env);
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
      ctx.counters.dropped++;
      log('ws session dropped: the client is not reading its answers');
      ws.terminate();
      return;
    }
    send(ws, m);
  };

  const handle = async (data: RawData, isBinary: boolean): Promise<void> => {
    if (isBinary)
      return reply({
        type: 'error',
        data: { message: 'Binary frames are not supported: send each message as JSON in a text frame.', code: 'INVALID_JSON' },
      });
    const parsed = parseClientMessage(rawText(data));
    if (!parsed.ok) return reply({ type: 'error', data: parsed.error });
    const m = parsed.message;
    try {
      switch (m.type) {
        case 'reset': {
          const r = parseWireReset(m.data);
          if (!r.ok)
            return reply({
              type: 'error',
              data: validationError(
                r.issues.map((i) => ({ ...i, loc: ['data', ...i.loc] })),
                'reset parameters',
              ),
            });
          return reply({ type: 'observation', data: toWireResult(await env.reset(r.options)) });
        }
        case 'step': {
          const a = parseWireAction(m.data);
          if (!a.ok) return reply({ type: 'error', data: validationError(a.issues) });
          if (!env.state)
            return reply({ type: 'error', data: { message: 'No episode: send reset before step.', code: 'EXECUTION_ERROR' } });
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
      ctx.counters.dropped++;
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
    ctx.counters.sessions--;
    ctx.envs.delete(env);
    // Ends this session's own runs only.
    void env.dispose();
  });
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

function errorData(e: unknown): WireError {
  if (e instanceof RunQueueFullError) {
    return {
      message: e.message,
      code: 'CAPACITY_REACHED',
      busy: true,
      runs_running: e.running,
      runs_queued: e.queued,
      max_runs: e.maxRunning,
      max_queued_runs: e.maxQueued,
    };
  }
  return { message: e instanceof Error ? e.message : String(e), code: 'EXECUTION_ERROR' };
}

/** Ends a WebSocket handshake with an HTTP error instead of the upgrade. */
export function refuseUpgrade(socket: Duplex, status: string, headers = ''): void {
  socket.end(`HTTP/1.1 ${status}\r\n${headers}Connection: close\r\nContent-Length: 0\r\n\r\n`);
}

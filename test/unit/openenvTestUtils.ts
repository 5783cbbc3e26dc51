// Shared by the OpenEnv server tests: a raw WebSocket session that reads answers in order, raw
// frames for protocol-error tests, and the openenv-core test venv (scripts/setup-openenv.sh).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { cacheRoot } from '../../src/env/snapshots/venv';

export interface WsSession {
  ws: WebSocket;
  /** Sends a message (an object is sent as JSON, a string as is) and returns the next answer. */
  ask(msg: unknown): Promise<any>;
  next(): Promise<any>;
  closed: Promise<{ code: number; reason: string }>;
  close(): Promise<{ code: number; reason: string }>;
}

export async function openSession(url: string): Promise<WsSession> {
  const ws = new WebSocket(url.replace(/^http/, 'ws').replace(/\/?$/, '/ws'));
  const inbox: any[] = [];
  const waiters: Array<(m: any) => void> = [];
  ws.on('message', (raw) => {
    const m = JSON.parse(String(raw));
    const w = waiters.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const closed = new Promise<{ code: number; reason: string }>((res) =>
    ws.on('close', (code, reason) => res({ code, reason: reason.toString() })),
  );
  ws.on('error', () => undefined);
  await new Promise<void>((res, rej) => {
    ws.once('open', () => res());
    ws.once('error', rej);
  });
  const next = () => (inbox.length ? Promise.resolve(inbox.shift()) : new Promise((res) => waiters.push(res)));
  return {
    ws,
    next,
    ask(msg) {
      ws.send(typeof msg === 'string' ? msg : JSON.stringify(msg));
      return next();
    },
    closed,
    close() {
      if (ws.readyState === ws.OPEN) ws.close(1000);
      return closed;
    },
  };
}

/** A TCP connection that has done the WebSocket handshake on `/ws`, for sending hand-made frames. */
export async function rawWebSocket(port: number): Promise<{ socket: Socket; received: () => Buffer; ended: Promise<void> }> {
  const socket = connect(port, '127.0.0.1');
  const chunks: Buffer[] = [];
  const ended = new Promise<void>((res) => socket.on('close', () => res()));
  socket.on('error', () => undefined);
  await new Promise<void>((res) => socket.once('connect', () => res()));
  const key = randomBytes(16).toString('base64');
  socket.write(
    `GET /ws HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`,
  );
  await new Promise<void>((res) => {
    let head = '';
    const onData = (c: Buffer) => {
      head += c.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end >= 0) {
        socket.off('data', onData);
        const rest = Buffer.from(head.slice(end + 4), 'latin1');
        if (rest.length) chunks.push(rest);
        socket.on('data', (d: Buffer) => chunks.push(d));
        res();
      }
    };
    socket.on('data', onData);
  });
  return { socket, received: () => Buffer.concat(chunks), ended };
}

/** One client frame: FIN + opcode, masked unless told otherwise; `rsv1` sets the compression bit. */
export function frame(opcode: number, payload: Buffer, o: { masked?: boolean; rsv1?: boolean; announce?: number } = {}): Buffer {
  const masked = o.masked ?? true;
  const len = o.announce ?? payload.length;
  const head: number[] = [0x80 | (o.rsv1 ? 0x40 : 0) | opcode];
  const m = masked ? 0x80 : 0;
  if (len < 126) head.push(m | len);
  else if (len < 65536) head.push(m | 126, len >> 8, len & 0xff);
  else {
    head.push(m | 127);
    const b = Buffer.alloc(8);
    b.writeBigUInt64BE(BigInt(len));
    head.push(...b);
  }
  if (!masked) return Buffer.concat([Buffer.from(head), payload]);
  const mask = randomBytes(4);
  const body = Buffer.from(payload.map((x, i) => x ^ mask[i % 4]));
  return Buffer.concat([Buffer.from(head), mask, body]);
}

/** The close code in the server's close frame, if it sent one (server frames are unmasked). */
export function closeCodeOf(data: Buffer): number | undefined {
  let i = 0;
  while (i + 2 <= data.length) {
    const opcode = data[i] & 0x0f;
    let len = data[i + 1] & 0x7f;
    let off = i + 2;
    if (len === 126) {
      len = data.readUInt16BE(off);
      off += 2;
    } else if (len === 127) {
      len = Number(data.readBigUInt64BE(off));
      off += 8;
    }
    if (opcode === 0x8) return len >= 2 ? data.readUInt16BE(off) : 1005;
    i = off + len;
  }
  return undefined;
}

// ---- the openenv-core test venv ---------------------------------------------------------------

export function openenvPython(): string {
  return process.env.FORGEENV_OPENENV_PYTHON || join(cacheRoot(), 'openenv-venv', 'bin', 'python');
}

/**
 * Why the openenv-core tests cannot run here, or false. Under CI they never skip: a missing venv
 * must fail the run (scripts/bootstrap.sh builds it).
 */
export function openenvSkipReason(file: string): string | false {
  if (existsSync(openenvPython()) || process.env.CI) return false;
  const reason = `the openenv-core test venv is missing (${openenvPython()}); build it with bash scripts/setup-openenv.sh`;
  console.log(`# ${file}: skipping: ${reason}`);
  return reason;
}

export const FIXTURE_DIR = join(__dirname, '..', 'fixtures', 'openenv');

export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((res) => s.listen(0, '127.0.0.1', () => res()));
  const port = (s.address() as { port: number }).port;
  await new Promise<void>((res) => s.close(() => res()));
  return port;
}

/** The ForgeEnv-shaped environment served by openenv-core's own create_app (forge_fixture_server.py). */
export async function startFixtureServer(maxSessions: number): Promise<{ url: string; close(): Promise<void> }> {
  const python = openenvPython();
  if (!existsSync(python)) throw new Error(`openenv-core test venv missing: ${python}. Run bash scripts/setup-openenv.sh`);
  const port = await freePort();
  const child: ChildProcess = spawn(
    python,
    [join(FIXTURE_DIR, 'forge_fixture_server.py'), '--port', String(port), '--max-sessions', String(maxSessions)],
    {
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr?.on('data', (c: Buffer) => (stderr = (stderr + c.toString()).slice(-4000)));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the openenv-core fixture server exited (${child.exitCode}): ${stderr}`);
    try {
      if ((await fetch(`${url}/health`)).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the openenv-core fixture server did not start within 120 s: ${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url,
    async close() {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

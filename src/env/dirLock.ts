// A cross-process lock as a directory (mkdir is atomic, also on network filesystems, where
// O_APPEND and advisory locks are not dependable; Node has no flock). The holder writes an owner
// record inside ({pid, host, token}); a lock whose holder died is taken over. Used so two
// processes (two windows, the CLI and the editor) never build the same snapshot venv or local hub
// at once, and never interleave appends to one dataset file (src/store/jsonlFile.ts).
//
// A holder killed with `kill -9` leaves its directory behind: the next process sees that the pid
// is gone and takes the lock over. Taking over renames the stale directory away first, which only
// one process can do, so two waiters that both saw the same dead holder cannot both break it and
// then remove each other's fresh lock.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';

export interface DirLockOptions {
  /** Said once when another live process holds the lock. */
  onWait?: () => void;
  signal?: AbortSignal;
  /** Thrown when `signal` aborts while waiting. */
  abortError: () => Error;
  pollMs?: number;
  /** Give up after waiting this long (default: wait as long as the holder lives). */
  timeoutMs?: number;
  /** Thrown when `timeoutMs` passes; receives the holder's description. */
  timeoutError?: (holder: string) => Error;
  /**
   * A lock held from another machine (whose pid cannot be checked here) counts as stale after
   * this long (default: never; venv builds take minutes).
   */
  staleAfterMs?: number;
}

interface Owner {
  pid: number;
  host?: string;
  token?: string;
}

const OWNER_FILE = 'pid';
/** A lock without a readable owner record is being created, unless it is older than this. */
const UNOWNED_GRACE_MS = 5_000;

function readOwner(lock: string): Owner | undefined {
  let text: string;
  try {
    text = readFileSync(join(lock, OWNER_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  // Older versions wrote the bare pid.
  if (/^\d+$/.test(text)) return { pid: Number(text) };
  try {
    const o = JSON.parse(text) as Partial<Owner>;
    return typeof o.pid === 'number'
      ? { pid: o.pid, host: typeof o.host === 'string' ? o.host : undefined, token: typeof o.token === 'string' ? o.token : undefined }
      : undefined;
  } catch {
    return undefined;
  }
}

function ageMs(lock: string): number {
  try {
    return Date.now() - statSync(lock).mtimeMs;
  } catch {
    return 0;
  }
}

function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Whether the lock's holder may still be at work. */
function holderAlive(lock: string, owner: Owner | undefined, staleAfterMs: number | undefined): boolean {
  if (!owner) return ageMs(lock) < UNOWNED_GRACE_MS; // between mkdir and writing the owner record
  if (owner.host !== undefined && owner.host !== hostname()) return staleAfterMs === undefined || ageMs(lock) < staleAfterMs;
  return pidAlive(owner.pid);
}

const sameOwner = (a: Owner | undefined, b: Owner | undefined) => a?.pid === b?.pid && a?.token === b?.token && a?.host === b?.host;

/** Removes a stale lock unless another process got there first. */
function breakStale(lock: string, judged: Owner | undefined): void {
  const aside = `${lock}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
  try {
    renameSync(lock, aside);
  } catch {
    return; // someone else broke it (or it was released): just try to take it again
  }
  if (!sameOwner(readOwner(aside), judged)) {
    // Between our look and the rename the lock was broken and taken by a live process: give it back.
    try {
      renameSync(aside, lock);
      return;
    } catch {
      /* a third process holds the lock now; the one we moved is lost to its owner */
    }
  }
  rmSync(aside, { recursive: true, force: true });
}

/** Waits for the lock at `lock` (a directory path) and returns its release function. */
export async function acquireDirLock(lock: string, opts: DirLockOptions): Promise<() => void> {
  mkdirSync(dirname(lock), { recursive: true });
  const me: Owner = { pid: process.pid, host: hostname(), token: randomBytes(8).toString('hex') };
  const started = Date.now();
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      try {
        writeFileSync(join(lock, OWNER_FILE), JSON.stringify(me));
      } catch (e) {
        rmSync(lock, { recursive: true, force: true });
        throw e;
      }
      return () => {
        // Only our own lock: if it was taken over (we looked dead), it belongs to someone else now.
        if (sameOwner(readOwner(lock), me)) rmSync(lock, { recursive: true, force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const owner = readOwner(lock);
    if (!holderAlive(lock, owner, opts.staleAfterMs)) {
      breakStale(lock, owner);
      continue;
    }
    if (!told) opts.onWait?.();
    told = true;
    if (opts.signal?.aborted) throw opts.abortError();
    if (opts.timeoutMs !== undefined && Date.now() - started > opts.timeoutMs) {
      const holder = owner
        ? `process ${owner.pid}${owner.host && owner.host !== hostname() ? ` on ${owner.host}` : ''}`
        : 'another process';
      throw (opts.timeoutError ?? ((h: string) => new Error(`${lock} is held by ${h}`)))(holder);
    }
    const poll = opts.pollMs ?? 1000;
    // Jitter, so waiters that woke together do not collide again.
    await new Promise((r) => setTimeout(r, poll / 2 + Math.random() * poll));
  }
}

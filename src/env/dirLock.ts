// A cross-process lock as a directory (mkdir is atomic): the holder writes its pid inside, a lock
// whose holder died is taken over. Used so two processes (two windows, the CLI and the editor) never
// build the same snapshot venv or local hub at once.
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface DirLockOptions {
  /** Said once when another live process holds the lock. */
  onWait?: () => void;
  signal?: AbortSignal;
  /** Thrown when `signal` aborts while waiting. */
  abortError: () => Error;
  pollMs?: number;
}

/** Waits for the lock at `lock` (a directory path) and returns its release function. */
export async function acquireDirLock(lock: string, opts: DirLockOptions): Promise<() => void> {
  mkdirSync(dirname(lock), { recursive: true });
  let told = false;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(join(lock, 'pid'), String(process.pid));
      return () => rmSync(lock, { recursive: true, force: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    if (!lockHolderAlive(lock)) {
      rmSync(lock, { recursive: true, force: true });
      continue;
    }
    if (!told) opts.onWait?.();
    told = true;
    if (opts.signal?.aborted) throw opts.abortError();
    await new Promise((r) => setTimeout(r, opts.pollMs ?? 1000));
  }
}

function lockHolderAlive(lock: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(join(lock, 'pid'), 'utf8'));
  } catch {
    // The holder may be between mkdir and writing its pid: a fresh lock is alive, an old one stale.
    try {
      return Date.now() - statSync(lock).mtimeMs < 10_000;
    } catch {
      return false;
    }
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

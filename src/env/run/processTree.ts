// Killing a run together with everything it started. Runs are spawned `detached`, so the Python
// process leads its own process group and a signal to `-pid` reaches its children too
// (dataloader workers, a stray `subprocess`). A child that calls `setsid()` leaves the group and
// cannot be reached this way: in the bubblewrap sandbox (sandbox/bwrap.ts) it dies with the run's pid
// namespace instead; in the fallback it survives (docs/sandbox.md).
import { spawn } from 'node:child_process';

const isWindows = process.platform === 'win32';

/** Sends `signal` to the whole process group led by `pid`; false when no process is left. */
export function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  if (isWindows) return false;
  try {
    process.kill(-pid, signal);
    return true;
  } catch {
    return false;
  }
}

/** True while any process (zombies included) is still in the group led by `pid`. */
export function groupAlive(pid: number): boolean {
  if (isWindows) return false;
  try {
    process.kill(-pid, 0);
    return true;
  } catch (e) {
    // EPERM means the group exists but belongs to someone else: treat as alive, never as gone.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * SIGTERM to the group, then SIGKILL once `graceMs` has passed with members still alive.
 * Resolves when the signals are sent (the caller waits for the child's own `close`).
 */
export async function killProcessTree(pid: number, graceMs = 500): Promise<void> {
  if (isWindows) {
    // No process groups: taskkill walks the tree by parent pid.
    await new Promise<void>((resolve) => {
      const tk = spawn('taskkill', ['/pid', String(pid), '/T', '/F'], { stdio: 'ignore', windowsHide: true });
      tk.on('error', () => resolve());
      tk.on('close', () => resolve());
    });
    return;
  }
  if (!signalGroup(pid, 'SIGTERM')) return;
  const step = 25;
  for (let waited = 0; waited < graceMs; waited += step) {
    await sleep(step);
    if (!groupAlive(pid)) return;
  }
  signalGroup(pid, 'SIGKILL');
}

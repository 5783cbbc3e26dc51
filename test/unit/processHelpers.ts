// Process checks shared by the executor and sandbox tests. Inside the sandbox a script sees pids of
// its own pid namespace, so the tests find a script's processes on the host by a marker in their
// command line instead of trusting a pid the script printed.
import { readdirSync, readFileSync } from 'node:fs';

/** Alive and not a zombie (an orphan may wait a moment for init to reap it). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}

export async function waitUntilDead(pid: number, limitMs = 10_000): Promise<boolean> {
  for (let waited = 0; waited < limitMs; waited += 50) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return !alive(pid);
}

export const forceKill = (pid: number | undefined): void => {
  if (pid === undefined) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
};

/** Host pids (Linux /proc) whose command line contains `marker`, this test process excluded. */
export function pidsWithMarker(marker: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, 'utf8').includes(marker) && alive(Number(name))) out.push(Number(name));
    } catch {
      // gone meanwhile
    }
  }
  return out;
}

/**
 * The host pid of a process the script started with `marker` in its command line; `printed` (the
 * pid the script saw) where there is no /proc (then runs are never namespaced).
 */
export function hostPid(marker: string, printed: number): number | undefined {
  if (process.platform !== 'linux') return printed;
  return pidsWithMarker(marker)[0];
}

export const uniqueMarker = (what: string): string => `forgeenv_${what}_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

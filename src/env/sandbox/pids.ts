// Finding the sandboxed Python on the host (for its peak memory) and reading bwrap's exit status.
import { readdirSync, readFileSync } from 'node:fs';
import { constants } from 'node:os';

function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** A child of `parent`: the next few pids first (new processes usually get them), then every process. */
function childOf(parent: number, fullScan: boolean): number | undefined {
  for (let c = parent + 1; c <= parent + 8; c++) if (parentOf(c) === parent) return c;
  if (!fullScan) return undefined;
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return undefined;
  }
  for (const name of entries) if (/^\d+$/.test(name) && parentOf(Number(name)) === parent) return Number(name);
  return undefined;
}

/**
 * Host pid of the sandboxed Python: bwrap -> bwrap's reaper (pid 1 inside) -> the launcher (setpriv
 * execs in place; launcher.ts) -> Python. Found by parent pid in /proc (no
 * /proc/<pid>/task/<pid>/children on every kernel); the whole /proc is read only when `fullScan`,
 * since reading it costs milliseconds.
 */
export function sandboxedPid(outer: number, fullScan: boolean): number | undefined {
  const reaper = childOf(outer, fullScan);
  const launcher = reaper === undefined ? undefined : childOf(reaper, fullScan);
  return launcher === undefined ? undefined : childOf(launcher, fullScan);
}

/**
 * bwrap reports a command killed by signal N as exit 128+N. Only a fallback, for when the launcher
 * wrote no status (it was killed itself): the launcher's status line tells exits and signals apart.
 */
export function signalFromSandboxExit(code: number | null): NodeJS.Signals | undefined {
  return code === null ? undefined : signalName(code - 128);
}

/** The name of signal number `n`, if it is one. */
export function signalName(n: number): NodeJS.Signals | undefined {
  if (n <= 0) return undefined;
  const hit = Object.entries(constants.signals).find(([, v]) => v === n);
  return hit?.[0] as NodeJS.Signals | undefined;
}

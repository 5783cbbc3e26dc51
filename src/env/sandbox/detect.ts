// Whether bubblewrap can sandbox runs on this machine, found once per process: the tool must exist
// and really create the namespaces (a container without user namespaces has the binary but cannot
// use it). Also finds util-linux's `prlimit` and `setpriv`, which the sandboxed command line uses.
import { spawn } from 'node:child_process';
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import { bwrapArgs, type SandboxTools } from './bwrap';
import { hostSeccompProgram } from './seccomp';

export type SandboxProbe = { ok: true; tools: SandboxTools } | { ok: false; reason: string };

const PROBE_TIMEOUT_MS = 10_000;
const SYSTEM_DIRS = ['/usr/bin', '/bin', '/usr/sbin', '/sbin'];

/** The absolute path of an executable on PATH (or the usual system folders), or undefined. */
export function findExecutable(name: string): string | undefined {
  const candidates = isAbsolute(name)
    ? [name]
    : [...(process.env.PATH ?? '').split(delimiter).filter(isAbsolute), ...SYSTEM_DIRS].map((d) => join(d, name));
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // next
    }
  }
  return undefined;
}

const probes = new Map<string, Promise<SandboxProbe>>();

/**
 * Probes bubblewrap (memoised per bwrap name). `FORGEENV_BWRAP` names another binary (tests use a
 * missing one to exercise the fallback).
 */
export function probeSandbox(): Promise<SandboxProbe> {
  const name = process.env.FORGEENV_BWRAP?.trim() || 'bwrap';
  let p = probes.get(name);
  if (!p) {
    p = runProbe(name);
    probes.set(name, p);
  }
  return p;
}

async function runProbe(name: string): Promise<SandboxProbe> {
  if (process.platform !== 'linux') return { ok: false, reason: `sandboxing needs Linux (this is ${process.platform})` };
  const bwrap = findExecutable(name);
  if (!bwrap) return { ok: false, reason: `bubblewrap (${name}) is not installed (Debian/Ubuntu: apt-get install bubblewrap)` };
  const prlimit = findExecutable('prlimit');
  const asRoot = process.getuid?.() === 0;
  // As root, RLIMIT_NPROC is never enforced (the kernel exempts uid 0), so the script runs as a uid
  // of its own (uids.ts) through setpriv; without setpriv it stays root inside a user namespace.
  const setpriv = asRoot ? findExecutable('setpriv') : undefined;
  // The launcher runs inside the sandbox, which shows /usr but not /opt or the home folder.
  const perl = insideUsr(findExecutable('perl'));
  const tools: SandboxTools = { bwrap, prlimit: insideUsr(prlimit), setpriv, asRoot, ...(perl ? { perl } : {}) };
  const truePath = findExecutable('true') ?? '/bin/true';
  // With the seccomp filter and (as a user) --disable-userns, as every run has them: a bubblewrap
  // that cannot load them fails here, not in the first run.
  const seccomp = hostSeccompProgram();
  const args = bwrapArgs({
    tools,
    runDir: undefined,
    readOnly: [],
    allowNetwork: false,
    command: [truePath],
    ...(seccomp ? { seccompFd: 3 } : {}),
  });
  const failure = await new Promise<string | undefined>((resolve) => {
    let err = '';
    let child;
    try {
      child = spawn(bwrap, args, { stdio: ['ignore', 'ignore', 'pipe', seccomp ? 'pipe' : 'ignore'], env: {} });
      const fd3 = child.stdio[3] as (NodeJS.WritableStream & { on(e: 'error', f: () => void): void }) | null;
      fd3?.on('error', () => undefined);
      if (seccomp) fd3?.end(seccomp);
    } catch (e) {
      resolve((e as Error).message);
      return;
    }
    const timer = setTimeout(() => child.kill('SIGKILL'), PROBE_TIMEOUT_MS);
    child.stderr?.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', (e) => {
      clearTimeout(timer);
      resolve(e.message);
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve(undefined);
      else resolve(err.trim().split('\n')[0]?.slice(0, 300) || `exit ${code ?? signal}`);
    });
  });
  if (failure !== undefined) return { ok: false, reason: `bubblewrap cannot create its namespaces here (${failure})` };
  return { ok: true, tools };
}

/** The resolved path when it is under /usr (so the sandbox shows it), else undefined. */
function insideUsr(p: string | undefined): string | undefined {
  if (!p) return undefined;
  try {
    const real = realpathSync(p);
    return real.startsWith('/usr/') ? real : undefined;
  } catch {
    return undefined;
  }
}

/** Forgets the probe (tests). */
export function resetSandboxProbe(): void {
  probes.clear();
}

// The bubblewrap command line of a sandboxed run (pure: no process is started here).
//
// Inside: new pid, ipc and uts namespaces, a new network namespace with
// only loopback unless the network is allowed, a new session (no terminal to inject input into),
// and `--die-with-parent`. The namespace's pid 1 is bwrap's own reaper: when the script exits, the
// kernel kills every process left in the namespace, so a `setsid()` child dies with the run.
//
// File system: /usr and the /bin, /lib* links read-only, a few entries of /etc that Python and libc
// read (etcView.ts), a fresh /proc and /dev, small private tmpfs at /tmp and /dev/shm, the interpreter's
// folders and the stand-ins read-only (never the tasks or the drift catalog), and the run folder as the only writable place. Everything
// else (the home folder, the dataset folder, the workspace) does not exist inside.
//
// Users: as an ordinary user, a user namespace (the kernel then counts RLIMIT_NPROC per namespace,
// so the process limit is per run), with `--disable-userns` so the script cannot make another one.
// As root, the kernel never enforces RLIMIT_NPROC for uid 0, so bwrap runs privileged and `setpriv`
// drops the script to a uid of its own (uids.ts: one per concurrent run, so runs never share a
// process count) without capabilities. `--disable-userns` needs `--unshare-user`, which this path
// does not use; the seccomp filter (seccomp.ts) refuses new namespaces both ways.
import { lstatSync, readlinkSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, posix } from 'node:path';
import { etcEntries } from './etcView';

export interface SandboxTools {
  bwrap: string;
  /** util-linux prlimit (rlimits in the argv); absent: rlimits come from a Python wrapper. */
  prlimit?: string;
  /** util-linux setpriv, used only as root. */
  setpriv?: string;
  /** Perl under /usr (the fast launcher, launcher.ts); absent: the Python launcher. */
  perl?: string;
  asRoot: boolean;
}

/** The uid of a privileged run that was given none (the availability probe). */
const NOBODY = 65534;
const TMPFS_BYTES = 256 * 1024 * 1024;
/** What the sandbox's own tmpfs (/tmp and /dev/shm) may take of memory, in MiB (memory.ts counts it). */
export const SANDBOX_TMPFS_MIB = (2 * TMPFS_BYTES) / (1024 * 1024);

const TOP_LINKS = ['/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/**
 * Where a sandboxed script sees its run folder, every run: its output may depend on the path (datasets names
 * a local data file's cache folder by a hash of its absolute path), and a fresh host folder per run made two
 * runs of one task differ.
 */
export const SANDBOX_RUN_DIR = '/forgeenv/run';

export interface BwrapPlan {
  tools: SandboxTools;
  /** The only writable bind, also the working directory (undefined: the availability probe). */
  runDir: string | undefined;
  /** Where the run folder is inside (default: its own path). */
  runAt?: string;
  /** Host folders or files bound read-only at the same path (resolved, absolute). */
  readOnly: string[];
  /** Private writable copies (inside the run folder) shown at the original's path. */
  copies?: { copy: string; at: string }[];
  /** A prepared copy of the /etc entries (etcView.ts), bound as /etc in one mount; absent: each entry is bound. */
  etcDir?: string;
  allowNetwork: boolean;
  /** The command inside the sandbox (the launcher included). */
  command: string[];
  /** As root: the uid/gid the script runs as (uids.ts). */
  uid?: number;
  /** An fd of the spawned bwrap from which it reads the seccomp filter (seccomp.ts). */
  seccompFd?: number;
}

const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith('/') ? root : `${root}/`);

/** Read-only binds worth making: absolute, not `/`, not the home folder or above it, not inside another. */
export function normalizeReadOnly(paths: string[], home = homedir()): string[] {
  const clean = [...new Set(paths.filter((p) => p.startsWith('/')).map((p) => posix.normalize(p).replace(/\/+$/, '') || '/'))];
  const allowed = clean.filter(
    (p) => p !== '/' && !under(home, p) && !under(p, '/usr') && !under(p, '/proc') && !under(p, '/dev') && !under(p, '/sys'),
  );
  return allowed
    .filter((p) => !allowed.some((q) => q !== p && under(p, q)))
    .sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b));
}

/** The bwrap argument list (after the bwrap path itself). */
export function bwrapArgs(plan: BwrapPlan): string[] {
  const { tools } = plan;
  const privileged = tools.asRoot && tools.setpriv !== undefined;
  const a: string[] = ['--die-with-parent', '--new-session', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'forgeenv'];
  if (!plan.allowNetwork) a.push('--unshare-net');
  if (!privileged) a.push('--unshare-user', '--disable-userns');
  a.push('--ro-bind', '/usr', '/usr');
  for (const top of TOP_LINKS) {
    const st = lstatOrUndefined(top);
    if (st?.isSymbolicLink()) a.push('--symlink', readlinkSync(top), top);
    else if (st?.isDirectory()) a.push('--ro-bind', top, top);
  }
  const etc = plan.etcDir ? [] : etcEntries(plan.allowNetwork);
  a.push('--proc', '/proc', '--dev', '/dev');
  a.push('--perms', '1777', '--size', String(TMPFS_BYTES), '--tmpfs', '/tmp');
  a.push('--perms', '1777', '--size', String(TMPFS_BYTES), '--tmpfs', '/dev/shm');
  const readOnly = normalizeReadOnly(plan.readOnly);
  const copies = plan.copies ?? [];
  const runAt = plan.runAt ?? plan.runDir;
  const targets = [...etc, ...readOnly, ...copies.map((c) => c.at), ...(runAt ? [runAt] : [])];
  // Parents of the mount points are made 0755 explicitly: bwrap would copy restrictive modes
  // (e.g. /root's 0700), and the script may run as another uid than the folders' owner.
  const mounted = ['/usr', '/proc', '/dev', ...TOP_LINKS, ...readOnly];
  const dirs = new Set<string>();
  for (const t of targets) {
    for (let d = dirname(t); d !== '/' && d !== '.'; d = dirname(d)) {
      if (d === '/tmp' || d === '/dev/shm' || mounted.some((m) => under(d, m))) continue;
      dirs.add(d);
    }
  }
  for (const d of [...dirs].sort((x, y) => x.split('/').length - y.split('/').length || x.localeCompare(y)))
    a.push('--perms', '0755', '--dir', d);
  if (plan.etcDir) a.push('--ro-bind', plan.etcDir, '/etc');
  for (const e of etc) a.push('--ro-bind-try', e, e);
  for (const p of readOnly) a.push('--ro-bind', p, p);
  for (const c of copies) a.push('--bind', c.copy, c.at);
  if (plan.runDir && runAt) a.push('--bind', plan.runDir, runAt, '--chdir', runAt);
  if (privileged) a.push('--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID');
  if (plan.seccompFd !== undefined) a.push('--seccomp', String(plan.seccompFd));
  a.push('--');
  if (privileged) {
    const uid = plan.uid ?? NOBODY;
    a.push(tools.setpriv!, `--reuid=${uid}`, `--regid=${uid}`, '--clear-groups', '--');
  }
  a.push(...plan.command);
  return a;
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}

// The run folder's disk quota. RLIMIT_FSIZE bounds each file, not their sum: a run wrote 2.8 GiB in
// 7.5 s over many files. As root, the run folder is a size-limited tmpfs mounted on the host (`mount
// -t tmpfs -o size=…`) before anything is written into it: a write past the quota fails with ENOSPC at
// once, whatever the number of files or processes, and nothing reaches the host's disk. Being a
// host mount (not one inside the sandbox), it outlives the script, so the host still reads the
// checkpoints and artifacts afterwards; then it is unmounted (its memory goes back), or, when the
// caller keeps the run folder, copied to disk first. Its pages are memory, so the quota is part of
// the run's memory footprint (memory.ts). Not root: no mount is possible, and the executor watches
// the folder's size instead (best effort, see docs/sandbox.md).
// A process killed outright (SIGKILL, a crash) cannot unmount its quotas, and their pages stay in
// memory. So every mount is registered with its owner (pid and start time, outside the run folder
// where the script cannot touch it), and the first mount of each process sweeps the quotas of
// owners that are gone.
import { spawn } from 'node:child_process';
import { lstatSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { cp, mkdir, rename, rm, rmdir, statfs, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { findExecutable } from './detect';

const MIB = 1024 * 1024;

function run(file: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    let err = '';
    const child = spawn(file, args, { stdio: ['ignore', 'ignore', 'pipe'], env: {} });
    child.stderr.on('data', (b: Buffer) => (err += b.toString('utf8')));
    child.on('error', (e) => resolve(e.message));
    child.on('close', (code) => resolve(code === 0 ? undefined : err.trim() || `exit ${code}`));
  });
}

/** Whether this process can give run folders a tmpfs quota (root on Linux with util-linux mount). */
export const canMountQuota = (): boolean =>
  process.platform === 'linux' && process.getuid?.() === 0 && findExecutable('mount') !== undefined;

/** Where mounted quotas are registered with their owner: one file per mount. */
export function quotaRegistryDir(): string {
  return process.env.FORGEENV_QUOTA_REGISTRY || join(tmpdir(), 'forgeenv-quota-owners');
}

/** The registry is trusted only when this user owns it and no one else may write it (it names folders to remove). */
function trustedRegistry(dir: string): boolean {
  try {
    const st = lstatSync(dir);
    return st.isDirectory() && st.uid === process.getuid?.() && (st.mode & 0o022) === 0;
  } catch {
    return false;
  }
}

/** A process's identity that survives pid reuse: its pid and its start time (from /proc). */
function processIdentity(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime) counts from after the command name, which may hold spaces.
    return `${pid} ${stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]}`;
  } catch {
    return undefined;
  }
}

const RegistryEntry = (line: string): { owner: string; dir: string } | undefined => {
  const [owner, dir] = line.split('\n');
  return owner && dir ? { owner, dir } : undefined;
};

/** The folders where `forgeenv-run` tmpfs quotas are mounted now. */
function mountedQuotas(): Set<string> {
  try {
    const out = new Set<string>();
    for (const l of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
      const sep = l.indexOf(' - ');
      if (sep < 0 || !l.slice(sep + 3).startsWith('tmpfs forgeenv-run ')) continue;
      out.add(l.split(' ')[4].replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))));
    }
    return out;
  } catch {
    return new Set();
  }
}

/**
 * Unmounts and removes the quotas whose registered owner process is gone (killed before it could
 * release them). Only registered folders are touched, never another program's mounts.
 */
export async function sweepStaleQuotas(): Promise<string[]> {
  const registry = quotaRegistryDir();
  if (!trustedRegistry(registry)) return [];
  let names: string[];
  try {
    names = readdirSync(registry);
  } catch {
    return [];
  }
  const mounted = mountedQuotas();
  const swept: string[] = [];
  for (const name of names) {
    let entry;
    try {
      entry = RegistryEntry(readFileSync(join(registry, name), 'utf8'));
    } catch {
      continue;
    }
    if (!entry) continue;
    const pid = Number(entry.owner.split(' ')[0]);
    if (processIdentity(pid) === entry.owner) continue; // its owner is alive: its quota is in use
    if (mounted.has(entry.dir)) {
      await releaseQuota(entry.dir, false);
      swept.push(entry.dir);
    }
    await unlink(join(registry, name)).catch(() => undefined);
  }
  return swept;
}

let swept: Promise<unknown> | undefined;

/** Mounts a tmpfs of `mib` MiB on the (empty) folder `dir`; an error message when it could not. */
export async function mountQuota(dir: string, mib: number): Promise<string | undefined> {
  const mount = findExecutable('mount');
  if (!mount) return 'mount is not installed';
  await (swept ??= sweepStaleQuotas().catch(() => undefined));
  const owner = processIdentity(process.pid);
  const registry = quotaRegistryDir();
  if (owner) {
    mkdirSync(registry, { recursive: true, mode: 0o700 });
    if (trustedRegistry(registry)) await writeFile(join(registry, basename(dir)), `${owner}\n${dir}`);
  }
  // nosuid, nodev: nothing the run writes can become a setuid program or a device on the host.
  const error = await run(mount, ['-t', 'tmpfs', '-o', `size=${mib * MIB},mode=0700,nosuid,nodev`, 'forgeenv-run', dir]);
  if (error) await unlink(join(registry, basename(dir))).catch(() => undefined);
  return error;
}

/** True when the folder's file system has (nearly) no room left: the run hit its quota. */
export async function quotaFull(dir: string): Promise<boolean> {
  try {
    const s = await statfs(dir);
    return s.bavail * s.bsize < MIB;
  } catch {
    return false;
  }
}

/**
 * Unmounts the quota of `dir`. `keep`: the folder's contents are copied to disk first and the folder
 * stays (at the same path); else the folder is gone afterwards.
 */
export async function releaseQuota(dir: string, keep: boolean): Promise<void> {
  const umount = findExecutable('umount');
  if (!umount) return;
  if (keep) {
    const copy = `${dir}.keep`;
    await cp(dir, copy, { recursive: true, verbatimSymlinks: true, force: true }).catch(() => undefined);
    // -l: a process that still holds it (none should) cannot keep the mount alive.
    await run(umount, ['-l', dir]);
    await rmdir(dir).catch(() => undefined);
    await rename(copy, dir).catch(async () => {
      await mkdir(dir, { recursive: true }).catch(() => undefined);
    });
    await unlink(join(quotaRegistryDir(), basename(dir))).catch(() => undefined);
    return;
  }
  await run(umount, ['-l', dir]);
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  await unlink(join(quotaRegistryDir(), basename(dir))).catch(() => undefined);
}

// The run folder's disk quota. RLIMIT_FSIZE bounds each file, not their sum: a run wrote 2.8 GiB in
// 7.5 s over many files. As root, the run folder is a size-limited tmpfs mounted on the host (`mount
// -t tmpfs -o size=…`) before anything is written into it: a write past the quota fails with ENOSPC at
// once, whatever the number of files or processes, and nothing reaches the host's disk. Being a
// host mount (not one inside the sandbox), it outlives the script, so the host still reads the
// checkpoints and artifacts afterwards; then it is unmounted (its memory goes back), or, when the
// caller keeps the run folder, copied to disk first. Its pages are memory, so the quota is part of
// the run's memory footprint (memory.ts). Not root: no mount is possible, and the executor watches
// the folder's size instead (best effort, see docs/sandbox.md).
import { spawn } from 'node:child_process';
import { cp, mkdir, rename, rm, rmdir, statfs } from 'node:fs/promises';
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
export const canMountQuota = (): boolean => process.platform === 'linux' && process.getuid?.() === 0 && findExecutable('mount') !== undefined;

/** Mounts a tmpfs of `mib` MiB on the (empty) folder `dir`; an error message when it could not. */
export async function mountQuota(dir: string, mib: number): Promise<string | undefined> {
  const mount = findExecutable('mount');
  if (!mount) return 'mount is not installed';
  // nosuid, nodev: nothing the run writes can become a setuid program or a device on the host.
  return run(mount, ['-t', 'tmpfs', '-o', `size=${mib * MIB},mode=0700,nosuid,nodev`, 'forgeenv-run', dir]);
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
    return;
  }
  await run(umount, ['-l', dir]);
  await rm(dir, { recursive: true, force: true }).catch(() => undefined);
}

// The sandbox's /etc: a copy of the few entries the loader, libc and Python read, bound as one
// read-only folder. One bind instead of one per file, because every mount costs time when the run
// starts and again when its namespace is torn down (~0.7 ms each, measured under load). The copy
// lives in ForgeEnv's cache (never in a shared temp folder another user could prepare), is named by
// the size and mtime of what it copies, and is rebuilt when any of them changes (e.g. ld.so.cache
// after a package install).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, lstatSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Entries without secrets (no shadow, ssh, pip or apt configuration, machine-id). */
export const ETC_FILES = ['alternatives', 'group', 'hosts', 'ld.so.cache', 'localtime', 'nsswitch.conf', 'passwd'];
/** Name service and TLS: only with the network. */
export const ETC_NETWORK_FILES = [
  'ca-certificates',
  'ca-certificates.conf',
  'gai.conf',
  'host.conf',
  'pki',
  'protocols',
  'resolv.conf',
  'services',
  'ssl',
];

/** The /etc entries a run sees (absolute host paths that exist). */
export function etcEntries(network: boolean, etc = '/etc'): string[] {
  let names: string[];
  try {
    names = readdirSync(etc);
  } catch {
    return [];
  }
  // Debian's Python reads /etc/python3.X/sitecustomize.py through a link in the standard library.
  const wanted = (n: string) => ETC_FILES.includes(n) || (network && ETC_NETWORK_FILES.includes(n)) || /^python3(\.\d+)?$/.test(n);
  return names
    .filter(wanted)
    .sort()
    .map((n) => join(etc, n));
}

/**
 * A folder holding copies of `entries` (symbolic links kept as links, e.g. localtime and the
 * alternatives), under `root`; undefined when it cannot be made (the caller then binds each entry).
 */
export function etcCopy(entries: string[], root: string): string | undefined {
  const h = createHash('sha256');
  for (const e of entries) {
    try {
      const st = lstatSync(e);
      h.update(`${e}\0${st.size}\0${st.mtimeMs}\0${st.mode}\n`);
    } catch {
      h.update(`${e}\0missing\n`);
    }
  }
  const dir = join(root, h.digest('hex').slice(0, 20));
  if (existsSync(dir)) return dir;
  const tmp = `${dir}.tmp-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  try {
    mkdirSync(tmp, { recursive: true, mode: 0o755 });
    for (const e of entries) {
      if (!existsSync(e)) continue;
      cpSync(e, join(tmp, e.split('/').pop()!), { recursive: true, verbatimSymlinks: true, dereference: false, errorOnExist: false });
    }
    renameSync(tmp, dir);
    return dir;
  } catch {
    rmSync(tmp, { recursive: true, force: true });
    // Another process may have finished the same copy meanwhile.
    return existsSync(dir) ? dir : undefined;
  }
}

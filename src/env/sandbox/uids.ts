// One uid per concurrent run, when ForgeEnv runs as root. The kernel counts RLIMIT_NPROC per uid:
// when every run was `nobody`, one run's fork bomb used up the count of every other run on the machine
// ("can't start new thread"). Now each run gets a uid (and gid) of its own from a range no account
// uses (2_000_000_000 + slot), taken while the run lives and given back after; the run folder is
// handed to it. Slots are claimed across processes too (a CLI next to a server): a lock file per
// slot in a root-only folder holds the owner's pid, and a slot whose owner is gone is taken over.
import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync, lstatSync } from 'node:fs';
import { join } from 'node:path';

export const RUN_UID_BASE = 2_000_000_000;
export const RUN_UID_SLOTS = 4096;

export interface RunUid {
  uid: number;
  /** Gives the uid back; calling it more than once is harmless. */
  release(): void;
}

const held = new Set<number>();
let next = 0;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A root-owned folder nobody else can write (else another user could block or steal slots). */
function lockDir(root: string): string {
  mkdirSync(root, { recursive: true, mode: 0o700 });
  const st = lstatSync(root);
  if (!st.isDirectory() || st.uid !== process.getuid?.() || (st.mode & 0o022) !== 0) throw new Error(`${root} is not a private folder`);
  return root;
}

function claim(dir: string, slot: number): boolean {
  const file = join(dir, String(slot));
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(file, 'wx', 0o600);
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      let owner = NaN;
      try {
        owner = Number(readFileSync(file, 'utf8').trim());
      } catch {
        // removed meanwhile: try again
      }
      // A slot of a live process (another ForgeEnv, or this one's other run) stays theirs.
      if (Number.isInteger(owner) && owner > 0 && (owner === process.pid || alive(owner))) return false;
      rmSync(file, { force: true });
    }
  }
  return false;
}

/** Takes a free uid; throws when all RUN_UID_SLOTS are taken (a run is then refused, never shared). */
export function acquireRunUid(lockRoot: string): RunUid {
  const dir = lockDir(lockRoot);
  for (let i = 0; i < RUN_UID_SLOTS; i++) {
    const slot = (next + i) % RUN_UID_SLOTS;
    if (held.has(slot) || !claim(dir, slot)) continue;
    held.add(slot);
    next = (slot + 1) % RUN_UID_SLOTS;
    let released = false;
    return {
      uid: RUN_UID_BASE + slot,
      release: () => {
        if (released) return;
        released = true;
        held.delete(slot);
        rmSync(join(dir, String(slot)), { force: true });
      },
    };
  }
  throw new Error(`all ${RUN_UID_SLOTS} sandbox uids are in use`);
}

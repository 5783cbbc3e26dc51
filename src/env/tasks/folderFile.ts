// Reading a file from a folder someone else may have prepared (a task folder, a folder of scripts):
// only a regular file inside the folder, within a size limit, reached without following any link.
//
// Why no links at all, not even ones that stay inside the folder: checking where a path leads and
// then opening it are two steps, and whoever prepared the folder can change it in between. The
// old check-then-open (lstat/realpath, then open with O_NOFOLLOW) was beaten by swapping an
// *intermediate* folder for a link to /proc/self after the check: O_NOFOLLOW only guards the last
// component, so `forgeenv serve --task-dir` returned the server's environment as a task script.
// So the folder is opened once and every component below it is opened relative to the previous
// descriptor with O_NOFOLLOW (O_DIRECTORY for folders): a link at any component fails the open
// itself, whenever it was swapped in. Node has no openat(2); on Linux `/proc/self/fd/<fd>/<name>`
// is the same lookup (the magic link resolves to the open directory, wherever it now is, and
// only `<name>` is looked up in it). Fifos, devices, sockets and directories are refused (the last
// open is O_NONBLOCK, so a fifo swapped in cannot block the reader); the size is checked before
// reading and the read itself never takes more than the limit.
//
// The folder itself is the one the user named (a setting, --task-dir): links in *that* path are
// followed, as any path the user types; only what lies below it is untrusted.
import { closeSync, constants, existsSync, fstatSync, lstatSync, openSync, readlinkSync, readSync, type Stats } from 'node:fs';
import { isAbsolute, join } from 'node:path';

export type FolderFileResult = { ok: true; text: string; bytes: number } | { ok: false; problem: string };

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return 'a symbolic link';
  if (st.isFIFO()) return 'a named pipe (fifo)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

// Flags that do not exist on a platform are 0 there (Windows has no O_NOFOLLOW), never undefined.
const O_NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const O_DIRECTORY = constants.O_DIRECTORY ?? 0;
const O_NONBLOCK = constants.O_NONBLOCK ?? 0;
const O_NOCTTY = constants.O_NOCTTY ?? 0;

let procFd: boolean | undefined;
/** Whether `/proc/self/fd/<fd>/<name>` can stand in for openat(2) here (Linux with /proc mounted). */
function hasProcFd(): boolean {
  return (procFd ??= process.platform === 'linux' && existsSync('/proc/self/fd'));
}

class Refused extends Error {
  constructor(
    readonly problem: string,
    readonly missing = false,
  ) {
    super(problem);
  }
}

const LINK_REFUSED = 'symbolic links are not followed in a task folder (copy the file in instead)';

function linkProblem(shown: string, at: string): string {
  let written = '';
  try {
    written = ` to ${readlinkSync(at)}`;
  } catch {
    // Gone or replaced since; the open already refused it, the message just cannot name the target.
  }
  return `${shown}: a symbolic link${written}; ${LINK_REFUSED}`;
}

/**
 * Opens one component below an open directory without following a link there. `at` is the path
 * the kernel looks up (relative to the directory's descriptor on Linux); `shown` names it in messages.
 * The lstat before the open only words the refusal and keeps fifos and devices from being opened
 * at all in the ordinary case; the open's own flags and the fstat after it are what decide.
 */
function openComponent(at: string, shown: string, last: boolean): { fd: number; st: Stats } {
  let pre: Stats;
  try {
    pre = lstatSync(at);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new Refused(`${shown}: does not exist`, true);
    if (code === 'ENOTDIR') throw new Refused(`${shown}: a path through something that is not a folder`);
    throw e;
  }
  if (pre.isSymbolicLink()) throw new Refused(linkProblem(shown, at));
  if (last ? !pre.isFile() : !pre.isDirectory()) throw new Refused(`${shown}: ${kindOf(pre)}, not a ${last ? 'regular file' : 'folder'}`);
  let fd: number;
  try {
    fd = openSync(at, constants.O_RDONLY | O_NOFOLLOW | O_NOCTTY | (last ? O_NONBLOCK : O_DIRECTORY));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    // ELOOP: O_NOFOLLOW met a link; ENOTDIR: O_DIRECTORY met something else. Either was swapped in after the lstat.
    if (code === 'ELOOP') throw new Refused(`${shown}: a symbolic link swapped in while reading; ${LINK_REFUSED}`);
    if (code === 'ENOTDIR') throw new Refused(`${shown}: replaced by something that is not a folder while reading`);
    if (code === 'ENOENT') throw new Refused(`${shown}: does not exist`, true);
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (last ? !st.isFile() : !st.isDirectory()) throw new Refused(`${shown}: ${kindOf(st)}, not a ${last ? 'regular file' : 'folder'}`);
    // Without /proc (not Linux) the lookup went by path again: make sure it reached what was checked.
    if (!hasProcFd() && (st.dev !== pre.dev || st.ino !== pre.ino)) throw new Refused(`${shown}: replaced while reading`);
    return { fd, st };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
}

/** Reads an open regular file: at most `maxBytes + 1` bytes, so a growing file (or a size-0 /proc file) stays bounded. */
function readBounded(fd: number, size: number, maxBytes: number): { buf: Buffer; len: number } {
  let chunk = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(size + 1, 64 * 1024)));
  let len = 0;
  for (;;) {
    if (len === chunk.length) {
      if (len > maxBytes) break;
      const bigger = Buffer.allocUnsafe(Math.min(maxBytes + 1, chunk.length * 2));
      chunk.copy(bigger, 0, 0, len);
      chunk = bigger;
    }
    const n = readSync(fd, chunk, len, chunk.length - len, null);
    if (n === 0) break;
    len += n;
  }
  return { buf: chunk, len };
}

/**
 * Reads `name` (a relative path, `/`-separated) in `dir` as UTF-8 text if it is a regular file
 * inside `dir` of at most `maxBytes`, reached without a symbolic link at any component; otherwise
 * a problem naming the file and why (`missing` when it does not exist, for optional files).
 * Never throws.
 */
export function readFolderFile(dir: string, name: string, maxBytes: number): FolderFileResult & { missing?: boolean } {
  const file = join(dir, name);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (isAbsolute(name) || parts.length === 0 || parts.includes('..'))
    return { ok: false, problem: `${file}: not a path inside the folder` };
  const open: number[] = [];
  try {
    open.push(openSync(dir, constants.O_RDONLY | O_DIRECTORY));
    let shown = dir;
    let byPath = dir;
    let st: Stats | undefined;
    for (let i = 0; i < parts.length; i++) {
      const last = i === parts.length - 1;
      shown = join(shown, parts[i]);
      byPath = join(byPath, parts[i]);
      const at = hasProcFd() ? `/proc/self/fd/${open[open.length - 1]}/${parts[i]}` : byPath;
      const next = openComponent(at, shown, last);
      open.push(next.fd);
      st = next.st;
    }
    if (st!.size > maxBytes) return { ok: false, problem: `${file}: ${formatBytes(st!.size)}, over the ${formatBytes(maxBytes)} limit` };
    const { buf, len } = readBounded(open[open.length - 1], st!.size, maxBytes);
    if (len > maxBytes) return { ok: false, problem: `${file}: over the ${formatBytes(maxBytes)} limit` };
    return { ok: true, text: buf.toString('utf8', 0, len), bytes: len };
  } catch (e) {
    if (e instanceof Refused) return e.missing ? { ok: false, problem: e.problem, missing: true } : { ok: false, problem: e.problem };
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return { ok: false, problem: `${file}: does not exist`, missing: true };
    return { ok: false, problem: `${file}: cannot be read (${err.code ?? err.message})` };
  } finally {
    for (const fd of open) closeSync(fd);
  }
}

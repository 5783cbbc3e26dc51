// Reading a file from a folder someone else may have prepared (a task folder, a folder of scripts):
// only a regular file inside the folder, within a size limit. A symlink may point elsewhere inside
// the folder, never outside it (`x.py → /proc/self/environ` would load the host's environment as a
// script); fifos, devices, sockets and directories are refused (a fifo blocks the reader forever);
// the size is checked before reading, and the read itself never takes more than the limit.
import { closeSync, constants, fstatSync, lstatSync, openSync, readlinkSync, readSync, realpathSync, statSync, type Stats } from 'node:fs';
import { isAbsolute, join, relative } from 'node:path';

export type FolderFileResult = { ok: true; text: string; bytes: number } | { ok: false; problem: string };

function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a named pipe (fifo)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'not a regular file';
}

function formatBytes(n: number): string {
  return n >= 1024 * 1024 ? `${(n / (1024 * 1024)).toFixed(1)} MiB` : n >= 1024 ? `${(n / 1024).toFixed(1)} KiB` : `${n} bytes`;
}

const inside = (root: string, p: string) => {
  const rel = relative(root, p);
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
};

/**
 * Reads `name` in `dir` as UTF-8 text if it is a regular file inside `dir` (after following
 * symlinks) of at most `maxBytes`; otherwise a problem naming the file and why (`missing` when
 * it does not exist, for optional files). Never throws.
 */
export function readFolderFile(dir: string, name: string, maxBytes: number): FolderFileResult & { missing?: boolean } {
  const file = join(dir, name);
  try {
    const link = lstatSync(file);
    let target = file;
    if (link.isSymbolicLink()) {
      let real: string;
      try {
        real = realpathSync(file);
      } catch (e) {
        return { ok: false, problem: `${file}: a symbolic link that cannot be followed (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
      }
      if (!inside(realpathSync(dir), real)) {
        // Named as written in the link (what `ls -l` shows), and where it ends when that differs.
        const written = readlinkSync(file);
        return { ok: false, problem: `${file}: a symbolic link to ${written}${written === real ? '' : ` (→ ${real})`}, outside the folder` };
      }
      target = real;
    }
    const st = link.isSymbolicLink() ? statSync(target) : link;
    if (!st.isFile()) return { ok: false, problem: `${file}: ${kindOf(st)}, not a regular file` };
    if (st.size > maxBytes) return { ok: false, problem: `${file}: ${formatBytes(st.size)}, over the ${formatBytes(maxBytes)} limit` };
    // O_NOFOLLOW on the resolved path and O_NONBLOCK: if the file is swapped for a link or a fifo
    // after the checks above, opening fails or returns at once instead of following or blocking.
    const fd = openSync(target, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const opened = fstatSync(fd);
      if (!opened.isFile()) return { ok: false, problem: `${file}: ${kindOf(opened)}, not a regular file` };
      // Read at most one byte past the limit: a file that grows (or a /proc file that reports size 0) stays bounded.
      const buf = Buffer.allocUnsafe(Math.min(maxBytes + 1, Math.max(opened.size + 1, 64 * 1024)));
      let len = 0;
      let chunk = buf;
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
      if (len > maxBytes) return { ok: false, problem: `${file}: over the ${formatBytes(maxBytes)} limit` };
      return { ok: true, text: chunk.toString('utf8', 0, len), bytes: len };
    } finally {
      closeSync(fd);
    }
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ENOENT') return { ok: false, problem: `${file}: does not exist`, missing: true };
    if (err.code === 'ELOOP') return { ok: false, problem: `${file}: a symbolic link loop, or a link swapped in while reading` };
    return { ok: false, problem: `${file}: cannot be read (${err.code ?? err.message})` };
  }
}

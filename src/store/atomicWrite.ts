// Whole-file writes that are all-or-nothing: data goes to a temporary file in the same folder,
// is fsync'd, then renamed over the target. A crash leaves either the old file or the new one,
// never half of either (rename is atomic within one filesystem).
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

function tempPathFor(target: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
}

async function fsyncDir(dir: string): Promise<void> {
  // Makes the rename itself durable; not supported everywhere (e.g. Windows), hence best-effort.
  try {
    const fh = await open(dir, 'r');
    try {
      await fh.sync();
    } finally {
      await fh.close();
    }
  } catch {
    /* best-effort */
  }
}

/** Streams into a temp file; nothing is visible at `target` until `commit()`. */
export class AtomicFileWriter {
  private fh: FileHandle | undefined;
  private pending: Array<string | Buffer> = [];
  private pendingLen = 0;
  private done = false;

  private constructor(
    readonly target: string,
    private readonly tempPath: string,
    fh: FileHandle,
    private readonly flushChars: number,
    private readonly durable: boolean,
  ) {
    this.fh = fh;
  }

  /** `durable: false` skips the fsyncs, for scratch files that are worthless after a crash anyway. */
  static async create(target: string, opts: { flushChars?: number; durable?: boolean } = {}): Promise<AtomicFileWriter> {
    await mkdir(dirname(target), { recursive: true });
    const tempPath = tempPathFor(target);
    const fh = await open(tempPath, 'wx');
    return new AtomicFileWriter(target, tempPath, fh, opts.flushChars ?? 1 << 20, opts.durable ?? true);
  }

  /** Buffers text and writes it in large chunks (few syscalls for many small rows). */
  async write(text: string | Buffer): Promise<void> {
    if (this.done || !this.fh) throw new Error(`AtomicFileWriter for ${this.target} is already closed`);
    this.pending.push(text);
    this.pendingLen += text.length;
    if (this.pendingLen >= this.flushChars) await this.flush();
  }

  private async flush(): Promise<void> {
    if (!this.fh || this.pending.length === 0) return;
    const buf = Buffer.concat(this.pending.map((p) => (typeof p === 'string' ? Buffer.from(p, 'utf8') : p)));
    this.pending = [];
    this.pendingLen = 0;
    for (let off = 0; off < buf.length;) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten;
  }

  async commit(): Promise<void> {
    if (this.done) throw new Error(`AtomicFileWriter for ${this.target} is already closed`);
    try {
      await this.flush();
      if (this.durable) await this.fh!.sync();
      await this.fh!.close();
      this.fh = undefined;
      await rename(this.tempPath, this.target);
      this.done = true;
      if (this.durable) await fsyncDir(dirname(this.target));
    } catch (err) {
      await this.abort();
      throw err;
    }
  }

  /** Drops the temp file; the target is untouched. Safe to call more than once. */
  async abort(): Promise<void> {
    this.done = true;
    this.pending = [];
    await this.fh?.close().catch(() => undefined);
    this.fh = undefined;
    await unlink(this.tempPath).catch(() => undefined);
  }
}

export async function writeFileAtomic(target: string, data: string | Buffer): Promise<void> {
  const w = await AtomicFileWriter.create(target);
  try {
    await w.write(data);
  } catch (err) {
    await w.abort();
    throw err;
  }
  await w.commit();
}

/**
 * Writes a cache file whole and renames it into place (a reader never sees half of it), without
 * fsync, and never fails: a read-only or full cache only costs speed next time.
 */
export async function writeCacheFile(target: string, data: Buffer | string): Promise<void> {
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(tmp, data);
    await rename(tmp, target);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
  }
}

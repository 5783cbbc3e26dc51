// Append-only JSONL files. A line is validated and serialized before anything touches the
// disk, then written with one append of the whole line plus `\n` and fsync'd, so a crash can
// at most leave one torn last line; earlier lines are never rewritten. Readers stream the file
// in chunks (never one giant string), report bad lines with file and line number, and skip them.
//
// Several processes may append to one file (two windows, the CLI and the editor). Each append
// holds a lock directory beside the file (`.<name>.lock`, src/env/dirLock.ts) while it checks the
// last byte, writes and fsyncs. The file is opened O_APPEND and each batch is one write() call,
// which on a local filesystem already lands whole at the end; the lock makes the torn-line check
// and the rare short write (continued by a second write) safe too, and covers filesystems where
// O_APPEND is not atomic (NFS). A writer killed while holding the lock leaves it behind; the next
// writer sees its pid is gone and takes the lock over.
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { acquireDirLock } from '../env/dirLock';
import type { z } from 'zod';
import { formatZodError } from '../env/schemas';

export type StoreProblemKind = 'invalid_json' | 'truncated' | 'schema' | 'too_long' | 'unreadable' | 'inconsistent';

/** A line (or file, `line: 0`) a reader could not use. */
export interface StoreProblem {
  file: string;
  /** 1-based; 0 when the whole file is affected. */
  line: number;
  kind: StoreProblemKind;
  error: string;
}

export function formatProblem(p: StoreProblem): string {
  return `${p.file}:${p.line}: ${p.error}`;
}

/** A write failed; `records` are the validated records that were not (fully) written, so the caller can keep them. */
export class DatasetWriteError extends Error {
  constructor(
    message: string,
    readonly file: string,
    readonly code: string | undefined,
    readonly records: readonly unknown[],
  ) {
    super(message);
    this.name = 'DatasetWriteError';
  }
}

/** A record failed its schema; nothing was written. */
export class RecordValidationError extends Error {
  constructor(
    message: string,
    readonly record: unknown,
  ) {
    super(message);
    this.name = 'RecordValidationError';
  }
}

/** Validates and serializes one record to a line (without `\n`). Throws RecordValidationError. */
export function serializeRecord<S extends z.ZodType>(schema: S, record: unknown, what: string): { value: z.infer<S>; line: string } {
  const parsed = schema.safeParse(record);
  if (!parsed.success) throw new RecordValidationError(`Refusing to write an invalid ${what}: ${formatZodError(parsed.error)}`, record);
  // JSON.stringify escapes control characters, so the line can never contain a raw newline.
  return { value: parsed.data, line: JSON.stringify(parsed.data) };
}

// One queue per file path, shared by every writer in this process, so appends never interleave.
const queues = new Map<string, Promise<unknown>>();

function enqueue<T>(file: string, job: () => Promise<T>): Promise<T> {
  const key = resolve(file);
  const prev = queues.get(key) ?? Promise.resolve();
  const next = prev.then(job, job);
  const tail = next.catch(() => undefined);
  queues.set(key, tail);
  void tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key);
  });
  return next;
}

export interface AppendOptions {
  /** Folder named in the error message (default: the file's folder). */
  datasetDir?: string;
  /** How long to wait for another process's append (default 30 s; appends take milliseconds). */
  lockTimeoutMs?: number;
}

/** The lock directory that serialises appends to `file` across processes. */
export function appendLockPath(file: string): string {
  return join(dirname(file), `.${basename(file)}.lock`);
}

class LockTimeout extends Error {}

/**
 * Appends already-serialized lines (no `\n` inside) as one write, then fsyncs. If the file's last
 * byte is not `\n` (an earlier torn write), a `\n` goes first so new lines never glue onto garbage.
 */
export function appendLines(file: string, lines: readonly string[], records: readonly unknown[], opts: AppendOptions = {}): Promise<void> {
  if (lines.length === 0) return Promise.resolve();
  return enqueue(file, async () => {
    let fh: FileHandle | undefined;
    let release: (() => void) | undefined;
    try {
      await mkdir(dirname(file), { recursive: true });
      release = await acquireDirLock(appendLockPath(file), {
        pollMs: 4,
        timeoutMs: opts.lockTimeoutMs ?? 30_000,
        timeoutError: (holder) => new LockTimeout(`${holder} has been appending to ${basename(file)} for too long`),
        // A holder on another machine (a shared folder) is stale after a minute: an append takes milliseconds.
        staleAfterMs: 60_000,
        abortError: () => new Error('aborted'),
      });
      fh = await open(file, 'a+');
      const { size } = await fh.stat();
      let prefix = '';
      if (size > 0) {
        const last = Buffer.alloc(1);
        await fh.read(last, 0, 1, size - 1);
        if (last[0] !== 0x0a) prefix = '\n';
      }
      const buf = Buffer.from(prefix + lines.join('\n') + '\n', 'utf8');
      // O_APPEND: every write lands at the end; loop only in case the OS writes a part.
      for (let off = 0; off < buf.length;) off += (await fh.write(buf, off, buf.length - off)).bytesWritten;
      await fh.sync();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      const dir = opts.datasetDir ?? dirname(file);
      if (err instanceof LockTimeout) throw new DatasetWriteError(`Dataset folder ${dir} is busy: ${e.message}`, file, 'ELOCKED', records);
      throw new DatasetWriteError(`Dataset folder ${dir} is not writable: ${e.message}`, file, e.code, records);
    } finally {
      await fh?.close().catch(() => undefined);
      release?.();
    }
  });
}

/** Validates every record first (all or nothing), then appends them as one write. Resolves to the parsed records. */
export async function appendJsonl<S extends z.ZodType>(
  file: string,
  schema: S,
  records: readonly unknown[],
  what: string,
  opts: AppendOptions = {},
): Promise<Array<z.infer<S>>> {
  const serialized = records.map((r) => serializeRecord(schema, r, what));
  const values = serialized.map((s) => s.value);
  await appendLines(
    file,
    serialized.map((s) => s.line),
    values,
    opts,
  );
  return values;
}

export type JsonlEntry<T> = { ok: true; line: number; value: T } | { ok: false; problem: StoreProblem };

export interface ReadOptions {
  /** Name used in problem messages, e.g. `demonstration`. */
  what?: string;
  /** Path shown in problems (default: `file` as given). */
  displayPath?: string;
  chunkBytes?: number;
  /** Lines longer than this are reported and skipped instead of buffered. */
  maxLineBytes?: number;
  /** Names a line that is another kind of record (e.g. a review in demonstrations.jsonl) more clearly than a list of schema issues. */
  foreign?: (json: unknown) => string | undefined;
  /**
   * A quick check that is true only for values `schema` accepts (quickCheck.ts): those are returned
   * as parsed, without the schema's copy and defaults, so only for callers that read fields the
   * schema passes through unchanged. Anything else goes through the schema as usual.
   */
  accept?: (json: unknown) => boolean;
}

const DEFAULT_CHUNK = 1 << 20;
export const DEFAULT_MAX_LINE_BYTES = 64 << 20;
const DEFAULT_MAX_LINE = DEFAULT_MAX_LINE_BYTES;

/** One raw line and the byte offset just after it (`end`); `tooLong` for a line over the limit, skipped unbuffered. */
export type RawLine = { line: number; text: string; terminated: boolean; end: number } | { line: number; tooLong: true; end: number };

/**
 * Raw lines of an open file from byte `offset` on, numbered from `firstLine + 1`. Bytes are split at
 * `\n` before decoding, so a multi-byte character is never cut in half.
 */
export async function* linesOfHandle(
  fh: FileHandle,
  opts: { offset?: number; firstLine?: number; chunkBytes?: number; maxLineBytes?: number } = {},
): AsyncGenerator<RawLine> {
  const chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK;
  const maxLine = opts.maxLineBytes ?? DEFAULT_MAX_LINE;
  const buf = Buffer.allocUnsafe(chunkBytes);
  let pos = opts.offset ?? 0;
  let lineNo = opts.firstLine ?? 0;
  let carry: Buffer[] = [];
  let carryLen = 0;
  let skipping = false; // inside an over-long line: drop bytes until the next newline
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, chunkBytes, pos);
    if (bytesRead === 0) break;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(0x0a, start);
      if (nl === -1 || nl >= bytesRead) break;
      lineNo++;
      const end = pos + nl + 1;
      if (skipping) {
        yield { line: lineNo, tooLong: true, end };
        skipping = false;
      } else {
        const piece = buf.subarray(start, nl);
        const text = carryLen ? Buffer.concat([...carry, piece]).toString('utf8') : piece.toString('utf8');
        yield { line: lineNo, text, terminated: true, end };
      }
      carry = [];
      carryLen = 0;
      start = nl + 1;
    }
    if (start < bytesRead && !skipping) {
      carry.push(Buffer.from(buf.subarray(start, bytesRead)));
      carryLen += bytesRead - start;
      if (carryLen > maxLine) {
        skipping = true;
        carry = [];
        carryLen = 0;
      }
    }
    pos += bytesRead;
  }
  if (skipping) yield { line: lineNo + 1, tooLong: true, end: pos };
  else if (carryLen) yield { line: lineNo + 1, text: Buffer.concat(carry).toString('utf8'), terminated: false, end: pos };
}

/** Raw lines of a file: `{line, text, terminated, end}`; a missing file yields nothing. */
export async function* readLines(file: string, opts: { chunkBytes?: number; maxLineBytes?: number } = {}): AsyncGenerator<RawLine> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  try {
    yield* linesOfHandle(fh, opts);
  } finally {
    await fh.close();
  }
}

function clip(s: string, max = 400): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}

/**
 * Streams a JSONL file through `schema`. Bad lines become problems (`invalid_json`, `truncated`
 * for an unterminated last line that does not parse, `schema` for valid JSON of the wrong shape);
 * blank lines are ignored. A valid unterminated last line is accepted: its data is complete.
 */
export async function* readJsonl<S extends z.ZodType>(
  file: string,
  schema: S,
  opts: ReadOptions = {},
): AsyncGenerator<JsonlEntry<z.infer<S>>> {
  const shown = opts.displayPath ?? file;
  const lineOpts = { ...opts, displayPath: shown };
  const problem = (line: number, kind: StoreProblemKind, error: string): JsonlEntry<z.infer<S>> => ({
    ok: false,
    problem: { file: shown, line, kind, error },
  });
  try {
    for await (const raw of readLines(file, opts)) {
      if ('tooLong' in raw) {
        yield problem(raw.line, 'too_long', `line longer than ${opts.maxLineBytes ?? DEFAULT_MAX_LINE} bytes, skipped`);
        continue;
      }
      const e = parseJsonlLine(raw.text, raw.line, raw.terminated, schema, lineOpts);
      if (e) yield e;
    }
  } catch (err) {
    yield problem(0, 'unreadable', `cannot read: ${(err as Error).message}`);
  }
}

/**
 * One line of a JSONL file through `schema` (readJsonl's rules: BOM and `\r` dropped, blank lines
 * skipped → undefined, an unterminated line that does not parse is `truncated`). Shared with the
 * summary index, which reads from a byte offset.
 */
export function parseJsonlLine<S extends z.ZodType>(
  raw: string,
  line: number,
  terminated: boolean,
  schema: S,
  opts: ReadOptions = {},
): JsonlEntry<z.infer<S>> | undefined {
  const problem = (kind: StoreProblemKind, error: string, file: string): JsonlEntry<z.infer<S>> => ({
    ok: false,
    problem: { file, line, kind, error },
  });
  let text = raw;
  if (line === 1 && text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.endsWith('\r')) text = text.slice(0, -1);
  if (text.trim() === '') return undefined;
  const file = opts.displayPath ?? '';
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    return terminated
      ? problem('invalid_json', `not valid JSON (${(err as Error).message})`, file)
      : problem('truncated', 'truncated last line (no newline; an interrupted write), skipped', file);
  }
  if (opts.accept?.(json)) return { ok: true, line, value: json as z.infer<S> };
  const parsed = schema.safeParse(json);
  if (parsed.success) return { ok: true, line, value: parsed.data };
  const foreign = opts.foreign?.(json);
  const what = opts.what ?? 'record';
  return problem(
    'schema',
    foreign ? `foreign line: ${foreign}, not a ${what}` : `not a valid ${what}: ${clip(formatZodError(parsed.error))}`,
    file,
  );
}

/** Whole-file convenience over readJsonl, for small files (reviews, labels, timelines). */
export async function readJsonlFile<S extends z.ZodType>(
  file: string,
  schema: S,
  opts: ReadOptions = {},
): Promise<{ records: Array<{ line: number; value: z.infer<S> }>; problems: StoreProblem[] }> {
  const records: Array<{ line: number; value: z.infer<S> }> = [];
  const problems: StoreProblem[] = [];
  for await (const e of readJsonl(file, schema, opts)) {
    if (e.ok) records.push({ line: e.line, value: e.value });
    else problems.push(e.problem);
  }
  return { records, problems };
}

// The summary's index: per dataset folder, the compact per-record columns the summary aggregates
// (ids, revision links, group keys, reward, active time, diff size, hashes), the latest review per
// record and the skip groups, each with the byte offset up to which its file was read and the
// file's identity (device, inode, hashes of its first and last read bytes). The next summary
// reads only the bytes after that offset, so after N appends only those N lines are parsed; a
// file that was replaced, truncated or rewritten in place is read again from the start.
//
// The index lives in the ForgeEnv cache (<cache>/summary-index/), never in the dataset folder,
// and is only an accelerator: if it cannot be read or written the summary is still exact.
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, realpath, rename, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { cacheRoot } from '../env/snapshots/venv';
import { rawCompletion } from './completion';
import { demonstrationInconsistency } from './datasetStore';
import { countDiffLines } from './diffStats';
import { parseJsonlLine, type JsonlEntry, type ReadOptions, type StoreProblem } from './jsonlFile';
import {
  DATASET_FILES,
  DemonstrationRecordSchema,
  foreignDemonstration,
  foreignSideRecord,
  REVIEW_SCHEMA,
  ReviewRecordSchema,
  SKIP_SCHEMA,
  SkipRecordSchema,
  type DemonstrationRecord,
  type ReviewRecord,
  type SkipRecord,
} from './records';

const INDEX_VERSION = 5;
/** Problems kept per file (the total is always counted). */
export const MAX_PROBLEMS_PER_FILE = 100;
const FINGERPRINT_BYTES = 4096;
/** Hex digits of record and task hashes kept in the index. */
const HASH_PREFIX = 16;
const CHUNK = 1 << 20;
const MAX_LINE = 64 << 20;

interface Cursor {
  dev: number;
  ino: number;
  /** Bytes read: always just after a `\n`. */
  offset: number;
  /** Lines read (the next line's number is lines + 1). */
  lines: number;
  head: string;
  tail: string;
}

interface FileState<T> {
  cursor: Cursor | null;
  problems: StoreProblem[];
  problemTotal: number;
  data: T;
}

/** A growable typed-array column: no per-element objects, and saved or loaded as raw bytes. */
export class NumColumn {
  private a: Float64Array | Int32Array;
  length: number;
  constructor(
    readonly kind: 'f64' | 'i32',
    init?: Float64Array | Int32Array,
  ) {
    this.a = init ?? (kind === 'f64' ? new Float64Array(1024) : new Int32Array(1024));
    this.length = init ? init.length : 0;
  }
  push(v: number): void {
    if (this.length === this.a.length) {
      const bigger = this.kind === 'f64' ? new Float64Array(this.a.length * 2) : new Int32Array(this.a.length * 2);
      bigger.set(this.a);
      this.a = bigger;
    }
    this.a[this.length++] = v;
  }
  get(i: number): number {
    return this.a[i]!;
  }
  set(i: number, v: number): void {
    this.a[i] = v;
  }
  /** The filled part (a view: valid until the next push). */
  get values(): Float64Array | Int32Array {
    return this.a.subarray(0, this.length);
  }
}

/**
 * A string column: loaded strings stay in one text with start offsets (sliced on demand: the
 * summary looks at few of them), appended ones in an array.
 */
export class StrColumn {
  private baseCount = 0;
  private readonly extra: string[] = [];
  constructor(
    private readonly base = '',
    private readonly starts: Int32Array = new Int32Array(1),
    /** `base` as loaded (saved again without re-encoding). */
    private readonly baseBytes?: Buffer,
  ) {
    this.baseCount = starts.length - 1;
  }
  get length(): number {
    return this.baseCount + this.extra.length;
  }
  get(i: number): string {
    return i < this.baseCount ? this.base.slice(this.starts[i]!, this.starts[i + 1]!) : this.extra[i - this.baseCount]!;
  }
  /** Whether positions i and j hold the same string (no substring is made for loaded ones). */
  equals(i: number, j: number): boolean {
    if (i >= this.baseCount || j >= this.baseCount) return this.get(i) === this.get(j);
    const a = this.starts[i]!;
    const b = this.starts[j]!;
    const len = this.starts[i + 1]! - a;
    if (this.starts[j + 1]! - b !== len) return false;
    for (let k = 0; k < len; k++) if (this.base.charCodeAt(a + k) !== this.base.charCodeAt(b + k)) return false;
    return true;
  }
  push(s: string): void {
    this.extra.push(s);
  }
  encode(): { bytes: Buffer; starts: Int32Array } {
    const tail = this.extra.join('');
    const starts = new Int32Array(this.length + 1);
    starts.set(this.starts.subarray(0, this.baseCount + 1));
    let at = this.starts[this.baseCount]!;
    for (let k = 0; k < this.extra.length; k++) starts[this.baseCount + k + 1] = at += this.extra[k]!.length;
    const head = this.baseBytes ?? Buffer.from(this.base, 'utf8');
    return { bytes: tail ? Buffer.concat([head, Buffer.from(tail, 'utf8')]) : head, starts };
  }
}

const f64 = () => new NumColumn('f64');
const i32 = () => new NumColumn('i32');

export interface DemoColumns {
  ids: StrColumn;
  /** The record id this line supersedes, or ''. */
  supersedes: StrColumn;
  /** Indexes into `strings`. */
  primitive: NumColumn;
  task: NumColumn;
  annotator: NumColumn;
  success: NumColumn;
  reward: NumColumn;
  active: NumColumn;
  added: NumColumn;
  removed: NumColumn;
  recordHash: StrColumn;
  taskHash: StrColumn;
  /** key28() of ids, supersedes (-1: none), recordHash, taskHash: computed once when a line is read. */
  idKey: NumColumn;
  supersedesKey: NumColumn;
  recordHashKey: NumColumn;
  taskHashKey: NumColumn;
  /** Resolved as lines arrive (resolveRows): the first line of the same record id; whether that id is superseded (1/0); its latest verdict (1 approve, 0 reject, -1 none; first lines only). */
  first: NumColumn;
  superseded: NumColumn;
  verdict: NumColumn;
}

export interface SkipColumns {
  primitive: NumColumn;
  task: NumColumn;
  annotator: NumColumn;
}

/** record_id → [time of the latest review (ms), 1 approve / 0 reject]. */
export type LatestReviews = Map<string, [number, number]>;

export interface SummaryState {
  v: number;
  dir: string;
  strings: string[];
  /** Superseded record ids no line has (yet): a later line with such an id is superseded on arrival. */
  dangling: string[];
  demonstrations: FileState<DemoColumns>;
  skips: FileState<SkipColumns>;
  reviews: FileState<LatestReviews>;
}

function emptyState(dir: string): SummaryState {
  return {
    v: INDEX_VERSION,
    dir,
    strings: [],
    dangling: [],
    demonstrations: {
      cursor: null,
      problems: [],
      problemTotal: 0,
      data: {
        ids: new StrColumn(),
        supersedes: new StrColumn(),
        primitive: i32(),
        task: i32(),
        annotator: i32(),
        success: i32(),
        reward: f64(),
        active: f64(),
        added: i32(),
        removed: i32(),
        recordHash: new StrColumn(),
        taskHash: new StrColumn(),
        idKey: i32(),
        supersedesKey: i32(),
        recordHashKey: i32(),
        taskHashKey: i32(),
        first: i32(),
        superseded: i32(),
        verdict: i32(),
      },
    },
    skips: { cursor: null, problems: [], problemTotal: 0, data: { primitive: i32(), task: i32(), annotator: i32() } },
    reviews: { cursor: null, problems: [], problemTotal: 0, data: new Map() },
  };
}

async function canonicalDir(dir: string): Promise<string> {
  return realpath(dir).catch(() => dir);
}

/** Where the index of a dataset folder is kept (one file per folder, named by its real path's hash). */
export function summaryIndexPath(dir: string): string {
  return join(cacheRoot(), 'summary-index', `${createHash('sha256').update(dir).digest('hex').slice(0, 32)}.idx`);
}

async function indexPathOf(dir: string): Promise<string> {
  return summaryIndexPath(await canonicalDir(dir));
}

export async function clearSummaryIndex(dir: string): Promise<void> {
  await rm(await indexPathOf(dir), { force: true });
}

// On disk: a 4-byte header length, a JSON header (cursors, problems, the string table), then the
// columns as raw typed arrays and newline-joined strings, so loading 100k records costs a few
// buffer copies rather than a JSON.parse of every value.
const NUMBER_COLUMNS = ['reward', 'active'] as const;
const INT_COLUMNS = ['primitive', 'task', 'annotator', 'added', 'removed', 'success', 'idKey', 'supersedesKey', 'recordHashKey', 'taskHashKey', 'first', 'superseded', 'verdict'] as const;
const STRING_COLUMNS = ['ids', 'supersedes', 'recordHash', 'taskHash'] as const;

function bytesOf(c: NumColumn): Buffer {
  const v = c.values;
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function encodeState(s: SummaryState): Buffer {
  const d = s.demonstrations.data;
  const reviewIds = [...s.reviews.data.keys()];
  const sections: Buffer[] = [
    ...[...NUMBER_COLUMNS, ...INT_COLUMNS].map((k) => bytesOf(d[k])),
    ...STRING_COLUMNS.flatMap((k) => {
      const { bytes, starts } = d[k].encode();
      return [bytes, Buffer.from(starts.buffer, starts.byteOffset, starts.byteLength)];
    }),
    ...(['primitive', 'task', 'annotator'] as const).map((k) => bytesOf(s.skips.data[k])),
    Buffer.from(reviewIds.join('\n'), 'utf8'),
    Buffer.from(Float64Array.from(reviewIds.map((id) => s.reviews.data.get(id)![0])).buffer),
    Buffer.from(Uint8Array.from(reviewIds.map((id) => s.reviews.data.get(id)![1])).buffer),
  ];
  const meta = (f: FileState<unknown>) => ({ cursor: f.cursor, problems: f.problems, problemTotal: f.problemTotal });
  const header = Buffer.from(
    JSON.stringify({ v: s.v, dir: s.dir, strings: s.strings, dangling: s.dangling, n: d.ids.length, skips: s.skips.data.primitive.length, reviews: reviewIds.length, files: [meta(s.demonstrations), meta(s.skips), meta(s.reviews)], sizes: sections.map((b) => b.length) }),
    'utf8',
  );
  const len = Buffer.alloc(4);
  len.writeUInt32LE(header.length);
  return Buffer.concat([len, header, ...sections]);
}

function decodeState(buf: Buffer): SummaryState {
  const hlen = buf.readUInt32LE(0);
  const h = JSON.parse(buf.subarray(4, 4 + hlen).toString('utf8')) as {
    v: number;
    dir: string;
    strings: string[];
    dangling: string[];
    n: number;
    skips: number;
    reviews: number;
    files: Array<{ cursor: Cursor | null; problems: StoreProblem[]; problemTotal: number }>;
    sizes: number[];
  };
  let pos = 4 + hlen;
  let k = 0;
  const next = () => {
    const b = buf.subarray(pos, pos + h.sizes[k]!);
    pos += h.sizes[k++]!;
    return b;
  };
  // Copies: typed arrays need aligned memory, and appends grow them.
  const col = (kind: 'f64' | 'i32') => (b: Buffer) => new NumColumn(kind, kind === 'f64' ? new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)) : new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)));
  const strs = (b: Buffer, n: number) => (n === 0 ? [] : b.toString('utf8').split('\n'));
  const [reward, active] = NUMBER_COLUMNS.map(() => col('f64')(next()));
  const [primitive, task, annotator, added, removed, success, idKey, supersedesKey, recordHashKey, taskHashKey, first, superseded, verdict] = INT_COLUMNS.map(() => col('i32')(next()));
  const [ids, supersedes, recordHash, taskHash] = STRING_COLUMNS.map(() => {
    const bytes = next();
    const b = next();
    return new StrColumn(bytes.toString('utf8'), new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)), bytes);
  });
  const [sp, st, sa] = [0, 1, 2].map(() => col('i32')(next()));
  const reviewIds = strs(next(), h.reviews);
  const tb = next();
  const times = new Float64Array(tb.buffer.slice(tb.byteOffset, tb.byteOffset + tb.length));
  const verdicts = next();
  const latest: LatestReviews = new Map(reviewIds.map((id, i) => [id, [times[i]!, verdicts[i]!]]));
  const file = <T>(i: number, data: T): FileState<T> => ({ ...h.files[i]!, data });
  const out: SummaryState = {
    v: h.v,
    dir: h.dir,
    strings: h.strings,
    dangling: h.dangling,
    demonstrations: file(0, { ids: ids!, supersedes: supersedes!, primitive: primitive!, task: task!, annotator: annotator!, success: success!, reward: reward!, active: active!, added: added!, removed: removed!, recordHash: recordHash!, taskHash: taskHash!, idKey: idKey!, supersedesKey: supersedesKey!, recordHashKey: recordHashKey!, taskHashKey: taskHashKey!, first: first!, superseded: superseded!, verdict: verdict! }),
    skips: file(1, { primitive: sp!, task: st!, annotator: sa! }),
    reviews: file(2, latest),
  };
  const d = out.demonstrations.data;
  if ([...NUMBER_COLUMNS, ...INT_COLUMNS, ...STRING_COLUMNS].some((c) => d[c].length !== h.n)) throw new Error('index columns of unequal length');
  return out;
}

async function loadState(dir: string, real: string): Promise<SummaryState> {
  try {
    const s = decodeState(await readFile(summaryIndexPath(real)));
    if (s.v === INDEX_VERSION && s.dir === dir) return s;
  } catch {
    // missing, unreadable or from another version: start over
  }
  return emptyState(dir);
}

async function saveState(real: string, s: SummaryState): Promise<void> {
  // A cache: written whole and renamed into place (never half-read), but not fsync'd.
  const target = summaryIndexPath(real);
  const tmp = `${target}.${process.pid}.${Date.now()}.tmp`;
  try {
    await mkdir(dirname(target), { recursive: true });
    await writeFile(tmp, encodeState(s));
    await rename(tmp, target);
  } catch {
    await rm(tmp, { force: true }).catch(() => undefined);
    // A read-only or full cache only costs speed next time.
  }
}

/**
 * A 28-bit FNV-1a hash (a small integer, so V8 keys maps by it without hashing a string). Stored
 * per id and hash when a line is read, so aggregating 100k records hashes no strings at all.
 */
export function key28(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
  return (h >>> 0) & 0x0fffffff;
}

/**
 * Duplicate groups among strings with precomputed key28s (a subset of a column's positions): one
 * sort of the integer keys finds the few keys held more than once, and only those positions are
 * compared, character by character, with no substring or string hashing (a map of 100k string
 * keys costs more than the whole rest of the summary).
 */
export class SortedKeys {
  private readonly positions: ArrayLike<number>;
  /** Keys held by more than one position (equal strings, or a rare hash collision). */
  private readonly shared = new Set<number>();

  constructor(
    private readonly keyOf: ArrayLike<number>,
    private readonly strings: StrColumn,
    /** Positions to consider, in file order (default: all). */
    subset?: ArrayLike<number>,
  ) {
    if (subset) this.positions = subset;
    else {
      const all = new Int32Array(strings.length);
      for (let i = 0; i < all.length; i++) all[i] = i;
      this.positions = all;
    }
    const sorted = new Int32Array(this.positions.length);
    for (let j = 0; j < sorted.length; j++) sorted[j] = keyOf[this.positions[j]!]!;
    sorted.sort();
    for (let j = 1; j < sorted.length; j++) if (sorted[j] === sorted[j - 1]) this.shared.add(sorted[j]!);
  }

  /**
   * Calls `fn(pos, first)` for each position whose key is shared, with the first position (in file
   * order) holding the same string. Keys map to their first position through a small-integer map;
   * strings are only compared, and hashed only on a real collision.
   */
  private eachShared(fn: (pos: number, first: number) => void): void {
    const firstByKey = new Map<number, number>();
    let collided: Map<string, number> | undefined;
    for (let j = 0; j < this.positions.length; j++) {
      const pos = this.positions[j]!;
      const key = this.keyOf[pos]!;
      if (!this.shared.has(key)) continue;
      const f = firstByKey.get(key);
      if (f === undefined) {
        firstByKey.set(key, pos);
        fn(pos, pos);
        continue;
      }
      if (this.strings.equals(pos, f)) {
        fn(pos, f);
        continue;
      }
      const s = this.strings.get(pos);
      collided ??= new Map();
      const c = collided.get(s);
      if (c === undefined) collided.set(s, pos);
      fn(pos, c ?? pos);
    }
  }

  /** Groups of equal strings with more than one position, and how many positions beyond the first they hold. */
  duplicates(): { groups: number; extra: number } {
    const sizes = new Map<number, number>();
    this.eachShared((_pos, f) => sizes.set(f, (sizes.get(f) ?? 0) + 1));
    let groups = 0;
    let extra = 0;
    for (const c of sizes.values()) if (c > 1) (groups++, (extra += c - 1));
    return { groups, extra };
  }
}

function sha(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

async function fingerprint(fh: FileHandle, offset: number): Promise<{ head: string; tail: string }> {
  const n = Math.min(FINGERPRINT_BYTES, offset);
  const head = Buffer.alloc(n);
  const tail = Buffer.alloc(n);
  await fh.read(head, 0, n, 0);
  await fh.read(tail, 0, n, offset - n);
  return { head: sha(head), tail: sha(tail) };
}

type RawLine = { line: number; text: string; terminated: boolean; end: number } | { line: number; tooLong: true; end: number };

/** Lines from byte `offset` on (line numbers continue from `lines`); `end` is the offset just after each. */
async function* linesFrom(fh: FileHandle, offset: number, lines: number): AsyncGenerator<RawLine> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let pos = offset;
  let lineNo = lines;
  let carry: Buffer[] = [];
  let carryLen = 0;
  let skipping = false;
  for (;;) {
    const { bytesRead } = await fh.read(buf, 0, CHUNK, pos);
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
      if (carryLen > MAX_LINE) {
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

type LineParser<T> = (raw: string, line: number, terminated: boolean, file: string) => JsonlEntry<T> | undefined;

/**
 * Brings one file's state up to date (from scratch when the file is not the one indexed) and
 * returns what its unterminated last line (if any) holds: that line is used for this summary but
 * not indexed, since its writer may still be finishing it.
 */
async function updateFile<S, T>(file: string, st: FileState<S>, reset: () => FileState<S>, parse: LineParser<T>, adderFor: (s: S) => (value: T) => void): Promise<{ state: FileState<S>; tail: T[]; tailProblems: StoreProblem[]; parsed: number }> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    const state = st.cursor ? reset() : st;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state, tail: [], tailProblems: [], parsed: 0 };
    return { state, tail: [], tailProblems: [{ file, line: 0, kind: 'unreadable', error: `cannot read: ${(err as Error).message}` }], parsed: 0 };
  }
  try {
    const s = await fh.stat();
    let cur = st.cursor;
    if (cur) {
      let same = cur.dev === s.dev && cur.ino === s.ino && s.size >= cur.offset;
      if (same) {
        const fp = await fingerprint(fh, cur.offset);
        same = fp.head === cur.head && fp.tail === cur.tail;
      }
      if (!same) {
        st = reset();
        cur = null;
      }
    }
    const add = adderFor(st.data);
    let offset = cur?.offset ?? 0;
    let lines = cur?.lines ?? 0;
    const tail: T[] = [];
    const tailProblems: StoreProblem[] = [];
    let parsed = 0;
    const problem = (p: StoreProblem, committed: boolean) => {
      if (!committed) return void tailProblems.push(p);
      st.problemTotal++;
      if (st.problems.length < MAX_PROBLEMS_PER_FILE) st.problems.push(p);
    };
    for await (const raw of linesFrom(fh, offset, lines)) {
      const committed = 'tooLong' in raw || raw.terminated;
      if ('tooLong' in raw) problem({ file, line: raw.line, kind: 'too_long', error: `line longer than ${MAX_LINE} bytes, skipped` }, true);
      else {
        parsed++;
        const e = parse(raw.text, raw.line, raw.terminated, file);
        if (e?.ok) {
          if (committed) add(e.value);
          else tail.push(e.value);
        } else if (e) problem(e.problem, committed);
      }
      if (committed) {
        offset = raw.end;
        lines = raw.line;
      }
    }
    st.cursor = offset === 0 ? null : { dev: s.dev, ino: s.ino, offset, lines, ...(await fingerprint(fh, offset)) };
    return { state: st, tail, tailProblems, parsed };
  } catch (err) {
    return { state: reset(), tail: [], tailProblems: [{ file, line: 0, kind: 'unreadable', error: `cannot read: ${(err as Error).message}` }], parsed: 0 };
  } finally {
    await fh.close();
  }
}

function parser<T>(schema: Parameters<typeof parseJsonlLine>[3], opts: ReadOptions) {
  return (raw: string, line: number, terminated: boolean, file: string) => parseJsonlLine(raw, line, terminated, schema, { ...opts, displayPath: file }) as JsonlEntry<T> | undefined;
}

interface DemoRow {
  id: string;
  supersedes: string;
  primitive: string;
  task: string;
  annotator: string;
  success: boolean;
  reward: number;
  active: number;
  added: number;
  removed: number;
  recordHash: string;
  taskHash: string;
}

const parseDemo = parser<DemonstrationRecord>(DemonstrationRecordSchema, { what: 'demonstration', foreign: foreignDemonstration });

function demoLine(raw: string, line: number, terminated: boolean, file: string): JsonlEntry<DemoRow> | undefined {
  const e = parseDemo(raw, line, terminated, file);
  if (!e?.ok) return e;
  const r = e.value;
  const why = demonstrationInconsistency(r);
  if (why) return { ok: false, problem: { file, line, kind: 'inconsistent', error: why } };
  const d = countDiffLines(rawCompletion(r.repair_completion));
  return {
    ok: true,
    line,
    value: {
      id: r.info.record_id,
      supersedes: r.info.supersedes ?? '',
      primitive: r.primitive_type,
      task: r.task_id,
      annotator: r.info.annotator_id,
      success: r.success,
      reward: r.visible_reward,
      active: r.info.active_ms,
      added: d.added,
      removed: d.removed,
      // 64 bits of each hash are plenty to count duplicate groups, at a quarter of the index size.
      recordHash: r.info.record_hash.slice(0, HASH_PREFIX),
      taskHash: r.info.task_hash.slice(0, HASH_PREFIX),
    },
  };
}

function timeOf(at: string): number {
  const t = Date.parse(at);
  return Number.isNaN(t) ? -Infinity : t;
}

/** For each wanted (key, string), the first position in [from, to) holding it (-1: none): one pass over integer keys. */
function scanFirst(d: DemoColumns, from: number, to: number, wanted: ReadonlyArray<readonly [number, string]>): Int32Array {
  const out = new Int32Array(wanted.length).fill(-1);
  if (wanted.length === 0 || from >= to) return out;
  const byKey = new Map<number, number[]>();
  wanted.forEach(([key], q) => {
    const list = byKey.get(key);
    if (list) list.push(q);
    else byKey.set(key, [q]);
  });
  const keys = d.idKey.values;
  for (let pos = from; pos < to; pos++) {
    const qs = byKey.get(keys[pos]!);
    if (!qs) continue;
    const s = d.ids.get(pos);
    for (const q of qs) if (out[q] === -1 && wanted[q]![1] === s) out[q] = pos;
  }
  return out;
}

/**
 * Resolves lines [from, n): their first line of the same id, supersession (in both directions:
 * a new line may supersede an old id, or carry an id an old line superseded), and verdicts (of
 * new lines, and of old ones whose review is new). The same result as resolving every line at once.
 */
function resolveRows(state: SummaryState, from: number, changedReviews: ReadonlySet<string> | 'all'): void {
  const d = state.demonstrations.data;
  const latest = state.reviews.data;
  const n = d.ids.length;
  const dangling = new Set(state.dangling);
  const fresh: Array<[number, string]> = [];
  for (let i = from; i < n; i++) fresh.push([d.idKey.get(i), d.ids.get(i)]);
  const earlier = scanFirst(d, 0, from, fresh);
  const batch = new Map<string, number>();
  for (let i = from; i < n; i++) {
    let f = earlier[i - from]!;
    if (f < 0) {
      const id = fresh[i - from]![1];
      f = batch.get(id) ?? i;
      if (f === i) batch.set(id, i);
    }
    d.first.push(f);
    d.superseded.push(0);
    d.verdict.push(-1);
    if (f === i && dangling.delete(fresh[i - from]![1])) d.superseded.set(i, 1);
  }
  const targets: Array<[number, string]> = [];
  for (let i = from; i < n; i++) if (d.supersedesKey.get(i) !== -1) targets.push([d.supersedesKey.get(i), d.supersedes.get(i)]);
  scanFirst(d, 0, n, targets).forEach((pos, q) => {
    if (pos >= 0) d.superseded.set(pos, 1);
    else dangling.add(targets[q]![1]);
  });
  const verdictOf = (id: string) => latest.get(id)?.[1] ?? -1;
  if (changedReviews === 'all') {
    for (let i = 0; i < n; i++) d.verdict.set(i, d.first.get(i) === i ? verdictOf(d.ids.get(i)) : -1);
  } else {
    for (let i = from; i < n; i++) if (d.first.get(i) === i) d.verdict.set(i, verdictOf(d.ids.get(i)));
    const changed = [...changedReviews].map((id) => [key28(id), id] as const);
    scanFirst(d, 0, from, changed).forEach((pos, q) => {
      if (pos >= 0) d.verdict.set(pos, verdictOf(changed[q]![1]));
    });
  }
  state.dangling = [...dangling];
}

/** The view the summary aggregates: indexed columns plus any unterminated last lines, and every problem. */
export interface SummaryInput {
  strings: string[];
  demos: DemoColumns;
  skips: SkipColumns;
  latestReviews: LatestReviews;
  problems: StoreProblem[];
  problemTotal: number;
  /** Lines parsed by this call (after N appends to an indexed folder: N). */
  parsedLines: number;
}

export interface UpdateOptions {
  /** false: read everything and keep no index (tests, one-off reads). Default true. */
  index?: boolean;
}

/** Reads only what was appended since the last call (everything on the first) and returns the summary's input. */
export async function readSummaryInput(dir: string, opts: UpdateOptions = {}): Promise<SummaryInput> {
  const useIndex = opts.index !== false;
  const real = await canonicalDir(dir);
  const state = useIndex ? await loadState(dir, real) : emptyState(dir);
  const before = { demonstrations: state.demonstrations.cursor, skips: state.skips.cursor, reviews: state.reviews.cursor };
  const intern = new Map(state.strings.map((s, i) => [s, i]));
  const id = (s: string) => {
    let i = intern.get(s);
    if (i === undefined) {
      i = state.strings.length;
      state.strings.push(s);
      intern.set(s, i);
    }
    return i;
  };
  const pushDemo = (cols: DemoColumns) => (r: DemoRow) => {
    cols.ids.push(r.id);
    cols.supersedes.push(r.supersedes);
    cols.primitive.push(id(r.primitive));
    cols.task.push(id(r.task));
    cols.annotator.push(id(r.annotator));
    cols.success.push(r.success ? 1 : 0);
    cols.reward.push(r.reward);
    cols.active.push(r.active);
    cols.added.push(r.added);
    cols.removed.push(r.removed);
    cols.recordHash.push(r.recordHash);
    cols.taskHash.push(r.taskHash);
    cols.idKey.push(key28(r.id));
    cols.supersedesKey.push(r.supersedes ? key28(r.supersedes) : -1);
    cols.recordHashKey.push(key28(r.recordHash));
    cols.taskHashKey.push(key28(r.taskHash));
  };
  const demosBefore = state.demonstrations;
  const demos = await updateFile(join(dir, DATASET_FILES.demonstrations), state.demonstrations, () => emptyState(dir).demonstrations, demoLine, pushDemo);
  state.demonstrations = demos.state;
  // Lines already resolved (all of them, unless the file was read from the start again).
  let resolved = demos.state === demosBefore ? demosBefore.data.first.length : 0;
  if (resolved === 0) state.dangling = [];

  const skipParse = parser<SkipRecord>(SkipRecordSchema, { what: 'skip', foreign: foreignSideRecord('skip', SKIP_SCHEMA) });
  const pushSkip = (cols: SkipColumns) => (s: SkipRecord) => {
    cols.primitive.push(id(s.primitive.primitive_type));
    cols.task.push(id(s.task_id));
    cols.annotator.push(id(s.annotator_id));
  };
  const skips = await updateFile(join(dir, DATASET_FILES.skips), state.skips, () => emptyState(dir).skips, skipParse, pushSkip);
  state.skips = skips.state;

  const reviewParse = parser<ReviewRecord>(ReviewRecordSchema, { what: 'review', foreign: foreignSideRecord('review', REVIEW_SCHEMA) });
  const changedReviews = new Set<string>();
  const addReview = (m: LatestReviews) => (r: ReviewRecord) => {
    const t = timeOf(r.at);
    const cur = m.get(r.record_id);
    if (!cur || t >= cur[0]) m.set(r.record_id, [t, r.verdict === 'approve' ? 1 : 0]);
    changedReviews.add(r.record_id);
  };
  const reviewsBefore = state.reviews;
  const reviews = await updateFile(join(dir, DATASET_FILES.reviews), state.reviews, () => emptyState(dir).reviews, reviewParse, addReview);
  state.reviews = reviews.state;
  resolveRows(state, resolved, reviews.state === reviewsBefore ? changedReviews : 'all');
  resolved = state.demonstrations.data.ids.length;

  const after = { demonstrations: state.demonstrations.cursor, skips: state.skips.cursor, reviews: state.reviews.cursor };
  // Nothing new (and nothing replaced): the index on disk is already this state.
  if (useIndex && JSON.stringify(before) !== JSON.stringify(after)) await saveState(real, state);

  // Unterminated last lines count for this summary only (added after the index was saved).
  changedReviews.clear();
  for (const r of demos.tail) pushDemo(state.demonstrations.data)(r);
  for (const s of skips.tail) pushSkip(state.skips.data)(s);
  for (const r of reviews.tail) addReview(state.reviews.data)(r);
  if (demos.tail.length || reviews.tail.length) resolveRows(state, resolved, changedReviews);
  const files = [state.demonstrations, state.skips, state.reviews];
  const extra = [...demos.tailProblems, ...skips.tailProblems, ...reviews.tailProblems];
  return {
    strings: state.strings,
    demos: state.demonstrations.data,
    skips: state.skips.data,
    latestReviews: state.reviews.data,
    problems: [...files.flatMap((f) => f.problems), ...extra],
    problemTotal: files.reduce((n, f) => n + f.problemTotal, 0) + extra.length,
    parsedLines: demos.parsed + skips.parsed + reviews.parsed,
  };
}

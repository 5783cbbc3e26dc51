// The export index: what the last export to one output file read and wrote, so the next export
// with the same options reads only what was appended since (incremental.ts) and appends only the
// new rows. Per source line it keeps a few ids and codes (never the records), per written row
// its dedupe key, and the output file's identity, size and fingerprint after the write. Kept in
// the ForgeEnv cache (<cache>/export-index/), never beside the export; only an accelerator: a
// missing, unreadable or mismatched index means a full export.
import { createHash } from 'node:crypto';
import { open, readFile, rm } from 'node:fs/promises';
import { writeCacheFile } from '../atomicWrite';
import { join } from 'node:path';
import { cacheRoot } from '../../env/snapshots/venv';
import { NumColumn, packSections, StrColumn, unpackSections } from '../columns';
import { fingerprint, type FileState, type LatestReviews, type ResolvedColumns } from '../incremental';
import type { StoreProblem } from '../jsonlFile';

/** Bumped whenever the layout, a column's meaning, or how rows are shaped changes: an older index means a full export. */
export const EXPORT_INDEX_VERSION = 1;

export interface ExportColumns extends ResolvedColumns {
  /** What the record's own fields decide (selection.ts baseCode); the review verdict is applied on top. */
  base: NumColumn;
  /** Index into `strings`. */
  primitive: NumColumn;
  /** 1: this line was a row candidate that passed every filter (before deduplication) at the last export. */
  selected: NumColumn;
}

/** The output file as the last export left it. */
export interface OutputFingerprint {
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  head: string;
  tail: string;
}

export interface ExportState {
  v: number;
  /** Hash of everything that shapes the rows (exportKey). */
  key: string;
  strings: string[];
  dangling: string[];
  demos: FileState<ExportColumns>;
  reviews: FileState<LatestReviews>;
  /** Dedupe keys of the rows written, in row order, and their key28s. */
  rowKeys: StrColumn;
  rowKeyHash: NumColumn;
  rows: number;
  deduplicated: number;
  rowsByPrimitive: Record<string, number>;
  output: OutputFingerprint | null;
}

const i32 = () => new NumColumn('i32');

export function emptyExportColumns(): ExportColumns {
  return {
    ids: new StrColumn(),
    idKey: i32(),
    supersedes: new StrColumn(),
    supersedesKey: i32(),
    first: i32(),
    superseded: i32(),
    verdict: i32(),
    base: i32(),
    primitive: i32(),
    selected: i32(),
  };
}

export function emptyExportState(key: string): ExportState {
  return {
    v: EXPORT_INDEX_VERSION,
    key,
    strings: [],
    dangling: [],
    demos: { cursor: null, problems: [], problemTotal: 0, data: emptyExportColumns() },
    reviews: { cursor: null, problems: [], problemTotal: 0, data: new Map() },
    rowKeys: new StrColumn(),
    rowKeyHash: i32(),
    rows: 0,
    deduplicated: 0,
    rowsByPrimitive: {},
    output: null,
  };
}

/** Everything an export's rows depend on besides the source lines, as one hash. */
export function exportKey(parts: Record<string, unknown>): string {
  return createHash('sha256')
    .update(JSON.stringify({ v: EXPORT_INDEX_VERSION, ...parts }))
    .digest('hex');
}

function pathHash(realOut: string): string {
  return createHash('sha256').update(realOut).digest('hex').slice(0, 32);
}

export function exportIndexPath(realOut: string): string {
  return join(cacheRoot(), 'export-index', `${pathHash(realOut)}.idx`);
}

/** The lock that serialises exports to one output file (two windows, the CLI and the editor). */
export function exportLockPath(realOut: string): string {
  return join(cacheRoot(), 'export-index', `${pathHash(realOut)}.lock`);
}

export async function clearExportIndex(realOut: string): Promise<void> {
  await rm(exportIndexPath(realOut), { force: true });
}

/** The output file's identity and fingerprint now (undefined: missing or unreadable). */
export async function outputFingerprint(file: string): Promise<OutputFingerprint | undefined> {
  try {
    const fh = await open(file, 'r');
    try {
      const s = await fh.stat();
      return { dev: s.dev, ino: s.ino, size: s.size, mtimeMs: s.mtimeMs, ...(await fingerprint(fh, s.size)) };
    } finally {
      await fh.close();
    }
  } catch {
    return undefined;
  }
}

export function sameOutput(a: OutputFingerprint | null | undefined, b: OutputFingerprint | null | undefined): boolean {
  return (
    !!a &&
    !!b &&
    a.dev === b.dev &&
    a.ino === b.ino &&
    a.size === b.size &&
    a.mtimeMs === b.mtimeMs &&
    a.head === b.head &&
    a.tail === b.tail
  );
}

// On disk: a 4-byte header length, a JSON header, then the columns as raw typed arrays and
// concatenated strings with start offsets (as in summaryState.ts).
const INT_COLUMNS = ['idKey', 'supersedesKey', 'first', 'superseded', 'verdict', 'base', 'primitive', 'selected'] as const;
const STRING_COLUMNS = ['ids', 'supersedes'] as const;

function intBytes(c: NumColumn): Buffer {
  const v = c.values;
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

function strBytes(c: StrColumn): Buffer[] {
  const { bytes, starts } = c.encode();
  return [bytes, Buffer.from(starts.buffer, starts.byteOffset, starts.byteLength)];
}

function encode(s: ExportState): Buffer {
  const d = s.demos.data;
  const reviewIds = [...s.reviews.data.keys()];
  const sections = [
    ...INT_COLUMNS.map((k) => intBytes(d[k])),
    ...STRING_COLUMNS.flatMap((k) => strBytes(d[k])),
    ...strBytes(s.rowKeys),
    intBytes(s.rowKeyHash),
    Buffer.from(JSON.stringify(reviewIds), 'utf8'),
    Buffer.from(Float64Array.from(reviewIds.map((id) => s.reviews.data.get(id)![0])).buffer),
    Buffer.from(Uint8Array.from(reviewIds.map((id) => s.reviews.data.get(id)![1])).buffer),
  ];
  const meta = (f: FileState<unknown>) => ({ cursor: f.cursor, problems: f.problems, problemTotal: f.problemTotal });
  return packSections(
    {
      v: s.v,
      key: s.key,
      strings: s.strings,
      dangling: s.dangling,
      files: [meta(s.demos), meta(s.reviews)],
      rows: s.rows,
      deduplicated: s.deduplicated,
      rowsByPrimitive: s.rowsByPrimitive,
      output: s.output,
      n: d.ids.length,
    },
    sections,
  );
}

type Header = Omit<ExportState, 'demos' | 'reviews' | 'rowKeys' | 'rowKeyHash'> & {
  files: Array<{ cursor: FileState<unknown>['cursor']; problems: StoreProblem[]; problemTotal: number }>;
  n: number;
};

function decode(buf: Buffer): ExportState {
  const { header: h, next } = unpackSections<Header>(buf);
  // Copies: typed arrays need aligned memory, and appends grow them.
  const ints = (b: Buffer) => new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length));
  const str = () => {
    const bytes = next();
    return new StrColumn(bytes.toString('utf8'), ints(next()), bytes);
  };
  const cols = Object.fromEntries(INT_COLUMNS.map((c) => [c, new NumColumn('i32', ints(next()))])) as Record<
    (typeof INT_COLUMNS)[number],
    NumColumn
  >;
  const strs = Object.fromEntries(STRING_COLUMNS.map((c) => [c, str()])) as Record<(typeof STRING_COLUMNS)[number], StrColumn>;
  const rowKeys = str();
  const rowKeyHash = new NumColumn('i32', ints(next()));
  const reviewIds = JSON.parse(next().toString('utf8')) as string[];
  const tb = next();
  const times = new Float64Array(tb.buffer.slice(tb.byteOffset, tb.byteOffset + tb.length));
  const verdicts = next();
  const data: ExportColumns = { ...cols, ...strs };
  if (
    Object.values(data).some((c: { length: number }) => c.length !== h.n) ||
    rowKeys.length !== rowKeyHash.length ||
    reviewIds.length !== times.length
  )
    throw new Error('export index columns of unequal length');
  return {
    v: h.v,
    key: h.key,
    strings: h.strings,
    dangling: h.dangling,
    demos: { ...h.files[0], data },
    reviews: { ...h.files[1], data: new Map(reviewIds.map((id, i) => [id, [times[i], verdicts[i]]])) },
    rowKeys,
    rowKeyHash,
    rows: h.rows,
    deduplicated: h.deduplicated,
    rowsByPrimitive: h.rowsByPrimitive,
    output: h.output,
  };
}

/** The index of the last export to `realOut` if it was made with the same `key` (else undefined). */
export async function loadExportState(realOut: string, key: string): Promise<ExportState | undefined> {
  try {
    const s = decode(await readFile(exportIndexPath(realOut)));
    if (s.v === EXPORT_INDEX_VERSION && s.key === key) return s;
  } catch {
    // missing, unreadable or from another version
  }
  return undefined;
}

export async function saveExportState(realOut: string, s: ExportState): Promise<void> {
  // A lost index costs one full export.
  await writeCacheFile(exportIndexPath(realOut), encode(s));
}

// The summary index's state and its file: per dataset folder, the per-record columns, the skip
// groups and latest reviews, and per file the cursor (identity + byte offset) up to which it was
// read. Kept in the ForgeEnv cache (<cache>/summary-index/), never in the dataset folder; only an
// accelerator: if it cannot be read or written the summary is still exact.
import { createHash } from 'node:crypto';
import { readFile, realpath, rm } from 'node:fs/promises';
import { writeCacheFile } from './atomicWrite';
import { join } from 'node:path';
import { cacheRoot } from '../env/snapshots/venv';
import { NumColumn, packSections, StrColumn, unpackSections } from './columns';
import type { StoreProblem } from './jsonlFile';
import type { Cursor, FileState, LatestReviews } from './incremental';

export type { Cursor, FileState, LatestReviews } from './incremental';

/** Bumped whenever the file layout or a column's meaning changes: an older index is rebuilt. */
const INDEX_VERSION = 5;

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

export function emptyState(dir: string): SummaryState {
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

export async function canonicalDir(dir: string): Promise<string> {
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
const INT_COLUMNS = [
  'primitive',
  'task',
  'annotator',
  'added',
  'removed',
  'success',
  'idKey',
  'supersedesKey',
  'recordHashKey',
  'taskHashKey',
  'first',
  'superseded',
  'verdict',
] as const;
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
  return packSections(
    {
      v: s.v,
      dir: s.dir,
      strings: s.strings,
      dangling: s.dangling,
      n: d.ids.length,
      skips: s.skips.data.primitive.length,
      reviews: reviewIds.length,
      files: [meta(s.demonstrations), meta(s.skips), meta(s.reviews)],
    },
    sections,
  );
}

function decodeState(buf: Buffer): SummaryState {
  const { header: h, next } = unpackSections<{
    v: number;
    dir: string;
    strings: string[];
    dangling: string[];
    n: number;
    skips: number;
    reviews: number;
    files: Array<{ cursor: Cursor | null; problems: StoreProblem[]; problemTotal: number }>;
  }>(buf);
  // Copies: typed arrays need aligned memory, and appends grow them.
  const col = (kind: 'f64' | 'i32') => (b: Buffer) =>
    new NumColumn(
      kind,
      kind === 'f64'
        ? new Float64Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length))
        : new Int32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.length)),
    );
  const strs = (b: Buffer, n: number) => (n === 0 ? [] : b.toString('utf8').split('\n'));
  const [reward, active] = NUMBER_COLUMNS.map(() => col('f64')(next()));
  const [
    primitive,
    task,
    annotator,
    added,
    removed,
    success,
    idKey,
    supersedesKey,
    recordHashKey,
    taskHashKey,
    first,
    superseded,
    verdict,
  ] = INT_COLUMNS.map(() => col('i32')(next()));
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
  const latest: LatestReviews = new Map(reviewIds.map((id, i) => [id, [times[i], verdicts[i]]]));
  const file = <T>(i: number, data: T): FileState<T> => ({ ...h.files[i], data });
  const out: SummaryState = {
    v: h.v,
    dir: h.dir,
    strings: h.strings,
    dangling: h.dangling,
    demonstrations: file(0, {
      ids: ids,
      supersedes: supersedes,
      primitive: primitive,
      task: task,
      annotator: annotator,
      success: success,
      reward: reward,
      active: active,
      added: added,
      removed: removed,
      recordHash: recordHash,
      taskHash: taskHash,
      idKey: idKey,
      supersedesKey: supersedesKey,
      recordHashKey: recordHashKey,
      taskHashKey: taskHashKey,
      first: first,
      superseded: superseded,
      verdict: verdict,
    }),
    skips: file(1, { primitive: sp, task: st, annotator: sa }),
    reviews: file(2, latest),
  };
  const d = out.demonstrations.data;
  if ([...NUMBER_COLUMNS, ...INT_COLUMNS, ...STRING_COLUMNS].some((c) => d[c].length !== h.n))
    throw new Error('index columns of unequal length');
  return out;
}

export async function loadState(dir: string, real: string): Promise<SummaryState> {
  try {
    const s = decodeState(await readFile(summaryIndexPath(real)));
    if (s.v === INDEX_VERSION && s.dir === dir) return s;
  } catch {
    // missing, unreadable or from another version: start over
  }
  return emptyState(dir);
}

export async function saveState(real: string, s: SummaryState): Promise<void> {
  await writeCacheFile(summaryIndexPath(real), encodeState(s));
}

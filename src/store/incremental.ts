// The incremental reading both the summary index (summaryIndex.ts) and the export index
// (export/exportIndex.ts) are built on: a file is read from the byte offset a cursor reached, or
// from the start when it is not the file the cursor was taken on (other device or inode, shorter,
// or different bytes in the fingerprinted first 4 KiB and the 4 KiB before the offset); and
// demonstration lines are resolved as they arrive (first line of each id, supersession, latest
// verdicts), with the same result as resolving every line at once.
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { key28, type NumColumn, type StrColumn } from './columns';
import { linesOfHandle, type JsonlEntry, type StoreProblem } from './jsonlFile';

export interface Cursor {
  dev: number;
  ino: number;
  /** Bytes read: always just after a `\n`. */
  offset: number;
  /** Lines read (the next line's number is lines + 1). */
  lines: number;
  head: string;
  tail: string;
}

export interface FileState<T> {
  cursor: Cursor | null;
  problems: StoreProblem[];
  problemTotal: number;
  data: T;
}

/** Problems the summary keeps per file (the total is always counted). */
export const MAX_PROBLEMS_PER_FILE = 100;
const FINGERPRINT_BYTES = 4096;
const MAX_LINE = 64 << 20;

function sha(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** Hashes of the first 4 KiB and of the 4 KiB before `offset`. */
export async function fingerprint(fh: FileHandle, offset: number): Promise<{ head: string; tail: string }> {
  const n = Math.min(FINGERPRINT_BYTES, offset);
  const head = Buffer.alloc(n);
  const tail = Buffer.alloc(n);
  await fh.read(head, 0, n, 0);
  await fh.read(tail, 0, n, offset - n);
  return { head: sha(head), tail: sha(tail) };
}

export type LineParser<T> = (raw: string, line: number, terminated: boolean, file: string) => JsonlEntry<T> | undefined;

export interface UpdateResult<S, T> {
  /** `st` brought up to date, or a fresh state when the file was read from the start again. */
  state: FileState<S>;
  /** What an unterminated last line holds: used by this read, not indexed (its writer may still be finishing it). */
  tail: T[];
  tailProblems: StoreProblem[];
  /** Lines parsed by this call. */
  parsed: number;
}

/**
 * Brings one file's state up to date: reads from the cursor (from scratch when the file is not the
 * one indexed) and hands each complete valid line to `adderFor(state.data)`, which may return a
 * promise (awaited: writers with backpressure). `maxProblems` caps the problems kept (all are counted).
 */
export async function updateFile<S, T>(
  file: string,
  st: FileState<S>,
  reset: () => FileState<S>,
  parse: LineParser<T>,
  adderFor: (s: S) => (value: T) => void | Promise<void>,
  maxProblems = MAX_PROBLEMS_PER_FILE,
): Promise<UpdateResult<S, T>> {
  let fh: FileHandle;
  try {
    fh = await open(file, 'r');
  } catch (err) {
    const state = st.cursor ? reset() : st;
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state, tail: [], tailProblems: [], parsed: 0 };
    return {
      state,
      tail: [],
      tailProblems: [{ file, line: 0, kind: 'unreadable', error: `cannot read: ${(err as Error).message}` }],
      parsed: 0,
    };
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
      if (st.problems.length < maxProblems) st.problems.push(p);
    };
    for await (const raw of linesOfHandle(fh, { offset, firstLine: lines })) {
      const committed = 'tooLong' in raw || raw.terminated;
      if ('tooLong' in raw) problem({ file, line: raw.line, kind: 'too_long', error: `line longer than ${MAX_LINE} bytes, skipped` }, true);
      else {
        parsed++;
        const e = parse(raw.text, raw.line, raw.terminated, file);
        if (e?.ok) {
          if (committed) {
            const pending = add(e.value);
            if (pending) await pending;
          } else tail.push(e.value);
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
    return {
      state: reset(),
      tail: [],
      tailProblems: [{ file, line: 0, kind: 'unreadable', error: `cannot read: ${(err as Error).message}` }],
      parsed: 0,
    };
  } finally {
    await fh.close();
  }
}

/** record_id → [time of the latest review (ms), 1 approve / 0 reject]. */
export type LatestReviews = Map<string, [number, number]>;

export function timeOf(at: string): number {
  const t = Date.parse(at);
  return Number.isNaN(t) ? -Infinity : t;
}

/** Keeps a review if it is the latest for its record (on equal times the later line wins). */
export function addLatestReview(m: LatestReviews, recordId: string, at: string, verdict: 'approve' | 'reject'): void {
  const t = timeOf(at);
  const cur = m.get(recordId);
  if (!cur || t >= cur[0]) m.set(recordId, [t, verdict === 'approve' ? 1 : 0]);
}

/** The per-line columns resolution reads and writes. */
export interface ResolvedColumns {
  ids: StrColumn;
  /** key28 of ids. */
  idKey: NumColumn;
  /** The record id this line supersedes, or ''. */
  supersedes: StrColumn;
  /** key28 of supersedes, -1: none. */
  supersedesKey: NumColumn;
  /** The first line of the same record id; whether that id is superseded (1/0, on first lines); its latest verdict (1 approve, 0 reject, -1 none; first lines only). */
  first: NumColumn;
  superseded: NumColumn;
  verdict: NumColumn;
}

/** For each wanted (key, string), the first position in [from, to) holding it (-1: none): one pass over integer keys. */
export function scanFirst(
  keys: ArrayLike<number>,
  strings: StrColumn,
  from: number,
  to: number,
  wanted: ReadonlyArray<readonly [number, string]>,
): Int32Array {
  const out = new Int32Array(wanted.length).fill(-1);
  if (wanted.length === 0 || from >= to) return out;
  const byKey = new Map<number, number[]>();
  wanted.forEach(([key], q) => {
    const list = byKey.get(key);
    if (list) list.push(q);
    else byKey.set(key, [q]);
  });
  for (let pos = from; pos < to; pos++) {
    const qs = byKey.get(keys[pos]);
    if (!qs) continue;
    const s = strings.get(pos);
    for (const q of qs) if (out[q] === -1 && wanted[q][1] === s) out[q] = pos;
  }
  return out;
}

/**
 * Resolves lines [from, n): their first line of the same id, supersession (in both directions:
 * a new line may supersede an old id, or carry an id an old line superseded), and verdicts (of
 * new lines, and of old ones whose review is new, or of all lines for 'all'). `dangling` (superseded
 * ids no line has yet) is updated in place.
 */
export function resolveRows(
  d: ResolvedColumns,
  latest: LatestReviews,
  dangling: Set<string>,
  from: number,
  changedReviews: ReadonlySet<string> | 'all',
): void {
  const n = d.ids.length;
  const fresh: Array<[number, string]> = [];
  for (let i = from; i < n; i++) fresh.push([d.idKey.get(i), d.ids.get(i)]);
  const earlier = scanFirst(d.idKey.values, d.ids, 0, from, fresh);
  const batch = new Map<string, number>();
  for (let i = from; i < n; i++) {
    let f = earlier[i - from];
    if (f < 0) {
      const id = fresh[i - from][1];
      f = batch.get(id) ?? i;
      if (f === i) batch.set(id, i);
    }
    d.first.push(f);
    d.superseded.push(0);
    d.verdict.push(-1);
    if (f === i && dangling.delete(fresh[i - from][1])) d.superseded.set(i, 1);
  }
  const targets: Array<[number, string]> = [];
  for (let i = from; i < n; i++) if (d.supersedesKey.get(i) !== -1) targets.push([d.supersedesKey.get(i), d.supersedes.get(i)]);
  scanFirst(d.idKey.values, d.ids, 0, n, targets).forEach((pos, q) => {
    if (pos >= 0) d.superseded.set(pos, 1);
    else dangling.add(targets[q][1]);
  });
  const verdictOf = (id: string) => latest.get(id)?.[1] ?? -1;
  if (changedReviews === 'all') {
    for (let i = 0; i < n; i++) d.verdict.set(i, d.first.get(i) === i ? verdictOf(d.ids.get(i)) : -1);
  } else {
    for (let i = from; i < n; i++) if (d.first.get(i) === i) d.verdict.set(i, verdictOf(d.ids.get(i)));
    const changed = [...changedReviews].map((id) => [key28(id), id] as const);
    scanFirst(d.idKey.values, d.ids, 0, from, changed).forEach((pos, q) => {
      if (pos >= 0) d.verdict.set(pos, verdictOf(changed[q][1]));
    });
  }
}

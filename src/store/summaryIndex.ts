// The summary's index, read incrementally: for each file of a dataset folder, only the bytes after
// the offset the index reached are read, so after N appends only those N lines are parsed. A file
// that was replaced, truncated or rewritten within its fingerprinted bytes (first 4 KiB, and the
// 4 KiB before the offset) is read again from the start. New lines are resolved as they arrive
// (first line of each id, supersession, latest verdicts), so the summary never re-resolves the
// whole folder. The state and its file format are in summaryState.ts.
import { createHash } from 'node:crypto';
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { key28 } from './columns';
import { rawCompletion } from './completion';
import { demonstrationInconsistency } from './datasetStore';
import { countDiffLines } from './diffStats';
import { linesOfHandle, parseJsonlLine, type JsonlEntry, type ReadOptions, type StoreProblem } from './jsonlFile';
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
import { canonicalDir, emptyState, loadState, saveState, type DemoColumns, type FileState, type LatestReviews, type SkipColumns, type SummaryState } from './summaryState';

export { clearSummaryIndex, summaryIndexPath } from './summaryState';

/** Problems kept per file (the total is always counted). */
export const MAX_PROBLEMS_PER_FILE = 100;
const FINGERPRINT_BYTES = 4096;
/** Hex digits of record and task hashes kept in the index. */
const HASH_PREFIX = 16;
const MAX_LINE = 64 << 20;

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
    for await (const raw of linesOfHandle(fh, { offset, firstLine: lines })) {
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

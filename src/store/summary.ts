// Aggregate numbers of a dataset folder. The per-record columns come from the summary index
// (summaryIndex.ts), which reads only what was appended since the last summary; per record it
// keeps a few numbers and ids (supersession is only known at the end of the file), never the records.
import type { StoreProblem } from './jsonlFile';
import { duplicateGroups } from './columns';
import { readSummaryInput, type SummaryInput, type UpdateOptions } from './summaryIndex';

export const REWARD_RANGE = [-0.2, 1.8] as const;
export const REWARD_BIN_WIDTH = 0.2;
/** Active-time bin edges in ms (last bin open-ended). */
export const ACTIVE_TIME_EDGES_MS = [0, 30_000, 60_000, 120_000, 300_000, 600_000, 1_200_000, 1_800_000, 3_600_000] as const;
/** Problems kept in the summary (the total is always counted). */
export const MAX_LISTED_PROBLEMS = 100;

export interface Bin {
  from: number;
  /** Exclusive, except for the last reward bin (which includes 1.8); null = open-ended. */
  to: number | null;
  count: number;
}

export interface Distribution {
  count: number;
  mean: number | null;
  median: number | null;
  min: number | null;
  max: number | null;
}

export interface GroupCounts {
  submitted: number;
  success: number;
  failed: number;
  skipped: number;
}

export interface PrimitiveStats extends GroupCounts {
  success_rate: number | null;
  active_ms_median: number | null;
  reward_mean: number | null;
}

export interface DatasetSummary {
  dir: string;
  counts: {
    /** Valid demonstration lines (every revision). */
    demonstration_lines: number;
    /** Current (not superseded) demonstrations. */
    submitted: number;
    success: number;
    failed: number;
    skipped: number;
    superseded: number;
  };
  success_rate: number | null;
  by_primitive: Record<string, PrimitiveStats>;
  by_task: Record<string, GroupCounts>;
  by_annotator: Record<string, GroupCounts & { active_ms_total: number }>;
  /** Over current demonstrations; values outside the range fall in the edge bins. */
  reward: Distribution & { histogram: Bin[] };
  active_ms: Distribution & { total: number; histogram: Bin[] };
  diff: {
    lines_added: Distribution & { total: number };
    lines_removed: Distribution & { total: number };
    lines_changed: Distribution;
    /** Current demonstrations whose diff changes nothing. */
    empty: number;
  };
  reviews: { approved: number; rejected: number; unreviewed: number; reviews_of_unknown_records: number };
  duplicates: { record_hash_groups: number; task_hash_groups: number; extra_copies: number };
  problems: { total: number; listed: StoreProblem[] };
}

interface GroupCounters {
  submitted: Int32Array;
  success: Int32Array;
  skipped: Int32Array;
}

function groupCounters(size: number): GroupCounters {
  return { submitted: new Int32Array(size), success: new Int32Array(size), skipped: new Int32Array(size) };
}

type Numbers = ArrayLike<number> & Iterable<number>;

/** The k-th smallest value (0-based) of `a`, reordering it in place (quickselect, O(n)). */
function select(a: Float64Array, k: number): number {
  let lo = 0;
  let hi = a.length - 1;
  while (lo < hi) {
    const pivot = a[(lo + hi) >> 1];
    let i = lo;
    let j = hi;
    while (i <= j) {
      while (a[i] < pivot) i++;
      while (a[j] > pivot) j--;
      if (i <= j) {
        const t = a[i];
        a[i++] = a[j]!;
        a[j--] = t;
      }
    }
    if (k <= j) hi = j;
    else if (k >= i) lo = i;
    else return a[k];
  }
  return a[k];
}

/** The median without sorting (the summary needs no other order statistic). */
function median(values: Numbers): number | null {
  if (values.length === 0) return null;
  const a = values instanceof Float64Array ? values.slice() : Float64Array.from(values);
  const mid = a.length >> 1;
  const hi = select(a, mid);
  if (a.length % 2) return hi;
  // After select, everything left of mid is <= a[mid]: the lower middle is their maximum.
  let lo = -Infinity;
  for (let i = 0; i < mid; i++) if (a[i] > lo) lo = a[i]!;
  return (lo + hi) / 2;
}

function distribution(values: Numbers): Distribution {
  if (values.length === 0) return { count: 0, mean: null, median: null, min: null, max: null };
  let sum = 0;
  let min = Infinity;
  let max = -Infinity;
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return { count: values.length, mean: sum / values.length, median: median(values), min, max };
}

function rewardHistogram(values: Numbers): Bin[] {
  const [lo, hi] = REWARD_RANGE;
  const n = Math.round((hi - lo) / REWARD_BIN_WIDTH);
  const bins: Bin[] = Array.from({ length: n }, (_, i) => ({
    from: round(lo + i * REWARD_BIN_WIDTH),
    to: round(lo + (i + 1) * REWARD_BIN_WIDTH),
    count: 0,
  }));
  for (const v of values) {
    // The epsilon keeps values like 0.4 (= 0.6/0.2 - 1 in floating point) in their own bin.
    const i = Math.min(n - 1, Math.max(0, Math.floor((v - lo) / REWARD_BIN_WIDTH + 1e-9)));
    bins[i].count++;
  }
  return bins;
}

function activeHistogram(values: Numbers): Bin[] {
  const edges = ACTIVE_TIME_EDGES_MS;
  const bins: Bin[] = edges.map((from, i) => ({ from, to: edges[i + 1] ?? null, count: 0 }));
  for (const v of values) {
    let i = edges.length - 1;
    while (i > 0 && v < edges[i]) i--;
    bins[i].count++;
  }
  return bins;
}

function round(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

function ratio(a: number, b: number): number | null {
  return b === 0 ? null : a / b;
}

/**
 * Aggregates DIR. Only what was appended since the last summary is read (summaryIndex.ts); the
 * first summary of a folder reads it all. Missing files are just empty.
 */
export async function summarizeDataset(dir: string, opts: UpdateOptions = {}): Promise<DatasetSummary> {
  return summaryOf(dir, await readSummaryInput(dir, opts));
}

/** The summary of an index's columns (pure: the same input gives the same summary). */
export function summaryOf(dir: string, input: SummaryInput): DatasetSummary {
  const { strings, demos, skips, latestReviews } = input;
  const problems = input.problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line).slice(0, MAX_LISTED_PROBLEMS);
  const problemTotal = input.problemTotal;
  const ids = demos.ids;
  const n = ids.length;
  const prims = demos.primitive.values;
  const tasks = demos.task.values;
  const anns = demos.annotator.values;
  const success = demos.success.values;
  const rewards = demos.reward.values;
  const actives = demos.active.values;
  const addeds = demos.added.values;
  const removeds = demos.removed.values;
  // Resolved by the index as lines arrived: first line of each id, supersession, latest verdicts.
  const firstLine = demos.first.values;
  const isSuperseded = demos.superseded.values;
  const verdictOf = demos.verdict.values;

  // Groups by string-table number, counted in typed arrays (no object per group or row); names
  // are looked up once at the end.
  const S = strings.length;
  const prim = groupCounters(S);
  const task = groupCounters(S);
  const ann = groupCounters(S);
  const rewardSum = new Float64Array(S); // by primitive
  const activeTotal = new Float64Array(S); // by annotator

  const sp = skips.primitive.values;
  const st = skips.task.values;
  const sa = skips.annotator.values;
  for (let i = 0; i < sp.length; i++) {
    prim.skipped[sp[i]]++;
    task.skipped[st[i]]++;
    ann.skipped[sa[i]]++;
  }
  const skipped = sp.length;

  const current = new Int32Array(n);
  let submitted = 0;
  let nSuccess = 0;
  let supersededCount = 0;
  let empty = 0;
  const reviews = { approved: 0, rejected: 0, unreviewed: 0, reviews_of_unknown_records: 0 };
  let reviewedRecords = 0;
  for (let i = 0; i < n; i++) {
    const first = firstLine[i];
    if (first === i && verdictOf[i] !== -1) reviewedRecords++;
    if (isSuperseded[first]) {
      supersededCount++;
      continue;
    }
    if (first !== i) continue; // the same record written twice counts once
    current[submitted++] = i;
    const p = prims[i];
    const t = tasks[i];
    const a = anns[i];
    prim.submitted[p]++;
    task.submitted[t]++;
    ann.submitted[a]++;
    if (success[i] === 1) {
      nSuccess++;
      prim.success[p]++;
      task.success[t]++;
      ann.success[a]++;
    }
    activeTotal[a] += actives[i];
    rewardSum[p] += rewards[i];
    if (addeds[i] + removeds[i] === 0) empty++;
    const verdict = verdictOf[i];
    if (verdict === 1) reviews.approved++;
    else if (verdict === 0) reviews.rejected++;
    else reviews.unreviewed++;
  }
  const cur = {
    reward: new Float64Array(submitted),
    active: new Float64Array(submitted),
    added: new Float64Array(submitted),
    removed: new Float64Array(submitted),
    changed: new Float64Array(submitted),
  };
  // Active times grouped by primitive (a counting sort: each primitive's run, in file order).
  const start = new Int32Array(S + 1);
  for (let k = 0; k < S; k++) start[k + 1] = start[k] + prim.submitted[k];
  const fill = start.slice(0, S);
  const activeByPrim = new Float64Array(submitted);
  for (let k = 0; k < submitted; k++) {
    const i = current[k];
    cur.reward[k] = rewards[i]!;
    cur.active[k] = actives[i]!;
    cur.added[k] = addeds[i]!;
    cur.removed[k] = removeds[i]!;
    cur.changed[k] = addeds[i] + removeds[i];
    activeByPrim[fill[prims[i]]++] = actives[i]!;
  }

  reviews.reviews_of_unknown_records = latestReviews.size - reviewedRecords;
  const { groups: recordGroups, extra } = duplicateGroups(demos.recordHashKey.values, demos.recordHash, current.subarray(0, submitted));
  const { groups: taskGroups } = duplicateGroups(demos.taskHashKey.values, demos.taskHash, current.subarray(0, submitted));

  /** The groups that occur (a demonstration or a skip), by name. */
  const named = (g: GroupCounters) => {
    const ks: number[] = [];
    for (let k = 0; k < S; k++) if (g.submitted[k] + g.skipped[k] > 0) ks.push(k);
    return ks.sort((x, y) => (strings[x] < strings[y] ? -1 : strings[x] > strings[y] ? 1 : 0));
  };
  const counts = (g: GroupCounters, k: number): GroupCounts => ({
    submitted: g.submitted[k],
    success: g.success[k],
    failed: g.submitted[k] - g.success[k],
    skipped: g.skipped[k],
  });
  const sum = (xs: Numbers) => {
    let t = 0;
    for (const x of xs) t += x;
    return t;
  };
  return {
    dir,
    counts: {
      demonstration_lines: ids.length,
      submitted,
      success: nSuccess,
      failed: submitted - nSuccess,
      skipped,
      superseded: supersededCount,
    },
    success_rate: ratio(nSuccess, submitted),
    by_primitive: Object.fromEntries(
      named(prim).map((k) => {
        const g = counts(prim, k);
        return [
          strings[k],
          {
            ...g,
            success_rate: ratio(g.success, g.submitted),
            active_ms_median: median(activeByPrim.subarray(start[k], start[k + 1])),
            reward_mean: g.submitted ? rewardSum[k] / g.submitted : null,
          },
        ];
      }),
    ),
    by_task: Object.fromEntries(named(task).map((k) => [strings[k], counts(task, k)])),
    by_annotator: Object.fromEntries(named(ann).map((k) => [strings[k], { ...counts(ann, k), active_ms_total: activeTotal[k] }])),
    reward: { ...distribution(cur.reward), histogram: rewardHistogram(cur.reward) },
    active_ms: { ...distribution(cur.active), total: sum(cur.active), histogram: activeHistogram(cur.active) },
    diff: {
      lines_added: { ...distribution(cur.added), total: sum(cur.added) },
      lines_removed: { ...distribution(cur.removed), total: sum(cur.removed) },
      lines_changed: distribution(cur.changed),
      empty,
    },
    reviews,
    duplicates: { record_hash_groups: recordGroups, task_hash_groups: taskGroups, extra_copies: extra },
    problems: { total: problemTotal, listed: problems },
  };
}

function fmtNum(x: number | null, digits = 3): string {
  return x === null ? '–' : String(Math.round(x * 10 ** digits) / 10 ** digits);
}

function fmtPct(x: number | null): string {
  return x === null ? '–' : `${(x * 100).toFixed(1)}%`;
}

export function formatDuration(ms: number | null): string {
  if (ms === null) return '–';
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

function table(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)];
}

function bar(count: number, max: number, width = 30): string {
  return max === 0 ? '' : '#'.repeat(Math.round((count / max) * width));
}

export function renderSummaryText(s: DatasetSummary): string {
  const c = s.counts;
  const out: string[] = [];
  out.push(`Dataset ${s.dir}`);
  out.push(
    `  ${c.submitted} submitted (${c.success} success, ${c.failed} failed; success rate ${fmtPct(s.success_rate)}), ${c.skipped} skipped, ${c.superseded} superseded revisions`,
  );
  out.push(`  reviews: ${s.reviews.approved} approved, ${s.reviews.rejected} rejected, ${s.reviews.unreviewed} unreviewed`);
  if (s.reviews.reviews_of_unknown_records)
    out.push(`  (${s.reviews.reviews_of_unknown_records} reviewed record ids are not in demonstrations.jsonl)`);
  if (s.duplicates.record_hash_groups || s.duplicates.task_hash_groups) {
    out.push(
      `  duplicates: ${s.duplicates.extra_copies} identical repeat(s) in ${s.duplicates.record_hash_groups} group(s); ${s.duplicates.task_hash_groups} task(s) solved more than once`,
    );
  }
  out.push('');
  out.push('By primitive');
  out.push(
    ...table(
      ['primitive', 'submitted', 'success', 'failed', 'skipped', 'rate', 'median active', 'mean reward'],
      Object.entries(s.by_primitive).map(([k, g]) => [
        k,
        String(g.submitted),
        String(g.success),
        String(g.failed),
        String(g.skipped),
        fmtPct(g.success_rate),
        formatDuration(g.active_ms_median),
        fmtNum(g.reward_mean),
      ]),
    ).map((l) => `  ${l}`),
  );
  out.push('');
  out.push('By annotator');
  out.push(
    ...table(
      ['annotator', 'submitted', 'success', 'failed', 'skipped', 'active total'],
      Object.entries(s.by_annotator).map(([k, g]) => [
        k,
        String(g.submitted),
        String(g.success),
        String(g.failed),
        String(g.skipped),
        formatDuration(g.active_ms_total),
      ]),
    ).map((l) => `  ${l}`),
  );
  out.push('');
  out.push(`By task: ${Object.keys(s.by_task).length} task(s)`);
  const topTasks = Object.entries(s.by_task)
    .sort((a, b) => b[1].submitted - a[1].submitted || a[0].localeCompare(b[0]))
    .slice(0, 10);
  out.push(
    ...table(
      ['task', 'submitted', 'success', 'failed', 'skipped'],
      topTasks.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped)]),
    ).map((l) => `  ${l}`),
  );
  out.push('');
  const r = s.reward;
  out.push(`Visible reward: mean ${fmtNum(r.mean)}, median ${fmtNum(r.median)}, min ${fmtNum(r.min)}, max ${fmtNum(r.max)}`);
  const rmax = Math.max(0, ...r.histogram.map((b) => b.count));
  for (const b of r.histogram)
    out.push(
      `  [${b.from.toFixed(1).padStart(4)}, ${b.to!.toFixed(1).padStart(4)}${b === r.histogram[r.histogram.length - 1] ? ']' : ')'} ${String(b.count).padStart(7)} ${bar(b.count, rmax)}`,
    );
  out.push('');
  const a = s.active_ms;
  out.push(`Active time: median ${formatDuration(a.median)}, mean ${formatDuration(a.mean)}, total ${formatDuration(a.total)}`);
  const amax = Math.max(0, ...a.histogram.map((b) => b.count));
  for (const b of a.histogram) {
    const label = b.to === null ? `>= ${formatDuration(b.from)}` : `${formatDuration(b.from)}–${formatDuration(b.to)}`;
    out.push(`  ${label.padEnd(14)} ${String(b.count).padStart(7)} ${bar(b.count, amax)}`);
  }
  out.push('');
  const d = s.diff;
  out.push(
    `Diff size: median +${fmtNum(d.lines_added.median, 1)}/-${fmtNum(d.lines_removed.median, 1)} lines (median changed ${fmtNum(d.lines_changed.median, 1)}, max ${fmtNum(d.lines_changed.max, 0)}); total +${d.lines_added.total}/-${d.lines_removed.total}; ${d.empty} empty`,
  );
  if (s.problems.total) {
    out.push('');
    out.push(
      `Problems: ${s.problems.total} unusable line(s), skipped${s.problems.total > s.problems.listed.length ? ` (first ${s.problems.listed.length} listed)` : ''}`,
    );
    for (const p of s.problems.listed) out.push(`  ${p.file}:${p.line}: ${p.error}`);
  }
  return out.join('\n');
}

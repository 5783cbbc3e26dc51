// One streaming pass over a dataset folder into aggregate numbers. Per record we keep only a few
// numbers and ids (supersession is only known at the end of the file), never the records.
import { join } from 'node:path';
import { countDiffLines } from './diffStats';
import { readDemonstrationEntries } from './datasetStore';
import { readJsonl, type StoreProblem } from './jsonlFile';
import { DATASET_FILES, foreignSideRecord, REVIEW_SCHEMA, ReviewRecordSchema, SKIP_SCHEMA, SkipRecordSchema, type ReviewVerdict } from './records';
import { LatestByKey } from './resolve';

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

function emptyCounts(): GroupCounts {
  return { submitted: 0, success: 0, failed: 0, skipped: 0 };
}

function sortedCopy(values: readonly number[]): Float64Array {
  return Float64Array.from(values).sort();
}

function medianOfSorted(s: Float64Array): number | null {
  if (s.length === 0) return null;
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function distribution(values: readonly number[]): Distribution {
  if (values.length === 0) return { count: 0, mean: null, median: null, min: null, max: null };
  const s = sortedCopy(values);
  let sum = 0;
  for (const v of s) sum += v;
  return { count: s.length, mean: sum / s.length, median: medianOfSorted(s), min: s[0]!, max: s[s.length - 1]! };
}

function rewardHistogram(values: readonly number[]): Bin[] {
  const [lo, hi] = REWARD_RANGE;
  const n = Math.round((hi - lo) / REWARD_BIN_WIDTH);
  const bins: Bin[] = Array.from({ length: n }, (_, i) => ({ from: round(lo + i * REWARD_BIN_WIDTH), to: round(lo + (i + 1) * REWARD_BIN_WIDTH), count: 0 }));
  for (const v of values) {
    // The epsilon keeps values like 0.4 (= 0.6/0.2 - 1 in floating point) in their own bin.
    const i = Math.min(n - 1, Math.max(0, Math.floor((v - lo) / REWARD_BIN_WIDTH + 1e-9)));
    bins[i]!.count++;
  }
  return bins;
}

function activeHistogram(values: readonly number[]): Bin[] {
  const edges = ACTIVE_TIME_EDGES_MS;
  const bins: Bin[] = edges.map((from, i) => ({ from, to: edges[i + 1] ?? null, count: 0 }));
  for (const v of values) {
    let i = edges.length - 1;
    while (i > 0 && v < edges[i]!) i--;
    bins[i]!.count++;
  }
  return bins;
}

function round(x: number): number {
  return Math.round(x * 1e9) / 1e9;
}

function ratio(a: number, b: number): number | null {
  return b === 0 ? null : a / b;
}

/** Reads DIR once and aggregates. A missing folder is an error; missing files are just empty. */
export async function summarizeDataset(dir: string): Promise<DatasetSummary> {
  const problems: StoreProblem[] = [];
  let problemTotal = 0;
  const report = (p: StoreProblem) => {
    problemTotal++;
    if (problems.length < MAX_LISTED_PROBLEMS) problems.push(p);
  };

  const latestReview = new LatestByKey<{ at: string; verdict: ReviewVerdict }>();
  for await (const e of readJsonl(join(dir, DATASET_FILES.reviews), ReviewRecordSchema, { what: 'review', foreign: foreignSideRecord('review', REVIEW_SCHEMA) })) {
    if (e.ok) latestReview.add(e.value.record_id, { at: e.value.at, verdict: e.value.verdict });
    else report(e.problem);
  }

  // Compact per-record columns, filled in file order.
  const ids: string[] = [];
  const superseded = new Set<string>();
  const primitive: string[] = [];
  const task: string[] = [];
  const annotator: string[] = [];
  const success: boolean[] = [];
  const reward: number[] = [];
  const active: number[] = [];
  const added: number[] = [];
  const removed: number[] = [];
  const recordHashes: string[] = [];
  const taskHashes: string[] = [];
  for await (const e of readDemonstrationEntries(dir)) {
    if (!e.ok) {
      report(e.problem);
      continue;
    }
    const r = e.value;
    ids.push(r.info.record_id);
    if (r.info.supersedes) superseded.add(r.info.supersedes);
    primitive.push(r.primitive_type);
    task.push(r.task_id);
    annotator.push(r.info.annotator_id);
    success.push(r.success);
    reward.push(r.visible_reward);
    active.push(r.info.active_ms);
    const d = countDiffLines(r.repair_completion);
    added.push(d.added);
    removed.push(d.removed);
    recordHashes.push(r.info.record_hash);
    taskHashes.push(r.info.task_hash);
  }

  const byPrimitive = new Map<string, GroupCounts & { active: number[]; rewards: number[] }>();
  const byTask = new Map<string, GroupCounts>();
  const byAnnotator = new Map<string, GroupCounts & { active_ms_total: number }>();
  const prim = (k: string) => byPrimitive.get(k) ?? byPrimitive.set(k, { ...emptyCounts(), active: [], rewards: [] }).get(k)!;
  const tsk = (k: string) => byTask.get(k) ?? byTask.set(k, emptyCounts()).get(k)!;
  const ann = (k: string) => byAnnotator.get(k) ?? byAnnotator.set(k, { ...emptyCounts(), active_ms_total: 0 }).get(k)!;

  for await (const e of readJsonl(join(dir, DATASET_FILES.skips), SkipRecordSchema, { what: 'skip', foreign: foreignSideRecord('skip', SKIP_SCHEMA) })) {
    if (!e.ok) {
      report(e.problem);
      continue;
    }
    prim(e.value.primitive.primitive_type).skipped++;
    tsk(e.value.task_id).skipped++;
    ann(e.value.annotator_id).skipped++;
  }
  let skipped = 0;
  for (const g of byTask.values()) skipped += g.skipped;

  const cur = { reward: [] as number[], active: [] as number[], added: [] as number[], removed: [] as number[], changed: [] as number[] };
  const seen = new Set<string>();
  const recordHashCount = new Map<string, number>();
  const taskHashCount = new Map<string, number>();
  let nSuccess = 0;
  let supersededCount = 0;
  let empty = 0;
  const reviews = { approved: 0, rejected: 0, unreviewed: 0, reviews_of_unknown_records: 0 };
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (superseded.has(id)) {
      supersededCount++;
      continue;
    }
    if (seen.has(id)) continue; // the same record written twice counts once
    seen.add(id);
    const ok = success[i]!;
    if (ok) nSuccess++;
    for (const g of [prim(primitive[i]!), tsk(task[i]!), ann(annotator[i]!)]) {
      g.submitted++;
      if (ok) g.success++;
      else g.failed++;
    }
    ann(annotator[i]!).active_ms_total += active[i]!;
    prim(primitive[i]!).active.push(active[i]!);
    prim(primitive[i]!).rewards.push(reward[i]!);
    cur.reward.push(reward[i]!);
    cur.active.push(active[i]!);
    cur.added.push(added[i]!);
    cur.removed.push(removed[i]!);
    cur.changed.push(added[i]! + removed[i]!);
    if (added[i]! + removed[i]! === 0) empty++;
    recordHashCount.set(recordHashes[i]!, (recordHashCount.get(recordHashes[i]!) ?? 0) + 1);
    taskHashCount.set(taskHashes[i]!, (taskHashCount.get(taskHashes[i]!) ?? 0) + 1);
    const verdict = latestReview.get(id)?.verdict;
    if (verdict === 'approve') reviews.approved++;
    else if (verdict === 'reject') reviews.rejected++;
    else reviews.unreviewed++;
  }
  const allIds = new Set(ids);
  for (const [id] of latestReview.toMap()) if (!allIds.has(id)) reviews.reviews_of_unknown_records++;

  let recordGroups = 0;
  let extra = 0;
  for (const n of recordHashCount.values()) if (n > 1) (recordGroups++, (extra += n - 1));
  let taskGroups = 0;
  for (const n of taskHashCount.values()) if (n > 1) taskGroups++;

  const submitted = seen.size;
  const sortedKeys = <V>(m: Map<string, V>) => [...m.keys()].sort();
  const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
  return {
    dir,
    counts: { demonstration_lines: ids.length, submitted, success: nSuccess, failed: submitted - nSuccess, skipped, superseded: supersededCount },
    success_rate: ratio(nSuccess, submitted),
    by_primitive: Object.fromEntries(
      sortedKeys(byPrimitive).map((k) => {
        const g = byPrimitive.get(k)!;
        return [
          k,
          {
            submitted: g.submitted,
            success: g.success,
            failed: g.failed,
            skipped: g.skipped,
            success_rate: ratio(g.success, g.submitted),
            active_ms_median: medianOfSorted(sortedCopy(g.active)),
            reward_mean: g.rewards.length ? sum(g.rewards) / g.rewards.length : null,
          },
        ];
      }),
    ),
    by_task: Object.fromEntries(sortedKeys(byTask).map((k) => [k, byTask.get(k)!])),
    by_annotator: Object.fromEntries(sortedKeys(byAnnotator).map((k) => [k, byAnnotator.get(k)!])),
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
    problems: { total: problemTotal, listed: problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line) },
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
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ').trimEnd();
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
  if (s.reviews.reviews_of_unknown_records) out.push(`  (${s.reviews.reviews_of_unknown_records} reviewed record ids are not in demonstrations.jsonl)`);
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
      Object.entries(s.by_primitive).map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped), fmtPct(g.success_rate), formatDuration(g.active_ms_median), fmtNum(g.reward_mean)]),
    ).map((l) => `  ${l}`),
  );
  out.push('');
  out.push('By annotator');
  out.push(
    ...table(
      ['annotator', 'submitted', 'success', 'failed', 'skipped', 'active total'],
      Object.entries(s.by_annotator).map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped), formatDuration(g.active_ms_total)]),
    ).map((l) => `  ${l}`),
  );
  out.push('');
  out.push(`By task: ${Object.keys(s.by_task).length} task(s)`);
  const topTasks = Object.entries(s.by_task)
    .sort((a, b) => b[1].submitted - a[1].submitted || a[0].localeCompare(b[0]))
    .slice(0, 10);
  out.push(...table(['task', 'submitted', 'success', 'failed', 'skipped'], topTasks.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped)])).map((l) => `  ${l}`));
  out.push('');
  const r = s.reward;
  out.push(`Visible reward: mean ${fmtNum(r.mean)}, median ${fmtNum(r.median)}, min ${fmtNum(r.min)}, max ${fmtNum(r.max)}`);
  const rmax = Math.max(0, ...r.histogram.map((b) => b.count));
  for (const b of r.histogram) out.push(`  [${b.from.toFixed(1).padStart(4)}, ${b.to!.toFixed(1).padStart(4)}${b === r.histogram[r.histogram.length - 1] ? ']' : ')'} ${String(b.count).padStart(7)} ${bar(b.count, rmax)}`);
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
    out.push(`Problems: ${s.problems.total} unusable line(s), skipped${s.problems.total > s.problems.listed.length ? ` (first ${s.problems.listed.length} listed)` : ''}`);
    for (const p of s.problems.listed) out.push(`  ${p.file}:${p.line}: ${p.error}`);
  }
  return out.join('\n');
}

// Which demonstrations an export takes. Whether a record is superseded is only known once the
// whole file has been read, so lines are read into a few ids and codes each (export/exportIndex.ts,
// never the records), resolved, and selected here at the end.
import { z } from 'zod';
import { breakageFailed } from '../demonstrationBuilder';
import type { DemonstrationRecord } from '../records';
import type { ExportColumns } from './exportIndex';

export const StatusFilterSchema = z.enum(['success', 'all']);
export const ReviewFilterSchema = z.enum(['approved', 'not-rejected', 'any']);
/** `failed`: only episodes whose breakage made the script fail (unknown, in records older than the flag, counts as failed). */
export const BreakageFilterSchema = z.enum(['failed', 'any']);
export type StatusFilter = z.infer<typeof StatusFilterSchema>;
export type ReviewFilter = z.infer<typeof ReviewFilterSchema>;
export type BreakageFilter = z.infer<typeof BreakageFilterSchema>;

/** The export filters, shared by `forgeenv export` and the editor's Export Dataset (one schema, one set of defaults). */
export const SelectionFiltersSchema = z
  .object({
    status: StatusFilterSchema.default('success'),
    review: ReviewFilterSchema.default('not-rejected'),
    breakage: BreakageFilterSchema.default('failed'),
    /** Empty: every primitive. */
    primitives: z.array(z.string().min(1)).default([]),
  })
  .strict();
export type SelectionFilters = z.infer<typeof SelectionFiltersSchema>;

export const DEFAULT_FILTERS: SelectionFilters = SelectionFiltersSchema.parse({});

/** How each single-choice filter is offered: the CLI flag, its help, and each value's meaning (CLI usage and the editor's pickers). */
export const FILTER_CHOICES = {
  status: {
    flag: '--status',
    title: 'Which outcomes',
    values: {
      success: 'verified successes only (the verifier passed the artifact and no held-out check flags the repair)',
      all: 'successful and failed repairs',
    },
  },
  review: {
    flag: '--review',
    title: 'Which review verdicts',
    values: { 'not-rejected': 'approved or not yet reviewed', approved: 'approved only', any: 'any verdict, rejected included' },
  },
  breakage: {
    flag: '--breakage',
    title: 'Which breakages',
    values: {
      failed: 'only episodes whose breakage made the script fail',
      any: 'also episodes whose broken script still ran (no repair was needed)',
    },
  },
} as const satisfies {
  [K in 'status' | 'review' | 'breakage']: { flag: string; title: string; values: Record<SelectionFilters[K], string> };
};

/** Funnel counts, in the order the filters apply. */
export interface SelectionStats {
  valid_lines: number;
  superseded: number;
  repeated_record_id: number;
  failed: number;
  /** The breakage did not make the script fail (left out unless breakage = any). */
  unbroken: number;
  review: number;
  primitive: number;
  selected: number;
}

/** Line codes, in the order the filters apply; FAILED and UNBROKEN follow from the record alone. */
export const PASS = 0;
const FAILED = 1;
const REVIEW = 2;
const PRIMITIVE = 3;
const UNBROKEN = 4;

/** Held-out checks that are pass/fail: any below 1 flags the episode (the graded ones only inform). */
export const HELD_OUT_FLAGS = ['executed_cleanly', 'checkpoint_valid', 'no_forbidden_workarounds', 'hidden_tests_passed'] as const;

/**
 * A success an export may train on: the environment's verifier passed the run's artifact (records
 * from before the verifier claimed success on printed text: `forgeenv rescore` re-verifies them),
 * and no held-out check flags the repair.
 */
export function verifiedSuccess(r: Pick<DemonstrationRecord, 'success' | 'held_out_breakdown' | 'info'>): boolean {
  if (!r.success || r.info.verification?.verified !== true) return false;
  return HELD_OUT_FLAGS.every((k) => (r.held_out_breakdown[k] ?? 1) >= 1);
}

/** What a record's own fields decide: FAILED, UNBROKEN, or PASS / PRIMITIVE if its review passes. */
export function baseCode(r: DemonstrationRecord, filters: SelectionFilters, wanted: ReadonlySet<string>): number {
  if (filters.status === 'success' && !verifiedSuccess(r)) return FAILED;
  if (filters.breakage === 'failed' && breakageFailed(r) === false) return UNBROKEN;
  return wanted.size && !wanted.has(r.primitive_type) ? PRIMITIVE : PASS;
}

/** Verdicts as the index keeps them: 1 approve, 0 reject, -1 none. */
function reviewPasses(filter: ReviewFilter, verdict: number): boolean {
  if (filter === 'any') return true;
  if (filter === 'approved') return verdict === 1;
  return verdict !== 0;
}

export interface Selection {
  stats: SelectionStats;
  /** Per line: 1 if it is current, the first line of its id, and passes every filter. */
  selected: Uint8Array;
  /** Requested primitives no current record has (likely a typo). */
  unmatchedPrimitives: string[];
}

/**
 * Which lines an export takes, from resolved columns (incremental.ts resolveRows: first line of
 * each id, supersession, latest verdicts): superseded ids and repeated ids first, then the codes.
 */
export function selectLines(d: ExportColumns, strings: readonly string[], filters: SelectionFilters): Selection {
  const n = d.ids.length;
  const first = d.first.values;
  const superseded = d.superseded.values;
  const stats: SelectionStats = {
    valid_lines: n,
    superseded: 0,
    repeated_record_id: 0,
    failed: 0,
    unbroken: 0,
    review: 0,
    primitive: 0,
    selected: 0,
  };
  const selected = new Uint8Array(n);
  const currentPrimitives = new Set<number>();
  for (let i = 0; i < n; i++) {
    const f = first[i];
    if (superseded[f]) {
      stats.superseded++;
      continue;
    }
    if (f !== i) {
      stats.repeated_record_id++;
      continue;
    }
    currentPrimitives.add(d.primitive.get(i));
    let code = d.base.get(i);
    if ((code === PASS || code === PRIMITIVE) && !reviewPasses(filters.review, d.verdict.get(i))) code = REVIEW;
    if (code === FAILED) stats.failed++;
    else if (code === UNBROKEN) stats.unbroken++;
    else if (code === REVIEW) stats.review++;
    else if (code === PRIMITIVE) stats.primitive++;
    else {
      stats.selected++;
      selected[i] = 1;
    }
  }
  const names = new Set([...currentPrimitives].map((k) => strings[k]));
  return { stats, selected, unmatchedPrimitives: [...new Set(filters.primitives)].filter((p) => !names.has(p)).sort() };
}

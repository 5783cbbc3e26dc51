// Which demonstrations an export takes. Whether a record is superseded is only known once the
// whole file has been read, so the scan is one pass that hands every record passing the
// filters to the caller (who stages it) and, at the end, says which of them are current.
// Memory: a few ids and small codes per record, never the records themselves.
import { join } from 'node:path';
import { z } from 'zod';
import { readDemonstrationEntries } from '../datasetStore';
import { breakageFailed } from '../demonstrationBuilder';
import { readJsonl, type StoreProblem } from '../jsonlFile';
import { DATASET_FILES, foreignSideRecord, REVIEW_SCHEMA, ReviewRecordSchema, type DemonstrationRecord, type ReviewVerdict } from '../records';
import { LatestByKey } from '../resolve';

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
    values: { success: 'successful repairs only (held-out executed_cleanly > 0.5)', all: 'successful and failed repairs' },
  },
  review: {
    flag: '--review',
    title: 'Which review verdicts',
    values: { 'not-rejected': 'approved or not yet reviewed', approved: 'approved only', any: 'any verdict, rejected included' },
  },
  breakage: {
    flag: '--breakage',
    title: 'Which breakages',
    values: { failed: 'only episodes whose breakage made the script fail', any: 'also episodes whose broken script still ran (no repair was needed)' },
  },
} as const satisfies { [K in 'status' | 'review' | 'breakage']: { flag: string; title: string; values: Record<SelectionFilters[K], string> } };

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

export interface SelectionResult {
  stats: SelectionStats;
  problems: StoreProblem[];
  /** Requested primitives no current record has (likely a typo). */
  unmatchedPrimitives: string[];
  /** Whether the candidate with this index (as passed to `onCandidate`) is selected: current, first line of its id. */
  isSelected: (candidateIndex: number) => boolean;
}

function reviewPasses(filter: ReviewFilter, verdict: ReviewVerdict | undefined): boolean {
  if (filter === 'any') return true;
  if (filter === 'approved') return verdict === 'approve';
  return verdict !== 'reject';
}

const PASS = 0;
const FAILED = 1;
const REVIEW = 2;
const PRIMITIVE = 3;
const UNBROKEN = 4;

/**
 * Streams the folder once. `onCandidate` gets each record that passes status, review and
 * primitive filters, in file order, with a running candidate index; it is awaited so the caller
 * can write with backpressure. Supersession and repeated ids are resolved afterwards (`isSelected`).
 */
export async function selectDemonstrations(
  dir: string,
  filters: SelectionFilters,
  onCandidate: (rec: DemonstrationRecord, candidateIndex: number) => void | Promise<void>,
): Promise<SelectionResult> {
  const problems: StoreProblem[] = [];
  const latestReview = new LatestByKey<{ at: string; verdict: ReviewVerdict }>();
  for await (const e of readJsonl(join(dir, DATASET_FILES.reviews), ReviewRecordSchema, { what: 'review', foreign: foreignSideRecord('review', REVIEW_SCHEMA) })) {
    if (e.ok) latestReview.add(e.value.record_id, { at: e.value.at, verdict: e.value.verdict });
    else problems.push(e.problem);
  }

  const wanted = new Set(filters.primitives);
  const ids: string[] = [];
  const primitives: string[] = [];
  const codes: number[] = [];
  const candidateOf: number[] = []; // record index -> candidate index (or -1)
  const superseded = new Set<string>();
  let candidates = 0;
  for await (const e of readDemonstrationEntries(dir)) {
    if (!e.ok) {
      problems.push(e.problem);
      continue;
    }
    const r = e.value;
    ids.push(r.info.record_id);
    primitives.push(r.primitive_type);
    if (r.info.supersedes) superseded.add(r.info.supersedes);
    let code = PASS;
    if (filters.status === 'success' && !r.success) code = FAILED;
    else if (filters.breakage === 'failed' && breakageFailed(r) === false) code = UNBROKEN;
    else if (!reviewPasses(filters.review, latestReview.get(r.info.record_id)?.verdict)) code = REVIEW;
    else if (wanted.size && !wanted.has(r.primitive_type)) code = PRIMITIVE;
    codes.push(code);
    if (code === PASS) {
      candidateOf.push(candidates);
      await onCandidate(r, candidates++);
    } else candidateOf.push(-1);
  }

  const stats: SelectionStats = { valid_lines: ids.length, superseded: 0, repeated_record_id: 0, failed: 0, unbroken: 0, review: 0, primitive: 0, selected: 0 };
  const selected = new Uint8Array(candidates);
  const seen = new Set<string>();
  const currentPrimitives = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (superseded.has(id)) {
      stats.superseded++;
      continue;
    }
    if (seen.has(id)) {
      stats.repeated_record_id++;
      continue;
    }
    seen.add(id);
    currentPrimitives.add(primitives[i]!);
    const code = codes[i]!;
    if (code === FAILED) stats.failed++;
    else if (code === UNBROKEN) stats.unbroken++;
    else if (code === REVIEW) stats.review++;
    else if (code === PRIMITIVE) stats.primitive++;
    else {
      stats.selected++;
      selected[candidateOf[i]!] = 1;
    }
  }
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return {
    stats,
    problems,
    unmatchedPrimitives: [...wanted].filter((p) => !currentPrimitives.has(p)).sort(),
    isSelected: (k) => selected[k] === 1,
  };
}

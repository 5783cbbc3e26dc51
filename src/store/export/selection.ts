// Which demonstrations an export takes. Supersession is only known once the whole file has
// been read (revisions come later), so selection reads the file twice: pass 1 collects
// superseded ids and problems, pass 2 streams records through the filters, so memory stays
// small however big the folder is.
import { join } from 'node:path';
import { z } from 'zod';
import { readDemonstrationEntries } from '../datasetStore';
import { readJsonl, type StoreProblem } from '../jsonlFile';
import { DATASET_FILES, foreignSideRecord, REVIEW_SCHEMA, ReviewRecordSchema, type DemonstrationRecord, type ReviewVerdict } from '../records';
import { LatestByKey } from '../resolve';

export const StatusFilterSchema = z.enum(['success', 'all']);
export const ReviewFilterSchema = z.enum(['approved', 'not-rejected', 'any']);
export type StatusFilter = z.infer<typeof StatusFilterSchema>;
export type ReviewFilter = z.infer<typeof ReviewFilterSchema>;

export interface SelectionFilters {
  status: StatusFilter;
  review: ReviewFilter;
  /** Empty: every primitive. */
  primitives: readonly string[];
}

export const DEFAULT_FILTERS: SelectionFilters = { status: 'success', review: 'not-rejected', primitives: [] };

/** Funnel counts, in the order the filters apply. */
export interface SelectionStats {
  valid_lines: number;
  superseded: number;
  repeated_record_id: number;
  failed: number;
  review: number;
  primitive: number;
  selected: number;
}

export interface SelectionResult {
  stats: SelectionStats;
  problems: StoreProblem[];
  /** Requested primitives no current record has (likely a typo). */
  unmatchedPrimitives: string[];
}

function reviewPasses(filter: ReviewFilter, verdict: ReviewVerdict | undefined): boolean {
  if (filter === 'any') return true;
  if (filter === 'approved') return verdict === 'approve';
  return verdict !== 'reject';
}

/** Calls `onSelected` for each selected record in file order (awaited, so the caller can write with backpressure). */
export async function selectDemonstrations(
  dir: string,
  filters: SelectionFilters,
  onSelected: (rec: DemonstrationRecord, line: number) => void | Promise<void>,
): Promise<SelectionResult> {
  const problems: StoreProblem[] = [];
  const latestReview = new LatestByKey<{ at: string; verdict: ReviewVerdict }>();
  for await (const e of readJsonl(join(dir, DATASET_FILES.reviews), ReviewRecordSchema, { what: 'review', foreign: foreignSideRecord('review', REVIEW_SCHEMA) })) {
    if (e.ok) latestReview.add(e.value.record_id, { at: e.value.at, verdict: e.value.verdict });
    else problems.push(e.problem);
  }

  const superseded = new Set<string>();
  let lastLine = 0;
  let validLines = 0;
  for await (const e of readDemonstrationEntries(dir)) {
    if (!e.ok) {
      problems.push(e.problem);
      continue;
    }
    validLines++;
    lastLine = e.line;
    if (e.value.info.supersedes) superseded.add(e.value.info.supersedes);
  }

  const stats: SelectionStats = { valid_lines: validLines, superseded: 0, repeated_record_id: 0, failed: 0, review: 0, primitive: 0, selected: 0 };
  const wanted = new Set(filters.primitives);
  const currentPrimitives = new Set<string>();
  const seen = new Set<string>();
  for await (const e of readDemonstrationEntries(dir)) {
    if (!e.ok) continue; // already reported by pass 1
    // Lines appended while we were reading were not seen by pass 1 (their supersessions are unknown).
    if (e.line > lastLine) break;
    const r = e.value;
    if (superseded.has(r.info.record_id)) {
      stats.superseded++;
      continue;
    }
    if (seen.has(r.info.record_id)) {
      stats.repeated_record_id++;
      continue;
    }
    seen.add(r.info.record_id);
    currentPrimitives.add(r.primitive_type);
    if (filters.status === 'success' && !r.success) {
      stats.failed++;
      continue;
    }
    if (!reviewPasses(filters.review, latestReview.get(r.info.record_id)?.verdict)) {
      stats.review++;
      continue;
    }
    if (wanted.size && !wanted.has(r.primitive_type)) {
      stats.primitive++;
      continue;
    }
    stats.selected++;
    await onSelected(r, e.line);
  }
  problems.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line);
  return { stats, problems, unmatchedPrimitives: [...wanted].filter((p) => !currentPrimitives.has(p)).sort() };
}

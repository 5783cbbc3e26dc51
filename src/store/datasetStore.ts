// A dataset folder: demonstrations plus the append-only side files (skips, reviews, labels,
// timelines). Writers only ever append; `readAll()` resolves revisions, latest reviews and
// labels, and flags duplicates, reporting unusable lines instead of failing.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import { rawCompletion } from './completion';
import { recordHash } from './hashing';
import {
  appendJsonl,
  appendLines,
  DEFAULT_MAX_LINE_BYTES,
  parseJsonlLine,
  readJsonlFile,
  readLines,
  RecordValidationError,
  type JsonlEntry,
  type StoreProblem,
} from './jsonlFile';
import {
  DATASET_FILES,
  DemonstrationRecordSchema,
  EpisodeIdSchema,
  foreignDemonstration,
  foreignSideRecord,
  LABEL_SCHEMA,
  LabelRecordSchema,
  labelTargetKey,
  REVIEW_SCHEMA,
  ReviewRecordSchema,
  SKIP_SCHEMA,
  SkipRecordSchema,
  TimelineEventSchema,
  type DemonstrationRecord,
  type LabelRecord,
  type ReviewRecord,
  type SkipRecord,
  type TimelineEvent,
} from './records';
import { currentRecords, findDuplicates, LatestByKey, supersededIds, type DuplicateFlags } from './resolve';
import { formatZodError } from '../env/schemas';

export interface DatasetSnapshot {
  dir: string;
  demonstrations: {
    /** Every valid line, file order. */
    all: DemonstrationRecord[];
    /** Not superseded by a later revision (each record id once). */
    current: DemonstrationRecord[];
    superseded: ReadonlySet<string>;
  };
  skips: SkipRecord[];
  /** `latest`: record_id → latest review. */
  reviews: { all: ReviewRecord[]; latest: ReadonlyMap<string, ReviewRecord> };
  /** `latest`: labelTargetKey(target) → latest label. */
  labels: { all: LabelRecord[]; latest: ReadonlyMap<string, LabelRecord> };
  problems: StoreProblem[];
  duplicates: DuplicateFlags;
}

type WithDefaults<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;
export type SkipInput = WithDefaults<z.input<typeof SkipRecordSchema>, 'kind' | 'schema' | 'at'>;
export type ReviewInput = WithDefaults<z.input<typeof ReviewRecordSchema>, 'kind' | 'schema' | 'review_id' | 'at'>;
export type LabelInput = WithDefaults<z.input<typeof LabelRecordSchema>, 'kind' | 'schema' | 'label_id' | 'at'>;

/** Why a demonstration that matches the schema is still unusable, or undefined. */
export function demonstrationInconsistency(rec: DemonstrationRecord): string | undefined {
  const expected = recordHash(rec.info.task_hash, rec.repair_completion);
  return expected === rec.info.record_hash
    ? undefined
    : `record_hash does not match task_hash + repair_completion (expected ${expected}); the diff was changed after scoring`;
}

/**
 * One line of demonstrations.jsonl with the full checks (schema and record hash; readJsonl's rules
 * for blank, torn and foreign lines); an old fenced completion is checked against its hash as
 * stored, then handed out raw. Exports read from a byte offset with it (export/exportIndex.ts).
 */
export function demonstrationEntry(
  raw: string,
  line: number,
  terminated: boolean,
  file: string,
): JsonlEntry<DemonstrationRecord> | undefined {
  const e = parseJsonlLine(raw, line, terminated, DemonstrationRecordSchema, {
    what: 'demonstration',
    foreign: foreignDemonstration,
    displayPath: file,
  });
  if (!e?.ok) return e;
  const why = demonstrationInconsistency(e.value);
  if (why) return { ok: false, problem: { file, line, kind: 'inconsistent', error: why } };
  e.value.repair_completion = rawCompletion(e.value.repair_completion);
  return e;
}

/** Streams the valid demonstrations of a folder (demonstrationEntry); schema or hash failures come out as problems. */
export async function* readDemonstrationEntries(dir: string): AsyncGenerator<JsonlEntry<DemonstrationRecord>> {
  const file = join(dir, DATASET_FILES.demonstrations);
  try {
    for await (const raw of readLines(file)) {
      if ('tooLong' in raw) {
        yield {
          ok: false,
          problem: { file, line: raw.line, kind: 'too_long', error: `line longer than ${DEFAULT_MAX_LINE_BYTES} bytes, skipped` },
        };
        continue;
      }
      const e = demonstrationEntry(raw.text, raw.line, raw.terminated, file);
      if (e) yield e;
    }
  } catch (err) {
    yield { ok: false, problem: { file, line: 0, kind: 'unreadable', error: `cannot read: ${(err as Error).message}` } };
  }
}

export class DatasetStore {
  constructor(readonly dir: string) {}

  private path(name: string): string {
    return join(this.dir, name);
  }

  /** Validates (schema + record hash) and appends; resolves to the record as stored. */
  async appendDemonstration(rec: DemonstrationRecord | unknown): Promise<DemonstrationRecord> {
    const parsed = DemonstrationRecordSchema.safeParse(rec);
    if (!parsed.success)
      throw new RecordValidationError(`Refusing to write an invalid demonstration: ${formatZodError(parsed.error)}`, rec);
    const why = demonstrationInconsistency(parsed.data);
    if (why) throw new RecordValidationError(`Refusing to write an invalid demonstration: ${why}`, rec);
    return this.appendChecked('demonstration', parsed.data);
  }

  /**
   * Appends a record that its caller has just validated against its schema (episodeWriter's
   * checkEpisodeRecord, or appendDemonstration above): written as is, so no record is checked twice.
   */
  async appendChecked<K extends 'demonstration' | 'skip'>(
    kind: K,
    rec: K extends 'demonstration' ? DemonstrationRecord : SkipRecord,
  ): Promise<typeof rec> {
    const file = this.path(kind === 'demonstration' ? DATASET_FILES.demonstrations : DATASET_FILES.skips);
    await appendLines(file, [JSON.stringify(rec)], [rec], { datasetDir: this.dir });
    return rec;
  }

  async appendSkip(s: SkipInput): Promise<SkipRecord> {
    const rec = { kind: 'skip', schema: SKIP_SCHEMA, at: new Date().toISOString(), ...s };
    const [out] = await appendJsonl(this.path(DATASET_FILES.skips), SkipRecordSchema, [rec], 'skip', { datasetDir: this.dir });
    return out;
  }

  async appendReview(r: ReviewInput): Promise<ReviewRecord> {
    const rec = { kind: 'review', schema: REVIEW_SCHEMA, review_id: randomUUID(), at: new Date().toISOString(), ...r };
    const [out] = await appendJsonl(this.path(DATASET_FILES.reviews), ReviewRecordSchema, [rec], 'review', { datasetDir: this.dir });
    return out;
  }

  async appendLabel(l: LabelInput): Promise<LabelRecord> {
    const rec = { kind: 'label', schema: LABEL_SCHEMA, label_id: randomUUID(), at: new Date().toISOString(), ...l };
    const [out] = await appendJsonl(this.path(DATASET_FILES.labels), LabelRecordSchema, [rec], 'label', { datasetDir: this.dir });
    return out;
  }

  timelinePath(episodeId: string): string {
    const id = EpisodeIdSchema.safeParse(episodeId);
    if (!id.success) throw new RecordValidationError(`Invalid episode id "${episodeId}": ${formatZodError(id.error)}`, episodeId);
    return join(this.dir, DATASET_FILES.timelinesDir, `${id.data}.jsonl`);
  }

  /** Appends a batch of editor events as one write (call it on a debounce, not per keystroke). */
  async appendTimelineEvents(episodeId: string, events: readonly TimelineEvent[]): Promise<TimelineEvent[]> {
    return appendJsonl(this.timelinePath(episodeId), TimelineEventSchema, events, 'timeline event', { datasetDir: this.dir });
  }

  async readTimeline(episodeId: string): Promise<{ events: TimelineEvent[]; problems: StoreProblem[] }> {
    const { records, problems } = await readJsonlFile(this.timelinePath(episodeId), TimelineEventSchema, { what: 'timeline event' });
    return { events: records.map((r) => r.value), problems };
  }

  async readAll(): Promise<DatasetSnapshot> {
    const problems: StoreProblem[] = [];
    const all: DemonstrationRecord[] = [];
    for await (const e of readDemonstrationEntries(this.dir)) {
      if (e.ok) all.push(e.value);
      else problems.push(e.problem);
    }
    const skips = await readJsonlFile(this.path(DATASET_FILES.skips), SkipRecordSchema, {
      what: 'skip',
      foreign: foreignSideRecord('skip', SKIP_SCHEMA),
    });
    const reviews = await readJsonlFile(this.path(DATASET_FILES.reviews), ReviewRecordSchema, {
      what: 'review',
      foreign: foreignSideRecord('review', REVIEW_SCHEMA),
    });
    const labels = await readJsonlFile(this.path(DATASET_FILES.labels), LabelRecordSchema, {
      what: 'label',
      foreign: foreignSideRecord('label', LABEL_SCHEMA),
    });
    problems.push(...skips.problems, ...reviews.problems, ...labels.problems);

    const superseded = supersededIds(all);
    const current = currentRecords(all, superseded);
    const latestReview = new LatestByKey<ReviewRecord>();
    for (const { value } of reviews.records) latestReview.add(value.record_id, value);
    const latestLabel = new LatestByKey<LabelRecord>();
    for (const { value } of labels.records) latestLabel.add(labelTargetKey(value.target), value);

    return {
      dir: this.dir,
      demonstrations: { all, current, superseded },
      skips: skips.records.map((r) => r.value),
      reviews: { all: reviews.records.map((r) => r.value), latest: latestReview.toMap() },
      labels: { all: labels.records.map((r) => r.value), latest: latestLabel.toMap() },
      problems,
      duplicates: findDuplicates(all, current),
    };
  }
}

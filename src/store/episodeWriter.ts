// The one write path of a finished episode, used by the editor (Submit, Skip, Submit Revision,
// the retry queue, Save As…) and the CLI (`forgeenv episode --out DIR`): the record is checked
// first (schema, record hash), then its timeline is appended, then the record. Timeline first,
// so a stored record never points at a missing timeline; checked first, so a refused record
// never leaves an orphan timeline behind.
import { formatZodError } from '../env/schemas';
import { DatasetStore, demonstrationInconsistency } from './datasetStore';
import { appendJsonl, appendLines, RecordValidationError } from './jsonlFile';
import {
  DemonstrationRecordSchema,
  SKIP_SCHEMA,
  SkipRecordSchema,
  TimelineEventSchema,
  type DemonstrationRecord,
  type SkipRecord,
  type TimelineEvent,
} from './records';

export type EpisodeRecordKind = 'demonstration' | 'skip';

export type CheckedRecord = { kind: 'demonstration'; record: DemonstrationRecord } | { kind: 'skip'; record: SkipRecord };

/** The checks every write path applies. Throws RecordValidationError; nothing is written. */
export function checkEpisodeRecord(kind: EpisodeRecordKind, record: unknown): CheckedRecord {
  if (kind === 'demonstration') {
    const parsed = DemonstrationRecordSchema.safeParse(record);
    if (!parsed.success)
      throw new RecordValidationError(`Refusing to write an invalid demonstration: ${formatZodError(parsed.error)}`, record);
    const why = demonstrationInconsistency(parsed.data);
    if (why) throw new RecordValidationError(`Refusing to write an invalid demonstration: ${why}`, record);
    return { kind, record: parsed.data };
  }
  const withDefaults =
    record && typeof record === 'object' ? { kind: 'skip', schema: SKIP_SCHEMA, at: new Date().toISOString(), ...record } : record;
  const parsed = SkipRecordSchema.safeParse(withDefaults);
  if (!parsed.success) throw new RecordValidationError(`Refusing to write an invalid skip: ${formatZodError(parsed.error)}`, record);
  return { kind, record: parsed.data };
}

/** The key a record's timeline is stored under: the file name its `timeline_file` names, or the skipped episode's id. */
export function timelineKeyOf(checked: CheckedRecord): string {
  if (checked.kind === 'skip') return checked.record.episode_id;
  return checked.record.info.timeline_file.replace(/^.*[/\\]/, '').replace(/\.jsonl$/, '');
}

export interface EpisodeWrite {
  kind: EpisodeRecordKind;
  record: unknown;
  timeline: readonly TimelineEvent[];
  /** The timeline was appended by an earlier attempt (a retry must not append it twice). */
  timelineWritten?: boolean;
}

/**
 * Writes one finished episode into a dataset folder. `onTimelineWritten` runs once the timeline
 * is on disk (the retry queue persists that). Resolves to the record as stored.
 */
export async function storeEpisode(dir: string, w: EpisodeWrite, onTimelineWritten?: () => Promise<void> | void): Promise<CheckedRecord> {
  const checked = checkEpisodeRecord(w.kind, w.record);
  const store = new DatasetStore(dir);
  if (!w.timelineWritten && w.timeline.length > 0) {
    await store.appendTimelineEvents(timelineKeyOf(checked), w.timeline);
    await onTimelineWritten?.();
  }
  if (checked.kind === 'demonstration')
    return { kind: 'demonstration', record: await store.appendChecked('demonstration', checked.record) };
  return { kind: 'skip', record: await store.appendChecked('skip', checked.record) };
}

/** Save As…: the same checks and the same append, into a JSONL file of the user's choice (its timeline beside it as `<name>.timeline.jsonl`). */
export async function saveEpisodeAs(file: string, w: EpisodeWrite): Promise<{ file: string; timelineFile?: string }> {
  const checked = checkEpisodeRecord(w.kind, w.record);
  let timelineFile: string | undefined;
  if (w.timeline.length > 0) {
    timelineFile = file.replace(/(\.jsonl)?$/, '.timeline.jsonl');
    await appendJsonl(timelineFile, TimelineEventSchema, w.timeline, 'timeline event');
  }
  // Checked above: written as is, like storeEpisode's appendChecked.
  await appendLines(file, [JSON.stringify(checked.record)], [checked.record]);
  return { file, timelineFile };
}

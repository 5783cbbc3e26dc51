// Turns a finished episode (a RolloutResult) plus provenance into a demonstration record with
// its id, revision link and hashes filled in, so callers never compute these by hand.
import { randomUUID } from 'node:crypto';
import type { LibraryVersions, PrimitiveSpec, RolloutResult } from '../env/schemas';
import { recordHash, taskHash } from './hashing';
import { DATASET_FILES, DEMONSTRATION_SCHEMA, DemonstrationRecordSchema, type DemonstrationRecord } from './records';

export interface DemonstrationProvenance {
  session_id: string;
  annotator_id: string;
  mode: 'simulated' | 'real';
  interpreter: string;
  extension_version: string;
  env_version: string;
  started_at: string;
  submitted_at: string;
  active_ms: number;
  wall_ms: number;
  runs: number;
}

export interface CreateDemonstrationArgs {
  rollout: RolloutResult;
  /** The unbroken task script (hashed into task_hash, not stored). */
  originalScript: string;
  episodeId: string;
  seed: number;
  primitive: PrimitiveSpec;
  libraryVersions: LibraryVersions;
  provenance: DemonstrationProvenance;
  /** The submitted record this one revises (a reopened episode). */
  previous?: DemonstrationRecord;
  /** Fixed id for reproducible tests; default a fresh uuid. */
  recordId?: string;
}

export function timelineFileFor(episodeId: string): string {
  return `${DATASET_FILES.timelinesDir}/${episodeId}.jsonl`;
}

/** Builds and validates the record (throws a ZodError-backed Error on bad input). */
export function createDemonstrationRecord(args: CreateDemonstrationArgs): DemonstrationRecord {
  const th = taskHash({ script: args.originalScript, primitive: args.primitive, seed: args.seed, library_versions: args.libraryVersions });
  if (args.previous && args.previous.info.task_hash !== th) {
    throw new Error(`A revision must be of the same task: task hash ${th} differs from the revised record's ${args.previous.info.task_hash}`);
  }
  const record = {
    ...args.rollout,
    info: {
      ...args.rollout.info,
      schema: DEMONSTRATION_SCHEMA,
      record_id: args.recordId ?? randomUUID(),
      episode_id: args.episodeId,
      seed: args.seed,
      task_id: args.rollout.task_id,
      primitive: { primitive_type: args.primitive.primitive_type, params: args.primitive.params ?? {} },
      library_versions: args.libraryVersions,
      ...args.provenance,
      timeline_file: timelineFileFor(args.episodeId),
      revision: args.previous ? args.previous.info.revision + 1 : 1,
      supersedes: args.previous ? args.previous.info.record_id : null,
      task_hash: th,
      record_hash: recordHash(th, args.rollout.repair_completion),
    },
  };
  return DemonstrationRecordSchema.parse(record);
}

// The one place a demonstration record is made, for the editor (Submit, Submit Revision) and the
// CLI (`forgeenv episode --out DIR`) alike: an episode's facts plus the scored repair plus
// provenance in, a record out, with id, revision link, hashes, the timeline file and
// the breakage flag filled in, so no caller computes these by hand. The store validates it.
import { randomUUID } from 'node:crypto';
import type { EpisodeFacts, RepairEvaluation } from '../env/episode/episodeTypes';
import type { LibraryVersions, PrimitiveSpec, RolloutResult } from '../env/schemas';
import { isSuccess } from '../env/scoring/reward';
import { rawCompletion } from './completion';
import { recordHash, taskHash } from './hashing';
import { DATASET_FILES, DEMONSTRATION_SCHEMA, type DemonstrationRecord } from './records';

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

export type { EpisodeFacts } from '../env/episode/episodeTypes';

/** A resubmitted revision whose diff is the one it revises: refused, since it would add nothing. */
export class IdenticalRevisionError extends Error {
  override name = 'IdenticalRevisionError';
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

/**
 * The timeline file of one revision: `timelines/<episode_id>.jsonl` for the first, then
 * `timelines/<episode_id>.r<N>.jsonl`, so a revision's edits never mix with the original's.
 */
export function timelineFileFor(episodeId: string, revision = 1): string {
  return `${DATASET_FILES.timelinesDir}/${timelineKeyFor(episodeId, revision)}.jsonl`;
}

/** The id a timeline is stored under (DatasetStore.appendTimelineEvents). */
export function timelineKeyFor(episodeId: string, revision = 1): string {
  return revision <= 1 ? episodeId : `${episodeId}.r${revision}`;
}

/** Whether the breakage made the broken script fail; `undefined` for records written before this was recorded. */
export function breakageFailed(rec: { info: Record<string, unknown> }): boolean | undefined {
  const flag = rec.info.breakage_failed;
  if (typeof flag === 'boolean') return flag;
  const exec = rec.info.broken_execution as { exit_code?: unknown } | undefined;
  if (exec && typeof exec === 'object' && 'exit_code' in exec) return exec.exit_code !== 0;
  return undefined;
}

/**
 * Builds the record from a RolloutResult. Not validated here: every write path validates once, at
 * the store's door (episodeWriter.checkEpisodeRecord), so a record is never checked twice.
 */
export function createDemonstrationRecord(args: CreateDemonstrationArgs): DemonstrationRecord {
  const th = taskHash({ script: args.originalScript, primitive: args.primitive, seed: args.seed, library_versions: args.libraryVersions });
  const completion = rawCompletion(args.rollout.repair_completion);
  if (args.previous) {
    if (args.previous.info.task_hash !== th) {
      throw new Error(
        `A revision must be of the same task: task hash ${th} differs from the revised record's ${args.previous.info.task_hash}`,
      );
    }
    if (rawCompletion(args.previous.repair_completion) === completion) {
      throw new IdenticalRevisionError(
        `This revision's diff is identical to revision ${args.previous.info.revision} (${args.previous.info.record_id}); change the repair before submitting, or discard the revision.`,
      );
    }
  }
  const revision = args.previous ? args.previous.info.revision + 1 : 1;
  const record: DemonstrationRecord = {
    ...args.rollout,
    repair_completion: completion,
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
      timeline_file: timelineFileFor(args.episodeId, revision),
      revision,
      supersedes: args.previous ? args.previous.info.record_id : null,
      task_hash: th,
      record_hash: recordHash(th, completion),
    },
  };
  return record;
}

export interface BuildDemonstrationArgs {
  start: EpisodeFacts;
  /** The final step's evaluation: its diff is exactly what was scored, and is stored raw. */
  final: RepairEvaluation;
  provenance: DemonstrationProvenance;
  /** Extra provenance kept in `info` (client, library_snapshot, reopened_from, …). */
  info?: Record<string, unknown>;
  previous?: DemonstrationRecord;
  recordId?: string;
}

/** The demonstration of a finished episode. */
export function buildDemonstration(args: BuildDemonstrationArgs): DemonstrationRecord {
  const { start, final } = args;
  const exec = start.brokenExecution;
  const isolation = final.execution?.isolation ?? exec.isolation;
  return createDemonstrationRecord({
    rollout: {
      task_id: start.task.task_id,
      primitive_type: start.breakageSpec.primitive_type,
      drift_prompt: start.driftPrompt,
      drift_completion: start.driftCompletion,
      repair_prompt: start.repairPrompt,
      repair_completion: final.unified_diff,
      visible_reward: final.reward,
      visible_breakdown: final.reward_breakdown,
      held_out_breakdown: final.held_out_breakdown,
      success: isSuccess(final.held_out_breakdown),
      error_trace: final.error_trace,
      info: {
        target_category: start.targetCategory,
        repair_apply: final.apply,
        findings: final.findings,
        // The evidence behind `success` (what the verifier loaded and measured): auditable, re-checked by rescore.
        ...(final.verification ? { verification: final.verification } : {}),
        migration_hint: start.migrationHint ?? { shown: false },
        // A breakage that left the script running is no repair task: flagged, and kept out of training exports by default.
        breakage_failed: exec.exit_code !== 0,
        broken_execution: { exit_code: exec.exit_code, timed_out: exec.timed_out },
        // How the scored run was isolated (sandbox/): part of the demonstration's provenance.
        ...(isolation ? { isolation } : {}),
        ...args.info,
      },
    },
    originalScript: start.originalScript,
    // A revision rebuilds the episode (a new environment episode id) but stays the same episode.
    episodeId: args.previous?.info.episode_id ?? start.episodeId,
    seed: start.seed,
    primitive: start.breakageSpec,
    libraryVersions: start.libraryVersions,
    provenance: args.provenance,
    previous: args.previous,
    recordId: args.recordId,
  });
}

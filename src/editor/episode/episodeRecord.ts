// What the editor persists about the episode in progress (VS Code's workspaceState), so that a
// window reload, a crash or a restart resumes it: the environment's own EpisodeState, the
// HumanEpisodeStart that the demonstration is built from, and the editor's bookkeeping.
// Validated with zod on the way back in: a stale or hand-edited value is reported, not trusted.
import { z } from 'zod';
import { EpisodeStateSchema, RepairEvaluationSchema } from '../../env/episode/episodeTypes';
import {
  ExecutionModeSchema,
  ExecutionResultSchema,
  LibraryVersionsSchema,
  ObservationSchema,
  PrimitiveSpecSchema,
  TaskSchema,
} from '../../env/schemas';
import { DemonstrationRecordSchema } from '../../store/records';
import { SuggestionSchema, VerifiedFixSchema } from '../suggest/suggestionRecord';

/** Mirrors `HumanEpisodeStart` (src/env/episode/humanEpisode.ts). */
export const HumanEpisodeStartSchema = z.object({
  episodeId: z.string().min(1),
  seed: z.number().int().nonnegative(),
  task: TaskSchema,
  libraryVersions: LibraryVersionsSchema,
  targetCategory: z.string(),
  breakageSpec: PrimitiveSpecSchema,
  inverseSpec: PrimitiveSpecSchema,
  driftPrompt: z.string(),
  driftCompletion: z.string(),
  repairPrompt: z.string(),
  originalScript: z.string(),
  brokenScript: z.string(),
  brokenExecution: ExecutionResultSchema,
  errorTrace: z.string(),
  observation: ObservationSchema,
});

export const RunSummarySchema = z.object({
  /** 1-based run number within the episode. */
  n: z.number().int().min(1),
  at: z.string(),
  reward: z.number(),
  exit_code: z.number().int().nullable(),
  success: z.boolean(),
  wall_time_ms: z.number().nonnegative(),
});
export type RunSummary = z.infer<typeof RunSummarySchema>;

/** Where the episode's environment runs; a remote episode resumes on the server it started on. */
export const EpisodeBackendSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('embedded') }),
  z.object({ kind: z.literal('remote'), url: z.string().min(1) }),
]);
export type EpisodeBackend = z.infer<typeof EpisodeBackendSchema>;

/** A revision: the episode rebuilt from a submitted record, whose Submit supersedes that record. */
export const RevisionOfSchema = z.object({
  previous: DemonstrationRecordSchema,
  /** The dataset the revised record is in (the revision is written there, whatever forgeenv.datasetFolder says). */
  datasetDir: z.string().min(1),
});
export type RevisionOf = z.infer<typeof RevisionOfSchema>;

export const PersistedEpisodeSchema = z.object({
  version: z.literal(1),
  env: EpisodeStateSchema,
  start: HumanEpisodeStartSchema,
  /** Absolute path of the episode's `train.py`. */
  filePath: z.string().min(1),
  /** Episodes saved before remote episodes existed are embedded ones. */
  backend: EpisodeBackendSchema.default({ kind: 'embedded' }),
  /** How the episode's scripts run (fixed at start, so every run of one episode is comparable). */
  mode: ExecutionModeSchema,
  interpreter: z.string().min(1),
  startedAt: z.string(),
  activeMs: z.number().nonnegative(),
  runs: z.number().int().nonnegative(),
  runHistory: z.array(RunSummarySchema).default([]),
  /** Timeline events already written to the episode's local timeline file. */
  timelineEvents: z.number().int().nonnegative(),
  lastEvaluation: RepairEvaluationSchema.nullable(),
  /** The text that `lastEvaluation` scored (to tell whether the buffer changed since). */
  lastScoredText: z.string().nullable(),
  /** Set once the final step ran: the record to write, kept until it is safely stored. */
  pendingRecord: z.unknown().optional(),
  /** Set when this episode is a revision of a submitted demonstration. */
  revision: RevisionOfSchema.optional(),
  /** The model's suggestions asked for in this episode (Suggest Repair), in order. */
  suggestions: z.array(SuggestionSchema).max(50).optional(),
  /** The first Run & Score that succeeded: time from open, and whether a suggestion was accepted before it. */
  verifiedFix: VerifiedFixSchema.optional(),
});
export type PersistedEpisode = z.infer<typeof PersistedEpisodeSchema>;

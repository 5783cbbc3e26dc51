// Schemas of everything stored in a dataset folder (documented in docs/dataset-format.md).
// Demonstrations stay RolloutResult lines (so training code that reads ForgeEnv rollouts reads
// them as-is) with provenance in `info`; reviews, labels and skips live in their own
// append-only files, so a demonstration line is never rewritten to attach a verdict.
import { z } from 'zod';
import { ExecutionModeSchema, LibraryVersionsSchema, PrimitiveSpecSchema, RolloutResultSchema } from '../env/schemas';
import { VerificationSchema } from '../env/verify/judge';

export const DEMONSTRATION_SCHEMA = 'forgeenv.demonstration/v1';
export const SKIP_SCHEMA = 'forgeenv.skip/v1';
export const REVIEW_SCHEMA = 'forgeenv.review/v1';
export const LABEL_SCHEMA = 'forgeenv.label/v1';

/** File names inside a dataset folder. */
export const DATASET_FILES = {
  demonstrations: 'demonstrations.jsonl',
  skips: 'skips.jsonl',
  reviews: 'reviews.jsonl',
  labels: 'labels.jsonl',
  timelinesDir: 'timelines',
} as const;

export const IsoTimestamp = z.iso.datetime({ offset: true });
export const Sha256Hex = z.string().regex(/^[0-9a-f]{64}$/, 'a sha256 hex digest');
export const RecordIdSchema = z.uuid();
const NonEmpty = z.string().min(1);

/** Episode ids name timeline files, so they must be safe as a file name on every OS. */
export const EpisodeIdSchema = z
  .string()
  .regex(/^[A-Za-z0-9_-][A-Za-z0-9_.-]{0,127}$/, 'letters, digits, _ . - only (max 128), not starting with a dot');

/** A path relative to the dataset folder that cannot escape it. */
export const RelativePath = z
  .string()
  .min(1)
  .refine((p) => !/^([/\\]|[A-Za-z]:)/.test(p) && !p.split(/[/\\]/).includes('..'), 'a relative path inside the dataset folder');

export const DemonstrationInfoSchema = z
  .looseObject({
    schema: z.literal(DEMONSTRATION_SCHEMA),
    record_id: RecordIdSchema,
    episode_id: EpisodeIdSchema,
    session_id: NonEmpty,
    annotator_id: NonEmpty,
    seed: z.number().int().nonnegative(),
    task_id: NonEmpty,
    primitive: PrimitiveSpecSchema,
    library_versions: LibraryVersionsSchema,
    mode: ExecutionModeSchema,
    interpreter: NonEmpty,
    extension_version: NonEmpty,
    env_version: NonEmpty,
    started_at: IsoTimestamp,
    submitted_at: IsoTimestamp,
    /** Time the editor was focused and the annotator active (idle gaps excluded). */
    active_ms: z.number().nonnegative(),
    wall_ms: z.number().nonnegative(),
    /** How many times the annotator pressed Run & Score. */
    runs: z.number().int().nonnegative(),
    timeline_file: RelativePath,
    revision: z.number().int().min(1),
    supersedes: RecordIdSchema.nullable(),
    task_hash: Sha256Hex,
    record_hash: Sha256Hex,
    /** Whether the breakage made the broken script fail (absent in records written before it was recorded). */
    breakage_failed: z.boolean().optional(),
    /** The verifier's evidence behind `success` (absent in records written before it existed: never exported as successes). */
    verification: VerificationSchema.optional(),
  })
  .superRefine((info, ctx) => {
    // A revision chain must be walkable: only first revisions stand alone.
    if ((info.revision === 1) !== (info.supersedes === null)) {
      ctx.addIssue({
        code: 'custom',
        path: ['supersedes'],
        message: 'revision 1 has supersedes=null; later revisions name the record they replace',
      });
    }
    if (info.supersedes === info.record_id) {
      ctx.addIssue({ code: 'custom', path: ['supersedes'], message: 'a record cannot supersede itself' });
    }
  });
export type DemonstrationInfo = z.infer<typeof DemonstrationInfoSchema>;

export const DemonstrationRecordSchema = RolloutResultSchema.extend({ info: DemonstrationInfoSchema }).superRefine((rec, ctx) => {
  if (rec.task_id !== rec.info.task_id)
    ctx.addIssue({ code: 'custom', path: ['info', 'task_id'], message: `differs from task_id "${rec.task_id}"` });
  if (rec.primitive_type !== rec.info.primitive.primitive_type) {
    ctx.addIssue({
      code: 'custom',
      path: ['info', 'primitive', 'primitive_type'],
      message: `differs from primitive_type "${rec.primitive_type}"`,
    });
  }
});
export type DemonstrationRecord = z.infer<typeof DemonstrationRecordSchema>;

export const SKIP_REASONS = ['too_hard', 'unclear_task', 'broken_environment', 'not_a_real_drift', 'other'] as const;
export const SkipReasonSchema = z.enum(SKIP_REASONS);
export type SkipReason = z.infer<typeof SkipReasonSchema>;

export const SkipRecordSchema = z.object({
  kind: z.literal('skip'),
  schema: z.literal(SKIP_SCHEMA),
  episode_id: EpisodeIdSchema,
  task_id: NonEmpty,
  primitive: PrimitiveSpecSchema,
  reason: SkipReasonSchema,
  note: z.string().default(''),
  annotator_id: NonEmpty,
  at: IsoTimestamp,
  session_id: NonEmpty.optional(),
  seed: z.number().int().nonnegative().optional(),
});
export type SkipRecord = z.infer<typeof SkipRecordSchema>;

export const ReviewVerdictSchema = z.enum(['approve', 'reject']);
export type ReviewVerdict = z.infer<typeof ReviewVerdictSchema>;

export const ReviewRecordSchema = z.object({
  kind: z.literal('review'),
  schema: z.literal(REVIEW_SCHEMA),
  review_id: z.uuid(),
  record_id: z.uuid(),
  reviewer: NonEmpty,
  verdict: ReviewVerdictSchema,
  comment: z.string().default(''),
  at: IsoTimestamp,
});
export type ReviewRecord = z.infer<typeof ReviewRecordSchema>;

export const LabelTargetSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('task'), task_id: NonEmpty }).strict(),
  z.object({ type: z.literal('demonstration'), record_id: z.uuid() }).strict(),
]);
export type LabelTarget = z.infer<typeof LabelTargetSchema>;

export const LabelRecordSchema = z.object({
  kind: z.literal('label'),
  schema: z.literal(LABEL_SCHEMA),
  label_id: z.uuid(),
  target: LabelTargetSchema,
  /** 1 easy, 2 medium, 3 hard (as the labeler perceived it, not the line-count difficulty). */
  difficulty: z.union([z.literal(1), z.literal(2), z.literal(3)]),
  tags: z.array(NonEmpty).default([]),
  /** Likert 1 (guessing) .. 5 (certain): integers are easier to pick consistently than a 0..1 slider. */
  confidence: z.number().int().min(1).max(5),
  note: z.string().default(''),
  labeler: NonEmpty,
  at: IsoTimestamp,
});
export type LabelRecord = z.infer<typeof LabelRecordSchema>;

/** Key of the "latest label wins" map: `task:<task_id>` or `demonstration:<record_id>`. */
export function labelTargetKey(target: LabelTarget): string {
  return target.type === 'task' ? `task:${target.task_id}` : `demonstration:${target.record_id}`;
}

const PositionSchema = z.object({ line: z.number().int().nonnegative(), character: z.number().int().nonnegative() });
export const TextChangeSchema = z.object({
  range: z.object({ start: PositionSchema, end: PositionSchema }),
  text: z.string(),
});

/** One editor event; extra keys (file, run result, …) are kept. */
export const TimelineEventSchema = z.looseObject({
  /** Milliseconds since the episode started. */
  t_ms: z.number().nonnegative(),
  kind: z.enum(['change', 'run', 'focus', 'blur', 'save']),
  changes: z.array(TextChangeSchema).optional(),
});
export type TimelineEvent = z.infer<typeof TimelineEventSchema>;

function field(json: unknown, ...path: string[]): unknown {
  let v = json;
  for (const k of path) v = v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>)[k] : undefined;
  return v;
}

/** Describes a line that is some other record kind or schema version, for clearer problem reports. */
export function foreignDemonstration(json: unknown): string | undefined {
  const kind = field(json, 'kind');
  if (typeof kind === 'string') return `a "${kind}" record`;
  const schema = field(json, 'info', 'schema');
  if (typeof schema === 'string' && schema !== DEMONSTRATION_SCHEMA)
    return `schema "${schema}" (this version reads ${DEMONSTRATION_SCHEMA})`;
  if (field(json, 'info') !== undefined && schema === undefined && typeof field(json, 'repair_completion') === 'string')
    return 'a plain RolloutResult without demonstration provenance (info.schema missing)';
  return undefined;
}

/** Same for the side files, whose lines carry `kind` and `schema` at the top level. */
export function foreignSideRecord(kind: string, schema: string): (json: unknown) => string | undefined {
  return (json) => {
    const k = field(json, 'kind');
    const sc = field(json, 'schema');
    if (typeof k === 'string' && k !== kind) return `a "${k}" record`;
    if (k === undefined && typeof field(json, 'info', 'schema') === 'string') return 'a demonstration';
    if (typeof sc === 'string' && sc !== schema) return `schema "${sc}" (this version reads ${schema})`;
    return undefined;
  };
}

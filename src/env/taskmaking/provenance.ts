// What make-task records in a task's tasks.json entry: every adaptation it made to get the script
// running (the error it recognised, the rule, what changed) and the verdict of its verification.
// Zod only, so tasks.ts can validate entries without pulling in the pipeline.
import { z } from 'zod';

export const ADAPTATION_KINDS = ['args', 'env', 'files', 'layout', 'snapshot', 'verify', 'hub', 'runtime', 'mount'] as const;

export const AdaptationSchema = z
  .object({
    /** The run after which it was made (0: before the first run, e.g. a bounded run or the layout). */
    round: z.number().int().min(0),
    /** The rule's id (src/env/taskmaking/rules.ts). */
    rule: z.string().min(1),
    kind: z.enum(ADAPTATION_KINDS),
    /** The recognised error line (or what prompted a proactive change). */
    error: z.string().max(1000),
    /** What changed, in words: `--bf16 false`, `SM_MODEL_DIR=out/model`. */
    change: z.string().min(1).max(1000),
  })
  .strict();
export type Adaptation = z.infer<typeof AdaptationSchema>;

export const BreakageCheckSchema = z
  .object({
    primitive_type: z.string(),
    drift_id: z.string().optional(),
    /** The broken script failed. */
    broke: z.boolean(),
    /** Its error names the changed API (a name from the breakage's params). */
    names_api: z.boolean(),
    /** The oracle repair passed the verifier. */
    oracle_verified: z.boolean(),
    error: z.string().max(1000).optional(),
    note: z.string().max(1000).optional(),
  })
  .strict();
export type BreakageCheck = z.infer<typeof BreakageCheckSchema>;

export const MakeTaskVerdictSchema = z
  .object({
    mode: z.enum(['real', 'simulated']),
    snapshot: z.string(),
    /** Clean runs of the original with a verified model, out of the runs made. */
    original_runs: z.object({ verified: z.number().int().min(0), of: z.number().int().min(0) }).strict(),
    breakages: z.array(BreakageCheckSchema),
    /** Why the original's own verification (the reference, checked first) failed: then no breakage ran. */
    reference_note: z.string().max(1000).optional(),
    /** Original verified 3/3 and at least two breakages verified. */
    verified: z.boolean(),
    checked_at: z.string(),
  })
  .strict();
export type MakeTaskVerdict = z.infer<typeof MakeTaskVerdictSchema>;

/** A natural-drift task: the original, unchanged, at a later snapshot where it fails for real. */
export const NaturalDriftSchema = z
  .object({
    /** The snapshot the script runs at (its era). */
    from_snapshot: z.string(),
    /** The snapshot the task's episodes run at (the task's library_versions), where it fails. */
    to_snapshot: z.string(),
    /** The real error at `to_snapshot` (last traceback line). */
    error: z.string().max(1000),
    /** Verified: it ran at `from_snapshot` and failed at `to_snapshot` with a real library error. */
    verified: z.boolean(),
    /** Set once a repair made it run at `to_snapshot` (a human's demonstration or a reference repair). */
    solved: z.boolean().default(false),
    /** The repair that solved it: a unified diff from the original (the episode's oracle once recorded). */
    reference_repair: z.string().max(262_144).optional(),
    /** Who solved it: a human's demonstration or a stored reference repair. */
    solved_by: z.enum(['human', 'reference']).optional(),
  })
  .strict();
export type NaturalDrift = z.infer<typeof NaturalDriftSchema>;

// Quick acceptance checks for parsed JSONL lines on read-only hot paths (the summary). Each check
// answers "certainly valid" or "not sure": it never accepts a value its zod schema rejects, and
// whatever it does not accept goes through the full schema, so problems keep zod's wording. Zod
// builds an output object per level and runs every check through its issue machinery, which
// costs as much as JSON.parse of a whole 10 KiB line; these are plain property checks, with the
// zod leaf schemas themselves for the formats (uuid, timestamps), so the formats cannot drift.
// test/unit/quickCheck.test.ts holds each check to its schema on valid and mutated records.
import { LibraryVersionsSchema } from '../env/schemas';
import {
  DEMONSTRATION_SCHEMA,
  EpisodeIdSchema,
  IsoTimestamp,
  RecordIdSchema,
  RelativePath,
  REVIEW_SCHEMA,
  SKIP_REASONS,
  SKIP_SCHEMA,
} from './records';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStr = (v: unknown): v is string => typeof v === 'string';
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.length > 0;
const optStr = (v: unknown): boolean => v === undefined || typeof v === 'string';
// zod 4: numbers are finite, `.int()` means a safe integer.
const isNum = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
const nonNeg = (v: unknown): boolean => isNum(v) && v >= 0;
const nonNegInt = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
/** Sha256Hex's `^[0-9a-f]{64}$`, by char codes (a regex test per hash was a tenth of a cold summary). */
const sha = (v: unknown): boolean => {
  if (!isStr(v) || v.length !== 64) return false;
  for (let i = 0; i < 64; i++) {
    const c = v.charCodeAt(i);
    if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
  }
  return true;
};
const uuid = (v: unknown): boolean => isStr(v) && RecordIdSchema.safeParse(v).success;
const timestamp = (v: unknown): boolean => isStr(v) && IsoTimestamp.safeParse(v).success;

function numberRecord(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) if (!isNum(v[k])) return false;
  return true;
}

// Library snapshots repeat across a folder: each distinct name and version is checked once.
const versionKeyOk = cachedCheck((k) => LibraryVersionsSchema.keyType.safeParse(k).success);
const versionOk = cachedCheck((v) => LibraryVersionsSchema.valueType.safeParse(v).success);

function cachedCheck(check: (s: string) => boolean): (s: string) => boolean {
  const seen = new Map<string, boolean>();
  return (s) => {
    let ok = seen.get(s);
    if (ok === undefined) {
      ok = check(s);
      if (seen.size < 10_000) seen.set(s, ok);
    }
    return ok;
  };
}

function libraryVersions(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k in v) {
    const x = v[k];
    if (!isStr(x) || !versionKeyOk(k) || !versionOk(x)) return false;
  }
  return true;
}

const VERIFICATION_FLAGS = ['verified', 'loaded', 'trained', 'in_range'] as const;
const VERIFICATION_TEXTS = ['artifact', 'loaded_with'] as const;
const VERIFICATION_NUMBERS = ['trained_loss', 'untrained_loss', 'reference_loss', 'reference_untrained_loss'] as const;

/** VerificationSchema (verify/judge.ts), field by field. */
function verification(v: unknown): boolean {
  if (!isObj(v)) return false;
  for (const k of VERIFICATION_FLAGS) if (typeof v[k] !== 'boolean') return false;
  for (const k of VERIFICATION_TEXTS) if (!optStr(v[k])) return false;
  if (v.check !== undefined && v.check !== 'held_out_loss' && v.check !== 'weights_moved') return false;
  for (const k of VERIFICATION_NUMBERS) if (v[k] !== undefined && !isNum(v[k])) return false;
  return v.findings === undefined || (Array.isArray(v.findings) && v.findings.every(isStr));
}

function primitiveSpec(v: unknown): boolean {
  if (!isObj(v)) return false;
  if (!nonEmpty(v.primitive_type) || !optStr(v.category) || !optStr(v.drift_id)) return false;
  if (v.params !== undefined && !isObj(v.params)) return false;
  return v.provenance === undefined || v.provenance === 'real' || v.provenance === 'synthetic';
}

/** True only if DemonstrationRecordSchema accepts `json` (every field, refinements included; not the record hash). */
export function quickDemonstration(json: unknown): boolean {
  if (!isObj(json)) return false;
  const r = json;
  if (
    !isStr(r.task_id) ||
    !isStr(r.primitive_type) ||
    !isStr(r.drift_prompt) ||
    !isStr(r.drift_completion) ||
    !isStr(r.repair_prompt) ||
    !isStr(r.repair_completion)
  )
    return false;
  if (!isNum(r.visible_reward) || typeof r.success !== 'boolean' || !optStr(r.error_trace)) return false;
  if (!numberRecord(r.visible_breakdown) || !numberRecord(r.held_out_breakdown)) return false;
  const i = r.info;
  if (!isObj(i)) return false;
  if (i.schema !== DEMONSTRATION_SCHEMA || !nonEmpty(i.session_id) || !nonEmpty(i.annotator_id) || !nonEmpty(i.task_id)) return false;
  if (!nonEmpty(i.interpreter) || !nonEmpty(i.extension_version) || !nonEmpty(i.env_version)) return false;
  if (i.mode !== 'simulated' && i.mode !== 'real') return false;
  if (!nonNegInt(i.seed) || !nonNegInt(i.runs) || !nonNeg(i.active_ms) || !nonNeg(i.wall_ms)) return false;
  if (!Number.isSafeInteger(i.revision) || (i.revision as number) < 1) return false;
  if (i.breakage_failed !== undefined && typeof i.breakage_failed !== 'boolean') return false;
  if (i.verification !== undefined && !verification(i.verification)) return false;
  if (!sha(i.task_hash) || !sha(i.record_hash)) return false;
  // Refinements: only first revisions stand alone, and none supersedes itself.
  if ((i.revision === 1) !== (i.supersedes === null) || i.supersedes === i.record_id) return false;
  if (r.task_id !== i.task_id) return false;
  if (!primitiveSpec(i.primitive) || (i.primitive as Obj).primitive_type !== r.primitive_type) return false;
  if (!libraryVersions(i.library_versions)) return false;
  if (!isStr(i.episode_id) || !EpisodeIdSchema.safeParse(i.episode_id).success) return false;
  if (!isStr(i.timeline_file) || !RelativePath.safeParse(i.timeline_file).success) return false;
  if (!uuid(i.record_id) || (i.supersedes !== null && !uuid(i.supersedes))) return false;
  return timestamp(i.started_at) && timestamp(i.submitted_at);
}

/** True only if SkipRecordSchema accepts `json`. */
export function quickSkip(json: unknown): boolean {
  if (!isObj(json)) return false;
  const s = json;
  if (s.kind !== 'skip' || s.schema !== SKIP_SCHEMA || !nonEmpty(s.task_id) || !nonEmpty(s.annotator_id) || !optStr(s.note)) return false;
  if (!(SKIP_REASONS as readonly unknown[]).includes(s.reason)) return false;
  if (s.session_id !== undefined && !nonEmpty(s.session_id)) return false;
  if (s.seed !== undefined && !nonNegInt(s.seed)) return false;
  if (!primitiveSpec(s.primitive)) return false;
  return isStr(s.episode_id) && EpisodeIdSchema.safeParse(s.episode_id).success && timestamp(s.at);
}

/** True only if ReviewRecordSchema accepts `json`. */
export function quickReview(json: unknown): boolean {
  if (!isObj(json)) return false;
  const r = json;
  if (r.kind !== 'review' || r.schema !== REVIEW_SCHEMA || !nonEmpty(r.reviewer) || !optStr(r.comment)) return false;
  if (r.verdict !== 'approve' && r.verdict !== 'reject') return false;
  return uuid(r.review_id) && uuid(r.record_id) && timestamp(r.at);
}

// Content hashes for deduplication. A task hash identifies "the same puzzle" (same original
// script, same breakage, same seed, same library snapshot); a record hash identifies "the same
// answer to the same puzzle". Both are sha256 over canonical JSON, so key order and
// whitespace in the inputs never change them.
import * as crypto from 'node:crypto';
import { createHash } from 'node:crypto';
import type { LibraryVersions } from '../env/schemas';

/** Bumped only if the hashed fields change; old hashes then stop matching on purpose. */
const HASH_VERSION = 1;

/** JSON with object keys sorted at every level and no whitespace. Rejects what JSON cannot represent faithfully. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value === 'boolean' || typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value}`);
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  if (typeof value === 'object') {
    const obj = value as Record<string, unknown>;
    const parts = Object.keys(obj)
      .filter((k) => obj[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`);
    return `{${parts.join(',')}}`;
  }
  throw new TypeError(`canonicalJson: cannot encode a ${typeof value}`);
}

export function sha256Hex(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

export interface TaskHashInput {
  /** The original (unbroken) script. */
  script: string;
  /** Only `primitive_type` and `params` count; `category` follows from the type. */
  primitive: { primitive_type: string; params?: Record<string, unknown> };
  seed: number;
  library_versions: LibraryVersions;
}

export function taskHash(input: TaskHashInput): string {
  return sha256Hex(
    canonicalJson({
      v: HASH_VERSION,
      script: input.script,
      primitive: { primitive_type: input.primitive.primitive_type, params: input.primitive.params ?? {} },
      seed: input.seed,
      library_versions: input.library_versions,
    }),
  );
}

const oneShot = (crypto as { hash?: (alg: string, data: string, enc: 'hex') => string }).hash;

/**
 * The diff is hashed byte for byte: it is exactly what was scored. Plain concatenation is
 * unambiguous (the task hash is 64 hex digits, no newline) and avoids re-escaping large diffs.
 */
export function recordHash(taskHashHex: string, diff: string): string {
  const text = `forgeenv.record/v${HASH_VERSION}\n${taskHashHex}\n${diff}`;
  // One-shot hashing (Node >= 20.12) skips a Hash object per record: same bytes, same digest.
  return oneShot ? oneShot('sha256', text, 'hex') : createHash('sha256').update(text, 'utf8').digest('hex');
}

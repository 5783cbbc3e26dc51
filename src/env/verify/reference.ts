// The unbroken original's own verification, computed once per (script, check, mode, snapshot,
// interpreter, args, files) and shared by every environment of the process (a server holds one per
// session): the band a repair's artifact must land in. Only a finished computation is kept; a
// cancelled or crashed one is tried again next time.
import { createHash } from 'node:crypto';
import type { VerifierOutcome } from './verifier';

const cache = new Map<string, Promise<VerifierOutcome>>();
const MAX_ENTRIES = 256;
const TRANSIENT = /\b(cancelled|timed out)\b/;

export interface ReferenceKey {
  task_id: string;
  original: string;
  verify: unknown;
  mode: string;
  interpreter: string | undefined;
  library_versions: unknown;
  args: unknown;
  files: unknown;
}

function keyOf(k: ReferenceKey): string {
  return createHash('sha256')
    .update(JSON.stringify([k.task_id, k.original, k.verify, k.mode, k.interpreter ?? '', k.library_versions, k.args ?? [], k.files ?? {}]))
    .digest('hex');
}

export async function referenceOutcome(
  key: ReferenceKey,
  compute: () => Promise<VerifierOutcome>,
  signal?: AbortSignal,
): Promise<VerifierOutcome> {
  const k = keyOf(key);
  let pending = cache.get(k);
  if (!pending) {
    pending = compute();
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value as string);
    cache.set(k, pending);
  }
  try {
    const outcome = await pending;
    // A cancelled or timed-out computation (its own run's or the verifier's) is no answer: forget it,
    // so the next episode computes it for real.
    if (signal?.aborted || (!outcome.ok && TRANSIENT.test(outcome.reason))) cache.delete(k);
    return outcome;
  } catch (e) {
    cache.delete(k);
    throw e;
  }
}

/** Forgets every reference (tests, and `rescore` after the libraries changed). */
export function clearReferences(): void {
  cache.clear();
}

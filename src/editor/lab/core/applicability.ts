// Which breakage primitives can act on a script, and where. The editor reads only the
// registry (names, descriptions, params schemas, candidates), so a primitive added to the
// environment appears here with no editor change. No vscode import.
import { applicablePrimitives, breakagePrimitives } from '../../../env/primitives/registry';
import type { Primitive, PrimitiveCandidate } from '../../../env/primitives/types';
import type { LibraryVersions } from '../../../env/schemas';
import { throwIfAborted, yieldToEventLoop } from './computeCache';

export interface ApplicablePrimitive {
  primitive: Primitive;
  candidates: PrimitiveCandidate[];
}

/**
 * Same answer as the registry's `applicablePrimitives`, computed one primitive at a time with a
 * yield in between, so a 2,000-line file never blocks the extension host for the whole scan and
 * a stale scan stops as soon as the document changes.
 */
export async function computeApplicable(script: string, versions?: LibraryVersions, signal?: AbortSignal): Promise<ApplicablePrimitive[]> {
  const out: ApplicablePrimitive[] = [];
  for (const primitive of breakagePrimitives()) {
    await yieldToEventLoop();
    throwIfAborted(signal);
    let candidates: PrimitiveCandidate[];
    try {
      candidates = primitive.candidates(script, versions);
    } catch {
      // A primitive that cannot read this script simply does not apply to it.
      candidates = [];
    }
    if (candidates.length) out.push({ primitive, candidates });
  }
  return out;
}

/** The registry's own synchronous answer (for tests and small scripts). */
export function applicableNow(script: string, versions?: LibraryVersions): ApplicablePrimitive[] {
  return applicablePrimitives(script, versions).map((a) => ({ primitive: a.primitive, candidates: a.candidates }));
}

/**
 * Primitives with at least one candidate whose source range meets [from, to] (character
 * offsets). An empty selection is a cursor: a candidate containing it (ends included) counts.
 */
export function intersectingCandidates(applicable: readonly ApplicablePrimitive[], from: number, to: number): ApplicablePrimitive[] {
  const hits = (c: PrimitiveCandidate) => (from === to ? c.from <= from && from <= c.to : c.from < to && from < c.to);
  return applicable.map((a) => ({ primitive: a.primitive, candidates: a.candidates.filter(hits) })).filter((a) => a.candidates.length > 0);
}

// Adapter from the environment's drift table to the identifiers snapshot-drift explanations
// match on. Filled in from src/env/drift/driftTable.ts.
import type { DriftTableHint } from './knownChanges';

export function driftTableHints(): DriftTableHint[] {
  return [];
}

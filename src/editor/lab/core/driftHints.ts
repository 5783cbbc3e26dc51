// Adapter from the environment's drift table (src/env/drift/driftTable.ts) to the identifiers
// that snapshot-drift explanations match error messages on: every identifier-like string in an
// entry's params (both the current and the drifted form), dotted names also by their last part.
import { DRIFT_TABLE, type DriftEntry } from '../../../env/drift/driftTable';
import type { DriftTableHint } from './knownChanges';

function identifiersOf(params: Record<string, unknown>): string[] {
  const out = new Set<string>();
  for (const v of Object.values(params)) {
    if (typeof v !== 'string') continue;
    for (const m of v.matchAll(/[A-Za-z_][\w.]*/g)) {
      const name = m[0];
      // Keywords and literals in params (e.g. `True`, `from x import y`) are not names an error would quote.
      if (['True', 'False', 'None', 'from', 'import'].includes(name)) continue;
      out.add(name);
      const tail = name.split('.').pop();
      if (tail && tail !== name) out.add(tail);
    }
  }
  return [...out];
}

export function hintsFromDriftTable(table: readonly DriftEntry[]): DriftTableHint[] {
  return table.map((d) => ({ names: identifiersOf(d.params), description: d.description, library: d.library, when: d.changedIn }));
}

let cached: DriftTableHint[] | undefined;
export function driftTableHints(): DriftTableHint[] {
  cached ??= hintsFromDriftTable(DRIFT_TABLE);
  return cached;
}

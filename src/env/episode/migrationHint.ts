// The optional repair hint: the release's own deprecation or migration note for the episode's
// drift, taken from the drift catalog (resources/drifts/catalog.json). Off by default, because a
// hinted demonstration teaches a different skill; whether it was shown is recorded in every
// demonstration (`info.migration_hint`), so hinted and unhinted data can be told apart.
import { findDriftEntry, type SpecLike } from '../fidelity/catalog';

export interface MigrationHint {
  /** True when the note was put in the repair prompt. */
  shown: boolean;
  /** The catalog entry the note came from (also when hints are off but the drift is catalogued). */
  drift_id?: string;
  text?: string;
}

/** The hint for a breakage spec; `enabled` false still names the matching catalog entry. */
export function migrationHint(spec: SpecLike, enabled: boolean): MigrationHint {
  let entry;
  try {
    entry = findDriftEntry(spec);
  } catch {
    entry = undefined; // an unreadable catalog never stops an episode; it only loses the hint
  }
  if (!entry) return { shown: false };
  return enabled && entry.note.trim() ? { shown: true, drift_id: entry.id, text: entry.note.trim() } : { shown: false, drift_id: entry.id };
}

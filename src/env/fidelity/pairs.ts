// Which two snapshots check a catalog entry: the last one whose release of the entry's library is
// older than `changed_in`, and the first one at or after it.
import type { Snapshot } from '../snapshots/registry';
import { compareDotted, type DriftEntry } from './catalog';

export interface SnapshotPair {
  before?: string;
  after?: string;
}

export function snapshotPairFor(entry: Pick<DriftEntry, 'library' | 'changed_in'>, snapshots: readonly Snapshot[]): SnapshotPair {
  const pair: SnapshotPair = {};
  const ordered = [...snapshots].sort((a, b) => a.date.localeCompare(b.date));
  for (const s of ordered) {
    const v = s.versions[entry.library];
    if (!v) continue;
    if (compareDotted(v, entry.changed_in) < 0) pair.before = s.id;
    else if (!pair.after) pair.after = s.id;
  }
  return pair;
}

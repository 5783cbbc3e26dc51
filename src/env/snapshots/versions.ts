// Library version snapshots: dated sets of real releases, defined in
// resources/snapshots/snapshots.json (see docs/snapshots.md and src/env/snapshots/registry.ts). Each
// snapshot's pins are computed from its cut-off date (`forgeenv snapshots pin`): the releases current
// on that day, resolved together by uv.
import type { LibraryVersions } from '../schemas';
import { derivedIdOfVersions } from './derived';
import { allSnapshots, getSnapshot, snapshotsFile } from './registry';

/** A snapshot id (a YYYY-MM date); the known ones are SNAPSHOT_IDS. */
export type SnapshotId = string;

function loadIds(): readonly [SnapshotId, ...SnapshotId[]] {
  const [first, ...rest] = allSnapshots().map((s) => s.id);
  if (first === undefined) throw new Error('snapshots.json defines no snapshot');
  return [first, ...rest];
}

/** Snapshot ids, oldest first. */
export const SNAPSHOT_IDS: readonly [SnapshotId, ...SnapshotId[]] = loadIds();

export const LIBRARY_SNAPSHOTS: Readonly<Record<SnapshotId, Readonly<LibraryVersions>>> = Object.fromEntries(
  allSnapshots().map((s) => [s.id, Object.freeze({ ...s.versions })]),
);

/** The newest snapshot (snapshots.json lists them oldest first). */
export const LATEST_SNAPSHOT: SnapshotId = SNAPSHOT_IDS[SNAPSHOT_IDS.length - 1];

/** The snapshot built-in corpus scripts are written against unless their metadata says otherwise (snapshots.json `corpus_snapshot`). */
export const CORPUS_SNAPSHOT: SnapshotId = snapshotsFile().corpus_snapshot ?? LATEST_SNAPSHOT;

export function snapshotVersions(id: SnapshotId = CORPUS_SNAPSHOT): LibraryVersions {
  return { ...getSnapshot(id).versions };
}

/** The snapshot id whose versions equal `v` exactly, else the derived environment's (derived.ts), if any. */
export function snapshotIdOf(v: LibraryVersions): SnapshotId | undefined {
  return (
    SNAPSHOT_IDS.find((id) => {
      const s = LIBRARY_SNAPSHOTS[id];
      const keys = new Set([...Object.keys(s), ...Object.keys(v)]);
      return [...keys].every((k) => s[k] === v[k]);
    }) ?? derivedIdOfVersions(v, allSnapshots())
  );
}

/** Numeric comparison of dotted versions: -1, 0 or 1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  return 0;
}

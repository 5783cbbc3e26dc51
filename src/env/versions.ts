// Library version snapshots. The first four columns are the original ForgeEnv's
// (transformers 4.36/4.40/4.45/4.50, datasets 2.14/2.18/3.0/3.2, trl 0.7/0.8/0.10/0.12);
// torch, peft and evaluate are ours, picked from the same release months.
import type { LibraryVersions } from './schemas';

export const SNAPSHOT_IDS = ['2023-12', '2024-04', '2024-09', '2025-03'] as const;
export type SnapshotId = (typeof SNAPSHOT_IDS)[number];

export const LIBRARY_SNAPSHOTS: Readonly<Record<SnapshotId, Readonly<LibraryVersions>>> = {
  '2023-12': { transformers: '4.36.0', datasets: '2.14.0', trl: '0.7.0', torch: '2.1.0', peft: '0.7.0', evaluate: '0.4.1' },
  '2024-04': { transformers: '4.40.0', datasets: '2.18.0', trl: '0.8.0', torch: '2.2.0', peft: '0.10.0', evaluate: '0.4.1' },
  '2024-09': { transformers: '4.45.0', datasets: '3.0.0', trl: '0.10.0', torch: '2.4.0', peft: '0.12.0', evaluate: '0.4.3' },
  '2025-03': { transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0', torch: '2.5.0', peft: '0.14.0', evaluate: '0.4.3' },
};

/** The snapshot corpus scripts are written against unless their metadata says otherwise. */
export const LATEST_SNAPSHOT: SnapshotId = '2025-03';

export function snapshotVersions(id: SnapshotId = LATEST_SNAPSHOT): LibraryVersions {
  return { ...LIBRARY_SNAPSHOTS[id] };
}

/** The snapshot id whose versions equal `v` exactly, if any. */
export function snapshotIdOf(v: LibraryVersions): SnapshotId | undefined {
  return SNAPSHOT_IDS.find((id) => {
    const s = LIBRARY_SNAPSHOTS[id];
    const keys = new Set([...Object.keys(s), ...Object.keys(v)]);
    return [...keys].every((k) => s[k] === v[k]);
  });
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

// Derived environments: a snapshot with some libraries taken from other snapshots, for a script written against a
// mix of eras (`2025-03+datasets@2.20.0`). Each override is a release an existing snapshot pins, so its API data is
// recorded; the id is stable (overrides sorted by library), so the venv and the local hub are keyed by it like a
// snapshot's. Pure over the snapshot list: registry.ts composes them in `getSnapshot`.
import { z } from 'zod';
import type { Snapshot } from './registry';

const LIBRARY = /^[a-z_][a-z0-9_]*$/;
const VERSION = /^\d+(\.\d+)*$/;

/** A derived environment as a task records it (tasks.json `environment`). */
export const DerivedEnvironmentSchema = z
  .object({
    /** The stable id (`<base>+<lib>@<version>…`), what real mode keys the venv and the local hub by. */
    id: z.string().min(1),
    base: z.string().regex(/^\d{4}-\d{2}$/, 'a snapshot id such as 2025-03'),
    /** Import name -> the release taken instead of the base's (one that another snapshot pins). */
    overrides: z.record(z.string().regex(LIBRARY, 'an import name'), z.string().regex(VERSION, 'a dotted version')),
  })
  .strict()
  .refine((d) => Object.keys(d.overrides).length > 0, 'a derived environment overrides at least one library')
  .refine((d) => d.id === derivedId(d.base, d.overrides), 'id must be <base>+<library>@<version>… with the libraries sorted');
export type DerivedEnvironment = z.infer<typeof DerivedEnvironmentSchema>;

/** The stable id of a base snapshot with overrides: `2025-03+datasets@2.20.0+trl@0.9.4` (libraries sorted). */
export function derivedId(base: string, overrides: Readonly<Record<string, string>>): string {
  const parts = Object.keys(overrides)
    .sort()
    .map((lib) => `+${lib}@${overrides[lib]}`);
  return `${base}${parts.join('')}`;
}

/** True when `id` has the shape of a derived id (whether or not its parts are known). */
export const isDerivedId = (id: string): boolean => id.includes('+');

/** `id` split into base and overrides; throws a message naming what is wrong. */
export function parseDerivedId(id: string): { base: string; overrides: Record<string, string> } {
  const [base, ...rest] = id.split('+');
  const overrides: Record<string, string> = {};
  for (const part of rest) {
    const m = /^([a-z_][a-z0-9_]*)@(\d+(?:\.\d+)*)$/.exec(part);
    if (!m) throw new Error(`"${part}" in "${id}" is not <library>@<version> (e.g. datasets@2.20.0)`);
    if (overrides[m[1]] !== undefined) throw new Error(`"${id}" overrides ${m[1]} twice`);
    overrides[m[1]] = m[2];
  }
  if (!rest.length) throw new Error(`"${id}" overrides no library`);
  return { base, overrides };
}

/** The distribution a requirement string names (`datasets[audio]>=2` → `datasets`), lower case. */
const requirementName = (r: string): string =>
  r
    .split(/[[<>=!~; ]/)[0]
    .toLowerCase()
    .replace(/_/g, '-');

/** The snapshot among `snapshots` that pins `lib` at `version` (the oldest, when several do). */
export function pinningSnapshot(snapshots: readonly Snapshot[], lib: string, version: string): Snapshot | undefined {
  return snapshots.find((s) => s.versions[lib] === version);
}

/**
 * The derived environment `id` as a snapshot: the base's pins with the overrides, installed with the
 * `--exclude-newer` of the newest snapshot any pin comes from (a later release's dependencies were current then), the
 * base's extra requirements. Throws (naming the known releases) for an unknown base, library or release.
 */
export function composeDerived(id: string, snapshots: readonly Snapshot[]): Snapshot {
  const { base, overrides } = parseDerivedId(id);
  const b = snapshots.find((s) => s.id === base);
  if (!b)
    throw new Error(
      `derived environment "${id}": unknown base snapshot "${base}"; known snapshots: ${snapshots.map((s) => s.id).join(', ')}`,
    );
  if (derivedId(base, overrides) !== id)
    throw new Error(`derived environment "${id}": write it as ${derivedId(base, overrides)} (libraries sorted)`);
  let newest = b;
  for (const [lib, version] of Object.entries(overrides)) {
    if (b.versions[lib] === undefined) throw new Error(`derived environment "${id}": snapshot ${base} pins no ${lib}`);
    if (b.versions[lib] === version) throw new Error(`derived environment "${id}": ${base} already pins ${lib} ${version}`);
    const from = pinningSnapshot(snapshots, lib, version);
    if (!from) {
      const pinned = [...new Set(snapshots.map((s) => s.versions[lib]).filter(Boolean))].join(', ');
      throw new Error(`derived environment "${id}": no snapshot pins ${lib} ${version} (its API is not recorded); pinned: ${pinned}`);
    }
    if (from.cutoff > newest.cutoff) newest = from;
  }
  // An override keeps the extras its own era installs it with (`datasets[audio]`: 2.x decodes audio with librosa).
  const carried = Object.keys(overrides).flatMap((lib) =>
    pinningSnapshot(snapshots, lib, overrides[lib])!.extra_requirements.filter((r) => requirementName(r) === lib.replace(/_/g, '-')),
  );
  return {
    ...b,
    id,
    cutoff: newest.cutoff,
    extra_requirements: [...new Set([...b.extra_requirements, ...carried])],
    note: `derived from ${base}: ${Object.entries(overrides)
      .map(([lib, v]) => `${lib} ${v}`)
      .join(', ')} from the snapshots that pin them`,
    versions: { ...b.versions, ...overrides },
    // The torch actually installed follows the pin when torch itself is overridden.
    torch_runtime: overrides.torch !== undefined ? undefined : b.torch_runtime,
  };
}

/** The snapshot whose recorded API data describes `lib` in environment `id` (itself for a plain snapshot). */
export function apiSourceOf(id: string, lib: string, snapshots: readonly Snapshot[]): string {
  if (!isDerivedId(id)) return id;
  const { base, overrides } = parseDerivedId(id);
  const version = overrides[lib];
  return version === undefined ? base : (pinningSnapshot(snapshots, lib, version)?.id ?? base);
}

/**
 * The derived id whose pins equal `versions` exactly: a snapshot with the same library set whose differing releases are
 * each pinned by another snapshot, the fewest overrides first (ties: the newer base). Undefined when none.
 */
export function derivedIdOfVersions(versions: Readonly<Record<string, string>>, snapshots: readonly Snapshot[]): string | undefined {
  let best: { id: string; n: number } | undefined;
  for (const s of [...snapshots].reverse()) {
    const keys = Object.keys(s.versions);
    if (keys.length !== Object.keys(versions).length || !keys.every((k) => versions[k] !== undefined)) continue;
    const overrides = Object.fromEntries(keys.filter((k) => s.versions[k] !== versions[k]).map((k) => [k, versions[k]]));
    const n = Object.keys(overrides).length;
    if (!n || (best && best.n <= n)) continue;
    if (!Object.entries(overrides).every(([lib, v]) => pinningSnapshot(snapshots, lib, v))) continue;
    best = { id: derivedId(s.id, overrides), n };
  }
  return best?.id;
}

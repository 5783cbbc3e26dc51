// Whether a snapshot is dated right: no pinned release uploaded after its cut-off, and none more than
// one minor release behind the newest release of its library at the cut-off. Judged against PyPI's
// upload dates, kept in resources/snapshots/pypi-release-dates.json (`forgeenv snapshots dating --refresh`).
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';
import { distName, excludeNewerOf, type Snapshot } from './registry';

/** Final releases only (no rc/dev/post): those are what the resolver picks by default. */
const FINAL = /^\d+(\.\d+)*$/;

export const ReleaseDatesSchema = z.object({
  format: z.literal(1),
  fetched_at: z.string(),
  /** Distribution → final, non-yanked version → its first file's upload instant (ISO 8601, UTC). */
  packages: z.record(z.string(), z.record(z.string().regex(FINAL), z.string().datetime({ offset: true }))),
});
export type ReleaseDates = z.infer<typeof ReleaseDatesSchema>;

export const releaseDatesPath = (): string => join(resourcesDir(), 'snapshots', 'pypi-release-dates.json');

export function loadReleaseDates(path = releaseDatesPath()): ReleaseDates {
  const r = ReleaseDatesSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
  if (!r.success)
    throw new Error(
      `${path}: invalid release dates: ${r.error.issues
        .slice(0, 3)
        .map((i) => `${i.path.join('.')}: ${i.message}`)
        .join('; ')}`,
    );
  return r.data;
}

/** The part of PyPI's JSON API (`/pypi/<name>/json`) read here. */
const PypiProjectSchema = z.object({
  releases: z.record(z.string(), z.array(z.object({ upload_time_iso_8601: z.string(), yanked: z.boolean().default(false) }))),
});

/** Version → first upload of a PyPI project's JSON answer (final releases with a non-yanked file). */
export function releaseDatesOf(pypiJson: unknown): Record<string, string> {
  const project = PypiProjectSchema.parse(pypiJson);
  const out: Record<string, string> = {};
  for (const [version, files] of Object.entries(project.releases)) {
    const live = files.filter((f) => !f.yanked);
    if (!FINAL.test(version) || !live.length) continue;
    out[version] = new Date(Math.min(...live.map((f) => Date.parse(f.upload_time_iso_8601)))).toISOString();
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => compareDotted(a, b)));
}

/** Fetches the upload dates of `libraries` (import names) from PyPI. */
export async function fetchReleaseDates(libraries: readonly string[], fetchImpl: typeof fetch = fetch): Promise<ReleaseDates> {
  const packages: Record<string, Record<string, string>> = {};
  for (const lib of libraries) {
    const dist = distName(lib);
    const res = await fetchImpl(`https://pypi.org/pypi/${dist}/json`, { headers: { accept: 'application/json' } });
    if (!res.ok) throw new Error(`PyPI: ${dist}: HTTP ${res.status}`);
    packages[dist] = releaseDatesOf(await res.json());
  }
  return { format: 1, fetched_at: new Date().toISOString(), packages };
}

export function writeReleaseDates(data: ReleaseDates, path = releaseDatesPath()): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, JSON.stringify(ReleaseDatesSchema.parse(data), null, 1) + '\n');
  renameSync(tmp, path);
}

export interface LibraryDating {
  library: string;
  pinned: string;
  /** When the pinned release was first uploaded; undefined when PyPI has no such final release. */
  uploaded: string | undefined;
  /** The newest final release uploaded by the cut-off. */
  latest: string | undefined;
  /** Minor series (major.minor) released by the cut-off that are newer than the pinned one. */
  minorsBehind: number;
  problems: string[];
}

export interface SnapshotDating {
  id: string;
  cutoff: string;
  libraries: LibraryDating[];
  ok: boolean;
}

/** How much staleness is tolerated: the newest minor series, or the one before it. */
export const MAX_MINORS_BEHIND = 1;

const series = (v: string): string => v.split('.').slice(0, 2).join('.');

export function compareDotted(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d) return d < 0 ? -1 : 1;
  }
  return 0;
}

/** Judges each pinned library of `s` against the release dates. */
export function checkSnapshotDating(s: Pick<Snapshot, 'id' | 'cutoff' | 'versions'>, dates: ReleaseDates): SnapshotDating {
  const end = Date.parse(excludeNewerOf(s));
  const libraries = Object.entries(s.versions).map(([library, pinned]): LibraryDating => {
    const problems: string[] = [];
    const releases = dates.packages[distName(library)];
    if (!releases)
      return {
        library,
        pinned,
        uploaded: undefined,
        latest: undefined,
        minorsBehind: 0,
        problems: [`no release dates for ${distName(library)}`],
      };
    const uploaded = releases[pinned];
    if (!uploaded) problems.push(`${library} ${pinned} is not a final release on PyPI`);
    else if (Date.parse(uploaded) > end)
      problems.push(`${library} ${pinned} was uploaded ${uploaded.slice(0, 10)}, after the cut-off ${s.cutoff}`);
    const available = Object.entries(releases)
      .filter(([, at]) => Date.parse(at) <= end)
      .map(([v]) => v);
    const latest = available.sort(compareDotted).at(-1);
    const newerSeries = new Set(available.filter((v) => compareDotted(series(v), series(pinned)) > 0).map(series));
    if (newerSeries.size > MAX_MINORS_BEHIND) {
      problems.push(
        `${library} ${pinned} is ${newerSeries.size} minor releases behind ${latest} (current at ${s.cutoff}): ${[...newerSeries].sort(compareDotted).join(', ')}`,
      );
    }
    return { library, pinned, uploaded, latest, minorsBehind: newerSeries.size, problems };
  });
  return { id: s.id, cutoff: s.cutoff, libraries, ok: libraries.every((l) => !l.problems.length) };
}

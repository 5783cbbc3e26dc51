// A derived environment for a script written against libraries of two eras (issue 20): when no snapshot has every
// API the script uses, a base snapshot plus per-library overrides, each a release another snapshot pins (so its API
// is recorded), chosen from the recorded API data so that every name the script needs exists: its imports and
// keywords (snapshotInference.ts) and the API errors its runs met (apiRecurrence.ts). The fewest overrides first,
// then the base nearest the script's date; the real resolver (`uv pip compile`) has the last word, and a library it
// names in a conflict follows the override's snapshot. Only the run proves it works; this only proposes.
import { derivedId } from '../snapshots/derived';
import { checkResolves, TRACKED_LIBRARIES } from '../snapshots/pin';
import { allSnapshots, distName, getSnapshot, snapshotRequirements, snapshotsFile, type Snapshot } from '../snapshots/registry';
import { hasSnapshotApi } from '../snapshots/api';
import { apiNeedOf, type ApiNeed } from './apiRecurrence';
import { INFERENCE_LIBRARIES, monthsApart, snapshotFits } from './snapshotInference';

/** One override and why: the names that forced it, or the resolver's conflict it answers. */
export interface OverrideReason {
  library: string;
  version: string;
  /** The snapshot that pins the release (its API data describes it). */
  from: string;
  because: string;
}

export interface DerivedChoice {
  id: string;
  base: string;
  overrides: Record<string, string>;
  reasons: OverrideReason[];
}

export type Composition = { ok: true; choice: DerivedChoice } | { ok: false; reason: string };

/** Checks that a candidate's pins install together; the default runs uv (tests pass their own). */
export type Resolver = (s: Snapshot) => Promise<{ ok: true } | { ok: false; message: string }>;

export const uvResolver: Resolver = (s) => checkResolves(s, snapshotRequirements(s), snapshotsFile().python);

/** Resolver rounds per candidate: each adds the tracked libraries a conflict names. */
const MAX_FOLLOW = 3;

interface LibraryNeed {
  library: string;
  text: string;
  acceptedAt: (id: string) => boolean;
}

const packageOf = (missing: string): string => missing.split(/[.( ]/)[0];

/**
 * The derived environment for `script`, given the outputs of the runs that ended on library API errors at the
 * snapshots tried. `ids`: the snapshots with API data to compose from (default: all).
 */
export async function composeEnvironment(input: {
  script: string;
  failures: readonly string[];
  scriptDate?: string;
  ids?: readonly string[];
  resolver?: Resolver;
}): Promise<Composition> {
  const ids = (input.ids ?? allSnapshots().map((s) => s.id)).filter((id) => hasSnapshotApi(id));
  const snaps = ids.map((id) => getSnapshot(id));
  const needs: LibraryNeed[] = [];
  // The script's imports and keywords, per library: met at a snapshot where none of that library's is missing.
  const fits = snapshotFits(input.script, ids);
  const missing = new Map(fits.map((f) => [f.id, f.missing]));
  const missingAt = (id: string): string[] => {
    let m = missing.get(id);
    if (!m) missing.set(id, (m = snapshotFits(input.script, [id])[0].missing));
    return m;
  };
  for (const lib of INFERENCE_LIBRARIES) {
    const lacking = [...new Set(fits.flatMap((f) => f.missing.filter((m) => packageOf(m) === lib)))];
    if (lacking.length)
      needs.push({
        library: lib,
        text: lacking.join(', '),
        acceptedAt: (id) => !missingAt(id).some((m) => packageOf(m) === lib),
      });
  }
  // The API errors the runs met, each attributed to the library whose data records its subject.
  const seen = new Set<string>();
  for (const out of input.failures) {
    const need: ApiNeed | undefined = apiNeedOf(out);
    if (!need || seen.has(need.line)) continue;
    seen.add(need.line);
    const where = ids.filter((id) => need.acceptedAt(id));
    const library = where.length ? need.library(where[0]) : undefined;
    if (!library) return { ok: false, reason: `no release any snapshot pins is recorded to accept ${need.needs} (${need.line})` };
    const verdicts = new Map<string, boolean>();
    const acceptedAt = (id: string): boolean => {
      let v = verdicts.get(id);
      if (v === undefined) verdicts.set(id, (v = need.acceptedAt(id)));
      return v;
    };
    needs.push({ library, text: need.needs, acceptedAt });
  }
  if (!needs.length) return { ok: false, reason: 'the recorded API data names nothing the script lacks' };

  // The releases of each needy library that meet all its needs, with the snapshot that pins each.
  const libraries = [...new Set(needs.map((n) => n.library))];
  const good = new Map<string, Snapshot[]>();
  for (const lib of libraries) {
    const mine = needs.filter((n) => n.library === lib);
    const pinning = snaps.filter((s) => mine.every((n) => n.acceptedAt(s.id)));
    if (!pinning.length)
      return { ok: false, reason: `no release of ${lib} a snapshot pins has all of ${mine.map((n) => n.text).join('; ')}` };
    good.set(lib, pinning);
  }
  const when = input.scriptDate ?? snaps.at(-1)!.date;
  const candidates: Array<{ base: Snapshot; overrides: Record<string, string>; reasons: OverrideReason[] }> = [];
  for (const base of snaps) {
    const overrides: Record<string, string> = {};
    const reasons: OverrideReason[] = [];
    for (const lib of libraries) {
      const pinning = good.get(lib)!;
      if (pinning.some((s) => s.versions[lib] === base.versions[lib])) continue;
      const from = [...pinning].sort((a, b) => monthsApart(a.date, base.date) - monthsApart(b.date, base.date))[0];
      overrides[lib] = from.versions[lib];
      const why = needs.filter((n) => n.library === lib && !n.acceptedAt(base.id)).map((n) => n.text);
      reasons.push({ library: lib, version: from.versions[lib], from: from.id, because: `${base.id} lacks ${why.join('; ')}` });
    }
    if (Object.keys(overrides).length) candidates.push({ base, overrides, reasons });
  }
  // Fewest overrides, then the base nearest the script's date (ties: the newer).
  const order = (c: { base: Snapshot; overrides: Record<string, string> }) => [
    Object.keys(c.overrides).length,
    monthsApart(c.base.date, when),
  ];
  const resolver = input.resolver ?? uvResolver;
  const better = (a: number[], b: number[]) => a[0] - b[0] || a[1] - b[1];
  candidates.sort((a, b) => better(order(a), order(b)) || b.base.date.localeCompare(a.base.date));
  let best: { choice: DerivedChoice; key: number[] } | undefined;
  let firstConflict: string | undefined;
  for (const c of candidates) {
    // Following the resolver only adds overrides: a candidate that starts no better than the best found cannot win.
    if (best && better(order(c), best.key) >= 0) continue;
    const r = await followResolver(c.base, c.overrides, c.reasons, snaps, needs, resolver);
    if ('message' in r) firstConflict ??= `${derivedId(c.base.id, c.overrides)}: ${r.message}`;
    else {
      const key = order({ base: c.base, overrides: r.overrides });
      if (!best || better(key, best.key) < 0) best = { choice: r, key };
    }
  }
  if (!best) return { ok: false, reason: `no combination installs together; the resolver on ${firstConflict ?? 'none tried'}` };
  return { ok: true, choice: best.choice };
}

/**
 * Resolves a candidate; on a conflict, the tracked libraries the resolver's message names (besides those already
 * overridden) take the release of the snapshot the first override comes from, up to MAX_FOLLOW rounds, as long as
 * every need stays met. Returns the choice, or the resolver's message.
 */
async function followResolver(
  base: Snapshot,
  start: Record<string, string>,
  startReasons: OverrideReason[],
  snaps: readonly Snapshot[],
  needs: readonly LibraryNeed[],
  resolver: Resolver,
): Promise<DerivedChoice | { message: string }> {
  const overrides = { ...start };
  const reasons = [...startReasons];
  for (let round = 0; ; round++) {
    const id = derivedId(base.id, overrides);
    const unmet = needs.filter((n) => !n.acceptedAt(id));
    if (unmet.length) return { message: `its recorded API lacks ${unmet.map((n) => n.text).join('; ')}` };
    const r = await resolver(getSnapshot(id));
    if (r.ok) return { id, base: base.id, overrides, reasons };
    if (round >= MAX_FOLLOW) return { message: r.message };
    const partner = snaps.find((s) => s.id === reasons[0].from)!;
    const named = TRACKED_LIBRARIES.filter(
      (lib) =>
        overrides[lib] === undefined &&
        partner.versions[lib] !== base.versions[lib] &&
        new RegExp(`\\b${distName(lib).replace(/-/g, '[-_]')}\\b`, 'i').test(r.message),
    );
    if (!named.length) return { message: r.message };
    for (const lib of named) {
      overrides[lib] = partner.versions[lib];
      reasons.push({
        library: lib,
        version: partner.versions[lib],
        from: partner.id,
        because: `the resolver: ${conflictCause(r.message)}`,
      });
    }
  }
}

/** The provenance line of a derived environment: which names forced which override. */
export function describeChoice(c: DerivedChoice): string {
  return `${c.id}: ${c.reasons.map((r) => `${r.library} ${r.version} (pinned by ${r.from}) because ${r.because}`).join('; ')}`;
}

/** The resolver's conflict without its preamble, short enough for an adaptation's record. */
function conflictCause(message: string): string {
  const text = message.replace(/^.*?cause:\s*/s, '').replace(/\s*\|\s*/g, ' ');
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
}

// Fidelity of the simulated libraries, measured on the drift catalog: every entry's probes run
// against the real releases (snapshot venvs) and the simulation, before and after the change.
// Real outcomes are cached per (snapshot, catalog hash) under the cache root.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { allSnapshots, type Snapshot } from '../snapshots/registry';
import { cacheRoot, isSnapshotVenvReady, readReadyMarker, snapshotPython } from '../snapshots/venv';
import { catalogHash, driftCatalogPath, parseDriftCatalog, probeRunnerPath, type DriftEntry } from './catalog';
import {
  compareOutcomes,
  normaliseMessage,
  outcomeShape,
  ProbeOutcomeSchema,
  type Mismatch,
  type ProbeForm,
  type ProbeOutcome,
} from './outcomes';
import { snapshotPairFor } from './pairs';
import { runProbes, type ProbeRunner } from './probeRun';

export type RunSlot = 'before.old' | 'before.new' | 'after.old' | 'after.new';
export const RUN_SLOTS: readonly RunSlot[] = ['before.old', 'before.new', 'after.old', 'after.new'];

export type Validity = 'valid' | 'invalid' | 'unchecked';

export interface RunComparison {
  slot: RunSlot;
  snapshot: string;
  form: ProbeForm;
  real?: ProbeOutcome;
  sim?: ProbeOutcome;
  /** Present when both sides ran. */
  mismatch?: Mismatch | null;
}

export interface EntryResult {
  id: string;
  library: string;
  kind: string;
  expect_after: DriftEntry['expect_after'];
  changed_in: string;
  before?: string;
  after?: string;
  validity: Validity;
  problems: string[];
  runs: RunComparison[];
}

export interface Tally {
  entries: number;
  valid: number;
  invalid: number;
  unchecked: number;
  /** Runs of valid entries where both the real and the simulated outcome exist. */
  runs_compared: number;
  runs_agree: number;
  /** Valid entries with at least one compared run, and those whose compared runs all agree. */
  entries_compared: number;
  entries_agree: number;
}

export interface DisagreementPattern {
  pattern: string;
  count: number;
  examples: string[];
}

export interface FidelityReport {
  catalog_hash: string;
  /** `runtime`: which runtime ran the snapshot's probe run (absent when nothing ran). */
  real_snapshots: { id: string; state: 'cached' | 'ran' | 'no-venv' | 'skipped' | 'failed'; detail?: string; runtime?: 'warm' | 'cold' }[];
  sim_snapshots: { id: string; state: 'ran' | 'skipped' | 'failed'; detail?: string; runtime?: 'warm' | 'cold' }[];
  entries: EntryResult[];
  overall: Tally;
  by_library: Record<string, Tally>;
  by_kind: Record<string, Tally>;
  disagreements: { id: string; slot: RunSlot; snapshot: string; mismatch: Mismatch; real: ProbeOutcome; sim: ProbeOutcome }[];
  patterns: DisagreementPattern[];
}

export interface FidelityOptions {
  catalogPath?: string;
  ids?: readonly string[];
  library?: string;
  /** Only entries whose before and after snapshots are both listed. */
  snapshots?: readonly string[];
  /** Run real probes that are not cached (default true); false uses the cache only. */
  real?: boolean;
  sim?: boolean;
  systemPython?: string;
  onProgress?: (msg: string) => void;
  // Seams for tests.
  runner?: ProbeRunner;
  snapshotList?: readonly Snapshot[];
  venvReady?: (id: string) => boolean;
  venvPython?: (id: string) => string;
  cacheDir?: string;
}

/**
 * The real-mode check of an entry: old works before, new works after, old breaks (or warns) after.
 * `unchecked` when outcomes are missing or a snapshot's environment fails both forms alike.
 */
export function realValidity(
  entry: Pick<DriftEntry, 'expect_after'> & { kind?: string },
  runs: Partial<Record<RunSlot, ProbeOutcome>>,
): { validity: Validity; problems: string[] } {
  if (entry.kind === 'added') return addedValidity(runs);
  const bo = runs['before.old'];
  const ao = runs['after.old'];
  const an = runs['after.new'];
  if (!bo || !ao || !an)
    return {
      validity: 'unchecked',
      problems: [`real outcomes missing: ${(['before.old', 'after.old', 'after.new'] as const).filter((s) => !runs[s]).join(', ')}`],
    };
  // Both forms failing the same way in one snapshot says more about the venv (a missing or
  // incompatible dependency) than about the entry: that side cannot be checked.
  const env = (['before', 'after'] as const).flatMap((when) => {
    const o = runs[`${when}.old`];
    const n = runs[`${when}.new`];
    return o && n && sameFailure(o, n) ? [`environment: both forms fail ${when} the change (${o.exc_type}: ${o.message})`] : [];
  });
  if (env.length) return { validity: 'unchecked', problems: env };
  const problems: string[] = [];
  if (bo.status === 'raised') problems.push(`old form fails before the change (${bo.exc_type}: ${bo.message})`);
  else if (entry.expect_after === 'warning' && bo.status !== 'ok') problems.push('old form already warns before the change');
  if (an.status === 'raised') problems.push(`new form fails after the change (${an.exc_type}: ${an.message})`);
  if (entry.expect_after === 'error' && ao.status !== 'raised') problems.push(`old form still ${ao.status} after the change`);
  if (entry.expect_after === 'warning' && ao.status !== 'warned')
    problems.push(`old form ${ao.status === 'raised' ? 'raises' : 'does not warn'} after the change`);
  return { validity: problems.length ? 'invalid' : 'valid', problems };
}

/** An addition: the old form works on both sides, the new form fails before the change and works after. */
function addedValidity(runs: Partial<Record<RunSlot, ProbeOutcome>>): { validity: Validity; problems: string[] } {
  const bo = runs['before.old'];
  const bn = runs['before.new'];
  const an = runs['after.new'];
  if (!bo || !bn || !an)
    return {
      validity: 'unchecked',
      problems: [`real outcomes missing: ${(['before.old', 'before.new', 'after.new'] as const).filter((s) => !runs[s]).join(', ')}`],
    };
  if (bo.status === 'raised')
    return { validity: 'unchecked', problems: [`environment: the old form fails before the change (${bo.exc_type}: ${bo.message})`] };
  const problems: string[] = [];
  if (bn.status !== 'raised') problems.push(`new form already ${bn.status} before the change`);
  if (an.status === 'raised') problems.push(`new form fails after the change (${an.exc_type}: ${an.message})`);
  return { validity: problems.length ? 'invalid' : 'valid', problems };
}

function sameFailure(a: ProbeOutcome, b: ProbeOutcome): boolean {
  return (
    a.status === 'raised' &&
    b.status === 'raised' &&
    a.exc_type === b.exc_type &&
    normaliseMessage(a.message ?? '') === normaliseMessage(b.message ?? '')
  );
}

const emptyTally = (): Tally => ({
  entries: 0,
  valid: 0,
  invalid: 0,
  unchecked: 0,
  runs_compared: 0,
  runs_agree: 0,
  entries_compared: 0,
  entries_agree: 0,
});

function addToTally(t: Tally, e: EntryResult): void {
  t.entries++;
  t[e.validity]++;
  if (e.validity !== 'valid') return;
  const compared = e.runs.filter((r) => r.mismatch !== undefined);
  t.runs_compared += compared.length;
  t.runs_agree += compared.filter((r) => r.mismatch === null).length;
  if (compared.length) {
    t.entries_compared++;
    if (compared.every((r) => r.mismatch === null)) t.entries_agree++;
  }
}

/**
 * A venv fit for probing: ready, or complete with exactly the snapshot's library versions even if
 * its requirement list has since changed (an added helper package does not change what we probe).
 */
export function venvUsable(snap: Snapshot): boolean {
  if (isSnapshotVenvReady(snap.id)) return true;
  const marker = readReadyMarker(snap.id);
  if (!marker || !existsSync(snapshotPython(snap.id))) return false;
  return Object.entries(snap.versions).every(([lib, v]) => lib === 'torch' || marker.installed[lib] === v);
}

/** Aggregates entry results into the report's tallies, disagreement list and top patterns. */
export function summarise(entries: EntryResult[], catalog_hash = ''): Omit<FidelityReport, 'real_snapshots' | 'sim_snapshots'> {
  const overall = emptyTally();
  const by_library: Record<string, Tally> = {};
  const by_kind: Record<string, Tally> = {};
  const disagreements: FidelityReport['disagreements'] = [];
  const groups = new Map<string, { count: number; examples: string[] }>();
  for (const e of entries) {
    addToTally(overall, e);
    addToTally((by_library[e.library] ??= emptyTally()), e);
    addToTally((by_kind[e.kind] ??= emptyTally()), e);
    if (e.validity !== 'valid') continue;
    for (const r of e.runs) {
      if (!r.mismatch || !r.real || !r.sim) continue;
      disagreements.push({ id: e.id, slot: r.slot, snapshot: r.snapshot, mismatch: r.mismatch, real: r.real, sim: r.sim });
      const key = `${r.mismatch}: real ${outcomeShape(r.real)} / sim ${outcomeShape(r.sim)}`;
      const g = groups.get(key) ?? { count: 0, examples: [] };
      g.count++;
      if (g.examples.length < 4) g.examples.push(`${e.id}@${r.snapshot}:${r.slot.split('.')[1]}`);
      groups.set(key, g);
    }
  }
  const patterns = [...groups.entries()]
    .map(([pattern, g]) => ({ pattern, count: g.count, examples: g.examples }))
    .sort((a, b) => b.count - a.count || a.pattern.localeCompare(b.pattern));
  return { catalog_hash, entries, overall, by_library, by_kind, disagreements, patterns };
}

const RealCacheSchema = z.object({
  format: z.literal(1),
  snapshot: z.string(),
  catalog_hash: z.string(),
  /** Which build of the venv produced the outcomes: a rebuilt venv invalidates them. */
  venv_stamp: z.string().default(''),
  versions: z.record(z.string(), z.string().nullable()),
  outcomes: z.record(z.string(), ProbeOutcomeSchema),
});
type RealCache = z.infer<typeof RealCacheSchema>;

const outcomeKey = (id: string, form: ProbeForm) => `${id}:${form}`;

function venvStamp(id: string): string {
  const m = readReadyMarker(id);
  return m ? `${m.created_at} ${m.requirements.join(' ')}` : '';
}

function readCache(path: string, snapshot: string, hash: string, stamp: string): RealCache {
  const empty: RealCache = { format: 1, snapshot, catalog_hash: hash, venv_stamp: stamp, versions: {}, outcomes: {} };
  if (!existsSync(path)) return empty;
  try {
    const r = RealCacheSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return r.success && r.data.catalog_hash === hash && r.data.venv_stamp === stamp ? r.data : empty;
  } catch {
    return empty;
  }
}

/** A cache file whose recorded versions are the snapshot's pins (a torch local label such as +cu124 ignored). */
function readCacheOfVersions(path: string, snap: Snapshot, hash: string): RealCache | undefined {
  if (!existsSync(path)) return undefined;
  try {
    const r = RealCacheSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (!r.success || r.data.catalog_hash !== hash || r.data.snapshot !== snap.id) return undefined;
    const same = Object.entries(snap.versions).every(([lib, v]) => (r.data.versions[lib] ?? '').split('+')[0] === v);
    return same ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** Runs (or reads from cache) everything the selected entries need and compares the two modes. */
export async function runFidelity(opts: FidelityOptions = {}): Promise<FidelityReport> {
  const progress = opts.onProgress ?? (() => undefined);
  const catalogPath = opts.catalogPath ?? driftCatalogPath();
  const catalogText = readFileSync(catalogPath, 'utf8');
  const runnerPath = probeRunnerPath();
  const hash = catalogHash(catalogText, readFileSync(runnerPath, 'utf8'));
  const catalog = parseDriftCatalog(catalogText, catalogPath);
  const snapshots = opts.snapshotList ?? allSnapshots();
  const runner = opts.runner ?? runProbes;
  const venvReady = opts.venvReady ?? ((id: string) => venvUsable(snapshots.find((x) => x.id === id)!));
  const venvPython = opts.venvPython ?? snapshotPython;
  const cacheDir = opts.cacheDir ?? join(cacheRoot(), 'fidelity');

  if (opts.ids?.length) {
    const unknown = opts.ids.filter((id) => !catalog.entries.some((e) => e.id === id));
    if (unknown.length) throw new Error(`unknown drift ids: ${unknown.join(', ')}`);
  }
  const wantSnapshots = opts.snapshots?.length ? new Set(opts.snapshots) : undefined;
  const selected = catalog.entries
    .filter((e) => !opts.ids?.length || opts.ids.includes(e.id))
    .filter((e) => !opts.library || e.library === opts.library)
    .map((e) => ({ entry: e, pair: snapshotPairFor(e, snapshots) }))
    .filter(({ pair }) => !wantSnapshots || (pair.before && pair.after && wantSnapshots.has(pair.before) && wantSnapshots.has(pair.after)));

  const needs = new Map<string, Set<string>>();
  for (const { entry, pair } of selected) {
    for (const s of [pair.before, pair.after]) if (s) (needs.get(s) ?? needs.set(s, new Set()).get(s)!).add(entry.id);
  }

  const real = new Map<string, ProbeOutcome>(); // `${snapshot}|${id}:${form}`
  const sim = new Map<string, ProbeOutcome>();
  const realStates: FidelityReport['real_snapshots'] = [];
  const simStates: FidelityReport['sim_snapshots'] = [];
  for (const snap of snapshots) {
    const ids = [...(needs.get(snap.id) ?? [])];
    if (!ids.length) continue;
    // Real mode, through the cache.
    const cachePath = join(cacheDir, `real-${snap.id}-${hash}.json`);
    if (!venvReady(snap.id)) {
      // Outcomes recorded from exactly this snapshot's releases stay valid once its venv is deleted.
      const kept = readCacheOfVersions(cachePath, snap, hash);
      const complete = kept && ids.every((id) => kept.outcomes[outcomeKey(id, 'old')] && kept.outcomes[outcomeKey(id, 'new')]);
      realStates.push(
        complete
          ? { id: snap.id, state: 'cached', detail: 'no venv; outcomes recorded from the same releases' }
          : { id: snap.id, state: 'no-venv' },
      );
      if (complete) for (const [k, o] of Object.entries(kept.outcomes)) real.set(`${snap.id}|${k}`, o);
    } else {
      const cache = readCache(cachePath, snap.id, hash, venvStamp(snap.id));
      const missing = ids.filter((id) => !cache.outcomes[outcomeKey(id, 'old')] || !cache.outcomes[outcomeKey(id, 'new')]);
      let state: 'cached' | 'ran' | 'skipped' | 'failed' = missing.length ? 'skipped' : 'cached';
      let detail: string | undefined;
      let runtime: 'warm' | 'cold' | undefined;
      if (missing.length && opts.real !== false) {
        progress(`real ${snap.id}: running ${missing.length} entries`);
        try {
          const file = await runner({ python: venvPython(snap.id), runnerPath, catalogPath, ids: missing, mode: 'real', snapshot: snap });
          for (const o of file.results) cache.outcomes[outcomeKey(o.id, o.form)] = o;
          cache.versions = file.versions;
          runtime = file.runtime;
          mkdirSync(dirname(cachePath), { recursive: true });
          writeFileSync(cachePath, JSON.stringify(cache, null, 1) + '\n');
          state = 'ran';
        } catch (e) {
          state = 'failed';
          detail = (e as Error).message;
        }
      }
      realStates.push({ id: snap.id, state, ...(detail ? { detail } : {}), ...(runtime ? { runtime } : {}) });
      for (const [k, o] of Object.entries(cache.outcomes)) real.set(`${snap.id}|${k}`, o);
    }
    // Simulated mode: cheap and changing while the sim is worked on, so never cached.
    if (opts.sim === false) {
      simStates.push({ id: snap.id, state: 'skipped' });
      continue;
    }
    progress(`sim ${snap.id}: running ${ids.length} entries`);
    try {
      const file = await runner({
        python: opts.systemPython ?? 'python3',
        runnerPath,
        catalogPath,
        ids,
        mode: 'simulated',
        snapshot: snap,
      });
      for (const o of file.results) sim.set(`${snap.id}|${outcomeKey(o.id, o.form)}`, o);
      simStates.push({ id: snap.id, state: 'ran', ...(file.runtime ? { runtime: file.runtime } : {}) });
    } catch (e) {
      simStates.push({ id: snap.id, state: 'failed', detail: (e as Error).message });
    }
  }

  const entries: EntryResult[] = selected.map(({ entry, pair }) => {
    const runs: RunComparison[] = [];
    const realBySlot: Partial<Record<RunSlot, ProbeOutcome>> = {};
    for (const slot of RUN_SLOTS) {
      const [when, form] = slot.split('.') as ['before' | 'after', ProbeForm];
      const snapshot = pair[when];
      if (!snapshot) continue;
      const r = real.get(`${snapshot}|${outcomeKey(entry.id, form)}`);
      const s = sim.get(`${snapshot}|${outcomeKey(entry.id, form)}`);
      if (r) realBySlot[slot] = r;
      const run: RunComparison = { slot, snapshot, form };
      if (r) run.real = r;
      if (s) run.sim = s;
      if (r && s) run.mismatch = compareOutcomes(r, s) ?? null;
      runs.push(run);
    }
    const problems: string[] = [];
    if (!pair.before) problems.push(`no snapshot has ${entry.library} older than ${entry.changed_in}`);
    if (!pair.after) problems.push(`no snapshot has ${entry.library} ${entry.changed_in} or newer`);
    const v = problems.length ? { validity: 'unchecked' as const, problems } : realValidity(entry, realBySlot);
    const result: EntryResult = {
      id: entry.id,
      library: entry.library,
      kind: entry.kind,
      expect_after: entry.expect_after,
      changed_in: entry.changed_in,
      validity: v.validity,
      problems: v.problems,
      runs,
    };
    if (pair.before) result.before = pair.before;
    if (pair.after) result.after = pair.after;
    return result;
  });
  return { ...summarise(entries, hash), real_snapshots: realStates, sim_snapshots: simStates };
}

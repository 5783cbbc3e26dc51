// `forgeenv snapshots list [--json]`, `forgeenv snapshots build [NAME...] [--all] [--no-api]` and
// `forgeenv snapshots pin [--id ID] [--write] [--json]`, `forgeenv snapshots dating [--refresh] [--json]`: the dated sets of real library releases, their
// pins computed from cut-off dates, their managed venvs and their recorded API data.
import { parseArgs } from 'node:util';
import { hasSnapshotApi, snapshotApiPackages } from '../env/snapshots/api';
import { buildSnapshotApi } from '../env/snapshots/build';
import { checkSnapshotDating, fetchReleaseDates, loadReleaseDates, writeReleaseDates } from '../env/snapshots/dating';
import { computePins, TRACKED_LIBRARIES, withPins, writeSnapshotsFile, type PinResult } from '../env/snapshots/pin';
import { allSnapshots, getSnapshot, snapshotIds, snapshotsFile } from '../env/snapshots/registry';
import { ensureSnapshotVenv, isSnapshotVenvReady, snapshotVenvDir } from '../env/snapshots/venv';

export const SNAPSHOTS_USAGE = `Usage:
  forgeenv snapshots list [--json]
  forgeenv snapshots build [NAME...] [--all] [--no-api] [--no-deprecations]
  forgeenv snapshots pin [--id ID] [--write] [--json]
  forgeenv snapshots dating [--refresh] [--json]`;

const KEY_PACKAGES = ['transformers', 'datasets', 'trl', 'peft', 'torch'];

/** `args` are the words after `snapshots`. Exit codes: 0 ok, 1 unknown snapshot, failed build, pins that differ
 * from the computed ones (`pin` without `--write`) or a misdated snapshot (`dating`), 2 usage. */
export async function runSnapshotsCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        json: { type: 'boolean', default: false },
        all: { type: 'boolean', default: false },
        'no-api': { type: 'boolean', default: false },
        'no-deprecations': { type: 'boolean', default: false },
        id: { type: 'string', multiple: true },
        write: { type: 'boolean', default: false },
        refresh: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    err(`forgeenv snapshots: ${(e as Error).message}\n${SNAPSHOTS_USAGE}`);
    return 2;
  }
  const [sub, ...names] = parsed.positionals;
  if (parsed.values.help || !sub) {
    (parsed.values.help ? out : err)(SNAPSHOTS_USAGE);
    return parsed.values.help ? 0 : 2;
  }
  try {
    if (sub === 'list') return listCommand(parsed.values.json === true, out);
    if (sub === 'dating') return await datingCommand(parsed.values.refresh === true, parsed.values.json === true, out);
    if (sub === 'pin') return await pinCommand(parsed.values.id ?? [], parsed.values.write === true, parsed.values.json === true, out);
    if (sub === 'build') {
      return await buildCommand(
        names,
        { all: parsed.values.all === true, api: !parsed.values['no-api'], deprecations: !parsed.values['no-deprecations'] },
        out,
        err,
      );
    }
  } catch (e) {
    err(`forgeenv snapshots: ${(e as Error).message}`);
    return 1;
  }
  err(`forgeenv snapshots: unknown subcommand ${sub}\n${SNAPSHOTS_USAGE}`);
  return 2;
}

function listCommand(json: boolean, out: (s: string) => void): number {
  const rows = allSnapshots().map((s) => ({
    id: s.id,
    date: s.date,
    versions: s.versions,
    venv_ready: isSnapshotVenvReady(s.id),
    venv_dir: snapshotVenvDir(s.id),
    api: hasSnapshotApi(s.id),
    api_packages: snapshotApiPackages(s.id),
    note: s.note ?? null,
  }));
  if (json) {
    out(JSON.stringify(rows, null, 2));
    return 0;
  }
  const total = (r: (typeof rows)[number]): number => Object.keys(r.versions).length;
  for (const r of rows) {
    const key = KEY_PACKAGES.filter((p) => r.versions[p])
      .map((p) => `${p} ${r.versions[p]}`)
      .join(', ');
    const api = r.api ? 'api: yes' : `api: ${r.api_packages.length}/${total(r)}`;
    out(`${r.id}  ${key}  venv: ${r.venv_ready ? 'ready' : 'no'}  ${api}`);
  }
  return 0;
}

async function buildCommand(
  names: string[],
  opts: { all: boolean; api: boolean; deprecations: boolean },
  out: (s: string) => void,
  err: (s: string) => void,
): Promise<number> {
  const known = snapshotIds();
  if (names.length === 0 && !opts.all) {
    err(`forgeenv snapshots build: name one or more snapshots or pass --all; known snapshots: ${known.join(', ')}`);
    return 2;
  }
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length) {
    err(`forgeenv snapshots build: unknown snapshot ${unknown.join(', ')}; known snapshots: ${known.join(', ')}`);
    return 1;
  }
  const ids = opts.all ? known : [...new Set(names)];
  const started = Date.now();
  const stamp = (): string => `[${((Date.now() - started) / 1000).toFixed(1).padStart(6)}s]`;
  const onProgress = (m: string): void => out(`${stamp()} ${m}`);
  let failed = 0;
  for (const id of ids) {
    try {
      if (opts.api) {
        const r = await buildSnapshotApi(id, { onProgress, deprecations: opts.deprecations });
        const bytes = r.packages.reduce((a, p) => a + p.bytes, 0);
        out(`${stamp()} ${id}: built (venv ${r.venvSeconds}s, ${r.packages.length} API files, ${(bytes / 1024 / 1024).toFixed(2)} MiB)`);
      } else {
        const python = await ensureSnapshotVenv(id, { onProgress });
        out(`${stamp()} ${id}: venv ready (${python})`);
      }
    } catch (e) {
      failed++;
      err(`${stamp()} ${id}: FAILED: ${(e as Error).message}`);
    }
  }
  return failed ? 1 : 0;
}

/** Computes every (or each `--id`) snapshot's pins from its cut-off; `--write` stores them in snapshots.json. */
async function pinCommand(ids: string[], write: boolean, json: boolean, out: (s: string) => void): Promise<number> {
  const file = snapshotsFile();
  const chosen = ids.length ? ids.map((id) => getSnapshot(id)) : file.snapshots;
  const results: PinResult[] = [];
  for (const s of chosen) results.push(await computePins(s, file.python));
  if (json) out(JSON.stringify(results, null, 2));
  else {
    for (const r of results) {
      const changes = TRACKED_LIBRARIES.map((lib) =>
        r.old[lib] === r.pins[lib] ? `${lib} ${r.pins[lib]}` : `${lib} ${r.old[lib] ?? '-'} → ${r.pins[lib]}`,
      );
      out(`${r.id} (cut-off ${r.cutoff}): ${changes.join(', ')}`);
    }
  }
  const changed = results.filter((r) => TRACKED_LIBRARIES.some((lib) => r.old[lib] !== r.pins[lib]));
  if (write && changed.length) {
    writeSnapshotsFile(withPins(file, changed));
    if (!json) out(`wrote the pins of ${changed.map((r) => r.id).join(', ')} to snapshots.json`);
    return 0;
  }
  if (!json)
    out(
      changed.length
        ? `${changed.length} snapshot(s) differ from their computed pins; --write stores them`
        : 'every snapshot matches its computed pins',
    );
  // Without --write, a difference is a failure: the shipped pins are no longer what the cut-offs give.
  return changed.length ? 1 : 0;
}

/** Checks every snapshot against PyPI's upload dates (`--refresh` fetches them anew first). Exit 1 when one is misdated. */
async function datingCommand(refresh: boolean, json: boolean, out: (s: string) => void): Promise<number> {
  if (refresh) writeReleaseDates(await fetchReleaseDates(TRACKED_LIBRARIES));
  const dates = loadReleaseDates();
  const results = allSnapshots().map((s) => checkSnapshotDating(s, dates));
  if (json) out(JSON.stringify({ fetched_at: dates.fetched_at, snapshots: results }, null, 2));
  else {
    out(`PyPI upload dates as of ${dates.fetched_at.slice(0, 10)}`);
    for (const r of results) {
      const behind = r.libraries
        .filter((l) => l.minorsBehind > 0)
        .map((l) => `${l.library} ${l.pinned} (${l.latest} out, ${l.minorsBehind} minor behind)`);
      out(`${r.id} (cut-off ${r.cutoff}): ${r.ok ? 'ok' : 'MISDATED'}${behind.length ? `; behind: ${behind.join(', ')}` : ''}`);
      for (const l of r.libraries) for (const p of l.problems) out(`  ${p}`);
    }
  }
  return results.every((r) => r.ok) ? 0 : 1;
}

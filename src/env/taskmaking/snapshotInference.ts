// Which library snapshot a script belongs to: the snapshots where everything it imports from the
// Hugging Face libraries exists (from the recorded API data, resources/snapshots/api), the one
// nearest the script's own date preferred (its last commit, when it is in a git repository), with
// the reason in words. Pure over the API data; the date comes from scriptDate.ts.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parsePython } from '../python/parse';
import { indexScript } from '../python/scriptIndex';
import { loadPackageApi, snapshotApiDir, snapshotApiPackages, type PackageApi } from '../snapshots/api';
import { RENAMED_KWARGS_FILE } from '../snapshots/build';
import { apiSourceOf, isDerivedId, parseDerivedId } from '../snapshots/derived';
import { allSnapshots, getSnapshot } from '../snapshots/registry';
import { isSnapshotVenvReady } from '../snapshots/venv';

/** The libraries whose API data decides (the ones scripts drift against). */
export const INFERENCE_LIBRARIES = ['transformers', 'datasets', 'trl', 'peft', 'accelerate'] as const;

export interface ImportedApi {
  /** `transformers`, `trl.trainer`, … */
  module: string;
  /** The name imported from it; undefined for `import module`. */
  name?: string;
  line: number;
}

/** The script's imports from the inference libraries (`from trl import GRPOConfig`, `import peft`). */
export function importedApis(script: string): ImportedApi[] {
  const idx = indexScript(parsePython(script));
  const lineOf = (pos: number) => script.slice(0, pos).split('\n').length;
  const out: ImportedApi[] = [];
  const isLib = (m: string) => (INFERENCE_LIBRARIES as readonly string[]).includes(m.split('.')[0]);
  for (const imp of idx.imports) {
    if (imp.level > 0) continue;
    if (imp.kind === 'import') {
      for (const n of imp.names) if (isLib(n.name)) out.push({ module: n.name, line: lineOf(imp.from) });
    } else if (imp.module && isLib(imp.module)) {
      for (const n of imp.names) if (n.name !== '*') out.push({ module: imp.module, name: n.name, line: lineOf(imp.from) });
    }
  }
  return out;
}

export type ApiPresence = 'present' | 'absent' | 'unknown';

/** Whether `api` exists in a package's recorded API (unknown: a module the data did not walk). */
export function apiPresence(api: PackageApi, imp: ImportedApi): ApiPresence {
  const mod = api.modules[imp.module];
  if (!mod) {
    if (api.unimportable[imp.module]) return 'absent';
    // The package's direct public subpackages are all walked (docs/snapshots.md), so `trl.experimental`
    // missing from the data is absent from the release; deeper modules are not always walked
    // (transformers.data.metrics.squad_metrics), and private paths, the CLI trees and the test helpers never
    // (accelerate.test_utils, whose `mocked_dataloaders` accelerate's examples import when testing): unknown.
    const parts = imp.module.split('.');
    if (parts.some((p) => p.startsWith('_') || ['commands', 'cli', 'tests', 'testing', 'testing_utils', 'test_utils'].includes(p)))
      return 'unknown';
    // Only transformers' tree is cut below its second level; the other libraries' public modules are all walked.
    if (parts[0] !== 'transformers') return 'absent';
    return api.modules[parts.slice(0, 2).join('.')] ? 'unknown' : 'absent';
  }
  if (imp.name === undefined) return 'present';
  const target = mod.names[imp.name];
  if (target !== undefined) return target.startsWith('unavailable:') ? 'absent' : 'present';
  // A submodule imported by name (`from transformers import models`).
  if (api.modules[`${imp.module}.${imp.name}`]) return 'present';
  return 'absent';
}

export interface SnapshotFit {
  id: string;
  date: string;
  /** Imports the snapshot lacks, as `module.name (line N)`. */
  missing: string[];
  /** Imports the data cannot tell about. */
  unknown: number;
  /** The managed venv is built (no install needed). */
  ready: boolean;
}

export interface SnapshotChoice {
  id: string;
  reason: string;
  fits: SnapshotFit[];
}

/** How each snapshot with API data fits the script's imports. */
export function snapshotFits(script: string, ids: readonly string[] = allSnapshots().map((s) => s.id)): SnapshotFit[] {
  const imports = importedApis(script);
  const keywordCalls = constructorKeywords(script, imports);
  const fits = ids.map((id) => {
    const have = new Set(snapshotApiPackages(id));
    const missing: string[] = [];
    let unknown = 0;
    for (const imp of imports) {
      const pkg = imp.module.split('.')[0];
      if (!have.has(pkg)) {
        unknown++;
        continue;
      }
      const presence = apiPresence(loadPackageApi(id, pkg), imp);
      if (presence === 'absent') missing.push(`${imp.module}${imp.name ? `.${imp.name}` : ''} (line ${imp.line})`);
      else if (presence === 'unknown') unknown++;
    }
    for (const c of keywordCalls)
      if (have.has(c.module.split('.')[0]))
        missing.push(...refusedKeywords(loadPackageApi(id, c.module.split('.')[0]), c, renamedKwargs(id)));
    return { id, date: getSnapshot(id).date, missing, unknown, ready: isSnapshotVenvReady(id) };
  });
  // A keyword no snapshot takes tells none apart (a call in a branch the run never takes): left out.
  const everywhere = (m: string) => m.includes('=) (line') && fits.every((f) => f.missing.includes(m));
  const common = new Set(fits.flatMap((f) => f.missing.filter(everywhere)));
  return fits.map((f) => ({ ...f, missing: f.missing.filter((m) => !common.has(m)) }));
}

/** Months between two `YYYY-MM[-DD]` dates (absolute). */
export function monthsApart(a: string, b: string): number {
  const m = (d: string) => Number(d.slice(0, 4)) * 12 + Number(d.slice(5, 7)) - 1;
  return Math.abs(m(a) - m(b));
}

/**
 * The snapshot to make the task on. `forced`: that one (an unknown id throws). Else among the
 * snapshots where every import exists: the nearest to `scriptDate` (ties: the later one); with no
 * date, the newest whose venv is built, else the newest. When none has everything, the one that
 * lacks least (the reason says what).
 */
export function inferSnapshot(
  script: string,
  opts: { scriptDate?: string; forced?: string; ids?: readonly string[] } = {},
): SnapshotChoice {
  if (opts.forced !== undefined) {
    const s = getSnapshot(opts.forced);
    const fits = snapshotFits(script, [s.id]);
    const lacks = fits[0].missing;
    return { id: s.id, reason: `forced with --snapshot${lacks.length ? `; it lacks ${lacks.join(', ')}` : ''}`, fits };
  }
  const fits = snapshotFits(script, opts.ids);
  const complete = fits.filter((f) => f.missing.length === 0);
  const n = importedApis(script).length;
  if (complete.length) {
    let chosen: SnapshotFit;
    let why: string;
    if (opts.scriptDate) {
      const d = opts.scriptDate;
      chosen = [...complete].sort((a, b) => monthsApart(a.date, d) - monthsApart(b.date, d) || b.date.localeCompare(a.date))[0]!;
      why = `is nearest to the script's date ${d.slice(0, 10)} (last commit)`;
    } else {
      const ready = complete.filter((f) => f.ready);
      chosen = (ready.length ? ready : complete).at(-1)!;
      why = `is the newest of them${ready.length ? ' whose environment is built' : ''} (the script has no date: not in a git repository)`;
    }
    const others = complete.filter((f) => f !== chosen).map((f) => f.id);
    return {
      id: chosen.id,
      reason: `all ${n} imports from ${INFERENCE_LIBRARIES.join('/')} exist in ${complete.map((f) => f.id).join(', ')}${others.length ? '' : ' only'}; ${chosen.id} ${why}`,
      fits,
    };
  }
  const best = [...fits].sort((a, b) => a.missing.length - b.missing.length || b.date.localeCompare(a.date))[0];
  return { id: best.id, reason: `no snapshot has every import; ${best.id} lacks fewest: ${best.missing.join(', ')}`, fits };
}

/**
 * When `module` (or a name imported from it) is missing from every snapshot the fits cover: the package's
 * releases those snapshots pin, in words (`trl 0.4.6 (2023-06) … 1.16.0 (2026-11)`); else undefined.
 */
export function missingFromEverySnapshot(fits: readonly SnapshotFit[], module: string): string | undefined {
  // Missing entries read `module.Name (line N)` (`from module import Name`) or `module (line N)` (`import module`).
  const names = (m: string) => m.replace(/ \(line \d+\)$/, '');
  const lacks = (m: string) =>
    names(m) === module ||
    (names(m).startsWith(`${module}.`) &&
      !names(m)
        .slice(module.length + 1)
        .includes('.'));
  if (!fits.length || !fits.every((f) => f.missing.some(lacks))) return undefined;
  const pkg = module.split('.')[0];
  const pins = [...fits].sort((a, b) => a.date.localeCompare(b.date)).map((f) => `${getSnapshot(f.id).versions[pkg] ?? '?'} (${f.id})`);
  return `${pkg} ${pins.length > 2 ? `${pins[0]} … ${pins.at(-1)}` : pins.join(', ')}`;
}

/** A class imported from an inference library, constructed with keywords (`DPOTrainer(model, beta=0.1)`). */
export interface KeywordCall {
  module: string;
  name: string;
  keywords: string[];
  line: number;
}

/** The keywords the script passes to classes it imports by name from the inference libraries. */
export function constructorKeywords(script: string, imports: readonly ImportedApi[] = importedApis(script)): KeywordCall[] {
  const idx = indexScript(parsePython(script));
  const byName = new Map(imports.filter((i) => i.name).map((i) => [i.name!, i.module]));
  const out: KeywordCall[] = [];
  for (const call of idx.calls) {
    const module = call.callee ? byName.get(call.callee) : undefined;
    const keywords = call.args.filter((a) => a.kind === 'keyword' && a.name).map((a) => a.name!);
    if (module && keywords.length) out.push({ module, name: call.callee!, keywords, line: script.slice(0, call.from).split('\n').length });
  }
  return out;
}

/**
 * The keywords a snapshot's class does not take (`trl.DPOTrainer(beta=) (line 203)`): from its recorded
 * `__init__`, when that has no `**kwargs` (which may take anything). A keyword an API dropped is as
 * much a mismatch as a name it dropped (trl 0.12 moved DPOTrainer's `beta` into DPOConfig).
 */
export function refusedKeywords(api: PackageApi, call: KeywordCall, renamed: RenamedKwargs = {}): string[] {
  const target = api.modules[call.module]?.names[call.name];
  const obj = target ? api.objects[target] : undefined;
  if (!obj || obj.kind !== 'class' || !obj.init) return [];
  if (obj.init.some((p) => p[1] === '**')) return [];
  // Keywords a deprecation decorator still takes under their old name (`Trainer(tokenizer=)` until transformers 5).
  const accepted = new Set([
    ...obj.init.filter((p) => p[1] === 'pk' || p[1] === 'k').map((p) => p[0]),
    ...Object.keys(renamed[`${target}.__init__`] ?? {}),
  ]);
  return call.keywords.filter((k) => !accepted.has(k)).map((k) => `${call.module}.${call.name}(${k}=) (line ${call.line})`);
}

const RenamedKwargsSchema = z.record(z.string(), z.record(z.string(), z.object({ new: z.string().nullable().optional() }).passthrough()));
/** `<object>.__init__` -> old keyword -> its new name, for keywords renamed by a deprecation decorator (snapshots/build.ts). */
export type RenamedKwargs = z.infer<typeof RenamedKwargsSchema>;
const renamedCache = new Map<string, RenamedKwargs>();

/** The snapshot's recorded renamed keywords (empty when it has none recorded). */
export function renamedKwargs(id: string): RenamedKwargs {
  let out = renamedCache.get(id);
  if (!out) {
    if (isDerivedId(id)) {
      // A derived environment's keywords, per library, from the snapshot that pins its release.
      const merged: RenamedKwargs = {};
      for (const [key, v] of Object.entries(renamedKwargs(parseDerivedId(id).base)))
        if (apiSourceOf(id, key.split('.')[0], allSnapshots()) === parseDerivedId(id).base) merged[key] = v;
      for (const lib of Object.keys(parseDerivedId(id).overrides))
        for (const [key, v] of Object.entries(renamedKwargs(apiSourceOf(id, lib, allSnapshots()))))
          if (key.split('.')[0] === lib) merged[key] = v;
      out = merged;
    } else {
      const file = join(snapshotApiDir(id), RENAMED_KWARGS_FILE);
      out = existsSync(file) ? RenamedKwargsSchema.parse(JSON.parse(readFileSync(file, 'utf8'))) : {};
    }
    renamedCache.set(id, out);
  }
  return out;
}

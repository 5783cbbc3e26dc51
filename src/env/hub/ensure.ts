// Builds the hub items a task needs (tiny models, synthetic datasets) with the snapshot's own
// interpreter, each once, and gives the run an HF_HOME holding the base hub plus exactly those items.
//
// - An item lives at <cache>/hub-items/<hubKey>/<kind>-<slug>-<key>/, laid out like an HF_HOME; its
//   key hashes the generator (make_hub.py, make_hub_items.py, the synthetic data) and the item's
//   recipe (a dataset's schema included), so two tasks that need the same dataset id with different
//   columns get two items. A refusal is cached too (same key), with its reason.
// - The run's hub is composed once per (base hub, set of items) at <cache>/hub-runs/<hubKey>/<key>/:
//   a copy of the base hub with the items copied over it (models are ~300 KB). No items: the base
//   hub itself, as before.
// - Builds and compositions happen under one lock per hub key; everything is written into a
//   temporary folder and renamed into place, the marker last.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { acquireDirLock } from '../dirLock';
import { generatorEnv, hubGeneratorDigest, HUB_KEY, HUB_READY_MARKER, makeHubScript } from './localHub';
import { resourcesDir, simlibsDir } from '../paths';
import { cacheRoot } from '../snapshots/venv';
import { resolveModel, UnknownModelError, type ModelArchitectures, type ModelRecipe } from './modelTable';
import type { DatasetNeed, HubNeeds } from './needs';
import { metricDigest, offlineMetrics } from './metrics';
import { hubFileId, hubFileKind } from './hubFiles';

export type HubItemErrorKind = 'unknown_model' | 'refused' | 'generator_failed' | 'aborted';

export class HubItemsError extends Error {
  override readonly name = 'HubItemsError';
  constructor(
    message: string,
    readonly kind: HubItemErrorKind,
    readonly refusals: HubRefusal[] = [],
  ) {
    super(message);
  }
}

export type HubItemKind = 'model' | 'dataset' | 'metric' | 'file';

export interface HubRefusal {
  kind: HubItemKind;
  id: string;
  reason: string;
}

export interface HubItemsResult {
  /** The run's HF_HOME (the base hub when the task needs no item). */
  hubDir: string;
  built: number;
  cached: number;
  /** Items that could not be provided, with the reason (never thrown unless `strict`). */
  refusals: HubRefusal[];
  /** The ids provided, with how each model's architecture was chosen. */
  provided: Array<{ kind: HubItemKind; id: string; detail: string }>;
}

export interface EnsureHubItemsOptions {
  /** The base hub's key (snapshot id or user-<hash>): items are cached per key. */
  hubKey: string;
  /** The snapshot's interpreter: it writes every file. */
  python: string;
  /** The base hub directory (localHub.ts). */
  baseHubDir: string;
  needs: HubNeeds;
  /** The task's files (a user's `<model>/config.json`). */
  files?: Readonly<Record<string, string>>;
  /** `forgeenv.real.modelArchitectures`: id -> model_type or a well-known id. */
  modelArchitectures?: ModelArchitectures;
  /** Throw HubItemsError when any item is refused (explicit needs); else report refusals. */
  strict?: boolean;
  /** Default: <cache> (FORGEENV_CACHE_DIR or ~/.cache/forgeenv). */
  cacheDir?: string;
  onProgress?: (msg: string) => void;
  signal?: AbortSignal;
}

const ITEM_MARKER = '.forgeenv-item.json';
const ItemMarkerSchema = z.object({
  ok: z.boolean(),
  reason: z.string().optional(),
  note: z.string().optional(),
  id: z.string(),
  seconds: z.number(),
});
const ItemLineSchema = z.object({
  index: z.number().int().nonnegative(),
  ok: z.boolean(),
  reason: z.string().optional(),
  note: z.string().optional(),
});

export const makeHubItemsScript = (): string => join(resourcesDir(), 'localhub', 'make_hub_items.py');

let itemsDigest: string | undefined;
/** The base generator's digest plus the item generator's. */
export function hubItemsGeneratorDigest(): string {
  if (itemsDigest) return itemsDigest;
  return (itemsDigest = createHash('sha256')
    .update(hubGeneratorDigest())
    .update(readFileSync(makeHubItemsScript()))
    .update(readFileSync(makeHubScript()))
    .digest('hex')
    .slice(0, 16));
}

type Planned = { kind: HubItemKind; id: string; spec: Record<string, unknown>; detail: string; dir: string };

const slug = (s: string): string => s.replace(/[^A-Za-z0-9._-]+/g, '--').slice(0, 60);
const hash = (v: unknown): string =>
  createHash('sha256').update(hubItemsGeneratorDigest()).update(JSON.stringify(v)).digest('hex').slice(0, 16);

function modelSpec(r: ModelRecipe): Record<string, unknown> {
  return {
    kind: 'model',
    id: r.id,
    model_type: r.model_type,
    head: r.head,
    tokenizer: r.tokenizer,
    chat_template: r.chat_template,
    config: r.config,
  };
}

function datasetSpec(d: DatasetNeed): Record<string, unknown> {
  return {
    kind: 'dataset',
    path: d.path,
    config: d.config ?? null,
    ...(d.data_dir ? { data_dir: d.data_dir } : {}),
    ...(d.config_kwargs ? { config_kwargs: d.config_kwargs } : {}),
    splits: d.splits ?? ['train', 'test'],
    columns: d.columns ?? {},
    labels: d.labels ?? {},
    ...(d.shapes ? { shapes: d.shapes } : {}),
    ...(d.rows ? { rows: d.rows } : {}),
  };
}

function diskDatasetSpec(d: DatasetNeed): Record<string, unknown> {
  if (d.format === 'parquet')
    return {
      kind: 'data_file',
      path: d.path,
      format: 'parquet',
      columns: d.columns ?? {},
      labels: d.labels ?? {},
      ...(d.rows ? { rows: d.rows } : {}),
    };
  return {
    kind: 'disk_dataset',
    path: d.path,
    splits: d.splits ?? null,
    columns: d.columns ?? {},
    labels: d.labels ?? {},
    ...(d.rows ? { rows: d.rows } : {}),
  };
}

/** Builds what is missing and returns the run's HF_HOME. */
export async function ensureHubItems(opts: EnsureHubItemsOptions): Promise<HubItemsResult> {
  const root = opts.cacheDir ?? cacheRoot();
  if (!HUB_KEY.test(opts.hubKey)) throw new HubItemsError(`invalid hub key "${opts.hubKey}"`, 'refused');
  const itemsDir = join(root, 'hub-items', opts.hubKey);
  const refusals: HubRefusal[] = [];
  const planned: Planned[] = [];
  for (const m of opts.needs.models) {
    let recipe: ModelRecipe;
    try {
      // An adapter has its base's recipe (same shapes as the base the hub serves), under its own id.
      recipe = m.adapter_of
        ? { ...resolveModel(m.adapter_of, { architecture: m.architecture, files: opts.files, mapping: opts.modelArchitectures }), id: m.id }
        : resolveModel(m.id, { architecture: m.architecture, files: opts.files, mapping: opts.modelArchitectures });
    } catch (e) {
      if (e instanceof UnknownModelError) {
        refusals.push({ kind: 'model', id: m.id, reason: e.message });
        continue;
      }
      throw e;
    }
    const spec = m.adapter_of ? { ...modelSpec(recipe), adapter_of: m.adapter_of } : modelSpec(recipe);
    planned.push({
      kind: 'model',
      id: m.id,
      spec,
      detail: `${m.adapter_of ? `LoRA adapter of ${m.adapter_of}, ` : ''}${recipe.model_type} (${recipe.resolvedBy})`,
      dir: join(itemsDir, `model-${slug(m.id)}-${hash(spec)}`),
    });
  }
  for (const d of opts.needs.datasets) {
    // Local data files go into the run folder (dataFiles.ts), not the hub; saved (`disk`) datasets are
    // built into the hub's disk/ folder and linked into the run folder (diskDatasets.ts).
    // Parquet files are binary: built by the hub too (files/<path>) and linked into the run folder.
    if (d.format && d.format !== 'disk' && d.format !== 'parquet') continue;
    const spec = d.format === 'disk' || d.format === 'parquet' ? diskDatasetSpec(d) : datasetSpec(d);
    planned.push({
      kind: 'dataset',
      id: [d.path, d.config, d.data_dir].filter(Boolean).join('/'),
      spec,
      detail: Object.keys(d.columns ?? {}).join(','),
      dir: join(itemsDir, `dataset-${slug(d.path)}-${hash(spec)}`),
    });
  }
  for (const name of opts.needs.metrics ?? []) {
    if (!offlineMetrics().includes(name)) {
      refusals.push({
        kind: 'metric',
        id: name,
        reason: `ForgeEnv has no offline script of the metric "${name}" (it serves ${offlineMetrics().join(', ')}; resources/localhub/metrics)`,
      });
      continue;
    }
    // The script's digest is part of the recipe: an edited metric script is a new item.
    const spec = { kind: 'metric', name, script: metricDigest(name) };
    planned.push({
      kind: 'metric',
      id: name,
      spec,
      detail: 'ForgeEnv offline metric script',
      dir: join(itemsDir, `metric-${slug(name)}-${hash(spec)}`),
    });
  }
  for (const f of opts.needs.files ?? []) {
    // A file of a hub repo the script fetches by URL: a synthetic file of the kind its extension names.
    const id = hubFileId(f);
    const fileKind = hubFileKind(f.path);
    if (!fileKind) {
      refusals.push({
        kind: 'file',
        id,
        reason: `ForgeEnv has no synthetic writer for a file like ${f.path} (it writes images, WAV audio and text)`,
      });
      continue;
    }
    const spec = { kind: 'hub_file', repo_type: f.repo_type, repo: f.repo, revision: f.revision, path: f.path, file_kind: fileKind };
    planned.push({ kind: 'file', id, spec, detail: `synthetic ${fileKind}`, dir: join(itemsDir, `file-${slug(id)}-${hash(spec)}`) });
  }
  if (opts.strict && refusals.length) throw refusalError(refusals);
  let built = 0;
  const ready = (p: Planned) => readItemMarker(p.dir);
  const missing = planned.filter((p) => !ready(p));
  if (missing.length) {
    mkdirSync(itemsDir, { recursive: true });
    const release = await acquireDirLock(`${itemsDir}.lock`, {
      onWait: () => opts.onProgress?.(`${opts.hubKey}: another process is building hub items; waiting`),
      signal: opts.signal,
      abortError: () => new HubItemsError(`hub items ${opts.hubKey}: aborted`, 'aborted'),
    });
    try {
      const still = missing.filter((p) => !ready(p));
      if (still.length) {
        built = still.length;
        await buildItems(still, opts);
      }
    } finally {
      release();
    }
  }
  const cached = planned.length - built;
  const provided: HubItemsResult['provided'] = [];
  const usable: Planned[] = [];
  for (const p of planned) {
    const mk = ready(p);
    if (mk?.ok) {
      usable.push(p);
      provided.push({ kind: p.kind, id: p.id, detail: mk.note ? `${p.detail}; ${mk.note}` : p.detail });
    } else refusals.push({ kind: p.kind, id: p.id, reason: mk?.reason ?? 'the generator wrote nothing' });
  }
  if (opts.strict && refusals.length) throw refusalError(refusals);
  const hubDir = usable.length ? await composeHub(opts, root, usable) : opts.baseHubDir;
  return { hubDir, built, cached, refusals, provided };
}

function refusalError(refusals: HubRefusal[]): HubItemsError {
  const unknown = refusals.every((r) => r.reason.includes('forgeenv.real.modelArchitectures'));
  return new HubItemsError(
    `ForgeEnv cannot provide ${refusals.map((r) => `${r.kind} ${r.id}: ${r.reason}`).join('; ')}`,
    unknown ? 'unknown_model' : 'refused',
    refusals,
  );
}

function readItemMarker(dir: string): z.infer<typeof ItemMarkerSchema> | undefined {
  try {
    const r = ItemMarkerSchema.safeParse(JSON.parse(readFileSync(join(dir, ITEM_MARKER), 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

async function buildItems(items: Planned[], opts: EnsureHubItemsOptions): Promise<void> {
  const tmps = items.map((p) => `${p.dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`);
  const specPath = `${tmps[0]}.spec.json`;
  const started = Date.now();
  opts.onProgress?.(`${opts.hubKey}: building ${items.length} hub item(s) (${items.map((p) => p.id).join(', ')}) with ${opts.python}`);
  try {
    writeFileSync(specPath, JSON.stringify({ items: items.map((p, i) => ({ ...p.spec, out: tmps[i] })) }));
    const lines = await runItemsGenerator(opts, specPath);
    const seconds = Math.round((Date.now() - started) / 100) / 10;
    items.forEach((p, i) => {
      const line = lines.get(i);
      const tmp = tmps[i];
      mkdirSync(tmp, { recursive: true });
      const marker = {
        ok: line?.ok === true,
        ...(line?.ok ? {} : { reason: line?.reason ?? 'the generator stopped before this item' }),
        ...(line?.note ? { note: line.note } : {}),
        id: p.id,
        seconds,
      };
      writeFileSync(join(tmp, ITEM_MARKER), JSON.stringify(marker, null, 2) + '\n');
      rmSync(p.dir, { recursive: true, force: true });
      renameSync(tmp, p.dir);
      opts.onProgress?.(
        `${opts.hubKey}: ${p.kind} ${p.id} ${marker.ok ? `ready${marker.note ? ` (${marker.note})` : ''}` : `refused: ${marker.reason}`}`,
      );
    });
  } finally {
    rmSync(specPath, { force: true });
    for (const t of tmps) rmSync(t, { recursive: true, force: true });
  }
}

function runItemsGenerator(opts: EnsureHubItemsOptions, specPath: string): Promise<Map<number, z.infer<typeof ItemLineSchema>>> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new HubItemsError('hub items: aborted', 'aborted'));
    // An empty working folder of its own: a relative path a script names (a dataset "resources/…")
    // must not resolve into, or leave lock files in, ForgeEnv's install folder.
    const cwd = mkdtempSync(join(tmpdir(), 'forgeenv-items-cwd-'));
    const child = spawn(opts.python, ['-u', makeHubItemsScript(), '--spec', specPath, '--simlibs', simlibsDir()], {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: generatorEnv(),
    });
    child.once('close', () => rmSync(cwd, { recursive: true, force: true }));
    const results = new Map<number, z.infer<typeof ItemLineSchema>>();
    let partial = '';
    let errTail = '';
    const onAbort = (): void => void child.kill('SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      partial += d.toString('utf8');
      const lines = partial.split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (!line.startsWith('[hub-item] ')) continue;
        try {
          const r = ItemLineSchema.safeParse(JSON.parse(line.slice('[hub-item] '.length)));
          if (r.success) results.set(r.data.index, r.data);
        } catch {
          // a malformed line counts as no answer for that item
        }
      }
    });
    child.stderr.on('data', (d: Buffer) => {
      errTail = (errTail + d.toString('utf8')).slice(-4000);
    });
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new HubItemsError(`cannot run ${opts.python}: ${e.message}`, 'generator_failed'));
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(new HubItemsError('hub items: aborted', 'aborted'));
      if (code !== 0 && results.size === 0)
        return reject(
          new HubItemsError(
            `make_hub_items.py failed (exit ${code}) with ${opts.python}:\n${errTail.trim().split('\n').slice(-6).join('\n')}`,
            'generator_failed',
          ),
        );
      resolve(results);
    });
  });
}

/** <cache>/hub-runs/<hubKey>/<key>: the base hub with the items copied over it, made once. */
async function composeHub(opts: EnsureHubItemsOptions, root: string, items: Planned[]): Promise<string> {
  const base = readMarkerText(opts.baseHubDir);
  const key = createHash('sha256')
    .update(base)
    .update(
      items
        .map((p) => p.dir)
        .sort()
        .join('\n'),
    )
    .digest('hex')
    .slice(0, 16);
  const runsDir = join(root, 'hub-runs', opts.hubKey);
  const dir = join(runsDir, key);
  if (existsSync(join(dir, HUB_READY_MARKER))) return dir;
  mkdirSync(runsDir, { recursive: true });
  const release = await acquireDirLock(`${dir}.lock`, {
    signal: opts.signal,
    abortError: () => new HubItemsError('hub items: aborted', 'aborted'),
  });
  try {
    if (existsSync(join(dir, HUB_READY_MARKER))) return dir;
    const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
    try {
      cpSync(opts.baseHubDir, tmp, { recursive: true, filter: (src) => !src.endsWith(HUB_READY_MARKER) });
      for (const p of items)
        for (const entry of readdirSync(p.dir))
          if (entry !== ITEM_MARKER) cpSync(join(p.dir, entry), join(tmp, entry), { recursive: true });
      writeFileSync(join(tmp, HUB_READY_MARKER), base);
      rmSync(dir, { recursive: true, force: true });
      renameSync(tmp, dir);
    } catch (e) {
      rmSync(tmp, { recursive: true, force: true });
      throw e;
    }
    return dir;
  } finally {
    release();
  }
}

function readMarkerText(dir: string): string {
  try {
    return readFileSync(join(dir, HUB_READY_MARKER), 'utf8');
  } catch {
    return dir;
  }
}

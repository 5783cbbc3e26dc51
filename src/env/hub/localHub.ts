// The local Hugging Face hub of `real` mode: an HF_HOME holding tiny random models, trained
// tokenizers, synthetic datasets with the real schemas and metric scripts for every name the corpus
// uses, so the real libraries run the corpus offline in seconds. It is written by
// resources/localhub/make_hub.py INSIDE the interpreter that will read it (files in each era's own
// formats), at <cache>/hub/<key>/, once: `.forgeenv-hub-ready.json` is written last and records a
// digest of the generator, so an edited generator rebuilds it.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir, simlibsDir } from '../paths';
import { acquireDirLock } from '../dirLock';
import { cacheRoot } from '../snapshots/venv';

export const HUB_READY_MARKER = '.forgeenv-hub-ready.json';

const HubMarkerSchema = z.object({
  format: z.literal(1),
  key: z.string(),
  digest: z.string(),
  python: z.string(),
  created_at: z.string(),
  seconds: z.number(),
});
export type HubMarker = z.infer<typeof HubMarkerSchema>;

export class LocalHubError extends Error {
  override readonly name = 'LocalHubError';
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

export const makeHubScript = (): string => join(resourcesDir(), 'localhub', 'make_hub.py');

/** A hub key: a snapshot id, a derived environment's (`2025-03+datasets@2.20.0`), or `user-<hash>`; one path part. */
export const HUB_KEY = /^[A-Za-z0-9][A-Za-z0-9._+@-]*$/;

/** `<cache>/hub/<key>` (a snapshot id, or `user-<hash>` for a user's interpreter). */
export function localHubDir(key: string): string {
  if (!HUB_KEY.test(key)) throw new Error(`invalid local hub key "${key}"`);
  return join(cacheRoot(), 'hub', key);
}

let digestCache: string | undefined;

/** Digest of everything the hub's content depends on: the generator and the synthetic data. */
export function hubGeneratorDigest(): string {
  if (digestCache) return digestCache;
  const h = createHash('sha256');
  for (const f of [
    makeHubScript(),
    join(simlibsDir(), '_forgeenv_sim', 'synthetic.py'),
    join(simlibsDir(), '_forgeenv_sim', 'hashing.py'),
    join(simlibsDir(), '_forgeenv_sim', 'imaging.py'),
  ]) {
    h.update(f.split('/').slice(-2).join('/'));
    h.update(readFileSync(f));
  }
  return (digestCache = h.digest('hex').slice(0, 16));
}

export function readHubMarker(key: string): HubMarker | undefined {
  try {
    const r = HubMarkerSchema.safeParse(JSON.parse(readFileSync(join(localHubDir(key), HUB_READY_MARKER), 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** True when the hub is complete and was written by the current generator. */
export function isLocalHubReady(key: string): boolean {
  return readHubMarker(key)?.digest === hubGeneratorDigest();
}

export interface HubOptions {
  onProgress?: (msg: string) => void;
  signal?: AbortSignal;
}

/** The environment make_hub.py runs in: offline, single-threaded, no stand-in libraries. */
export function generatorEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.PYTHONPATH;
  delete env.FORGEENV_LIBRARY_VERSIONS;
  delete env.PYTHONDONTWRITEBYTECODE;
  env.PYTHONPYCACHEPREFIX = join(cacheRoot(), 'pycache');
  env.PYTHONUNBUFFERED = '1';
  env.PYTHONIOENCODING = 'utf-8';
  env.PYTHONHASHSEED = '0';
  return env;
}

/** Builds the hub `key` with `python` unless it is ready; resolves to its directory (the HF_HOME). */
export async function ensureLocalHub(key: string, python: string, opts: HubOptions = {}): Promise<string> {
  const dir = localHubDir(key);
  if (isLocalHubReady(key)) return dir;
  const release = await acquireLock(key, opts);
  try {
    if (isLocalHubReady(key)) return dir;
    await buildHub(key, python, opts);
    return dir;
  } finally {
    release();
  }
}

async function buildHub(key: string, python: string, opts: HubOptions): Promise<void> {
  const progress = opts.onProgress ?? (() => undefined);
  const dir = localHubDir(key);
  const tmp = `${dir}.tmp-${process.pid}-${randomBytes(4).toString('hex')}`;
  const started = Date.now();
  mkdirSync(join(cacheRoot(), 'hub'), { recursive: true });
  progress(`${key}: building the local hub (tiny models, tokenizers, datasets, metrics) with ${python}`);
  try {
    await runGenerator(python, ['-u', makeHubScript(), '--out', tmp, '--simlibs', simlibsDir()], key, opts);
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (e) {
    rmSync(tmp, { recursive: true, force: true });
    throw e;
  }
  const marker: HubMarker = {
    format: 1,
    key,
    digest: hubGeneratorDigest(),
    python,
    created_at: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
  writeFileSync(join(dir, HUB_READY_MARKER), JSON.stringify(marker, null, 2) + '\n');
  progress(`${key}: local hub ready in ${marker.seconds}s (${dir})`);
}

function runGenerator(python: string, args: string[], key: string, opts: HubOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new LocalHubError(`local hub ${key}: aborted`, ''));
    // An empty working folder of its own, never ForgeEnv's install folder (see hub/ensure.ts).
    const cwd = mkdtempSync(join(tmpdir(), 'forgeenv-hub-cwd-'));
    const child = spawn(python, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'], env: generatorEnv(), detached: false });
    child.once('close', () => rmSync(cwd, { recursive: true, force: true }));
    let output = '';
    let partial = '';
    const onAbort = (): void => void child.kill('SIGTERM');
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => {
      const text = d.toString('utf8');
      output += text;
      partial += text;
      const lines = partial.split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('[hub] ')) opts.onProgress?.(`${key}: ${line.slice(6)}`);
    });
    child.stderr.on('data', (d: Buffer) => {
      output += d.toString('utf8');
      if (output.length > 2_000_000) output = output.slice(-1_000_000);
    });
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new LocalHubError(`local hub ${key}: cannot run ${python}: ${e.message}`, output));
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(new LocalHubError(`local hub ${key}: aborted`, output));
      if (code === 0) return resolve();
      const tail = output.trim().split(/\r?\n/).slice(-8).join('\n');
      reject(new LocalHubError(`local hub ${key}: make_hub.py failed (exit ${code}) with ${python}:\n${tail}`, output));
    });
  });
}

/** A lock directory per hub so that two processes never build the same hub at once. */
function acquireLock(key: string, opts: HubOptions): Promise<() => void> {
  return acquireDirLock(`${localHubDir(key)}.lock`, {
    onWait: () => opts.onProgress?.(`${key}: another process is building this local hub; waiting`),
    signal: opts.signal,
    abortError: () => new LocalHubError(`local hub ${key}: aborted`, ''),
  });
}

/** Whether the hub directory exists at all (ready or not), for messages. */
export function localHubExists(key: string): boolean {
  return existsSync(localHubDir(key));
}

// One managed virtual environment per library snapshot, holding the real pinned releases:
// <cache>/venvs/<id>/ (see docs/snapshots.md). Created with uv (pip when uv is missing); every
// process is spawned with an argument array. `.forgeenv-ready.json` is written last, so a venv
// without it (interrupted, failed) is rebuilt from scratch next time; a rebuild happens in a
// staging directory that replaces the old venv only once complete.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { acquireDirLock } from '../dirLock';
import { ensureTrainingExtras } from './extras';
import { excludeNewerOf, getSnapshot, snapshotRequirements, snapshotsFile, type Snapshot } from './registry';

export const READY_MARKER = '.forgeenv-ready.json';

/** `$FORGEENV_CACHE_DIR`, else `~/.cache/forgeenv`. */
export function cacheRoot(): string {
  const env = process.env.FORGEENV_CACHE_DIR;
  return env && env.trim() ? env : join(homedir(), '.cache', 'forgeenv');
}

/** `<cache>/venvs/<id>` (the id must be a known snapshot). */
export function snapshotVenvDir(id: string): string {
  getSnapshot(id);
  return join(cacheRoot(), 'venvs', id);
}

/** The venv's interpreter path, whether or not it exists yet. */
export function snapshotPython(id: string): string {
  return venvPython(snapshotVenvDir(id));
}

const ReadyMarkerSchema = z.object({
  format: z.literal(1),
  id: z.string(),
  /** The requirement strings it was built from: a changed snapshot definition makes it stale. */
  requirements: z.array(z.string()),
  /** uv's `--exclude-newer` instant (the snapshot's cut-off): transitive dependencies are those of that day. */
  exclude_newer: z.string().optional(),
  /** Import name → version reported by importlib.metadata inside the venv. */
  installed: z.record(z.string(), z.string().nullable()),
  installer: z.enum(['uv', 'pip']),
  created_at: z.string(),
  seconds: z.number(),
});
export type ReadyMarker = z.infer<typeof ReadyMarkerSchema>;

/** The ready marker of a complete venv, or undefined. */
export function readReadyMarker(id: string): ReadyMarker | undefined {
  const path = join(snapshotVenvDir(id), READY_MARKER);
  if (!existsSync(path)) return undefined;
  try {
    const r = ReadyMarkerSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** True when the venv is complete and was built from the snapshot's current requirements. */
export function isSnapshotVenvReady(id: string): boolean {
  const marker = readReadyMarker(id);
  if (!marker || !existsSync(snapshotPython(id))) return false;
  const snap = getSnapshot(id);
  const want = snapshotRequirements(snap);
  if (marker.installer === 'uv' && marker.exclude_newer !== excludeNewerOf(snap)) return false;
  return marker.requirements.length === want.length && marker.requirements.every((r, i) => r === want[i]);
}

/** An install that failed; `requirement` is the `name==version` the installer choked on, when known. */
export class SnapshotInstallError extends Error {
  constructor(
    message: string,
    readonly snapshot: string,
    readonly requirement: string | undefined,
    readonly output: string,
  ) {
    super(message);
    this.name = 'SnapshotInstallError';
  }
}

export interface EnsureOptions {
  onProgress?: (msg: string) => void;
  signal?: AbortSignal;
}

/** Creates (or reuses) the snapshot's venv; resolves to its interpreter path. */
export async function ensureSnapshotVenv(id: string, opts: EnsureOptions = {}): Promise<string> {
  const snap = getSnapshot(id);
  const python = snapshotPython(id);
  if (!isSnapshotVenvReady(id)) {
    const release = await acquireLock(id, opts);
    try {
      // Another process may have finished it while we waited for the lock.
      if (!isSnapshotVenvReady(id)) await buildVenv(snap, opts);
    } finally {
      release();
    }
  }
  // Common training extras beside the pins (extras.ts): once per venv, best effort, pins unchanged.
  await ensureTrainingExtras(id, snapshotVenvDir(id), python, { onProgress: opts.onProgress, signal: opts.signal, uv: await findUv() });
  return python;
}

async function buildVenv(snap: Snapshot, opts: EnsureOptions): Promise<void> {
  const progress = opts.onProgress ?? (() => undefined);
  const dir = snapshotVenvDir(snap.id);
  const venvs = join(cacheRoot(), 'venvs');
  // Built beside the live venv and swapped in by rename, so that processes using an older build of
  // this snapshot are not left without their interpreter halfway through (uv venvs are relocatable).
  const staging = join(venvs, `.${snap.id}.staging-${process.pid}`);
  const python = venvPython(staging);
  const reqs = snapshotRequirements(snap);
  const started = Date.now();
  mkdirSync(venvs, { recursive: true });
  removeLeftovers(venvs, snap.id); // we hold the lock: any staging/old dir of this id is abandoned
  const wantPython = snapshotsFile().python;
  const uv = await findUv();
  const installer = uv ? 'uv' : 'pip';
  progress(`${snap.id}: creating venv (Python ${wantPython}, ${installer}) in ${dir}`);
  try {
    if (uv) {
      await run(uv, ['venv', '--relocatable', '--python', wantPython, '--no-project', staging], snap.id, opts, 'venv');
      progress(`${snap.id}: installing ${reqs.length} requirements with uv`);
      // --exclude-newer: the unpinned dependencies (numpy, pyarrow, fsspec, …) are those of the cut-off day too, so
      // an old set installs as it was then rather than beside today's releases.
      await run(uv, ['pip', 'install', '--python', python, '--exclude-newer', excludeNewerOf(snap), ...reqs], snap.id, opts, 'install');
    } else {
      await run(`python${wantPython}`, ['-m', 'venv', staging], snap.id, opts, 'venv');
      progress(`${snap.id}: installing ${reqs.length} requirements with pip`);
      await run(python, ['-m', 'pip', 'install', '--disable-pip-version-check', ...reqs], snap.id, opts, 'install');
    }
    const installed = await installedVersions(python, Object.keys(snap.versions), snap.id, opts);
    const marker: ReadyMarker = {
      format: 1,
      id: snap.id,
      requirements: reqs,
      ...(uv ? { exclude_newer: excludeNewerOf(snap) } : {}),
      installed,
      installer,
      created_at: new Date().toISOString(),
      seconds: Math.round((Date.now() - started) / 100) / 10,
    };
    writeFileSync(join(staging, READY_MARKER), JSON.stringify(marker, null, 2) + '\n');
    const old = join(venvs, `.${snap.id}.old-${process.pid}`);
    if (existsSync(dir)) renameSync(dir, old);
    renameSync(staging, dir);
    rmSync(old, { recursive: true, force: true });
    progress(`${snap.id}: venv ready in ${marker.seconds}s`);
  } catch (e) {
    rmSync(staging, { recursive: true, force: true });
    throw e;
  }
}

function venvPython(dir: string): string {
  return process.platform === 'win32' ? join(dir, 'Scripts', 'python.exe') : join(dir, 'bin', 'python');
}

function removeLeftovers(venvs: string, id: string): void {
  for (const name of readdirSync(venvs)) {
    if (name.startsWith(`.${id}.staging-`) || name.startsWith(`.${id}.old-`)) rmSync(join(venvs, name), { recursive: true, force: true });
  }
}

async function installedVersions(python: string, names: string[], id: string, opts: EnsureOptions): Promise<Record<string, string | null>> {
  const code = [
    'import json, sys, importlib.metadata as m',
    'out = {}',
    'for n in sys.argv[1:]:',
    '    try: out[n] = m.version(n)',
    '    except m.PackageNotFoundError: out[n] = None',
    'print(json.dumps(out))',
  ].join('\n');
  const { stdout } = await run(python, ['-c', code, ...names], id, opts, 'check');
  return z.record(z.string(), z.string().nullable()).parse(JSON.parse(stdout.trim().split('\n').pop() ?? '{}'));
}

let uvPath: Promise<string | undefined> | undefined;

/** `$FORGEENV_UV`, else `uv` on PATH when it answers `--version`. */
function findUv(): Promise<string | undefined> {
  const candidate = process.env.FORGEENV_UV || 'uv';
  return (uvPath ??= new Promise((resolve) => {
    const child = spawn(candidate, ['--version'], { stdio: 'ignore' });
    child.on('error', () => resolve(undefined));
    child.on('close', (code) => resolve(code === 0 ? candidate : undefined));
  }));
}

const PROGRESS_LINE = /^\s*(Using|Creating|Resolved|Prepared|Installed|Uninstalled|Audited|Downloading|Downloaded|Building|Built)\b/;

function run(
  cmd: string,
  args: string[],
  id: string,
  opts: EnsureOptions,
  step: 'venv' | 'install' | 'check',
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    if (opts.signal?.aborted) return reject(new Error(`snapshot ${id}: aborted`));
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    let partial = '';
    const onAbort = (): void => {
      child.kill('SIGTERM');
    };
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      const text = d.toString();
      stderr += text;
      partial += text;
      const lines = partial.split(/\r?\n/);
      partial = lines.pop() ?? '';
      for (const line of lines) if (PROGRESS_LINE.test(line)) opts.onProgress?.(`${id}: ${line.trim()}`);
    });
    child.on('error', (e) => {
      opts.signal?.removeEventListener('abort', onAbort);
      reject(new SnapshotInstallError(`snapshot ${id}: cannot run ${cmd}: ${e.message}`, id, undefined, ''));
    });
    child.on('close', (code) => {
      opts.signal?.removeEventListener('abort', onAbort);
      if (opts.signal?.aborted) return reject(new Error(`snapshot ${id}: aborted`));
      if (code === 0) return resolve({ stdout, stderr });
      const output = `${stdout}\n${stderr}`;
      const reqs = step === 'install' ? snapshotRequirements(getSnapshot(id)) : [];
      const failed = step === 'install' ? failedRequirement(output, reqs) : undefined;
      const what = failed ? `installing ${failed} failed` : `${step} step failed (exit ${code})`;
      reject(new SnapshotInstallError(`snapshot ${id}: ${what}: ${keyLines(output)}`, id, failed, output));
    });
  });
}

/**
 * The `name==version` an installer's error output is about. uv says e.g. "Because there is no
 * version of trl==0.10.0 …" or "Failed to download `torch==2.0.1`"; pip "No matching distribution
 * found for trl==0.10.0". A requirement of ours that the output names wins over a transitive one.
 */
export function failedRequirement(output: string, requirements: readonly string[]): string | undefined {
  const norm = (s: string): string => s.toLowerCase().replace(/[-_.]+/g, '-');
  const mentioned = [...output.matchAll(/([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([0-9][0-9A-Za-z.+!-]*[0-9A-Za-z])/g)].map(
    (m) => `${norm(m[1])}==${m[2]}`,
  );
  const ours = requirements
    .filter((r) => r.includes('=='))
    .map((r) => {
      const [n, v] = r.split('==');
      return `${norm(n)}==${v}`;
    });
  const hit = mentioned.find((m) => ours.includes(m));
  if (hit) return requirements[ours.indexOf(hit)];
  // A bare package name of ours in a "Failed to …" / "no version of" line, without its version.
  for (const r of requirements) {
    const name = r.split(/[=<>!~ ;[]/)[0];
    const re = new RegExp(
      `(no (matching )?(version|distribution)[^\\n]*\\b|Failed to \\w+ [\`']?)${name.replace(/[-_]/g, '[-_]')}\\b`,
      'i',
    );
    if (re.test(output)) return r;
  }
  return mentioned[0];
}

/** The lines of an installer's output that say what went wrong, shortened. */
function keyLines(output: string): string {
  const lines = output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => /(error|×|╰─▶|because|caused by|no matching|could not|failed)/i.test(l));
  const text = (lines.length ? lines : output.trim().split(/\r?\n/).slice(-5)).join(' ').replace(/\s+/g, ' ');
  return text.length > 600 ? `${text.slice(0, 600)}…` : text;
}

/** A lock directory per snapshot so that two processes never build the same venv at once. */
function acquireLock(id: string, opts: EnsureOptions): Promise<() => void> {
  return acquireDirLock(join(cacheRoot(), 'venvs', `${id}.lock`), {
    onWait: () => opts.onProgress?.(`${id}: another process is building this venv; waiting`),
    signal: opts.signal,
    abortError: () => new Error(`snapshot ${id}: aborted`),
    pollMs: 2000,
  });
}

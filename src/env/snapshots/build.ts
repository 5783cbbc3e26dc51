// Builds a snapshot's API data: ensures its venv, runs resources/snapshots/introspect.py there once
// per package (one interpreter each, so one package's imports cannot hide another's failures) and
// writes resources/snapshots/api/<id>/<package>.json. When the drift catalog's probe runner exists
// (resources/drifts/probe_runner.py), its old-form outcomes fill each file's `deprecations`.
import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resourcesDir } from '../paths';
import { snapshotApiDir, snapshotApiFile } from './api';
import { getSnapshot } from './registry';
import { ensureSnapshotVenv, type EnsureOptions } from './venv';

/** One package's introspection may import a thousand modules; generous but bounded. */
const INTROSPECT_TIMEOUT_MS = 30 * 60_000;
const PROBES_TIMEOUT_MS = 30 * 60_000;

export interface BuildOptions extends EnsureOptions {
  /** Only these packages (default: all of the snapshot's). */
  packages?: string[];
  /** Run the drift catalog probes for `deprecations` when the runner exists (default true). */
  deprecations?: boolean;
}

export interface PackageBuildResult {
  package: string;
  file: string;
  bytes: number;
  seconds: number;
}

export interface SnapshotBuildResult {
  id: string;
  python: string;
  venvSeconds: number;
  probesSeconds: number | undefined;
  packages: PackageBuildResult[];
}

export const introspectScript = (): string => join(resourcesDir(), 'snapshots', 'introspect.py');
export const renamedKwargsScript = (): string => join(resourcesDir(), 'snapshots', 'renamed_kwargs.py');
/** Beside the package files; the leading underscore keeps it out of the package list. */
export const RENAMED_KWARGS_FILE = '_renamed_kwargs.json';
const probeRunner = (): string => join(resourcesDir(), 'drifts', 'probe_runner.py');
const driftCatalog = (): string => join(resourcesDir(), 'drifts', 'catalog.json');

export async function buildSnapshotApi(id: string, opts: BuildOptions = {}): Promise<SnapshotBuildResult> {
  const snap = getSnapshot(id);
  const progress = opts.onProgress ?? (() => undefined);
  const all = Object.keys(snap.versions);
  const packages = opts.packages ?? all;
  const unknown = packages.filter((p) => !all.includes(p));
  if (unknown.length) throw new Error(`snapshot ${id} has no package ${unknown.join(', ')} (it has ${all.join(', ')})`);

  const t0 = Date.now();
  const python = await ensureSnapshotVenv(id, opts);
  const venvSeconds = secondsSince(t0);
  const work = mkdtempSync(join(tmpdir(), `forgeenv-build-${id}-`));
  try {
    let depsFile: string | undefined;
    let probesSeconds: number | undefined;
    if (opts.deprecations !== false && existsSync(probeRunner()) && existsSync(driftCatalog())) {
      const t = Date.now();
      progress(`${id}: running the drift catalog's old-form probes for deprecations`);
      depsFile = join(work, 'deprecations.json');
      const args = [
        probeRunner(),
        '--catalog',
        driftCatalog(),
        '--forms',
        'old',
        '--out',
        join(work, 'probes.json'),
        '--deprecations',
        depsFile,
      ];
      try {
        await runPython(python, args, work, PROBES_TIMEOUT_MS, opts.signal);
      } catch (e) {
        // Deprecations are an extra; the API data is still worth writing.
        progress(`${id}: probe runner failed, deprecations left empty: ${(e as Error).message.slice(0, 300)}`);
        depsFile = undefined;
      }
      probesSeconds = secondsSince(t);
      progress(`${id}: probes done in ${probesSeconds}s`);
    }
    mkdirSync(snapshotApiDir(id), { recursive: true });
    const results: PackageBuildResult[] = [];
    for (const pkg of packages) {
      const t = Date.now();
      progress(`${id}: introspecting ${pkg} ${snap.versions[pkg]}`);
      const tmpOut = join(work, `${pkg}.json`);
      const args = [introspectScript(), pkg, tmpOut, ...(depsFile && existsSync(depsFile) ? ['--deprecations', depsFile] : [])];
      const { stderr } = await runPython(python, args, work, INTROSPECT_TIMEOUT_MS, opts.signal);
      const file = snapshotApiFile(id, pkg);
      renameOrCopy(tmpOut, file);
      const r = { package: pkg, file, bytes: statSync(file).size, seconds: secondsSince(t) };
      results.push(r);
      const summary = stderr.trim().split('\n').pop() ?? '';
      progress(`${id}: ${pkg} done in ${r.seconds}s, ${(r.bytes / 1024).toFixed(0)} KiB (${summary.replace(/^.*?\(/, '(')})`);
    }
    // Keywords the real releases still accept through renaming decorators (their recorded signatures are the
    // unwrapped ones): read by the simulated libraries' API layer. Only after the package files exist.
    if (packages.length === all.length) {
      const t = Date.now();
      progress(`${id}: recording keywords renamed by decorators`);
      const tmpOut = join(work, RENAMED_KWARGS_FILE);
      await runPython(python, [renamedKwargsScript(), snapshotApiDir(id), tmpOut], work, INTROSPECT_TIMEOUT_MS, opts.signal);
      renameOrCopy(tmpOut, join(snapshotApiDir(id), RENAMED_KWARGS_FILE));
      progress(`${id}: renamed keywords done in ${secondsSince(t)}s`);
    }
    return { id, python, venvSeconds, probesSeconds, packages: results };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function secondsSince(t: number): number {
  return Math.round((Date.now() - t) / 100) / 10;
}

function renameOrCopy(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch {
    // Across file systems (tmpdir on tmpfs): copy then remove.
    copyFileSync(from, to);
    rmSync(from, { force: true });
  }
}

function runPython(
  python: string,
  args: string[],
  cwd: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, {
      cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, PYTHONHASHSEED: '0', HF_HUB_OFFLINE: '1', TOKENIZERS_PARALLELISM: 'false', PYTHONDONTWRITEBYTECODE: '1' },
    });
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    const onAbort = (): void => {
      child.kill('SIGTERM');
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => {
      stderr += d.toString();
      if (stderr.length > 2_000_000) stderr = stderr.slice(-1_000_000);
    });
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      if (code === 0) return resolve({ stdout, stderr });
      const tail = stderr.trim().split('\n').slice(-8).join('\n');
      reject(new Error(`${args[0]} ${args[1] ?? ''} failed (${sig ?? `exit ${code}`}):\n${tail}`));
    });
  });
}

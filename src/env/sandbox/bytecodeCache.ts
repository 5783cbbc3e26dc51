// The shared bytecode cache (PYTHONPYCACHEPREFIX) under the sandbox. A script that could write it
// could plant a compiled module that every later run imports, so inside the sandbox the cache is
// read-only, and a trusted step fills it first: compileall over the standard library, the stand-ins
// (simulated) or site-packages (real), plus the stand-ins' API-surface cache of the snapshot (see
// resources/simlibs/_forgeenv_sim/surface_data.py). It runs once per interpreter, folder set and
// version set: markers in `<cache>/.forgeenv-warm/` record it. Modules missing from the cache are
// compiled in memory by the run (Python ignores the failed write).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, realpathSync, statSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const WARM_FORMAT = 1;
const WARM_TIMEOUT_MS = 15 * 60_000;
const MARKERS = '.forgeenv-warm';

export interface WarmRequest {
  /** The interpreter executable that will run the scripts. */
  python: string;
  /** The cache folder (PYTHONPYCACHEPREFIX). */
  cacheDir: string;
  /** Folders compiled with test folders and nested site-packages skipped (the standard library). */
  stdlib: string[];
  /** Folders compiled whole except test folders (site-packages, the stand-ins). */
  libraries: string[];
  /**
   * Simulated mode: build the stand-ins' surface cache too, for the snapshot the stand-ins choose
   * from these variables (FORGEENV_LIBRARY_VERSIONS, FORGEENV_SNAPSHOT, FORGEENV_API_DIR).
   */
  surface?: { simlibs: string; env: Record<string, string> };
  /** The run's environment (the surface cache reads FORGEENV_* and PYTHONPYCACHEPREFIX). */
  env: NodeJS.ProcessEnv;
  onProgress?: (message: string) => void;
}

const PY = [
  'import compileall, json, os, re, sys',
  'spec = json.loads(sys.argv[1])',
  'tests = re.compile(r"[\\\\/](tests?|idlelib|tkinter|turtledemo|lib2to3|ensurepip)[\\\\/]")',
  'std = re.compile(tests.pattern + r"|[\\\\/](site|dist)-packages[\\\\/]")',
  'for d in spec["stdlib"]:',
  '    compileall.compile_dir(d, quiet=2, workers=0, rx=std)',
  'for d in spec["libraries"]:',
  '    compileall.compile_dir(d, quiet=2, workers=0, rx=tests)',
  's = spec.get("surface")',
  'if s:',
  '    os.environ.update(s["env"])',
  '    sys.path.insert(0, s["simlibs"])',
  '    from _forgeenv_sim import surface_data',
  '    chosen = surface_data.select()  # the same choice the stand-ins make in a run',
  '    if chosen:',
  '        api, snap = chosen',
  '        for f in sorted(os.listdir(os.path.join(api, snap))):',
  '            if f.endswith(".json") and not f.startswith("_"):',
  '                surface_data.load(api, snap, f[:-5])',
].join('\n');

const inFlight = new Map<string, Promise<boolean>>();

function stamp(path: string): string {
  try {
    const real = realpathSync(path);
    return `${real}@${statSync(real).mtimeMs}`;
  } catch {
    return path;
  }
}

/**
 * The API data the surface cache is made from: each JSON file of the run's snapshot (of every
 * snapshot when the run names none) with its size and time. The stand-ins name their cache files
 * after these, so data added or changed since the marker (a pull, another branch) needs the step
 * again: without it the stand-ins parse that JSON in every run (read-only cache in the sandbox),
 * which made each simulated run and zygote 2.5 times as large (78 MiB) and slower to start and end.
 */
function surfaceStamp(env: Record<string, string>): string[] {
  const api = env.FORGEENV_API_DIR;
  if (!api) return [];
  try {
    const snapshots = env.FORGEENV_SNAPSHOT ? [env.FORGEENV_SNAPSHOT] : readdirSync(api).sort();
    return snapshots.flatMap((snap) => {
      const dir = join(api, snap);
      if (!statSync(dir).isDirectory()) return [];
      return readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .map((f) => {
          const st = statSync(join(dir, f));
          return `${snap}/${f}:${st.size}:${st.mtimeMs}`;
        });
    });
  } catch {
    return [];
  }
}

const hashOf = (parts: unknown[]) =>
  createHash('sha256')
    .update(JSON.stringify([WARM_FORMAT, ...parts]))
    .digest('hex')
    .slice(0, 32);

/**
 * Fills the cache unless markers say it was done; resolves false when the step failed (runs still
 * work, slower). Two markers: compiling (per interpreter and folders, slow once) and the surface
 * cache (per interpreter and versions, quick once the snapshot's data is cached).
 */
export function warmBytecodeCache(req: WarmRequest): Promise<boolean> {
  const compileKey = hashOf([stamp(req.python), req.cacheDir, req.stdlib, req.libraries.map(stamp)]);
  const surfaceKey = req.surface ? hashOf([stamp(req.python), req.cacheDir, req.surface, surfaceStamp(req.surface.env)]) : undefined;
  const marker = (k: string) => join(req.cacheDir, MARKERS, k);
  const compile = !existsSync(marker(compileKey));
  const surface = surfaceKey !== undefined && !existsSync(marker(surfaceKey));
  if (!compile && !surface) return Promise.resolve(true);
  const key = `${compile ? compileKey : ''}/${surface ? surfaceKey : ''}`;
  let p = inFlight.get(key);
  if (!p) {
    const markers = [...(compile ? [marker(compileKey)] : []), ...(surface ? [marker(surfaceKey)] : [])];
    p = run(
      { ...req, stdlib: compile ? req.stdlib : [], libraries: compile ? req.libraries : [], surface: surface ? req.surface : undefined },
      markers,
      compile,
    ).finally(() => inFlight.delete(key));
    inFlight.set(key, p);
  }
  return p;
}

function run(req: WarmRequest, markers: string[], compiling: boolean): Promise<boolean> {
  if (compiling) {
    const what = req.surface
      ? 'the standard library and the simulated libraries'
      : `the standard library and ${req.libraries.length ? req.libraries.join(', ') : 'nothing else'}`;
    req.onProgress?.(`compiling ${what} into the bytecode cache (once)`);
  }
  const started = Date.now();
  return new Promise<boolean>((resolve) => {
    try {
      mkdirSync(join(req.cacheDir, MARKERS), { recursive: true });
    } catch {
      resolve(false);
      return;
    }
    const spec = JSON.stringify({ stdlib: req.stdlib, libraries: req.libraries, surface: req.surface });
    let child;
    try {
      // -I: nothing from the environment configures the interpreter; the cache folder is given explicitly.
      child = spawn(req.python, ['-I', '-X', `pycache_prefix=${req.cacheDir}`, '-c', PY, spec], {
        env: req.env,
        stdio: ['ignore', 'ignore', 'pipe'],
        windowsHide: true,
      });
    } catch {
      resolve(false);
      return;
    }
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), WARM_TIMEOUT_MS);
    child.stderr.on('data', (b: Buffer) => (err = (err + b.toString('utf8')).slice(-2000)));
    child.on('error', () => {
      clearTimeout(timer);
      resolve(false);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) {
        req.onProgress?.(
          `filling the bytecode cache failed (exit ${code}); runs compile what they import: ${err.trim().split('\n').pop() ?? ''}`,
        );
        resolve(false);
        return;
      }
      const note =
        JSON.stringify({ format: WARM_FORMAT, python: req.python, seconds: (Date.now() - started) / 1000, at: new Date().toISOString() }) +
        '\n';
      for (const m of markers) {
        try {
          writeFileSync(m, note);
        } catch {
          // read-only cache folder: nothing to remember, the runs still work
        }
      }
      resolve(true);
    });
  });
}

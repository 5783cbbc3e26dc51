// The environment a script starts from: an allowlist, never the parent's whole environment (which
// holds tokens, cloud keys and whatever else the editor was started with; anything a script can read
// it can print, and its output goes into error traces and the dataset). The executor then adds its
// own Python and mode variables and the caller's `extraEnv`.
const ALLOWED = new Set(['PATH', 'LANG', 'LANGUAGE', 'TZ']);
const ALLOWED_PREFIXES = ['LC_'];
/** What Python itself needs on Windows (names compared case-insensitively there). */
const WINDOWS_ALLOWED = new Set([
  'PATHEXT',
  'SYSTEMROOT',
  'SYSTEMDRIVE',
  'WINDIR',
  'COMSPEC',
  'NUMBER_OF_PROCESSORS',
  'PROCESSOR_ARCHITECTURE',
]);

export interface CleanEnvOptions {
  /** Names the user allows on top of the allowlist (forgeenv.sandbox.passEnv). */
  passEnv: readonly string[];
  /** HOME (and USERPROFILE on Windows): the run folder, so nothing reads or writes the real home. */
  home: string;
  /** TMPDIR (TEMP and TMP on Windows). */
  tmpDir: string;
  platform?: NodeJS.Platform;
}

export function cleanEnvironment(parent: NodeJS.ProcessEnv, o: CleanEnvOptions): NodeJS.ProcessEnv {
  const win = (o.platform ?? process.platform) === 'win32';
  const norm = (k: string) => (win ? k.toUpperCase() : k);
  const passed = new Set(o.passEnv.map(norm));
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(parent)) {
    if (v === undefined) continue;
    const n = norm(k);
    if (ALLOWED.has(n) || ALLOWED_PREFIXES.some((p) => n.startsWith(p)) || passed.has(n) || (win && WINDOWS_ALLOWED.has(n))) env[k] = v;
  }
  env.HOME = o.home;
  env.TMPDIR = o.tmpDir;
  if (win) {
    env.USERPROFILE = o.home;
    env.TEMP = o.tmpDir;
    env.TMP = o.tmpDir;
  }
  return env;
}

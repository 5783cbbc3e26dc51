// Removes this machine's paths from what a run printed, so that error traces, diagnostics, prompts
// and saved demonstrations show what any machine would show, and never the user's home, a temp
// folder or our stand-in libraries:
//
//   /tmp/forgeenv-run-x1y2/train.py                      -> train.py   (the run folder disappears)
//   /tmp/forgeenv-run-x1y2                               -> .
//   <ext>/resources/simlibs/transformers/trainer.py      -> site-packages/transformers/trainer.py
//   <ext>/resources/simlibs-fallback/numpy/core.py       -> site-packages/numpy/core.py
//   /home/u/.venv/lib/python3.11/site-packages/peft/x.py -> site-packages/peft/x.py   (also dist-packages)
//   /usr/lib/python3.11/json/decoder.py                  -> lib/python3.11/json/decoder.py
//   /home/u/anything                                     -> ~/anything
//
// Decision on `_forgeenv_sim` (the stand-ins' shared helpers, which no real install has): its
// traceback frames are DROPPED (the frame line with its code and marker lines), so a traceback
// ends in the stand-in package that called the helper, as a real one would end in that package.
// Other mentions (a warning's location, an object's repr) are renamed to the real module that
// plays the same part (`_forgeenv_sim.imaging` -> `PIL.Image`, `_forgeenv_sim/synthetic.py` ->
// `datasets/builder.py`, anything else -> `transformers/utils/...`). No output keeps the words
// `simlibs` or `_forgeenv_sim`.
//
// The traceback parser (traceback.ts) still finds the episode script: its frames read
// `File "train.py", line N`, whose base name is the script name.

export interface ScrubContext {
  /** The run folder (the script's own folder): removed. */
  runDir?: string;
  /** Folders whose packages stand in for site-packages (our simulated libraries). */
  standInDirs?: readonly string[];
  /** The user's home folder: shown as `~`. */
  homeDir?: string;
}

const SIM_MODULES: Readonly<Record<string, { module: string; file: string }>> = {
  imaging: { module: 'PIL.Image', file: 'PIL/Image.py' },
  safetensors_io: { module: 'safetensors.torch', file: 'safetensors/torch.py' },
  hashing: { module: 'tokenizers', file: 'tokenizers/__init__.py' },
  synthetic: { module: 'datasets.builder', file: 'datasets/builder.py' },
  versions: { module: 'transformers.utils.versions', file: 'transformers/utils/versions.py' },
  warn: { module: 'transformers.utils.logging', file: 'transformers/utils/logging.py' },
  __init__: { module: 'transformers.utils', file: 'transformers/utils/__init__.py' },
};
const simModule = (name: string) => SIM_MODULES[name] ?? { module: `transformers.utils.${name}`, file: `transformers/utils/${name}.py` };

/** Characters a path token can contain here (no spaces, quotes or brackets around it). */
const P = `[^\\s"'<>()\\[\\]]`;
const SITE_PACKAGES_RE = new RegExp(`(?:[A-Za-z]:)?[\\\\/]${P}*?[\\\\/](?:site|dist)-packages[\\\\/]`, 'g');
const STDLIB_RE = new RegExp(`(?:[A-Za-z]:)?[\\\\/]${P}*?[\\\\/]lib[\\\\/](python3\\.\\d+)(?![\\w.])`, 'g');
const STAND_IN_RE = new RegExp(`(?:(?:[A-Za-z]:)?[\\\\/]?${P}*?[\\\\/])?simlibs(?:-fallback)?[\\\\/]`, 'g');
const FRAME_RE = /^(\s*(?:\|\s*)*)File "([^"]*)", line \d+/;

/** Drops traceback frames whose file is one of the stand-ins' private helpers. */
function dropPrivateFrames(text: string): string {
  if (!text.includes('_forgeenv_sim')) return text;
  const lines = text.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = FRAME_RE.exec(lines[i]);
    if (!m || !/[\\/]_forgeenv_sim[\\/]/.test(m[2])) {
      out.push(lines[i]);
      continue;
    }
    const body = m[1] + '  ';
    while (i + 1 < lines.length && lines[i + 1].startsWith(body) && !FRAME_RE.test(lines[i + 1])) i++;
  }
  return out.join('\n');
}

/** Replaces every exact occurrence of `dir` (as a folder prefix, or alone) with `prefix` / `alone`. */
function replaceDir(text: string, dir: string, prefix: string, alone: string): string {
  if (!dir || dir === '/' || !text.includes(dir)) return text;
  const trimmed = dir.replace(/[\\/]+$/, '');
  let out = text.split(`${trimmed}/`).join(prefix).split(`${trimmed}\\`).join(prefix);
  // The folder itself, not followed by more of a longer name.
  out = out.replace(new RegExp(`${escapeRegExp(trimmed)}(?![\\w.-])`, 'g'), alone);
  return out;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** `text` with the machine paths of `ctx` (and generic interpreter paths) rewritten, see above. */
export function scrubPaths(text: string, ctx: ScrubContext = {}): string {
  if (!text) return text;
  let out = dropPrivateFrames(text);
  const dirs: Array<[string, string, string]> = [];
  if (ctx.runDir) dirs.push([ctx.runDir, '', '.']);
  for (const d of ctx.standInDirs ?? []) dirs.push([d, 'site-packages/', 'site-packages']);
  // Longest first, so a folder inside another is replaced before its parent.
  dirs.sort((a, b) => b[0].length - a[0].length);
  for (const [dir, prefix, alone] of dirs) out = replaceDir(out, dir, prefix, alone);
  out = out.replace(STAND_IN_RE, 'site-packages/');
  out = out.replace(SITE_PACKAGES_RE, 'site-packages/');
  out = out.replace(STDLIB_RE, 'lib/$1');
  if (ctx.homeDir) out = replaceDir(out, ctx.homeDir, '~/', '~');
  if (out.includes('_forgeenv_sim')) {
    out = out
      .replace(/_forgeenv_sim[\\/](\w+)\.py/g, (_m, name: string) => simModule(name).file)
      .replace(/_forgeenv_sim\.(\w+)/g, (_m, name: string) => simModule(name).module)
      .replace(/_forgeenv_sim/g, 'transformers.utils');
  }
  return out.replace(/simlibs(?:-fallback)?/g, 'site-packages');
}

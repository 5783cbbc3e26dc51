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
  /** Where the script saw the run folder, when elsewhere (the sandbox's fixed path): removed too. */
  runAt?: string;
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

/**
 * A path token: a run of characters a path can contain here (no whitespace, quotes or brackets
 * around it). Every rewrite below stays inside one token and leaves tokens tokens, so each token is
 * rewritten on its own.
 *
 * Why no regex over a token: the former `[\\/]P*?[\\/](?:site|dist)-packages[\\/]` (and its two
 * siblings) retried the lazy `P*?` from every start position, quadratic in a token's length: 256 KiB
 * of `/x/x/x…` printed by a repair blocked the server for ~40 s. The rewrites are now done with
 * forward-only scans (indexOf and char loops whose ranges never overlap, results memoized), linear
 * in the output, with the same results as those regexes (test/unit/scrubPaths.test.ts compares them).
 */
const TOKEN_RE = /[^\s"'<>()[\]]+/g;
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

/** Work done by the token rewrites: characters scanned plus one per token (tests assert it is linear). */
export interface ScrubWork {
  steps: number;
}

const SLASH = 47;
const BACKSLASH = 92;
const isSlash = (c: number): boolean => c === SLASH || c === BACKSLASH;
const isLetter = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122);
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isWordOrDot = (c: number): boolean => isLetter(c) || isDigit(c) || c === 95 || c === 46;

/** A rewrite found in a token: it replaces `[j, end)` where `j` is the slash that starts the known part. */
interface Hit {
  j: number;
  end: number;
  replacement: string;
}

/**
 * The first hit at or after a position, memoized: a query answered by the last search (it started
 * at or before the position and found nothing, or something at or after it) scans nothing, so
 * forward queries scan each character once.
 */
class NextHit {
  private at = -1;
  private found: Hit | null = null;
  constructor(private readonly search: (from: number) => Hit | null) {}
  from(p: number): Hit | null {
    if (this.at >= 0 && p >= this.at && (this.found === null || this.found.j >= p)) return this.found;
    this.at = p;
    this.found = this.search(p);
    return this.found;
  }
}

/** `tok.indexOf(needle, from)`, counting the characters it passes over. */
function find(tok: string, needle: string, from: number, work: ScrubWork): number {
  const k = tok.indexOf(needle, from);
  work.steps += Math.max(0, (k < 0 ? tok.length : k) - from) + 1;
  return k;
}

/** Where `simlibs/` or `simlibs-fallback/` starting at `k` ends, or -1. */
function simlibsTailEnd(tok: string, k: number): number {
  const after = k + 7;
  if (tok.startsWith('-fallback', after) && isSlash(tok.charCodeAt(after + 9))) return after + 10;
  return isSlash(tok.charCodeAt(after)) ? after + 1 : -1;
}

/**
 * `(?:(?:[A-Za-z]:)?[\\/]?P*?[\\/])?simlibs(?:-fallback)?[\\/]` -> `site-packages/`: a stand-ins
 * folder and everything before it in the token (from where the last rewrite ended).
 */
function rewriteStandIns(tok: string, work: ScrubWork): string {
  if (!tok.includes('simlibs')) return tok;
  // A slash at j followed by the stand-ins' folder name.
  const slashed = new NextHit((q) => {
    for (let k = find(tok, 'simlibs', q + 1, work); k >= 0; k = find(tok, 'simlibs', k + 1, work)) {
      const end = simlibsTailEnd(tok, k);
      if (isSlash(tok.charCodeAt(k - 1)) && end > 0) return { j: k - 1, end, replacement: 'site-packages/' };
    }
    return null;
  });
  let out = '';
  let from = 0;
  while (from < tok.length) {
    const first = slashed.from(from);
    if (first) {
      // The regex starts here (`from`) and, as its backtracking would, tries the optional drive
      // and slash greedily before giving them back; the lazy `P*?` then takes the first hit after them.
      const s = from;
      const starts: number[] = [];
      if (isLetter(tok.charCodeAt(s)) && tok.charCodeAt(s + 1) === 58) {
        if (isSlash(tok.charCodeAt(s + 2))) starts.push(s + 3);
        starts.push(s + 2);
      }
      if (isSlash(tok.charCodeAt(s))) starts.push(s + 1);
      starts.push(s);
      let hit: Hit = first;
      for (const b of starts) {
        const h = b <= first.j ? first : slashed.from(b);
        if (h) {
          hit = h;
          break;
        }
      }
      out += 'site-packages/';
      from = hit.end;
      continue;
    }
    // No slash before it: the bare folder name.
    let bare = -1;
    let end = -1;
    for (let k = find(tok, 'simlibs', from, work); k >= 0; k = find(tok, 'simlibs', k + 1, work)) {
      end = simlibsTailEnd(tok, k);
      if (end > 0) {
        bare = k;
        break;
      }
    }
    if (bare < 0) break;
    out += tok.slice(from, bare) + 'site-packages/';
    from = end;
  }
  return out + tok.slice(from);
}

/**
 * `(?:[A-Za-z]:)?[\\/]P*?<known>` -> the known part's rewrite: the first slash (with its drive)
 * from where the last rewrite ended up to the first hit after that slash. `hits` finds hits.
 */
function rewriteAfterFirstSlash(tok: string, work: ScrubWork, hits: NextHit): string {
  let out = '';
  let from = 0;
  while (from < tok.length) {
    let p = from;
    while (p < tok.length && !isSlash(tok.charCodeAt(p))) p++;
    work.steps += p - from + 1;
    if (p >= tok.length) break;
    const hit = hits.from(p + 1);
    if (!hit) break;
    const s = p - 2 >= from && isLetter(tok.charCodeAt(p - 2)) && tok.charCodeAt(p - 1) === 58 ? p - 2 : p;
    out += tok.slice(from, s) + hit.replacement;
    from = hit.end;
  }
  return out + tok.slice(from);
}

/** `(?:[A-Za-z]:)?[\\/]P*?[\\/](?:site|dist)-packages[\\/]` -> `site-packages/`. */
function rewriteSitePackages(tok: string, work: ScrubWork): string {
  if (!tok.includes('-packages')) return tok;
  const hits = new NextHit((q) => {
    for (let k = find(tok, '-packages', q + 5, work); k >= 0; k = find(tok, '-packages', k + 1, work)) {
      const j = k - 5;
      const name = tok.slice(j + 1, k);
      if (j >= q && isSlash(tok.charCodeAt(j)) && (name === 'site' || name === 'dist') && isSlash(tok.charCodeAt(k + 9))) {
        return { j, end: k + 10, replacement: 'site-packages/' };
      }
    }
    return null;
  });
  return rewriteAfterFirstSlash(tok, work, hits);
}

/** `(?:[A-Za-z]:)?[\\/]P*?[\\/]lib[\\/](python3\.\d+)(?![\w.])` -> `lib/$1`. */
function rewriteStdlib(tok: string, work: ScrubWork): string {
  if (!tok.includes('python3.')) return tok;
  const hits = new NextHit((q) => {
    for (let k = find(tok, 'python3.', q + 5, work); k >= 0; k = find(tok, 'python3.', k + 1, work)) {
      const j = k - 5;
      if (j < q || !isSlash(tok.charCodeAt(j)) || !tok.startsWith('lib', j + 1) || !isSlash(tok.charCodeAt(j + 4))) continue;
      let e = k + 8;
      while (isDigit(tok.charCodeAt(e))) e++;
      work.steps += e - k - 8;
      // The token's end stands for what follows it (whitespace, a quote, a bracket): never \w or `.`.
      if (e > k + 8 && (e >= tok.length || !isWordOrDot(tok.charCodeAt(e)))) return { j, end: e, replacement: `lib/${tok.slice(k, e)}` };
    }
    return null;
  });
  return rewriteAfterFirstSlash(tok, work, hits);
}

/** The three rewrites, in the order the text used to get them, on one token. */
function rewriteToken(tok: string, work: ScrubWork): string {
  work.steps++;
  // Every rewrite needs a slash (`simlibs/` too).
  if (tok.indexOf('/') < 0 && tok.indexOf('\\') < 0) return tok;
  return rewriteStdlib(rewriteSitePackages(rewriteStandIns(tok, work), work), work);
}

/** `text` with the machine paths of `ctx` (and generic interpreter paths) rewritten, see above. */
export function scrubPaths(text: string, ctx: ScrubContext = {}, work: ScrubWork = { steps: 0 }): string {
  if (!text) return text;
  let out = dropPrivateFrames(text);
  const dirs: Array<[string, string, string]> = [];
  for (const d of new Set([ctx.runDir, ctx.runAt])) if (d) dirs.push([d, '', '.']);
  for (const d of ctx.standInDirs ?? []) dirs.push([d, 'site-packages/', 'site-packages']);
  // Longest first, so a folder inside another is replaced before its parent.
  dirs.sort((a, b) => b[0].length - a[0].length);
  for (const [dir, prefix, alone] of dirs) out = replaceDir(out, dir, prefix, alone);
  out = out.replace(TOKEN_RE, (tok) => rewriteToken(tok, work));
  if (ctx.homeDir) out = replaceDir(out, ctx.homeDir, '~/', '~');
  if (out.includes('_forgeenv_sim')) {
    out = out
      .replace(/_forgeenv_sim[\\/](\w+)\.py/g, (_m, name: string) => simModule(name).file)
      .replace(/_forgeenv_sim\.(\w+)/g, (_m, name: string) => simModule(name).module)
      .replace(/_forgeenv_sim/g, 'transformers.utils');
  }
  return out.replace(/simlibs(?:-fallback)?/g, 'site-packages');
}

/** scrubPaths once per context, in order (the executor scrubs the run folder's real path first). */
export function scrubPathsInPasses(text: string, passes: readonly ScrubContext[]): string {
  return passes.reduce((t, ctx) => scrubPaths(t, ctx), text);
}

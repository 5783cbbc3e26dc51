// Repo-local imports: the sibling modules and packages a script imports (and what they import, in
// turn) become the task's `files`, laid out in the run folder as they sit beside the script. A
// relative import (`from .utils import x`) cannot run in a top-level script, so it is rewritten to
// the absolute form (`from <package>.utils import x`) with the package folder laid out beside it;
// each rewrite is reported as a layout adaptation. Reads go through readFolderFile (no links, size
// limits); the walk is bounded.
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, sep } from 'node:path';
import { readFolderFile } from '../tasks/folderFile';
import { parsePython } from '../python/parse';
import { indexScript, type ImportInfo } from '../python/scriptIndex';
import { RUN_FILE_LIMITS } from '../schemas';

export interface LocalImports {
  /** Run-folder path -> text. */
  files: Record<string, string>;
  /** The script, with relative imports made absolute (the same text when it has none). */
  script: string;
  /** Relative imports rewritten, as `from .x import y -> from pkg.x import y`. */
  rewrites: string[];
  /** Local-looking modules that were not found (`from luke_utils import …` with no luke_utils.py). */
  missing: string[];
  /** Why some files were left out (too many, too large, unreadable). */
  problems: string[];
}

/** How deep the walk follows imports of imports. */
const MAX_DEPTH = 8;

interface Resolved {
  /** Absolute path of the module file. */
  file: string;
  /** Its path in the run folder. */
  runPath: string;
}

/** Where `dotted` resolves under `root` (a module file or a package's __init__.py), else undefined. */
function resolveUnder(root: string, dotted: string): Resolved | undefined {
  const parts = dotted.split('.');
  const asFile = join(root, ...parts) + '.py';
  const asPkg = join(root, ...parts, '__init__.py');
  for (const file of [asFile, asPkg]) {
    try {
      if (statSync(file).isFile()) return { file, runPath: relative(root, file).split(sep).join('/') };
    } catch {
      // not there
    }
  }
  // A namespace package (a folder without __init__.py) of the repo.
  const folder = join(root, ...parts);
  if (existsSync(folder) && statSync(folder).isDirectory() && parts.length === 1)
    return { file: folder, runPath: relative(root, folder).split(sep).join('/') };
  return undefined;
}

/** The modules an import statement may load, as dotted names relative to its roots. */
function importTargets(imp: ImportInfo): string[] {
  if (imp.kind === 'import') return imp.names.map((n) => n.name);
  const base = imp.module ?? '';
  // `from pkg import sub` may load the submodule pkg/sub.py as well as names of pkg/__init__.py.
  return [base, ...imp.names.filter((n) => n.name !== '*').map((n) => (base ? `${base}.${n.name}` : n.name))].filter(Boolean);
}

/**
 * Collects the repo-local modules of the script at `scriptPath`: under its own folder, then under
 * `repoRoot` (the git work tree, when different). `script` is the text to scan (the file's own
 * text when omitted).
 */
export function collectLocalImports(scriptPath: string, script: string, repoRoot?: string): LocalImports {
  const scriptDir = dirname(scriptPath);
  const roots = [scriptDir, ...(repoRoot && repoRoot !== scriptDir ? [repoRoot] : [])];
  const files: Record<string, string> = {};
  const problems: string[] = [];
  const missing = new Set<string>();
  const fromScriptDir = new Set<string>();
  let total = 0;
  const seen = new Set<string>([scriptPath]);
  const queue: Array<{ text: string; file: string; runPath: string; depth: number }> = [];

  const add = (r: Resolved, depth: number) => {
    if (seen.has(r.file)) return;
    seen.add(r.file);
    if (!r.file.endsWith('.py')) return; // a namespace package folder: its modules are added as they are imported
    const root = roots.find((x) => r.file.startsWith(x + sep)) ?? scriptDir;
    if (Object.keys(files).length >= RUN_FILE_LIMITS.count - 4)
      return void problems.push(`${r.runPath}: left out (more than ${RUN_FILE_LIMITS.count - 4} local modules)`);
    const read = readFolderFile(root, relative(root, r.file).split(sep).join('/'), RUN_FILE_LIMITS.fileBytes);
    if (!read.ok) return void problems.push(`${r.runPath}: ${read.problem}`);
    total += Buffer.byteLength(read.text);
    if (total > RUN_FILE_LIMITS.totalBytes - 65_536)
      return void problems.push(`${r.runPath}: left out (local modules over ${RUN_FILE_LIMITS.totalBytes} bytes)`);
    files[r.runPath] = read.text;
    if (root === scriptDir) fromScriptDir.add(r.runPath);
    // A module of a package needs the package's __init__.py files on the way down.
    const segs = r.runPath.split('/');
    for (let i = 1; i < segs.length; i++) {
      const init = resolveUnder(root, segs.slice(0, i).join('.'));
      if (init && init.file.endsWith('__init__.py')) add(init, depth);
    }
    if (depth < MAX_DEPTH) queue.push({ text: read.text, file: r.file, runPath: r.runPath, depth: depth + 1 });
  };

  /** Resolves the imports of one module; relative ones against its own package folder. */
  const scan = (text: string, file: string, depth: number) => {
    const idx = indexScript(parsePython(text));
    for (const imp of idx.imports) {
      if (imp.level > 0) {
        let base = dirname(file);
        for (let i = 1; i < imp.level; i++) base = dirname(base);
        const root = roots.find((x) => base === x || base.startsWith(x + sep));
        if (!root) {
          problems.push(
            `${relative(scriptDir, file) || basename(file)}: a relative import above the script's folder (level ${imp.level}) is not laid out`,
          );
          continue;
        }
        const targets = imp.module ? [imp.module, ...imp.names.map((n) => `${imp.module}.${n.name}`)] : imp.names.map((n) => n.name);
        const init = join(base, '__init__.py');
        if (existsSync(init)) add({ file: init, runPath: relative(root, init).split(sep).join('/') }, depth);
        for (const t of targets) {
          const r = resolveUnder(base, t);
          if (r) add({ file: r.file, runPath: relative(root, r.file).split(sep).join('/') }, depth);
        }
        continue;
      }
      for (const t of importTargets(imp)) {
        let found = false;
        for (const root of roots) {
          const r = resolveUnder(root, t);
          if (r) {
            add(r, depth);
            found = true;
            break;
          }
        }
        // Only the statement's first target can be a missing local module (`from x import y`: x).
        if (!found && t === importTargets(imp)[0] && looksLocal(t)) missing.add(t.split('.')[0]);
      }
    }
  };

  scan(script, scriptPath, 0);
  for (let item = queue.shift(); item; item = queue.shift()) scan(item.text, item.file, item.depth);
  // Files the script reads from its own folder (`os.path.join(os.path.dirname(__file__), "inference.py")`) come too.
  for (const name of filesReadBesideScript(script)) {
    if (files[name] !== undefined || !existsSync(join(scriptDir, name))) continue;
    const read = readFolderFile(scriptDir, name, RUN_FILE_LIMITS.fileBytes);
    if (read.ok) {
      files[name] = read.text;
      fromScriptDir.add(name);
    } else problems.push(read.problem);
  }
  const { text, rewrites } = absoluteImports(script, basename(scriptDir));
  if (rewrites.length) {
    // The script's folder becomes a package beside the run's train.py: its modules move under
    // <pkg>/, with an __init__.py (empty when the folder has none).
    const pkg = basename(scriptDir);
    const moved: Record<string, string> = {};
    for (const [k, v] of Object.entries(files)) moved[fromScriptDir.has(k) ? `${pkg}/${k}` : k] = v;
    moved[`${pkg}/__init__.py`] ??= '';
    return { files: moved, script: text, rewrites, missing: [...missing], problems };
  }
  return { files, script, rewrites, missing: [...missing], problems };
}

/** Relative file names the script reads beside itself: string literals on a line that names `__file__`. */
export function filesReadBesideScript(script: string): string[] {
  const out: string[] = [];
  for (const line of script.split('\n')) {
    if (!line.includes('__file__')) continue;
    for (const m of line.matchAll(/(["'])([\w.-]+(?:\/[\w.-]+)*\.\w{1,8})\1/g))
      if (!m[2].split('/').includes('..') && !out.includes(m[2])) out.push(m[2]);
  }
  return out;
}

/**
 * Whether a module that was not found is likely a repo-local helper the user forgot to bring along
 * rather than a third-party package: its name looks like a project's own module (`utils`,
 * `luke_utils`, `data`, `modeling`…). Conservative: a missing third-party package is reported by
 * the run itself (ModuleNotFoundError), with the rule that says so.
 */
function looksLocal(dotted: string): boolean {
  const top = dotted.split('.')[0];
  // Also the same words first (`utils_hans`, `modeling_bertabs`: a helper named after its project).
  return (
    /(^|_)(utils?|helpers?|common|config|configs|data|dataset|model|models|modeling|trainer|train|args|arguments|callbacks?|metrics?|preprocess\w*|collator)$/.test(
      top,
    ) || /^(utils?|helpers?|modeling|callbacks?|metrics?|collator)_[a-z]\w*$/.test(top)
  );
}

/** `from .x import y` → `from <pkg>.x import y` (levels > 1 are left as they are: a parent package is not laid out). */
export function absoluteImports(script: string, pkg: string): { text: string; rewrites: string[] } {
  const idx = indexScript(parsePython(script));
  const edits: Array<{ from: number; to: number; text: string; before: string }> = [];
  for (const imp of idx.imports) {
    if (imp.level !== 1 || imp.kind !== 'from') continue;
    const stmt = script.slice(imp.from, imp.to);
    const m = /^from\s+\.(\S*)/.exec(stmt);
    if (!m) continue;
    const replaced = `from ${pkg}${m[1] ? `.${m[1]}` : ''}`;
    edits.push({ from: imp.from, to: imp.from + m[0].length, text: replaced, before: m[0] });
  }
  let text = script;
  for (const e of [...edits].sort((a, b) => b.from - a.from)) text = text.slice(0, e.from) + e.text + text.slice(e.to);
  return { text, rewrites: edits.map((e) => `${e.before} -> ${e.text}`) };
}

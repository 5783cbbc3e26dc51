// The repair validator: which forbidden constructs a REPAIR adds to the script it repairs, found on
// the Python syntax tree (Lezer) so that strings and comments never trigger a finding.
//
// Policy (GitHub issue 9): the validator judges the repair, not the script. A task's original
// script and the broken script may contain anything (real training scripts import `os`, call
// `subprocess`, `eval` configuration strings): they are run as they are. A repair is refused only
// for forbidden constructs it ADDS compared with the broken script it repairs. Constructs are
// counted per kind (`call to os.system`, `import of 'subprocess'`, …), so a repair that adds a
// second `os.system(...)` is caught even when the broken script already had one. `validateScript`
// is the same check against an empty baseline (every construct counts).
//
// ADVISORY, NOT A SECURITY BOUNDARY. It is a policy check that keeps repairs honest (a repair must
// not shell out, open sockets or evaluate code) and tells the person or model why a repair was not
// run. A static check of a dynamic language can always be talked around (nine bypasses were found
// in one review: `from shutil import os`, `types.FunctionType(compile(…))`, pickle, `sys.__dict__`,
// dunder names built from pieces, …); the cheap ones are closed below, but what contains a run is
// the sandbox (src/env/sandbox/, docs/sandbox.md: namespaces, read-only system, clean environment,
// rlimits, process-group kill), which every script runs under whatever the validator says. Never
// make a decision that needs the validator to be complete.
//
// Forbidden constructs:
// - imports (statement or `__import__`/`importlib.import_module` with a literal name) of the
//   original's `os`, `subprocess`, `socket`, and of modules that reach the OS or run code around
//   them: `posix`, `nt`, `ctypes`, `_ctypes`, `cffi`, `pty`, `multiprocessing`, `_posixsubprocess`,
//   `_socket`, `runpy`, `code`, `codeop`, `zipimport`, `importlib.machinery`;
// - any use of a name bound to those modules (`subprocess.run`, `from subprocess import run; run()`,
//   `s = subprocess`), except the harmless part of `os`: `os.path`, `os.environ`, `os.getenv`,
//   `os.getcwd`, `os.makedirs`, `os.listdir`, `os.sep`, … (OS_SAFE_MEMBERS), and `multiprocessing.cpu_count`.
//   A bare reference to
//   `os` (e.g. `getattr(os, name)`) counts: it can reach every function;
// - `eval`/`exec`/`compile`, called or referenced (`f = eval`), also as `builtins.eval`;
// - a forbidden module reached through another module: `from shutil import os`, `shutil.os.system`,
//   `tempfile._os` (stdlib modules keep `os` as an attribute; a leading `_` is ignored);
// - code objects and deserialisers that run code: `types.FunctionType`/`CodeType`/`LambdaType`,
//   `__code__`, and `load`/`loads`/`Unpickler` of `pickle`, `_pickle`, `marshal`, `dill`, `cloudpickle`;
// - dynamic imports of the modules whose uses are tracked by name (`__import__("builtins")`,
//   `import_module("sys")`): what the result is used for cannot be followed;
// - names assembled from string pieces (`'ev' + 'al'`, `'__imp' 'ort__'`) that spell a forbidden
//   name, and attribute names for getattr/setattr/delattr/hasattr built at run time from `__`
//   pieces, `chr()`, `.join()`, `.decode()`, reversal or base64;
// - imports with a computed name (`__import__(name)`, `importlib.import_module("o" + "s")`) and any
//   non-call reference to an importer (`imp = __import__`);
// - reflection on the builtins and on guarded modules: `getattr|setattr|delattr|vars(builtins |
//   __builtins__ | sys | importlib | asyncio, …)`, `builtins.__dict__`, any `__builtins__`, the
//   escape attributes `__globals__`, `__subclasses__`, `__builtins__`, `f_globals`, `f_builtins`,
//   `f_locals`, `__getattribute__`, and string literals naming them (`globals()["__builtins__"]`);
//   the namespaces of those modules (`builtins.__dict__`, `sys.__dict__`);
// - `sys.modules` (any use), module loaders (`spec_from_file_location`, `module_from_spec`,
//   `exec_module`, `load_module`, `SourceFileLoader`, …), `asyncio.create_subprocess_exec|shell`;
// - string literals that are paths under `/proc` (`open('/proc/self/environ')`, `Path(f"/proc/{p}")`).
//
// Decisions:
// - `shutil.rmtree` is NOT forbidden: the original allows it, real training scripts use it to
//   clear output folders, and the run directory is fresh and temporary.
// - Imports are matched on the top-level module (`import os.path`, `from os.path import join`
//   are both `os`). Relative imports (`from . import os`) are the script's own modules: allowed.
// - Names are resolved through the script's own imports, without scopes (Lezer gives no scopes):
//   a local variable named like an imported module counts as that module, in the broken script and
//   in the repair alike, so it cannot make a repair look worse than it is.
// - Definitions and keyword names are not uses: `def eval(self)`, `f(exec=1)`, `model.eval()`.
// - Known gap: after `from os import *` in the broken script, a bare `system(...)` added by a repair
//   is not recognised (the names a star import binds are not known without running it).
// - A parse failure is not itself a violation (Python reports the SyntaxError when run). Lezer
//   recovers from errors, so constructs in the parts that did parse are still reported: a
//   difference between Lezer's grammar and CPython's must never become a way around the check.
// - Findings name the line in the repaired script: an added construct is one whose source line
//   does not occur, with that construct, in the broken script; when the counts say more were
//   added than such lines exist (a duplicated line), the last occurrences are named.
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@lezer/python';

/** Modules a repair may not import or use (the original's three first). */
export const FORBIDDEN_MODULES: readonly string[] = [
  'os',
  'subprocess',
  'socket',
  'posix',
  'nt',
  'ctypes',
  '_ctypes',
  'cffi',
  'pty',
  'multiprocessing',
  '_posixsubprocess',
  '_socket',
  'runpy',
  'code',
  'codeop',
  'zipimport',
];
/** Dotted modules forbidden although their package is not (`importlib` itself is fine). */
const FORBIDDEN_SUBMODULES: readonly string[] = ['importlib.machinery'];
export const FORBIDDEN_CALLS: readonly string[] = ['eval', 'exec', 'compile'];
/** Members of `os` that neither run programs nor change the process: allowed in repairs. */
export const OS_SAFE_MEMBERS: readonly string[] = [
  'path',
  'environ',
  'getenv',
  'getcwd',
  'makedirs',
  'mkdir',
  'listdir',
  'scandir',
  'walk',
  'sep',
  'linesep',
  'pathsep',
  'extsep',
  'curdir',
  'pardir',
  'devnull',
  'cpu_count',
  'fspath',
  'PathLike',
  'name',
  'getpid',
];
/** Members of forbidden modules that are harmless (importing the module is still an added construct). */
const SAFE_MEMBERS: Readonly<Record<string, readonly string[]>> = { os: OS_SAFE_MEMBERS, multiprocessing: ['cpu_count'] };
const IMPORTERS = new Set(['builtins.__import__', 'importlib.import_module', 'importlib.__import__']);
const REFLECTORS = new Set(['getattr', 'setattr', 'delattr', 'vars']);
/** Modules whose bare name is only a problem as the object of reflection (`getattr(sys, n)`). */
const REFLECTION_GUARDED = new Set(['builtins', 'sys', 'importlib', 'asyncio']);
const ESCAPE_ATTRIBUTES = new Set([
  '__globals__',
  '__subclasses__',
  '__builtins__',
  'f_globals',
  'f_builtins',
  'f_locals',
  '__code__',
  '__getattribute__',
]);
/** Constructors of functions from code objects: with `compile` (or `__code__.replace`) they are `exec` by another name. */
const CODE_TYPES = new Set(['types.FunctionType', 'types.CodeType', 'types.LambdaType']);
/** Deserialisers whose input chooses what to call (`pickle.loads(b"cos\nsystem\n…")` runs a shell command). */
const DESERIALIZER_MODULES = new Set(['pickle', '_pickle', 'cPickle', 'marshal', 'dill', 'cloudpickle']);
const DESERIALIZER_MEMBERS = new Set(['load', 'loads', 'Unpickler', '_load', '_loads', '_Unpickler']);
/** Modules imported dynamically (`__import__("sys")`) escape the tracking of their uses by name. */
const DYNAMIC_IMPORT_GUARDED = new Set([...REFLECTION_GUARDED, 'types', ...DESERIALIZER_MODULES]);
/** Reflection calls whose second argument is an attribute name. */
const NAME_REFLECTORS = new Set(['getattr', 'setattr', 'delattr', 'hasattr']);
/** What a string assembled from pieces may not spell: it is written that way only to hide it. */
const ASSEMBLED_FORBIDDEN = new Set([
  ...FORBIDDEN_MODULES,
  ...FORBIDDEN_CALLS,
  '__import__',
  '__builtins__',
  '__globals__',
  '__subclasses__',
  '__code__',
  '__dict__',
  '__getattribute__',
  'builtins',
  'system',
  'popen',
  'modules',
  'import_module',
]);
/** How an attribute name is built at run time so that no literal shows it. */
const OBFUSCATED_NAME = /\bchr\s*\(|\.join\s*\(|\.decode\s*\(|\[\s*::\s*-1\s*\]|fromhex|b64decode|b32decode|codecs\./;

/** `_os` is the `os` module kept by tempfile, random, …: the leading underscores do not change what it reaches. */
// `code` and `codeop` are left out for attributes: `.code` is an everyday attribute (`e.code`), and
// no module keeps those two as one.
const moduleNamed = (name: string, asAttribute = false): string | undefined => {
  const bare = name.replace(/^_+/, '');
  const found = FORBIDDEN_MODULES.includes(bare) ? bare : FORBIDDEN_MODULES.includes(name) ? name : undefined;
  return asAttribute && (found === 'code' || found === 'codeop') ? undefined : found;
};
const ESCAPE_STRINGS = new Set(['__builtins__', '__import__', '__globals__', '__subclasses__']);
const LOADER_NAMES = new Set([
  'spec_from_file_location',
  'spec_from_loader',
  'module_from_spec',
  'exec_module',
  'load_module',
  'SourceFileLoader',
  'SourcelessFileLoader',
  'ExtensionFileLoader',
]);
const ASYNC_SPAWNERS = new Set(['create_subprocess_exec', 'create_subprocess_shell']);

/** An import found in a script: the dotted module and the names taken from it. */
export interface ImportFound {
  module: string;
  /** Names after `from m import …` (empty for `import m`); `*` for a star import. */
  names: string[];
  relative: boolean;
  line: number;
}

/** A call found in a script, with its callee as dotted text (`trainer.train`, `.y` when the receiver is not a plain name). */
export interface CallFound {
  callee: string;
  node: SyntaxNode;
  line: number;
}

/** Maps character offsets to 1-based line numbers. */
export function lineIndex(source: string): (offset: number) => number {
  const starts = [0];
  for (let i = 0; i < source.length; i++) if (source.charCodeAt(i) === 10) starts.push(i + 1);
  return (offset) => {
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return lo + 1;
  };
}

/** Calls `visit` on every node of the tree, depth first, in source order. */
export function walkTree(root: SyntaxNode, visit: (node: SyntaxNode) => void): void {
  // An explicit stack: deep nesting must not overflow the JS call stack.
  const stack: SyntaxNode[] = [root];
  while (stack.length) {
    const node = stack.pop() as SyntaxNode;
    visit(node);
    for (let c = node.lastChild; c; c = c.prevSibling) stack.push(c);
  }
}

export function parseScript(source: string): SyntaxNode {
  return parser.parse(source).topNode;
}

function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
}

/** Every import statement of the script, in source order. */
export function findImports(source: string, root = parseScript(source)): ImportFound[] {
  const lineOf = lineIndex(source);
  const found: ImportFound[] = [];
  walkTree(root, (node) => {
    if (node.name !== 'ImportStatement') return;
    const parts = children(node);
    const line = lineOf(node.from);
    const text = (n: SyntaxNode) => source.slice(n.from, n.to);
    if (parts[0]?.name === 'from') {
      const importAt = parts.findIndex((p) => p.name === 'import');
      if (importAt < 0) return;
      const modParts = parts.slice(1, importAt);
      const relative = modParts[0]?.name === '.';
      const module = modParts
        .filter((p) => p.name === 'VariableName')
        .map(text)
        .join('.');
      const names: string[] = [];
      const rest = parts.slice(importAt + 1);
      for (let i = 0; i < rest.length; i++) {
        if (rest[i].name === 'as') i++;
        else if (rest[i].name === 'VariableName' || rest[i].name === '*') names.push(text(rest[i]));
      }
      found.push({ module, names, relative, line });
      return;
    }
    // `import a.b as c, d`: dotted names separated by commas, each with an optional alias.
    let dotted: string[] = [];
    let skipAlias = false;
    const flush = () => {
      if (dotted.length) found.push({ module: dotted.join('.'), names: [], relative: false, line });
      dotted = [];
    };
    for (const p of parts.slice(1)) {
      if (p.name === ',') {
        flush();
        skipAlias = false;
      } else if (p.name === 'as') skipAlias = true;
      else if (p.name === 'VariableName' && !skipAlias) dotted.push(text(p));
    }
    flush();
  });
  return found;
}

/** Dotted text of a callee made of names and attributes; `.attr` when the receiver is an expression. */
export function calleeText(source: string, callee: SyntaxNode): string {
  if (callee.name === 'VariableName') return source.slice(callee.from, callee.to);
  if (callee.name === 'MemberExpression') {
    const obj = callee.firstChild;
    const prop = callee.lastChild;
    const propText = prop && prop.name === 'PropertyName' ? source.slice(prop.from, prop.to) : '';
    if (!obj || !propText) return '';
    const base = obj.name === 'VariableName' || obj.name === 'MemberExpression' ? calleeText(source, obj) : '';
    return `${base}.${propText}`;
  }
  return '';
}

/** Every call expression of the script, in source order. */
export function findCalls(source: string, root = parseScript(source)): CallFound[] {
  const lineOf = lineIndex(source);
  const found: CallFound[] = [];
  walkTree(root, (node) => {
    if (node.name !== 'CallExpression' || !node.firstChild) return;
    found.push({ callee: calleeText(source, node.firstChild), node, line: lineOf(node.from) });
  });
  return found;
}

/** The value of a plain string literal (`'os'`, `"os"`, `r'os'`); undefined for f-strings and concatenations. */
export function stringLiteralValue(source: string, node: SyntaxNode): string | undefined {
  if (node.name !== 'String') return undefined;
  const m = /^([rRuUbB]{0,2})('''|"""|'|")([\s\S]*)\2$/.exec(source.slice(node.from, node.to));
  return m ? m[3] : undefined;
}

function firstArgument(call: SyntaxNode): SyntaxNode | undefined {
  const args = call.getChild('ArgList');
  if (!args) return undefined;
  return children(args).find((c) => c.name !== '(' && c.name !== ')' && c.name !== ',') ?? undefined;
}

const topModule = (dotted: string) => dotted.split('.')[0];

function isForbiddenModule(dotted: string): boolean {
  return FORBIDDEN_MODULES.includes(topModule(dotted)) || FORBIDDEN_SUBMODULES.some((m) => dotted === m || dotted.startsWith(`${m}.`));
}

/** The module path that makes `dotted` forbidden (`os`, `importlib.machinery`), for messages. */
function forbiddenModuleOf(dotted: string): string {
  return FORBIDDEN_SUBMODULES.find((m) => dotted === m || dotted.startsWith(`${m}.`)) ?? topModule(dotted);
}

/** One forbidden construct: `key` is what is counted, `text` what is reported. */
export interface ForbiddenConstruct {
  key: string;
  text: string;
  line: number;
  /** The trimmed source line, used to tell the added occurrences from the inherited ones. */
  lineText: string;
}

/** Local names bound by the script's imports: `import a.b` binds a -> a, `import a.b as c` c -> a.b, `from m import n as x` x -> m.n. */
function importBindings(source: string, root: SyntaxNode): Map<string, string> {
  const bound = new Map<string, string>();
  const text = (n: SyntaxNode) => source.slice(n.from, n.to);
  walkTree(root, (node) => {
    if (node.name !== 'ImportStatement') return;
    const parts = children(node);
    if (parts[0]?.name === 'from') {
      const importAt = parts.findIndex((p) => p.name === 'import');
      if (importAt < 0 || parts[1]?.name === '.') return; // relative: the script's own modules
      const module = parts
        .slice(1, importAt)
        .filter((p) => p.name === 'VariableName')
        .map(text)
        .join('.');
      const rest = parts.slice(importAt + 1);
      for (let i = 0; i < rest.length; i++) {
        if (rest[i].name !== 'VariableName') continue;
        const name = text(rest[i]);
        // `from shutil import os`: the name is the module itself, whichever module handed it over.
        const target = !isForbiddenModule(module) && moduleNamed(name) ? moduleNamed(name)! : `${module}.${name}`;
        if (rest[i + 1]?.name === 'as' && rest[i + 2]?.name === 'VariableName') {
          bound.set(text(rest[i + 2]), target);
          i += 2;
        } else bound.set(name, target);
      }
      return;
    }
    let dotted: string[] = [];
    let alias: string | undefined;
    let inAlias = false;
    const flush = () => {
      if (dotted.length) bound.set(alias ?? dotted[0], alias ? dotted.join('.') : dotted[0]);
      dotted = [];
      alias = undefined;
      inAlias = false;
    };
    for (const p of parts.slice(1)) {
      if (p.name === ',') flush();
      else if (p.name === 'as') inAlias = true;
      else if (p.name === 'VariableName') {
        if (inAlias) alias = text(p);
        else dotted.push(text(p));
      }
    }
    flush();
  });
  return bound;
}

/** A VariableName that names something being defined or a keyword, not a use. */
function isDefinitionOrKeyword(node: SyntaxNode): boolean {
  const parent = node.parent;
  if (!parent) return false;
  if (parent.name === 'ImportStatement') return true;
  if ((parent.name === 'FunctionDefinition' || parent.name === 'ClassDefinition') && parent.getChild('VariableName')?.from === node.from)
    return true;
  if (parent.name === 'ParamList') return true;
  if (parent.name === 'ArgList' && node.nextSibling?.name === 'AssignOp') return true;
  return false;
}

/** The `.name` chain after `node` (`os` in `os.path.join(x)` gives ['path', 'join']) and the node that ends it. */
function memberChain(source: string, node: SyntaxNode): { chain: string[]; outer: SyntaxNode } {
  const chain: string[] = [];
  let outer = node;
  for (
    let p = node.parent;
    p && p.name === 'MemberExpression' && p.firstChild?.from === outer.from && p.firstChild.to === outer.to;
    p = p.parent
  ) {
    const prop = p.lastChild;
    if (!prop || prop.name !== 'PropertyName') break;
    chain.push(source.slice(prop.from, prop.to));
    outer = p;
  }
  return { chain, outer };
}

/** The call whose callee is exactly `node`, if any. */
function callOf(node: SyntaxNode): SyntaxNode | undefined {
  const p = node.parent;
  return p && p.name === 'CallExpression' && p.firstChild?.from === node.from && p.firstChild.to === node.to ? p : undefined;
}

/** True when `node` is the first argument of getattr/setattr/delattr/vars. */
function isReflected(source: string, node: SyntaxNode): boolean {
  const args = node.parent;
  if (!args || args.name !== 'ArgList') return false;
  const first = children(args).find((c) => c.name !== '(');
  const call = args.parent;
  if (!first || first.from !== node.from || !call || call.name !== 'CallExpression' || !call.firstChild) return false;
  return REFLECTORS.has(calleeText(source, call.firstChild));
}

/** The text of a String/FormatString without prefix and quotes (f-string replacements kept as written). */
function literalBody(source: string, node: SyntaxNode): string | undefined {
  const m = /^([rRuUbBfF]{0,2})('''|"""|'|")([\s\S]*)\2$/.exec(source.slice(node.from, node.to));
  return m ? m[3] : undefined;
}

/** The `n`th positional argument of a call (0-based). */
function argumentAt(call: SyntaxNode, n: number): SyntaxNode | undefined {
  const args = call.getChild('ArgList');
  if (!args) return undefined;
  return children(args).filter((c) => c.name !== '(' && c.name !== ')' && c.name !== ',')[n];
}

/** A `+` expression (`a + b`); false for other operators and for anything else. */
function isConcatenation(source: string, node: SyntaxNode | null): boolean {
  if (!node || node.name !== 'BinaryExpression') return false;
  const op = node.getChild('ArithOp');
  return !!op && source.slice(op.from, op.to) === '+';
}

/** The value of a string built only from literals (`'ev' + 'al'`, `'__imp' 'ort__'`); undefined if any piece is not one. */
function foldString(source: string, node: SyntaxNode): string | undefined {
  if (node.name === 'String') return stringLiteralValue(source, node);
  if (node.name === 'ContinuedString') {
    const parts = children(node).map((c) => stringLiteralValue(source, c));
    return parts.every((p) => p !== undefined) ? parts.join('') : undefined;
  }
  if (node.name === 'ParenthesizedExpression') {
    const inner = children(node).find((c) => c.name !== '(' && c.name !== ')');
    return inner ? foldString(source, inner) : undefined;
  }
  if (isConcatenation(source, node)) {
    const [a, , b] = children(node);
    const left = a && foldString(source, a);
    const right = b && foldString(source, b);
    return left !== undefined && right !== undefined ? left + right : undefined;
  }
  return undefined;
}

/** The literal text of every string inside `node` (f-string text included), in source order. */
function stringPieces(source: string, node: SyntaxNode): string[] {
  const out: string[] = [];
  walkTree(node, (n) => {
    if (n.name === 'String' || n.name === 'FormatString') {
      const body = literalBody(source, n);
      if (body !== undefined) out.push(body);
    }
  });
  return out;
}

/** Every forbidden construct of `script`, in source order. */
export function forbiddenConstructs(script: string): ForbiddenConstruct[] {
  const root = parseScript(script);
  const lineOf = lineIndex(script);
  const lines = script.split(/\r?\n/);
  const found: ForbiddenConstruct[] = [];
  const add = (node: SyntaxNode, key: string, text: string) => {
    const line = lineOf(node.from);
    found.push({ key, text, line, lineText: (lines[line - 1] ?? '').trim() });
  };

  for (const imp of findImports(script, root)) {
    if (imp.relative) continue;
    const dotted = [imp.module, ...imp.names.filter((n) => n !== '*').map((n) => `${imp.module}.${n}`)].find(isForbiddenModule);
    if (dotted !== undefined) {
      const mod = forbiddenModuleOf(dotted);
      found.push({
        key: `import:${mod}`,
        text: `import of forbidden module '${mod}'`,
        line: imp.line,
        lineText: (lines[imp.line - 1] ?? '').trim(),
      });
      continue;
    }
    const through = imp.names.map((n) => moduleNamed(n)).find((m) => m !== undefined);
    if (through !== undefined) {
      found.push({
        key: `import:${through}`,
        text: `import of forbidden module '${through}' (through ${imp.module})`,
        line: imp.line,
        lineText: (lines[imp.line - 1] ?? '').trim(),
      });
    }
  }

  const bindings = importBindings(script, root);
  walkTree(root, (node) => {
    if (
      node.name === 'ContinuedString' ||
      (node.name === 'BinaryExpression' && isConcatenation(script, node) && !isConcatenation(script, node.parent))
    ) {
      const value = foldString(script, node);
      if (value !== undefined && (ASSEMBLED_FORBIDDEN.has(value) || ESCAPE_STRINGS.has(value))) {
        add(node, `assembled:${value}`, `name '${value}' assembled from pieces (${script.slice(node.from, node.to).slice(0, 60)})`);
      }
      return;
    }
    if (node.name === 'CallExpression' && node.firstChild && NAME_REFLECTORS.has(calleeText(script, node.firstChild))) {
      const nameArg = argumentAt(node, 1);
      if (nameArg && stringLiteralValue(script, nameArg) === undefined && nameArg.name !== 'VariableName') {
        const text = script.slice(nameArg.from, nameArg.to);
        const pieces = stringPieces(script, nameArg);
        if (pieces.some((p) => p.includes('__')) || OBFUSCATED_NAME.test(text)) {
          add(node, 'reflect:computed-name', `attribute name built at run time (${script.slice(node.from, node.to).slice(0, 60)})`);
        }
      }
      return;
    }
    if (node.name === 'String' || node.name === 'FormatString') {
      const body = literalBody(script, node);
      if (body === undefined) return;
      if (/^\/proc(\/|$)/.test(body)) add(node, 'path:/proc', `path under /proc ('${body.slice(0, 40)}')`);
      if (ESCAPE_STRINGS.has(body)) add(node, `escape:${body}`, `string '${body}' (reaches the builtins or other modules)`);
      return;
    }
    if (node.name === 'PropertyName') {
      const name = script.slice(node.from, node.to);
      if (ESCAPE_ATTRIBUTES.has(name)) add(node, `escape:${name}`, `access to attribute '${name}'`);
      else if (LOADER_NAMES.has(name)) add(node, `loader:${name}`, `module loading through '${name}'`);
      return;
    }
    if (node.name !== 'VariableName' || isDefinitionOrKeyword(node)) return;
    const name = script.slice(node.from, node.to);
    if (LOADER_NAMES.has(name) && !bindings.has(name)) {
      add(node, `loader:${name}`, `module loading through '${name}'`);
      return;
    }
    const base =
      bindings.get(name) ??
      (name === 'builtins' || name === '__builtins__' || name === 'importlib'
        ? name
        : FORBIDDEN_CALLS.includes(name) || name === '__import__'
          ? `builtins.${name}`
          : undefined);
    if (base === undefined) return;
    const { chain, outer } = memberChain(script, node);
    const dotted = [base, ...chain].join('.');
    const parts = dotted.split('.');
    const call = callOf(outer);
    const spelled = [name, ...chain].join('.');

    if (parts[0] === '__builtins__')
      return add(node, 'escape:__builtins__', `access to '__builtins__'${chain.length ? ` (${spelled})` : ''}`);
    if (parts[0] === 'builtins' && FORBIDDEN_CALLS.includes(parts[1] ?? '')) {
      return add(node, `call:${parts[1]}`, `${call ? 'call to' : 'reference to'} forbidden function '${parts[1]}'`);
    }
    const importer = [...IMPORTERS].find((i) => dotted === i);
    if (importer) {
      const arg = call && firstArgument(call);
      const literal = arg && stringLiteralValue(script, arg);
      if (literal === undefined)
        return add(node, 'import:computed', `${call ? 'import with a computed module name' : 'reference to an importer'} (via ${spelled})`);
      if (isForbiddenModule(literal)) {
        const mod = forbiddenModuleOf(literal);
        add(node, `import:${mod}`, `import of forbidden module '${mod}' (via ${spelled})`);
      } else if (DYNAMIC_IMPORT_GUARDED.has(topModule(literal))) {
        add(node, `import:dynamic:${literal}`, `dynamic import of '${literal}' (via ${spelled}; its uses cannot be followed)`);
      }
      return;
    }
    if (REFLECTION_GUARDED.has(parts[0]) && parts[1] === '__dict__') {
      return add(
        node,
        `escape:${parts[0]}.__dict__`,
        parts[0] === 'builtins'
          ? `access to the builtins' namespace (${spelled})`
          : `access to the namespace of module '${parts[0]}' (${spelled})`,
      );
    }
    if (parts.length === 1 && REFLECTION_GUARDED.has(parts[0])) {
      if (isReflected(script, node))
        add(
          node,
          `reflect:${parts[0]}`,
          `reflection on module '${parts[0]}' (${script.slice(node.parent!.parent!.from, node.parent!.parent!.to).slice(0, 60)})`,
        );
      return;
    }
    if (parts[0] === 'sys' && parts[1] === 'modules') return add(node, 'use:sys.modules', `use of sys.modules`);
    if (parts[0] === 'asyncio' && ASYNC_SPAWNERS.has(parts[1] ?? ''))
      return add(node, `use:asyncio.${parts[1]}`, `use of asyncio.${parts[1]}`);
    const pair = parts.slice(0, 2).join('.');
    if (CODE_TYPES.has(pair))
      return add(node, `use:${pair}`, `use of ${pair} (makes a function from a code object)${spelled !== pair ? ` (as ${spelled})` : ''}`);
    if (DESERIALIZER_MODULES.has(parts[0]) && DESERIALIZER_MEMBERS.has(parts[1] ?? '')) {
      return add(
        node,
        `use:${pair}`,
        `use of ${pair} (deserialising runs code the data names)${spelled !== pair ? ` (as ${spelled})` : ''}`,
      );
    }
    if (!isForbiddenModule(dotted)) {
      // `shutil.os.system`, `tempfile._os`: a forbidden module kept as an attribute of an imported one.
      const at = chain.findIndex((c) => moduleNamed(c, true) !== undefined);
      if (at < 0) return;
      const via = moduleNamed(chain[at], true)!;
      const next = chain[at + 1];
      if (next !== undefined && (SAFE_MEMBERS[via] ?? []).includes(next)) return;
      const member = next !== undefined ? `${via}.${next}` : via;
      return add(node, `use:${member}`, `use of ${member} through another module (${spelled})`);
    }
    const mod = forbiddenModuleOf(dotted);
    if ((SAFE_MEMBERS[mod] ?? []).includes(parts[1] ?? '')) return;
    const member = parts.length > mod.split('.').length ? parts.slice(0, mod.split('.').length + 1).join('.') : mod;
    add(
      node,
      `use:${member}`,
      member === mod
        ? `reference to forbidden module '${mod}'${name !== mod ? ` (as ${name})` : ''}`
        : `use of ${member}${spelled !== member ? ` (as ${spelled})` : ''}`,
    );
  });
  return found.sort((a, b) => a.line - b.line);
}

function countByKey(items: readonly ForbiddenConstruct[]): Map<string, ForbiddenConstruct[]> {
  const by = new Map<string, ForbiddenConstruct[]>();
  for (const c of items) by.set(c.key, [...(by.get(c.key) ?? []), c]);
  return by;
}

/** The constructs `repaired` has more of than `baseline`, each on the line it was (most likely) added. */
export function addedConstructs(repaired: string, baseline: string): Array<ForbiddenConstruct & { before: number; after: number }> {
  const before = countByKey(baseline ? forbiddenConstructs(baseline) : []);
  const out: Array<ForbiddenConstruct & { before: number; after: number }> = [];
  for (const [key, now] of countByKey(forbiddenConstructs(repaired))) {
    const old = before.get(key) ?? [];
    const excess = now.length - old.length;
    if (excess <= 0) continue;
    const oldLines = new Map<string, number>();
    for (const c of old) oldLines.set(c.lineText, (oldLines.get(c.lineText) ?? 0) + 1);
    const fresh: ForbiddenConstruct[] = [];
    const inherited: ForbiddenConstruct[] = [];
    for (const c of now) {
      const left = oldLines.get(c.lineText) ?? 0;
      if (left > 0) {
        oldLines.set(c.lineText, left - 1);
        inherited.push(c);
      } else fresh.push(c);
    }
    const named = [...fresh.slice(0, excess), ...inherited.slice(inherited.length - Math.max(0, excess - fresh.length))];
    for (const c of named) out.push({ ...c, before: old.length, after: now.length });
  }
  return out.sort((a, b) => a.line - b.line);
}

/**
 * Advisory (see the top of this file): a repair with findings is not run, but nothing may rely on
 * an empty answer meaning the repair is harmless.
 *
 * Forbidden constructs the repair adds to the broken script it repairs, one readable line each,
 * e.g. `line 7: use of os.system (the broken script has 1, the repair 2)`. Empty when allowed.
 */
export function validateRepair(repaired: string, broken: string): string[] {
  return addedConstructs(repaired, broken).map((c) => {
    const counts = c.before > 0 ? ` (the broken script has ${c.before}, the repair ${c.after})` : '';
    return `line ${c.line}: ${c.text}${counts}`;
  });
}

/**
 * Every forbidden construct in `script` (the check against an empty baseline), one readable line
 * each, e.g. `line 3: import of forbidden module 'os'`. Empty when the script has none.
 */
export function validateScript(script: string): string[] {
  return validateRepair(script, '');
}

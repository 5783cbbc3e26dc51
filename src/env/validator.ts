// The script validator: the original ForgeEnv's forbidden list, checked on the Python syntax
// tree (Lezer) so that strings and comments never trigger a finding. It is a policy check that
// keeps episodes comparable with the original, not a sandbox: a determined script can still
// reach the OS (e.g. through `getattr`), which is why runs also happen in a throwaway directory
// with a timeout and a process-group kill.
//
// Decisions:
// - `shutil.rmtree` is NOT forbidden: the original allows it, real training scripts use it to
//   clear output folders, and the run directory is fresh and temporary.
// - Imports are matched on the top-level module (`import os.path`, `from os.path import join`
//   are both `os`). Relative imports (`from . import os`) are the script's own modules: allowed.
// - `__import__('os')` and `importlib.import_module('os')` with a literal name count as imports.
// - A parse failure is not itself a violation (Python reports the SyntaxError when run). Lezer
//   recovers from errors, so constructs in the parts that did parse are still reported: a
//   difference between Lezer's grammar and CPython's must never become a way around the check.
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@lezer/python';

export const FORBIDDEN_MODULES: readonly string[] = ['os', 'subprocess', 'socket'];
export const FORBIDDEN_CALLS: readonly string[] = ['eval', 'exec'];

/** Callees that import a module named by their first (string literal) argument. */
const DYNAMIC_IMPORTERS = new Set(['__import__', 'importlib.import_module', 'import_module', 'importlib.__import__']);
/** Spellings of the forbidden builtins reached through the builtins module. */
const BUILTIN_PREFIXES = ['', 'builtins.', '__builtins__.'];

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
      const module = modParts.filter((p) => p.name === 'VariableName').map(text).join('.');
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

/**
 * Forbidden constructs in `script`, one readable line each, e.g.
 * `line 3: import of forbidden module 'os'`. Empty when the script is allowed.
 */
export function validateScript(script: string): string[] {
  const root = parseScript(script);
  const findings: Array<{ line: number; text: string }> = [];
  for (const imp of findImports(script, root)) {
    if (imp.relative) continue;
    const mod = topModule(imp.module);
    if (FORBIDDEN_MODULES.includes(mod)) findings.push({ line: imp.line, text: `import of forbidden module '${mod}'` });
  }
  for (const call of findCalls(script, root)) {
    if (DYNAMIC_IMPORTERS.has(call.callee)) {
      const arg = firstArgument(call.node);
      const name = arg && stringLiteralValue(script, arg);
      if (name !== undefined && FORBIDDEN_MODULES.includes(topModule(name))) {
        findings.push({ line: call.line, text: `import of forbidden module '${topModule(name)}' (via ${call.callee})` });
      }
      continue;
    }
    const fn = FORBIDDEN_CALLS.find((f) => BUILTIN_PREFIXES.some((p) => call.callee === p + f));
    if (fn) findings.push({ line: call.line, text: `call to forbidden function '${fn}'` });
  }
  return findings.sort((a, b) => a.line - b.line).map((f) => `line ${f.line}: ${f.text}`);
}

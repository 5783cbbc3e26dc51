// Python syntax-tree queries for the primitives, over @lezer/python. Lezer is error-tolerant, so
// every query is defined on a parsed script that we first check for error nodes: a script that
// does not parse is refused with the line of the first error, never guessed at.
import type { SyntaxNode } from '@lezer/common';
import { parser } from '@lezer/python';
import { lineIndex, walkTree } from '../validator';

export interface ParsedScript {
  source: string;
  root: SyntaxNode;
  /** 1-based line of the first syntax error, if any. */
  errorLine: number | undefined;
  lineOf: (offset: number) => number;
  /** Every node, in source order (one walk, reused by all queries). */
  nodes: SyntaxNode[];
}

export function parsePython(source: string): ParsedScript {
  const root = parser.parse(source).topNode;
  const lineOf = lineIndex(source);
  const nodes: SyntaxNode[] = [];
  let errorAt: number | undefined;
  walkTree(root, (n) => {
    nodes.push(n);
    if (n.type.isError && errorAt === undefined) errorAt = n.from;
  });
  return { source, root, errorLine: errorAt === undefined ? undefined : lineOf(errorAt), lineOf, nodes };
}

export const textOf = (p: ParsedScript, n: SyntaxNode): string => p.source.slice(n.from, n.to);

/** An identifier occurrence: a variable, attribute or imported name (never inside strings or comments). */
export interface NameRef {
  name: string;
  from: number;
  to: number;
  kind: 'variable' | 'property';
}

export function nameRefs(p: ParsedScript): NameRef[] {
  const out: NameRef[] = [];
  for (const n of p.nodes) {
    if (n.name === 'VariableName') out.push({ name: textOf(p, n), from: n.from, to: n.to, kind: 'variable' });
    else if (n.name === 'PropertyName') out.push({ name: textOf(p, n), from: n.from, to: n.to, kind: 'property' });
  }
  return out;
}

export interface ImportRef {
  node: SyntaxNode;
  form: 'from' | 'import';
  /** Dotted module text and its source range (first to last segment). */
  module: string;
  moduleFrom: number;
  moduleTo: number;
  /** Names imported by `from m import …` (the original names, not aliases). */
  names: string[];
  line: number;
}

export function importRefs(p: ParsedScript): ImportRef[] {
  const out: ImportRef[] = [];
  for (const n of p.nodes) {
    if (n.name !== 'ImportStatement') continue;
    const parts: SyntaxNode[] = [];
    for (let c = n.firstChild; c; c = c.nextSibling) parts.push(c);
    if (parts[0]?.name === 'from') {
      const importAt = parts.findIndex((x) => x.name === 'import');
      const mod = parts.slice(1, importAt).filter((x) => x.name === 'VariableName');
      if (importAt < 0 || mod.length === 0 || parts[1]?.name === '.') continue; // relative imports are the script's own
      const names: string[] = [];
      const rest = parts.slice(importAt + 1);
      for (let i = 0; i < rest.length; i++) {
        if (rest[i]!.name === 'as') i++;
        else if (rest[i]!.name === 'VariableName') names.push(textOf(p, rest[i]!));
      }
      out.push({ node: n, form: 'from', module: mod.map((x) => textOf(p, x)).join('.'), moduleFrom: mod[0]!.from, moduleTo: mod[mod.length - 1]!.to, names, line: p.lineOf(n.from) });
    } else {
      // `import a.b as c, d`: one ref per dotted module.
      let seg: SyntaxNode[] = [];
      let alias = false;
      const flush = () => {
        if (seg.length) out.push({ node: n, form: 'import', module: seg.map((x) => textOf(p, x)).join('.'), moduleFrom: seg[0]!.from, moduleTo: seg[seg.length - 1]!.to, names: [], line: p.lineOf(n.from) });
        seg = [];
      };
      for (const x of parts.slice(1)) {
        if (x.name === ',') {
          flush();
          alias = false;
        } else if (x.name === 'as') alias = true;
        else if (x.name === 'VariableName' && !alias) seg.push(x);
      }
      flush();
    }
  }
  return out;
}

export interface KeywordArg {
  name: string;
  nameFrom: number;
  nameTo: number;
  valueText: string;
  valueFrom: number;
  valueTo: number;
}

export interface CallRef {
  node: SyntaxNode;
  /** Dotted callee (`trainer.train`, `.map` when the receiver is an expression), '' if not a name chain. */
  callee: string;
  calleeFrom: number;
  calleeTo: number;
  /** Last segment of the callee (`train`). */
  method: string;
  keywords: KeywordArg[];
  line: number;
}

function dotted(p: ParsedScript, n: SyntaxNode): string {
  if (n.name === 'VariableName') return textOf(p, n);
  if (n.name === 'MemberExpression') {
    const prop = n.lastChild;
    const obj = n.firstChild;
    if (!obj || !prop || prop.name !== 'PropertyName') return '';
    const base = dotted(p, obj);
    return `${base}.${textOf(p, prop)}`;
  }
  return '';
}

export function callRefs(p: ParsedScript): CallRef[] {
  const out: CallRef[] = [];
  for (const n of p.nodes) {
    if (n.name !== 'CallExpression') continue;
    const callee = n.firstChild;
    const args = n.getChild('ArgList');
    if (!callee || !args) continue;
    const kw: KeywordArg[] = [];
    const items: SyntaxNode[] = [];
    for (let c = args.firstChild; c; c = c.nextSibling) items.push(c);
    for (let i = 0; i + 2 < items.length; i++) {
      const a = items[i]!;
      const eq = items[i + 1]!;
      const prev = items[i - 1];
      if (a.name === 'VariableName' && eq.name === 'AssignOp' && textOf(p, eq) === '=' && (!prev || prev.name === '(' || prev.name === ',')) {
        const v = items[i + 2]!;
        kw.push({ name: textOf(p, a), nameFrom: a.from, nameTo: a.to, valueText: textOf(p, v), valueFrom: v.from, valueTo: v.to });
      }
    }
    const name = dotted(p, callee);
    out.push({ node: n, callee: name, calleeFrom: callee.from, calleeTo: callee.to, method: name.split('.').pop() ?? '', keywords: kw, line: p.lineOf(n.from) });
  }
  return out;
}

/** `obj["key"]` or `obj.key` where obj is a plain name. */
export interface AccessRef {
  object: string;
  key: string;
  style: 'subscript' | 'attribute';
  /** Range of the whole access after the object (`["key"]` or `.key`). */
  from: number;
  to: number;
  /** Range of the key text itself (inside the quotes for a subscript). */
  keyFrom: number;
  keyTo: number;
  quote?: string;
  /** Whether the access is the callee of a call (`obj.key(...)`): not a data access. */
  called: boolean;
  /** Whether it is the target of an assignment (`obj["key"] = …`). */
  assigned: boolean;
}

export function accessRefs(p: ParsedScript): AccessRef[] {
  const out: AccessRef[] = [];
  for (const n of p.nodes) {
    if (n.name !== 'MemberExpression') continue;
    const obj = n.firstChild;
    if (!obj || obj.name !== 'VariableName') continue;
    const called = n.parent?.name === 'CallExpression' && n.parent.firstChild?.from === n.from && n.parent.firstChild?.to === n.to;
    const assigned = n.parent?.name === 'AssignStatement' && n.parent.firstChild?.from === n.from;
    const second = obj.nextSibling;
    if (second?.name === '.') {
      const prop = second.nextSibling;
      if (prop?.name === 'PropertyName') {
        out.push({ object: textOf(p, obj), key: textOf(p, prop), style: 'attribute', from: second.from, to: prop.to, keyFrom: prop.from, keyTo: prop.to, called, assigned });
      }
    } else if (second?.name === '[') {
      const key = second.nextSibling;
      const close = key?.nextSibling;
      if (key?.name === 'String' && close?.name === ']') {
        const m = /^(['"])([^'"\\\n]*)\1$/.exec(textOf(p, key));
        if (m) out.push({ object: textOf(p, obj), key: m[2]!, style: 'subscript', from: second.from, to: close.to, keyFrom: key.from + 1, keyTo: key.to - 1, quote: m[1], called, assigned });
      }
    }
  }
  return out;
}

export const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const DOTTED = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Applies non-overlapping edits (offsets into `source`) from last to first. */
export function applyEdits(source: string, edits: Array<{ from: number; to: number; insert: string }>): string {
  const sorted = [...edits].sort((a, b) => b.from - a.from);
  let out = source;
  let lastFrom = Infinity;
  for (const e of sorted) {
    if (e.to > lastFrom) throw new Error('overlapping edits');
    out = out.slice(0, e.from) + e.insert + out.slice(e.to);
    lastFrom = e.from;
  }
  return out;
}

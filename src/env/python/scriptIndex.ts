// One linear walk over a parsed script that records what the primitives act on: names with their
// syntactic role, calls with their arguments, imports, subscripts, attribute accesses, string
// literals and simple assignments. Built once per parsed text and shared by every primitive.
import type { SyntaxNode } from '@lezer/common';
import type { ParsedScript } from './parse';
import { readStringLiteral, type StringLiteral } from './strings';

/**
 * `name`: a variable in code; `property`: after a dot; `keyword`: a call's keyword-argument name;
 * `import`: a name an import statement binds (or imports); `module`: a module path segment that
 * binds nothing (`x` in `from x import y`, `b` in `import a.b`); `definition`: a def/class name;
 * `parameter`: a function or lambda parameter.
 */
export type NameRole = 'name' | 'property' | 'keyword' | 'import' | 'module' | 'definition' | 'parameter';

export interface Span {
  from: number;
  to: number;
}

export interface NameOccurrence extends Span {
  text: string;
  role: NameRole;
}

export interface CallArgument extends Span {
  kind: 'positional' | 'keyword' | 'star' | 'double_star';
  /** Keyword arguments: the keyword and its range. */
  name?: string;
  nameFrom?: number;
  nameTo?: number;
  valueFrom: number;
  valueTo: number;
  /** Offset of the comma after the argument, if there is one. */
  commaAfter?: number;
}

export interface CallSite extends Span {
  calleeFrom: number;
  calleeTo: number;
  /** Dotted text of the callee when it is a plain name chain (`evaluate.load`), else null. */
  callee: string | null;
  /** When the callee is `<receiver>.<name>`: the method name and its range. */
  method?: { name: string; from: number; to: number; dotFrom: number };
  args: CallArgument[];
  openParen: number;
  /** Offset of `)`. */
  closeParen: number;
  node: SyntaxNode;
}

export interface ImportedName extends Span {
  /** Dotted for `import a.b`. */
  name: string;
  nameFrom: number;
  nameTo: number;
  alias?: string;
}

export interface ImportInfo extends Span {
  kind: 'import' | 'from';
  /** `from` imports: the module path and its range (absent for `from . import x`). */
  module?: string;
  moduleFrom?: number;
  moduleTo?: number;
  /** Leading dots of a relative import. */
  level: number;
  names: ImportedName[];
  star: boolean;
  topLevel: boolean;
}

export interface SubscriptSite extends Span {
  objectFrom: number;
  objectTo: number;
  /** Dotted text of the object when it is a plain name chain. */
  object: string | null;
  objectNode: SyntaxNode;
  /** `[` and `]` offsets. */
  openBracket: number;
  closeBracket: number;
  /** The index when it is a single string literal. */
  key?: StringLiteral;
  /** The index when it is a single non-negative integer literal. */
  integer?: number;
}

export interface AttributeSite extends Span {
  objectFrom: number;
  objectTo: number;
  object: string | null;
  objectNode: SyntaxNode;
  dotFrom: number;
  property: string;
  propertyFrom: number;
  propertyTo: number;
}

export interface Assignment {
  /** Dotted target (`tokenizer`, `self.tokenizer`). */
  target: string;
  targetFrom: number;
  targetTo: number;
  valueNode: SyntaxNode;
  /** The call when the value is a call expression. */
  call?: CallSite;
}

export interface FunctionInfo extends Span {
  /** Undefined for lambdas. */
  name?: string;
  params: string[];
}

export interface ScriptIndex {
  source: string;
  names: NameOccurrence[];
  namesByText: Map<string, NameOccurrence[]>;
  calls: CallSite[];
  callsByFrom: Map<number, CallSite>;
  imports: ImportInfo[];
  subscripts: SubscriptSite[];
  attributes: AttributeSite[];
  strings: StringLiteral[];
  assignments: Assignment[];
  functions: FunctionInfo[];
}

const cache = new WeakMap<ParsedScript, ScriptIndex>();

export function indexScript(parsed: ParsedScript): ScriptIndex {
  const hit = cache.get(parsed);
  if (hit) return hit;
  const built = build(parsed);
  cache.set(parsed, built);
  return built;
}

const CHAIN = /^[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** Dotted text of `node` when it is a plain chain of names, else null. */
export function chainText(source: string, node: SyntaxNode): string | null {
  if (node.name !== 'VariableName' && node.name !== 'MemberExpression') return null;
  const text = source.slice(node.from, node.to);
  return CHAIN.test(text) ? text : null;
}

function build(parsed: ParsedScript): ScriptIndex {
  const source = parsed.source;
  const idx: ScriptIndex = {
    source,
    names: [],
    namesByText: new Map(),
    calls: [],
    callsByFrom: new Map(),
    imports: [],
    subscripts: [],
    attributes: [],
    strings: [],
    assignments: [],
    functions: [],
  };
  const text = (n: { from: number; to: number }) => source.slice(n.from, n.to);
  const pendingAssignments: Array<{ target: string; targetFrom: number; targetTo: number; valueNode: SyntaxNode }> = [];

  parsed.tree.iterate({
    enter(ref) {
      const name = ref.name;
      switch (name) {
        case 'VariableName':
        case 'PropertyName': {
          const node = ref.node;
          const occ: NameOccurrence = { from: ref.from, to: ref.to, text: text(ref), role: roleOf(node, source) };
          idx.names.push(occ);
          const list = idx.namesByText.get(occ.text);
          if (list) list.push(occ);
          else idx.namesByText.set(occ.text, [occ]);
          return false;
        }
        case 'CallExpression': {
          const call = readCall(source, ref.node);
          if (call) {
            idx.calls.push(call);
            idx.callsByFrom.set(call.from, call);
          }
          return true;
        }
        case 'MemberExpression':
          readMember(source, ref.node, idx);
          return true;
        case 'String': {
          const lit = readStringLiteral(source, ref.from, ref.to);
          if (lit) idx.strings.push(lit);
          return false;
        }
        case 'ImportStatement': {
          const info = readImport(source, ref.node);
          if (info) idx.imports.push(info);
          return true;
        }
        case 'AssignStatement': {
          const a = readAssignment(source, ref.node);
          if (a) pendingAssignments.push(a);
          return true;
        }
        case 'FunctionDefinition':
        case 'LambdaExpression':
          idx.functions.push(readFunction(source, ref.node));
          return true;
        default:
          return true;
      }
    },
  });
  for (const a of pendingAssignments) {
    const call = a.valueNode.name === 'CallExpression' ? idx.callsByFrom.get(a.valueNode.from) : undefined;
    idx.assignments.push({ ...a, call });
  }
  return idx;
}

function roleOf(node: SyntaxNode, source: string): NameRole {
  if (node.name === 'PropertyName') return 'property';
  const parent = node.parent;
  if (!parent) return 'name';
  switch (parent.name) {
    case 'ImportStatement': {
      if (parent.firstChild?.name === 'from') {
        for (let n = node.nextSibling; n; n = n.nextSibling) if (n.name === 'import') return 'module';
        return 'import';
      }
      return node.prevSibling?.name === '.' ? 'module' : 'import';
    }
    case 'FunctionDefinition':
    case 'ClassDefinition':
      return 'definition';
    case 'ParamList': {
      // A default value (`def f(x=y)`) is code; the parameter itself is not.
      const prev = node.prevSibling;
      return prev && prev.name === 'AssignOp' ? 'name' : 'parameter';
    }
    case 'ArgList':
    case 'KeywordPattern': {
      const next = node.nextSibling;
      return next && next.name === 'AssignOp' && source.slice(next.from, next.to) === '=' ? 'keyword' : 'name';
    }
    default:
      return 'name';
  }
}

function readCall(source: string, node: SyntaxNode): CallSite | undefined {
  const callee = node.firstChild;
  const argList = node.lastChild;
  if (!callee || !argList || argList.name !== 'ArgList') return undefined;
  let method: CallSite['method'];
  if (callee.name === 'MemberExpression') {
    const prop = callee.lastChild;
    const dot = prop?.prevSibling;
    if (prop && prop.name === 'PropertyName' && dot && dot.name === '.') {
      method = { name: source.slice(prop.from, prop.to), from: prop.from, to: prop.to, dotFrom: dot.from };
    }
  }
  const args: CallArgument[] = [];
  let group: SyntaxNode[] = [];
  let openParen = argList.from;
  let closeParen = -1;
  const flush = (commaAfter?: number) => {
    if (group.length === 0) return;
    args.push(readArgument(source, group, commaAfter));
    group = [];
  };
  for (let c = argList.firstChild; c; c = c.nextSibling) {
    if (c.name === '(') openParen = c.from;
    else if (c.name === ')') closeParen = c.from;
    else if (c.name === ',') flush(c.from);
    else if (c.name !== 'Comment') group.push(c);
  }
  flush();
  if (closeParen < 0) return undefined;
  return {
    from: node.from,
    to: node.to,
    calleeFrom: callee.from,
    calleeTo: callee.to,
    callee: chainText(source, callee),
    method,
    args,
    openParen,
    closeParen,
    node,
  };
}

function readArgument(source: string, group: SyntaxNode[], commaAfter?: number): CallArgument {
  const first = group[0];
  const last = group[group.length - 1];
  const span = { from: first.from, to: last.to, commaAfter };
  if (first.name === '*' || first.name === '**') {
    return { ...span, kind: first.name === '*' ? 'star' : 'double_star', valueFrom: group[1]?.from ?? first.to, valueTo: last.to };
  }
  const op = group[1];
  if (group.length >= 3 && first.name === 'VariableName' && op && op.name === 'AssignOp' && source.slice(op.from, op.to) === '=') {
    return {
      ...span,
      kind: 'keyword',
      name: source.slice(first.from, first.to),
      nameFrom: first.from,
      nameTo: first.to,
      valueFrom: group[2].from,
      valueTo: last.to,
    };
  }
  return { ...span, kind: 'positional', valueFrom: first.from, valueTo: last.to };
}

function readMember(source: string, node: SyntaxNode, idx: ScriptIndex): void {
  const object = node.firstChild;
  const second = object?.nextSibling;
  if (!object || !second) return;
  const base = {
    from: node.from,
    to: node.to,
    objectFrom: object.from,
    objectTo: object.to,
    object: chainText(source, object),
    objectNode: object,
  };
  if (second.name === '.') {
    const prop = second.nextSibling;
    if (!prop || prop.name !== 'PropertyName') return;
    idx.attributes.push({
      ...base,
      dotFrom: second.from,
      property: source.slice(prop.from, prop.to),
      propertyFrom: prop.from,
      propertyTo: prop.to,
    });
    return;
  }
  if (second.name !== '[') return;
  const inner: SyntaxNode[] = [];
  let close = -1;
  for (let c = second.nextSibling; c; c = c.nextSibling) {
    if (c.name === ']') close = c.from;
    else if (c.name !== 'Comment') inner.push(c);
  }
  if (close < 0) return;
  const site: SubscriptSite = { ...base, openBracket: second.from, closeBracket: close };
  const only = inner.length === 1 ? inner[0] : undefined;
  if (only && only.name === 'String') site.key = readStringLiteral(source, only.from, only.to);
  if (only && only.name === 'Number' && /^\d+$/.test(source.slice(only.from, only.to)))
    site.integer = Number(source.slice(only.from, only.to));
  idx.subscripts.push(site);
}

function readImport(source: string, node: SyntaxNode): ImportInfo | undefined {
  const kids: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) if (c.name !== 'Comment') kids.push(c);
  const head = kids[0];
  if (!head) return undefined;
  const kind = head.name === 'from' ? 'from' : 'import';
  let i = 1;
  const info: ImportInfo = {
    from: node.from,
    to: node.to,
    kind,
    level: 0,
    names: [],
    star: false,
    topLevel: node.parent?.name === 'Script',
  };
  if (kind === 'from') {
    while (i < kids.length && (kids[i].name === '.' || kids[i].name === 'Ellipsis')) {
      info.level += kids[i].to - kids[i].from;
      i++;
    }
    const start = i;
    while (i < kids.length && kids[i].name !== 'import') i++;
    if (i > start) {
      info.moduleFrom = kids[start].from;
      info.moduleTo = kids[i - 1].to;
      info.module = source.slice(info.moduleFrom, info.moduleTo);
    }
    i++; // `import`
  }
  let current: ImportedName | undefined;
  let expectAlias = false;
  for (; i < kids.length; i++) {
    const k = kids[i];
    if (k.name === '*') info.star = true;
    else if (k.name === ',') current = undefined;
    else if (k.name === 'as') expectAlias = true;
    else if (k.name === 'VariableName' && expectAlias && current) {
      current.alias = source.slice(k.from, k.to);
      current.to = k.to;
      expectAlias = false;
    } else if (k.name === 'VariableName' && current && kids[i - 1]?.name === '.') {
      current.nameTo = current.to = k.to;
      current.name = source.slice(current.nameFrom, current.nameTo);
    } else if (k.name === 'VariableName') {
      current = { from: k.from, to: k.to, name: source.slice(k.from, k.to), nameFrom: k.from, nameTo: k.to };
      info.names.push(current);
    }
  }
  return info;
}

function readAssignment(
  source: string,
  node: SyntaxNode,
): { target: string; targetFrom: number; targetTo: number; valueNode: SyntaxNode } | undefined {
  const target = node.firstChild;
  const op = target?.nextSibling;
  const value = op?.nextSibling;
  if (!target || !op || !value || op.name !== 'AssignOp' || value.nextSibling) return undefined;
  const chain = chainText(source, target);
  if (!chain) return undefined;
  return { target: chain, targetFrom: target.from, targetTo: target.to, valueNode: value };
}

function readFunction(source: string, node: SyntaxNode): FunctionInfo {
  const info: FunctionInfo = { from: node.from, to: node.to, params: [] };
  for (let c = node.firstChild; c; c = c.nextSibling) {
    if (c.name === 'VariableName' && node.name === 'FunctionDefinition' && info.name === undefined) info.name = source.slice(c.from, c.to);
    if (c.name === 'ParamList') {
      for (let p = c.firstChild; p; p = p.nextSibling) {
        if (p.name === 'VariableName' && p.prevSibling?.name !== 'AssignOp') info.params.push(source.slice(p.from, p.to));
      }
    }
  }
  return info;
}

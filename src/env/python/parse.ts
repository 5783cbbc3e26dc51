// Parsing Python with @lezer/python. Lezer never fails: it recovers with error nodes, and it
// accepts two things CPython rejects (an unterminated string, a dedent to an unknown level), so
// we check those too. A script with any problem is one the primitives refuse to edit.
import type { SyntaxNode, Tree } from '@lezer/common';
import { parser } from '@lezer/python';
import { lineNumberAt, lineStarts } from './lines';

export interface SyntaxProblem {
  offset: number;
  /** 1-based. */
  line: number;
  column: number;
  message: string;
}

export interface ParsedScript {
  readonly source: string;
  readonly tree: Tree;
  readonly lineStarts: readonly number[];
  /** The first syntax problem, if any. */
  readonly problem?: SyntaxProblem;
}

// Candidate listing, apply and its verification parse the same few texts in a row.
const CACHE_SIZE = 8;
const cache = new Map<string, ParsedScript>();

export function parsePython(source: string): ParsedScript {
  const hit = cache.get(source);
  if (hit) {
    cache.delete(source);
    cache.set(source, hit);
    return hit;
  }
  const tree = parser.parse(maskGrammarGaps(source));
  const starts = lineStarts(source);
  const problemAt = findProblem(source, tree);
  const parsed: ParsedScript = {
    source,
    tree,
    lineStarts: starts,
    problem: problemAt && {
      ...problemAt,
      line: lineNumberAt(starts, problemAt.offset),
      column: problemAt.offset - starts[lineNumberAt(starts, problemAt.offset) - 1] + 1,
    },
  };
  cache.set(source, parsed);
  if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value!);
  return parsed;
}

/**
 * Valid Python that @lezer/python 1.1 rejects, rewritten for parsing only. Each rewrite keeps the
 * length and every quote, so all offsets and string tokens stay as in the source (which is what
 * the index reads text from): a form feed becomes a space, a bare `yield` the name `Yield`, and
 * a float with a trailing dot (`24.`) gets a digit (`240`).
 */
export function maskGrammarGaps(source: string): string {
  return source
    .replace(/\f/g, ' ')
    .replace(/\byield(?=[ \t]*(?:$|[)\];,#}]))/gm, 'Yield')
    .replace(/(?<![\w.])(\d+)\.(?![\w.])/g, (_m, digits: string) => `${digits}0`);
}

/** `line 12: unterminated string literal` style text for refusals. */
export function describeProblem(p: SyntaxProblem): string {
  return `line ${p.line}, column ${p.column}: ${p.message}`;
}

function findProblem(source: string, tree: Tree): { offset: number; message: string } | undefined {
  let found: { offset: number; message: string } | undefined;
  const note = (offset: number, message: string) => {
    if (!found || offset < found.offset) found = { offset, message };
  };
  tree.iterate({
    enter(node) {
      if (found && node.from > found.offset) return false;
      if (node.type.isError) {
        const open = unclosedBracket(source, node.node);
        if (open) note(open.from, `'${open.bracket}' is never closed`);
        else note(node.from, node.from >= source.length ? 'unexpected end of file' : 'invalid syntax');
        return false;
      }
      const name = node.name;
      if (name === 'String' || name === 'FormatString') {
        if (!isTerminated(source.slice(node.from, node.to))) note(node.from, 'unterminated string literal');
        return name === 'FormatString';
      }
      if (name === 'Script' || name === 'Body') checkIndentation(source, node.node, note);
      return true;
    },
  });
  return found;
}

const CLOSING: Record<string, string> = { '(': ')', '[': ']', '{': '}' };

/** The innermost bracket around an error node that has no closing partner (CPython reports that line). */
function unclosedBracket(source: string, node: SyntaxNode): { from: number; bracket: string } | undefined {
  for (let p = node.parent; p; p = p.parent) {
    const first = p.firstChild;
    if (!first) continue;
    // Brackets open the node (ArgList, TupleExpression, ...) or follow its first child (subscripts).
    for (const b of [first, first.nextSibling]) {
      if (!b || !(b.name in CLOSING)) continue;
      const close = CLOSING[b.name];
      if (p.lastChild?.name !== close) return { from: b.from, bracket: source.slice(b.from, b.to) };
    }
  }
  return undefined;
}

function isTerminated(text: string): boolean {
  const m = /^[A-Za-z]*('''|"""|'|")/.exec(text);
  if (!m) return true;
  const quote = m[1];
  const open = m[0].length;
  if (text.length < open + quote.length || !text.endsWith(quote)) return false;
  let backslashes = 0;
  for (let i = text.length - quote.length - 1; i >= open && text[i] === '\\'; i--) backslashes++;
  return backslashes % 2 === 0;
}

type NodeLike = { firstChild: NodeLike | null; nextSibling: NodeLike | null; from: number; type: { is(name: string): boolean } };

/** Every statement of a block starts a line at the block's column; top-level ones at column 0. */
function checkIndentation(source: string, block: NodeLike, note: (offset: number, message: string) => void): void {
  let column: number | undefined = block.type.is('Script') ? 0 : undefined;
  for (let child = block.firstChild; child; child = child.nextSibling) {
    if (!child.type.is('Statement')) continue;
    const lineStart = source.lastIndexOf('\n', child.from - 1) + 1;
    const before = source.slice(lineStart, child.from);
    if (!/^[ \t]*$/.test(before)) {
      // `if x: y` (an inline body) is fine; a second statement on a line is not a block statement.
      if (column === undefined) return;
      continue;
    }
    if (column === undefined) column = before.length;
    else if (before.length !== column) note(child.from, 'indentation does not match the enclosing block');
  }
}

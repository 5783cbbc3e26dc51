// Removing and inserting one argument of a call while keeping the call's layout: one argument
// per line (black style, with or without a trailing comma) or all on one line. Removal and
// insertion are mirror images, so moving an argument and moving it back restores the text.
import type { TextEdit } from '../python/edits';
import { endsLine, indentationAt, lineEndAt, lineStartAt, startsLine } from '../python/lines';
import type { CallSite } from '../python/scriptIndex';

/** Every argument starts its own line and `)` does too. */
export function isVertical(source: string, call: CallSite): boolean {
  return call.args.length > 0 && call.args.every((a) => startsLine(source, a.from)) && startsLine(source, call.closeParen);
}

export interface RemovedArgument {
  edit: TextEdit;
  /** The argument as written (`max_seq_length=64`). */
  text: string;
  /** A comment that shared the argument's line, moved along with it (`  # short`). */
  tail: string;
}

export function removeArgument(source: string, call: CallSite, k: number): RemovedArgument | undefined {
  const arg = call.args[k];
  if (!arg) return undefined;
  const text = source.slice(arg.from, arg.to);
  if (isVertical(source, call)) {
    if (arg.commaAfter !== undefined && endsLine(source, arg.commaAfter + 1)) {
      const end = lineEndAt(source, arg.commaAfter);
      return { edit: { from: lineStartAt(source, arg.from), to: end + 1, insert: '' }, text, tail: source.slice(arg.commaAfter + 1, end) };
    }
    const prev = call.args[k - 1];
    if (arg.commaAfter === undefined && prev?.commaAfter !== undefined && /^\s*$/.test(source.slice(prev.commaAfter + 1, arg.from))) {
      return { edit: { from: prev.commaAfter, to: arg.to, insert: '' }, text, tail: '' };
    }
    return undefined;
  }
  if (/[\n#]/.test(text)) return undefined;
  const next = call.args[k + 1];
  if (next) return { edit: { from: arg.from, to: next.from, insert: '' }, text, tail: '' };
  const prev = call.args[k - 1];
  if (prev) return { edit: { from: prev.to, to: arg.to, insert: '' }, text, tail: '' };
  return { edit: { from: arg.from, to: arg.commaAfter !== undefined ? arg.commaAfter + 1 : arg.to, insert: '' }, text, tail: '' };
}

/** Inserts `text` as argument number `p` (default: last). Undefined when the layout has no exact place for it. */
export function insertArgument(source: string, call: CallSite, text: string, tail: string, p = call.args.length): TextEdit | undefined {
  const n = call.args.length;
  if (p > n) return undefined;
  if (isVertical(source, call)) {
    if (p < n) {
      const at = call.args[p];
      return {
        from: lineStartAt(source, at.from),
        to: lineStartAt(source, at.from),
        insert: `${indentationAt(source, at.from)}${text},${tail}\n`,
      };
    }
    const last = call.args[n - 1];
    const indent = indentationAt(source, last.from);
    if (last.commaAfter !== undefined && endsLine(source, last.commaAfter + 1)) {
      const at = lineEndAt(source, last.commaAfter) + 1;
      return { from: at, to: at, insert: `${indent}${text},${tail}\n` };
    }
    if (tail) return undefined;
    return { from: last.to, to: last.to, insert: `,\n${indent}${text}` };
  }
  if (tail) return undefined;
  if (n === 0) return { from: call.openParen + 1, to: call.openParen + 1, insert: text };
  if (p < n) return { from: call.args[p].from, to: call.args[p].from, insert: `${text}, ` };
  return { from: call.args[n - 1].to, to: call.args[n - 1].to, insert: `, ${text}` };
}

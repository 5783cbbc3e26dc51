// Line arithmetic over a source string (0-based offsets, 1-based line numbers for messages).

/** Offsets where each line starts; `starts[i]` is the start of line i + 1. */
export function lineStarts(source: string): number[] {
  const starts = [0];
  for (let i = source.indexOf('\n'); i !== -1; i = source.indexOf('\n', i + 1)) starts.push(i + 1);
  return starts;
}

/** 1-based line number of `offset` (binary search over `starts`). */
export function lineNumberAt(starts: readonly number[], offset: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return lo + 1;
}

export function lineStartAt(source: string, offset: number): number {
  return source.lastIndexOf('\n', offset - 1) + 1;
}

/** Offset of the `\n` ending the line of `offset`, or the source length on the last line. */
export function lineEndAt(source: string, offset: number): number {
  const i = source.indexOf('\n', offset);
  return i === -1 ? source.length : i;
}

/** The leading whitespace of the line containing `offset`. */
export function indentationAt(source: string, offset: number): string {
  const start = lineStartAt(source, offset);
  let i = start;
  while (i < source.length && (source[i] === ' ' || source[i] === '\t')) i++;
  return source.slice(start, i);
}

/** True when only spaces/tabs precede `offset` on its line. */
export function startsLine(source: string, offset: number): boolean {
  return /^[ \t]*$/.test(source.slice(lineStartAt(source, offset), offset));
}

/** True when only spaces/tabs and an optional comment follow `offset` on its line. */
export function endsLine(source: string, offset: number): boolean {
  return /^[ \t]*(#.*)?$/.test(source.slice(offset, lineEndAt(source, offset)));
}

// Text edits over a source string: sorted, non-overlapping replacements applied in one pass.

export interface TextEdit {
  /** 0-based offsets in the source the edit applies to. */
  from: number;
  to: number;
  insert: string;
}

/** Sorted by position; throws on overlapping edits (a primitive bug, reported as a refusal upstream). */
export function sortEdits(edits: readonly TextEdit[]): TextEdit[] {
  const sorted = [...edits].sort((a, b) => a.from - b.from || a.to - b.to);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1];
    const cur = sorted[i];
    // Two insertions at one point are ambiguous too.
    if (cur.from < prev.to || (cur.from === prev.from && cur.from === cur.to && prev.from === prev.to)) {
      throw new Error(`overlapping edits at offsets ${prev.from}-${prev.to} and ${cur.from}-${cur.to}`);
    }
  }
  return sorted;
}

export function applyEdits(source: string, edits: readonly TextEdit[]): string {
  const sorted = sortEdits(edits);
  let out = '';
  let pos = 0;
  for (const e of sorted) {
    if (e.from < 0 || e.to > source.length || e.from > e.to) throw new Error(`edit ${e.from}-${e.to} outside the script`);
    out += source.slice(pos, e.from) + e.insert;
    pos = e.to;
  }
  return out + source.slice(pos);
}

/** The smallest range covering every edit (in source coordinates). */
export function spanOfEdits(edits: readonly TextEdit[]): { from: number; to: number } {
  let from = Infinity;
  let to = -Infinity;
  for (const e of edits) {
    from = Math.min(from, e.from);
    to = Math.max(to, e.to);
  }
  return { from, to };
}

// Hunk application with a hard bound on work. It follows jsdiff's `applyPatch` semantics (same
// placement order, same fuzz rules, same line-ending and end-of-file handling, so results are
// identical for every in-range diff; a differential test checks this), with two differences that
// make hostile input cheap:
// - a hunk's claimed position is clamped into the script (jsdiff walks one line at a time from
//   `@@ -99999999999999999999` back to the script, and copies that many undefined lines for an
//   insertion there);
// - every step (a hunk line compared or copied, a candidate position, a pass over the script)
//   spends one unit of a `WorkBudget`; when it runs out the application stops with
//   `WorkBudgetExceeded`. Counting work rather than time keeps the outcome the same on a slow or
//   busy machine, which a dataset of scored repairs needs.

/** One hunk: `lines` carry their ' ', '-', '+' or '\\' prefix; `oldStart` is 1-based as in a header. */
export interface Hunk {
  oldStart: number;
  oldLines: number;
  lines: readonly string[];
}

export class WorkBudgetExceeded extends Error {
  constructor(readonly limit: number) {
    super(`gave up after ${limit} steps`);
    this.name = 'WorkBudgetExceeded';
  }
}

/** A fixed allowance of steps, shared by everything one diff application does. */
export class WorkBudget {
  private used = 0;
  constructor(readonly limit: number) {}
  spend(n = 1): void {
    this.used += n;
    if (this.used > this.limit) throw new WorkBudgetExceeded(this.limit);
  }
  get spent(): number {
    return this.used;
  }
}

export interface ApplyHunksOptions {
  /** Context lines that may be missing, extra or different (jsdiff's fuzzFactor). */
  fuzz?: number;
  /**
   * Lines are equal when their keys are (default: the line itself). Keys are computed once per
   * line, not per comparison; the output always keeps the script's and the hunk's own text.
   */
  key?: (line: string) => string;
  budget: WorkBudget;
}

const onlyWinEndings = (s: string) => s.includes('\r\n') && !s.startsWith('\n') && !/[^\r]\n/.test(s);
const onlyUnixEndings = (s: string) => !s.includes('\r\n') && s.includes('\n');
const hunkIsUnix = (hunks: readonly Hunk[]) => !hunks.some((h) => h.lines.some((l) => !l.startsWith('\\') && l.endsWith('\r')));
const hunkIsWin = (hunks: readonly Hunk[]) =>
  hunks.some((h) => h.lines.some((l) => l.endsWith('\r'))) &&
  hunks.every((h) => h.lines.every((l, i) => l.startsWith('\\') || l.endsWith('\r') || h.lines[i + 1]?.startsWith('\\')));
const toWin = (hunks: readonly Hunk[]): Hunk[] =>
  hunks.map((h) => ({
    ...h,
    lines: h.lines.map((l, i) => (l.startsWith('\\') || l.endsWith('\r') || h.lines[i + 1]?.startsWith('\\') ? l : l + '\r')),
  }));
const toUnix = (hunks: readonly Hunk[]): Hunk[] =>
  hunks.map((h) => ({ ...h, lines: h.lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l)) }));

/** A hunk split once into operations, texts (without the prefix) and comparison keys. */
interface Prepared {
  ops: string[];
  texts: string[];
  keys: string[];
}

function prepare(hunk: Hunk, key: ((line: string) => string) | undefined): Prepared {
  const ops: string[] = [];
  const texts: string[] = [];
  for (const l of hunk.lines) {
    // An empty hunk line is blank context, as in jsdiff.
    ops.push(l.length > 0 ? l[0] : ' ');
    texts.push(l.length > 0 ? l.slice(1) : l);
  }
  return { ops, texts, keys: key ? texts.map(key) : texts };
}

/**
 * Candidate positions around `start` within [min, max]: start+1, start-1, start+2, start-2, …,
 * continuing on one side once the other is exhausted (jsdiff's order). `start` itself is tried first by the caller.
 */
function* around(start: number, min: number, max: number): Generator<number> {
  for (let d = 1; ; d++) {
    const up = start + d <= max;
    const down = start - d >= min;
    if (!up && !down) return;
    if (up) yield start + d;
    if (down) yield start - d;
  }
}

/**
 * Applies `hunks` in order to `source`; returns the new text, or false when a hunk fits nowhere.
 * Throws WorkBudgetExceeded when the budget runs out.
 */
export function applyHunks(source: string, hunksIn: readonly Hunk[], opts: ApplyHunksOptions): string | false {
  const { budget } = opts;
  const fuzz = opts.fuzz ?? 0;
  const key = opts.key;
  let hunks = hunksIn;
  // The passes over the text and the hunks below (line endings, split, join) cost one step per line.
  budget.spend(1 + hunks.reduce((n, h) => n + h.lines.length, 0));
  if (onlyWinEndings(source) && hunkIsUnix(hunks)) hunks = toWin(hunks);
  else if (onlyUnixEndings(source) && hunkIsWin(hunks)) hunks = toUnix(hunks);
  const lines = source.split('\n');
  // Per line and per 64 characters, so a script of few very long lines is not cheap to pass over.
  budget.spend(lines.length + (source.length >> 6));
  if (hunks.length === 0) return source;

  // A change to the final newline can only be in the last hunk ("\ No newline at end of file").
  let prev = '';
  let removeEofNl = false;
  let addEofNl = false;
  for (const line of hunks[hunks.length - 1].lines) {
    if (line[0] === '\\') {
      if (prev[0] === '+') removeEofNl = true;
      else if (prev[0] === '-') addEofNl = true;
    }
    prev = line;
  }
  if (removeEofNl) {
    if (addEofNl) {
      if (!fuzz && lines[lines.length - 1] === '') return false;
    } else if (lines[lines.length - 1] === '') lines.pop();
    else if (!fuzz) return false;
  } else if (addEofNl) {
    if (lines[lines.length - 1] !== '') lines.push('');
    else if (!fuzz) return false;
  }

  const lineKeys = key ? lines.map(key) : lines;
  if (key) budget.spend(lines.length + (source.length >> 6));

  /**
   * Whether the hunk fits with lines[toPos] matching its first old line, allowing `maxErrors`
   * substitutions, insertions or deletions of context; removed lines must match exactly, and the
   * context right around an insertion too.
   */
  function fit(
    h: Prepared,
    toPos: number,
    maxErrors: number,
    from = 0,
    lastContextMatched = true,
    patched: string[] = [],
    patchedLen = 0,
  ): { patched: string[]; lastOld: number } | null {
    let trailingContext = 0;
    let nextContextMustMatch = false;
    for (let i = from; i < h.ops.length; i++) {
      budget.spend();
      const op = h.ops[i];
      if (op === '-') {
        if (lineKeys[toPos] === h.keys[i]) {
          toPos++;
          trailingContext = 0;
        } else {
          if (!maxErrors || lines[toPos] == null) return null;
          patched[patchedLen] = lines[toPos];
          return fit(h, toPos + 1, maxErrors - 1, i, false, patched, patchedLen + 1);
        }
      } else if (op === '+') {
        if (!lastContextMatched) return null;
        patched[patchedLen++] = h.texts[i];
        trailingContext = 0;
        nextContextMustMatch = true;
      } else if (op === ' ') {
        trailingContext++;
        patched[patchedLen] = lines[toPos];
        if (lineKeys[toPos] === h.keys[i]) {
          patchedLen++;
          lastContextMatched = true;
          nextContextMustMatch = false;
          toPos++;
        } else {
          if (nextContextMustMatch || !maxErrors) return null;
          // The script has a substituted line, an extra line, or lacks one of the hunk's lines.
          // (A blank script line is never taken as substituted or extra, as in jsdiff.)
          return (
            (lines[toPos]
              ? fit(h, toPos + 1, maxErrors - 1, i + 1, false, patched, patchedLen + 1) ||
                fit(h, toPos + 1, maxErrors - 1, i, false, patched, patchedLen + 1)
              : null) || fit(h, toPos, maxErrors - 1, i + 1, false, patched, patchedLen)
          );
        }
      }
    }
    // Unchanged trailing context is given back, so the next hunk may start inside it.
    patchedLen -= trailingContext;
    toPos -= trailingContext;
    patched.length = patchedLen;
    return { patched, lastOld: toPos - 1 };
  }

  const result: string[] = [];
  let minLine = 0;
  let prevOffset = 0;
  for (const hunk of hunks) {
    const prepared = prepare(hunk, key);
    const maxLine = lines.length - hunk.oldLines + fuzz;
    // Clamped: a claimed position outside [minLine, the last place the hunk could start] can never
    // match there, and searching from it costs time proportional to the distance (an insertion
    // may go at lines.length, after the last line).
    const claimed = hunk.oldStart + prevOffset - 1;
    const start = Math.max(minLine, Math.min(Number.isFinite(claimed) ? claimed : 0, maxLine, lines.length));
    let found: { patched: string[]; lastOld: number } | null = null;
    let toPos = start;
    for (let maxErrors = 0; maxErrors <= fuzz && !found; maxErrors++) {
      toPos = start;
      found = fit(prepared, toPos, maxErrors);
      if (found) break;
      for (const pos of around(start, minLine, maxLine)) {
        budget.spend();
        toPos = pos;
        found = fit(prepared, pos, maxErrors);
        if (found) break;
      }
    }
    if (!found) return false;
    for (let i = minLine; i < toPos; i++) result.push(lines[i]);
    for (const line of found.patched) result.push(line);
    budget.spend(toPos - minLine + found.patched.length);
    minLine = found.lastOld + 1;
    prevOffset = toPos + 1 - hunk.oldStart;
  }
  for (let i = minLine; i < lines.length; i++) result.push(lines[i]);
  return result.join('\n');
}

// Repair diffs: creating them (git-style, so `git apply` and `patch -p1` accept them) and
// applying what a repair agent submits, as forgivingly as is safe.
//
// applyRepairDiff, in order:
// 0. a submission over the size limit, or a diff that creates, deletes, renames or copies a file,
//    makes a symlink, only changes a file mode or is binary → refused at once with the reason;
// 1. empty / whitespace-only submission → the script unchanged (`empty`);
// 2. no `@@` hunk header and the text reads as Python (Python statements at line starts, or a
//    clean parse, and no `+`/`-` diff body) → it replaces the whole file (`whole_script`, the
//    original ForgeEnv's behaviour);
// 3. jsdiff's parser, then the hunks applied exactly (exact context, hunks may shift) → `strict`;
// 4. our own tolerant hunk parser (recomputes wrong header counts, treats blank lines inside a
//    hunk as blank context, ignores prose around the diff), then each hunk alone with fuzz 2 and
//    trailing whitespace ignored → `lenient`, with one warning per hunk that did not apply.
//    When no hunk applies at all the result is an error naming the first hunks and the first
//    line that was not found.
// Never throws. Bounded: the size limit, hunk positions clamped to the script and a work budget
// (diffApply.ts) keep every application to a few million steps whatever the input; messages quote
// at most a few short excerpts. For a large submission prefer applyRepairDiffAsync (diffAsync.ts),
// which runs this in a worker thread.
import { diffLines, parsePatch, structuredPatch, formatPatch, type StructuredPatch } from 'diff';
import { parser } from '@lezer/python';
import { applyHunks, WorkBudget, WorkBudgetExceeded, type Hunk } from './diffApply';
import { DEFAULT_MAX_DIFF_BYTES } from '../limits';

export type ApplyMode = 'empty' | 'strict' | 'lenient' | 'whole_script';
export type ApplyResult = { ok: true; script: string; mode: ApplyMode; warnings: string[] } | { ok: false; error: string };

/**
 * A git-style unified diff from `original` to `modified` with 3 lines of context, or '' when
 * they are identical. Handles missing final newlines (`\ No newline at end of file`) and CRLF
 * (carried inside the changed lines, as git does).
 */
export function createRepairDiff(original: string, modified: string, fileName = 'train.py'): string {
  if (original === modified) return '';
  const patch = structuredPatch(`a/${fileName}`, `b/${fileName}`, original, modified, undefined, undefined, { context: 3 });
  return formatPatch({ ...patch, isGit: true });
}

/** Lines of `text` as a diff counts them: a final newline does not start an extra line. */
function countLines(text: string): number {
  if (text === '') return 0;
  const n = text.split('\n').length;
  return text.endsWith('\n') ? n - 1 : n;
}

/**
 * Line statistics between two texts: `added` and `removed` lines, and `changedLines`, where a
 * block of removed lines replaced by added lines counts max(removed, added) (a modified line
 * counts once).
 */
export function diffStats(a: string, b: string): { added: number; removed: number; changedLines: number } {
  let added = 0;
  let removed = 0;
  let changedLines = 0;
  let pendingRemoved = 0;
  for (const part of diffLines(a, b)) {
    const n = part.count ?? countLines(part.value);
    if (part.removed) {
      removed += n;
      pendingRemoved += n;
    } else if (part.added) {
      added += n;
      changedLines += Math.max(n, pendingRemoved);
      pendingRemoved = 0;
    } else {
      changedLines += pendingRemoved;
      pendingRemoved = 0;
    }
  }
  changedLines += pendingRemoved;
  return { added, removed, changedLines };
}

/** (added + removed) / max(1, lines in `original`): 0 for no change, 2 for a full rewrite of equal length. */
export function lineChangeRatio(original: string, repaired: string): number {
  const { added, removed } = diffStats(original, repaired);
  return (added + removed) / Math.max(1, countLines(original));
}

export { DEFAULT_MAX_DIFF_BYTES };
/**
 * Steps one placement stage (exact, then tolerant) may spend. A normal repair needs a few hundred
 * to a few thousand; a tolerant search of one shifted hunk through a 3,000-line script about
 * 100,000. At roughly 10 ns a step (bench/diff.bench.ts) the worst case stays near 20 ms a stage.
 */
export const DIFF_WORK_BUDGET = 2_000_000;

export interface ApplyOptions {
  /** The script's name in messages and file headers (default train.py). */
  fileName?: string;
  /** Submissions larger than this (UTF-8 bytes) are refused unread (default DEFAULT_MAX_DIFF_BYTES). */
  maxBytes?: number;
  /** Steps per placement stage (default DIFF_WORK_BUDGET). */
  workBudget?: number;
}

const LENIENT_FUZZ = 2;
/** Hunks named one by one in a message; the rest are counted. */
const LISTED = 5;
const QUOTE_CHARS = 80;

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

/** At most `max` characters, marked when cut. */
function clip(s: string, max = QUOTE_CHARS): string {
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
const quote = (s: string) => JSON.stringify(clip(s));

function formatSize(bytes: number): string {
  return bytes >= 1024 * 1024
    ? `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
    : bytes >= 1024
      ? `${(bytes / 1024).toFixed(1)} KiB`
      : `${bytes} bytes`;
}

/** Keeps the first LISTED messages and counts the rest: 50,000 bad hunks cost no more than five messages. */
class Tally {
  private readonly shown: string[] = [];
  private count = 0;
  add(make: () => string): void {
    if (this.count++ < LISTED) this.shown.push(make());
  }
  items(): string[] {
    return this.count > LISTED ? [...this.shown, `and ${this.count - LISTED} more`] : [...this.shown];
  }
}

/** The first `LISTED` items joined, then how many more. */
function listSome(items: readonly string[], sep = '; '): string {
  const shown = items.slice(0, LISTED).join(sep);
  return items.length > LISTED ? `${shown}${sep}and ${items.length - LISTED} more` : shown;
}

const isSpace = (c: string | undefined) => c !== undefined && /\s/.test(c);

/**
 * Removes a Markdown code fence around the whole submission (text before the fence is allowed to
 * be whitespace only). Scans the ends of the text once; a regular expression here backtracked
 * quadratically on a long first line.
 */
export function stripFence(text: string): { text: string; fenced: boolean } {
  const none = { text, fenced: false };
  const start = text.search(/\S/);
  if (start < 0 || !text.startsWith('```', start)) return none;
  let open = start;
  while (text[open] === '`') open++;
  const firstNewline = text.indexOf('\n', open);
  if (firstNewline < 0) return none;
  let end = text.length;
  while (end > firstNewline && isSpace(text[end - 1])) end--;
  let close = end;
  while (close > firstNewline + 1 && text[close - 1] === '`') close--;
  const fence = Math.min(open - start, end - close);
  if (fence < 3) return none;
  const bodyStart = firstNewline + 1;
  let bodyEnd = end - fence;
  if (bodyEnd - 1 >= bodyStart && text[bodyEnd - 1] === '\n') bodyEnd--;
  return { text: text.slice(bodyStart, bodyEnd) + '\n', fenced: true };
}

function normaliseName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  let n = name
    .trim()
    .replace(/^"(.*)"$/, '$1')
    .split('\t')[0];
  if (n === '/dev/null') return n;
  n = n.replace(/^[ab]\//, '').replace(/^\.\//, '');
  return n;
}

/** Only the start of a long text is parsed: the parser takes about 1 ms per KiB. */
const PARSE_PREFIX_CHARS = 4096;

function looksLikePython(text: string): boolean {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return false;
  // Any body line in diff form means a (headerless) diff, not a script.
  const diffish = lines.filter((l) => /^[+-](?![+-])/.test(l) || /^(---|\+\+\+) /.test(l)).length;
  if (diffish > 0 && diffish >= lines.length / 3) return false;
  if (lines.some((l) => /^(import |from \S+ import |def |class |if __name__|print\()/.test(l))) return true;
  let prefix = text;
  if (prefix.length > PARSE_PREFIX_CHARS) {
    const cut = prefix.lastIndexOf('\n', PARSE_PREFIX_CHARS);
    prefix = prefix.slice(0, cut > 0 ? cut + 1 : PARSE_PREFIX_CHARS);
  }
  let errors = 0;
  parser.parse(prefix).iterate({ enter: (n) => void (n.type.isError && errors++) });
  return errors === 0;
}

/**
 * Refuses diffs whose file operation is not an in-place text edit of the script: new files
 * (`--- /dev/null`, `new file mode`), symlinks (mode 120000), deletions, copies, binary patches and
 * mode-only changes. Returns the refusal, or warnings for a mode change that comes with hunks, and
 * whether there is any `@@` line.
 */
function checkFileOperations(lines: readonly string[], fileName: string): { error?: string; warnings: string[]; hunks: boolean } {
  const warnings: string[] = [];
  const git = lines.some((l) => l.startsWith('diff --git '));
  let hunks = false;
  let modeChange: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const l = lines[i].replace(/\r$/, '');
    if (l.startsWith('@@')) hunks = true;
    else if (l.startsWith('--- /dev/null') && /^\+\+\+ /.test(lines[i + 1] ?? '')) {
      return {
        error: `the diff creates a new file (--- /dev/null); a repair edits ${fileName} in place: send a diff against it, or the whole script`,
        warnings,
        hunks,
      };
    } else if (git) {
      const mode = /^(new file mode|deleted file mode|old mode|new mode) (\d+)/.exec(l);
      if (mode && mode[2] === '120000')
        return { error: `the diff makes a symbolic link (${mode[1]} 120000); a repair must edit ${fileName}'s text`, warnings, hunks };
      if (mode?.[1] === 'new file mode')
        return { error: `the diff creates a new file (new file mode ${mode[2]}); a repair edits ${fileName} in place`, warnings, hunks };
      if (mode?.[1] === 'deleted file mode') return { error: `the diff deletes ${fileName}; a repair must edit it`, warnings, hunks };
      if (mode) modeChange = modeChange ? `${modeChange} → ${mode[2]}` : mode[2];
      if (/^copy (from|to) /.test(l)) return { error: `the diff copies a file; a repair edits ${fileName} in place`, warnings, hunks };
      if (/^(Binary files |GIT binary patch)/.test(l))
        return { error: `the diff is a binary patch; a repair must change ${fileName}'s text`, warnings, hunks };
    }
  }
  if (modeChange !== undefined) {
    if (!hunks)
      return {
        error: `the diff only changes a file mode (${modeChange}) and has no hunks; a repair must change ${fileName}'s text`,
        warnings,
        hunks,
      };
    warnings.push(`the diff also changes the file mode (${modeChange}); that part was ignored`);
  }
  return { warnings, hunks };
}

/** Checks that every file a parsed patch touches is the script; returns an error or warnings. */
function checkFiles(patches: StructuredPatch[], fileName: string): { error?: string; warnings: string[] } {
  const warnings: string[] = [];
  const names = new Set<string>();
  for (const p of patches) {
    for (const n of [normaliseName(p.oldFileName), normaliseName(p.newFileName)]) if (n !== undefined) names.add(n);
    if (p.isDelete || normaliseName(p.newFileName) === '/dev/null')
      return { error: `the diff deletes ${fileName}; a repair must edit it`, warnings };
    if (p.isRename) return { error: `the diff renames ${fileName}; a repair must edit it in place`, warnings };
  }
  names.delete('/dev/null');
  const others = [...names].filter((n) => n !== fileName && !n.endsWith(`/${fileName}`)).map((n) => clip(n, 60));
  if (patches.length > 1 && others.length > 0) {
    return { error: `the diff touches other files (${listSome(others, ', ')}); only ${fileName} may be changed`, warnings };
  }
  if (others.length > 0) warnings.push(`the diff names ${listSome(others, ', ')}; applied to ${fileName}`);
  return { warnings };
}

function tryStrict(script: string, patches: StructuredPatch[], budget: WorkBudget): string | false {
  let text = script;
  for (const p of patches) {
    if (p.hunks.length === 0) continue;
    const r = applyHunks(text, p.hunks, { budget });
    if (r === false) return false;
    text = r;
  }
  return text;
}

interface LooseHunk {
  header: string;
  oldStart: number;
  /** Counts the header claims, when it has them. */
  claimed?: { old: number; new: number };
  lines: string[];
  /** 1-based line of the header in the submission. */
  at: number;
  /** Set when a non-diff line sits between the hunk's lines: such a hunk is never applied. */
  malformed?: string;
}

/** Splits a submission into hunks without trusting header counts. Lines outside hunks are ignored. */
function parseLooseHunks(all: readonly string[]): LooseHunk[] {
  const hunks: LooseHunk[] = [];
  const lines = all[all.length - 1] === '' ? all.slice(0, -1) : all;
  let current: LooseHunk | undefined;
  let blankRun = 0; // blank lines turned into context, dropped again if they end the hunk
  let garbage: string | undefined; // a non-diff line seen after the hunk's lines
  const close = () => {
    if (current && blankRun) current.lines.splice(current.lines.length - blankRun, blankRun);
    current = undefined;
    blankRun = 0;
    garbage = undefined;
  };
  lines.forEach((line, idx) => {
    const bare = line.replace(/\r$/, '');
    if (bare.startsWith('@@')) {
      close();
      const m = HUNK_HEADER.exec(bare);
      current = { header: clip(bare.trim(), 40), oldStart: m ? Number(m[1]) : 1, lines: [], at: idx + 1 };
      if (m) current.claimed = { old: m[2] === undefined ? 1 : Number(m[2]), new: m[4] === undefined ? 1 : Number(m[4]) };
      hunks.push(current);
      return;
    }
    if (!current) return;
    // The next file's headers end the hunk (a lone `--- x` line is a removed line starting with `--`).
    if (/^(diff --git |index )/.test(bare) || (bare.startsWith('--- ') && (lines[idx + 1] ?? '').startsWith('+++ '))) {
      close();
      return;
    }
    const c = line[0];
    if (c === ' ' || c === '-' || c === '+' || c === '\\') {
      if (garbage) current.malformed ??= garbage;
      current.lines.push(line);
      blankRun = 0;
    } else if (bare.trim() === '') {
      current.lines.push(' ' + line); // a blank context line that lost its leading space
      blankRun++;
    } else {
      // Prose after the last hunk line is ignored; prose followed by more hunk lines spoils the hunk.
      garbage ??= `submission line ${idx + 1} is not a diff line: ${quote(bare)}`;
    }
  });
  close();
  return hunks.filter((h) => h.lines.some((l) => l[0] === '-' || l[0] === '+'));
}

function toHunk(h: LooseHunk): Hunk {
  const oldLines = h.lines.filter((l) => l[0] === ' ' || l[0] === '-').length;
  return { oldStart: h.oldStart, oldLines, lines: h.lines };
}

const trimEnd = (line: string) => line.trimEnd();

/**
 * Why a hunk cannot fit anywhere, from the script's set of (right-trimmed) lines, or undefined when
 * it might: removed lines must exist, and at most the fuzz's worth of context lines may be missing.
 * A necessary condition only, so it never changes a result, but it answers most non-matching hunks
 * in one pass over the hunk instead of a search through the script.
 */
function cannotFit(have: ReadonlySet<string>, h: LooseHunk): string | undefined {
  let missingContext = 0;
  let firstMissing = -1;
  for (let i = 0; i < h.lines.length; i++) {
    const l = h.lines[i];
    if ((l[0] === ' ' || l[0] === '-') && !have.has(l.slice(1).trimEnd())) {
      if (firstMissing < 0) firstMissing = i;
      if (l[0] === '-' || ++missingContext > LENIENT_FUZZ)
        return `line ${firstMissing + 1} of the hunk (${quote(h.lines[firstMissing])}) is not in the script`;
    }
  }
  return undefined;
}

const lineSet = (text: string) => new Set(text.split('\n').map((l) => l.trimEnd()));

function applyLenient(
  script: string,
  hunks: LooseHunk[],
  budget: WorkBudget,
): { text: string; applied: number; failures: string[]; notes: string[]; exhausted: boolean } {
  const done = (exhausted: boolean, notTried?: string) => ({
    text,
    applied,
    failures: [...failures.items(), ...(notTried ? [notTried] : [])],
    notes: notes.items(),
    exhausted,
  });
  let text = script;
  let have: Set<string> | undefined;
  let applied = 0;
  const failures = new Tally();
  const notes = new Tally();
  for (let i = 0; i < hunks.length; i++) {
    const h = hunks[i];
    const label = () => `hunk ${i + 1} (${h.header}, submission line ${h.at})`;
    try {
      budget.spend(h.lines.length);
      if (h.malformed) {
        failures.add(() => `${label()} was not applied: ${h.malformed}`);
        continue;
      }
      const hunk = toHunk(h);
      const newLines = h.lines.filter((l) => l[0] === ' ' || l[0] === '+').length;
      const claimed = h.claimed;
      if (claimed && (claimed.old !== hunk.oldLines || claimed.new !== newLines)) {
        notes.add(
          () =>
            `${label()}: the header counts ${claimed.old},${claimed.new} lines but the hunk has ${hunk.oldLines},${newLines}; the counts were recomputed`,
        );
      }
      if (!have) {
        budget.spend(text.length >> 6);
        have = lineSet(text);
        budget.spend(have.size);
      }
      const miss = cannotFit(have, h);
      if (miss) {
        failures.add(() => `${label()} did not apply: ${miss}`);
        continue;
      }
      const r = applyHunks(text, [hunk], { fuzz: LENIENT_FUZZ, key: trimEnd, budget });
      if (r === false) failures.add(() => `${label()} did not apply: its lines exist but not in this order (the context does not match)`);
      else {
        text = r;
        applied++;
        have = undefined; // the text changed
      }
    } catch (e) {
      if (!(e instanceof WorkBudgetExceeded)) throw e;
      failures.add(() => `${label()} did not apply: the work limit (${e.limit} steps) was reached while placing it`);
      return done(true, i + 1 < hunks.length ? `hunks ${i + 2}–${hunks.length} were not tried (work limit reached)` : undefined);
    }
  }
  return done(false);
}

/** Applies a repair agent's submission to `script`. See the header comment for the order of attempts. */
export function applyRepairDiff(script: string, submission: string, options: ApplyOptions = {}): ApplyResult {
  return applyRepairDiffCounted(script, submission, options).result;
}

/** What one application cost: placement steps spent, and whether a stage ran out of its budget. */
export interface ApplyCost {
  steps: number;
  budgetHit: boolean;
}

/** The size refusal, or undefined when `submission` is within `maxBytes`. Costs nothing for a plainly oversized text. */
export function refuseOversized(submission: string, maxBytes = DEFAULT_MAX_DIFF_BYTES): ApplyResult | undefined {
  // More characters than allowed bytes is too large whatever the encoding: no need to measure it.
  const plainlyOver = submission.length > maxBytes;
  const size = plainlyOver ? submission.length : Buffer.byteLength(submission, 'utf8');
  if (size <= maxBytes) return undefined;
  return {
    ok: false,
    error: `the submission is ${plainlyOver ? 'at least ' : ''}${formatSize(size)}, over the ${formatSize(maxBytes)} limit; nothing was applied`,
  };
}

/**
 * applyRepairDiff, also saying what it cost (for tests, benchmarks and the inline-or-worker
 * choice). `stopAtBudget`: give up as soon as a stage reaches its budget (the result is then
 * meaningless; the caller runs it again with a larger budget).
 */
export function applyRepairDiffCounted(
  script: string,
  submission: string,
  options: ApplyOptions = {},
  control: { stopAtBudget?: boolean } = {},
): { result: ApplyResult; cost: ApplyCost } {
  const cost: ApplyCost = { steps: 0, budgetHit: false };
  const result = applyCounted(script, submission, options, cost, control.stopAtBudget ?? false);
  return { result, cost };
}

function applyCounted(script: string, submission: string, options: ApplyOptions, cost: ApplyCost, stopAtBudget: boolean): ApplyResult {
  const fileName = options.fileName ?? 'train.py';
  try {
    if (typeof submission !== 'string') return { ok: false, error: 'the submission is not text' };
    const oversized = refuseOversized(submission, options.maxBytes);
    if (oversized) return oversized;
    if (submission.trim() === '') return { ok: true, script, mode: 'empty', warnings: [] };
    const { text, fenced } = stripFence(submission);
    const warnings = fenced ? ['the submission was wrapped in a code fence; the fence was removed'] : [];
    const lines = text.split('\n');
    const operations = checkFileOperations(lines, fileName);
    if (operations.error) return { ok: false, error: operations.error };
    warnings.push(...operations.warnings);
    if (!operations.hunks) {
      if (looksLikePython(text)) {
        return {
          ok: true,
          script: fenced ? text : submission,
          mode: 'whole_script',
          warnings: [...warnings, 'the submission is a whole script; it replaces the file'],
        };
      }
      const bodyLines = lines.filter((l) => /^[+-]/.test(l)).length;
      return {
        ok: false,
        error: bodyLines
          ? 'the diff has no "@@ -a,b +c,d @@" hunk header, so it cannot be placed in the script'
          : 'the submission is neither a unified diff (no "@@ -a,b +c,d @@" hunk header) nor a Python script',
      };
    }

    const workBudget = options.workBudget ?? DIFF_WORK_BUDGET;
    let patches: StructuredPatch[] | undefined;
    try {
      patches = parsePatch(text);
    } catch {
      patches = undefined; // malformed for jsdiff: go straight to the tolerant parser
    }
    if (patches) {
      const files = checkFiles(patches, fileName);
      if (files.error) return { ok: false, error: files.error };
      warnings.push(...files.warnings);
      const budget = new WorkBudget(workBudget);
      try {
        const strict = tryStrict(script, patches, budget);
        if (strict !== false) return { ok: true, script: strict, mode: 'strict', warnings };
      } catch (e) {
        if (!(e instanceof WorkBudgetExceeded)) throw e; // too costly to place exactly: the tolerant stage reports per hunk
        cost.budgetHit = true;
      } finally {
        cost.steps += budget.spent;
      }
      if (cost.budgetHit && stopAtBudget) return { ok: false, error: 'the work budget was reached' };
    } else {
      const names = [...text.matchAll(/^(?:---|\+\+\+) (\S+)/gm)].map((m) => normaliseName(m[1]) as string);
      const others = [...new Set(names)].filter((n) => n !== '/dev/null' && n !== fileName && !n.endsWith(`/${fileName}`));
      if (others.length && new Set(names.filter((n) => n !== '/dev/null')).size > 1) {
        return {
          ok: false,
          error: `the diff touches other files (${listSome(
            others.map((n) => clip(n, 60)),
            ', ',
          )}); only ${fileName} may be changed`,
        };
      }
    }

    const hunks = parseLooseHunks(lines);
    if (hunks.length === 0) return { ok: false, error: 'the diff has no usable hunk (no + or - lines after its @@ headers)' };
    const budget = new WorkBudget(workBudget);
    const { text: out, applied, failures, notes, exhausted } = applyLenient(script, hunks, budget);
    cost.steps += budget.spent;
    if (exhausted) cost.budgetHit = true;
    if (applied === 0) return { ok: false, error: `the diff does not apply to ${fileName}: ${failures.join('; ')}` };
    const note =
      'the diff did not apply exactly; its hunks were applied one by one, tolerating shifted lines and small context differences';
    return { ok: true, script: out, mode: 'lenient', warnings: [...warnings, note, ...notes, ...failures] };
  } catch (e) {
    return { ok: false, error: `the diff could not be applied: ${clip((e as Error).message, 200)}` };
  }
}

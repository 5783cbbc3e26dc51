// Repair diffs: creating them (git-style, so `git apply` and `patch -p1` accept them) and
// applying what a repair agent submits, as forgivingly as is safe.
//
// applyRepairDiff, in order:
// 1. empty / whitespace-only submission → the script unchanged (`empty`);
// 2. no `@@` hunk header and the text reads as Python (parses cleanly, or has Python statements
//    at line starts and no `+`/`-` diff body) → it replaces the whole file (`whole_script`, the
//    original ForgeEnv's behaviour);
// 3. jsdiff's strict `applyPatch` (exact context, hunks may shift) → `strict`;
// 4. our own tolerant hunk parser (recomputes wrong header counts, treats blank lines inside a
//    hunk as blank context, ignores prose around the diff), then each hunk alone with fuzz 2 and
//    trailing whitespace ignored → `lenient`, with one warning per hunk that did not apply.
//    When no hunk applies at all the result is an error naming each hunk and the first line
//    that was not found.
// Never throws.
import { applyPatch, diffLines, parsePatch, structuredPatch, formatPatch, type StructuredPatch, type StructuredPatchHunk } from 'diff';
import { parser } from '@lezer/python';

export type ApplyMode = 'empty' | 'strict' | 'lenient' | 'whole_script';
export type ApplyResult =
  | { ok: true; script: string; mode: ApplyMode; warnings: string[] }
  | { ok: false; error: string };

const LENIENT_FUZZ = 2;

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

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function stripFence(text: string): { text: string; fenced: boolean } {
  const m = /^\s*(`{3,})[\w+-]*[^\n]*\n([\s\S]*?)\n?\1\s*$/.exec(text);
  return m ? { text: m[2] + '\n', fenced: true } : { text, fenced: false };
}

function normaliseName(name: string | undefined): string | undefined {
  if (name === undefined) return undefined;
  let n = name.trim().replace(/^"(.*)"$/, '$1').split('\t')[0];
  if (n === '/dev/null') return n;
  n = n.replace(/^[ab]\//, '').replace(/^\.\//, '');
  return n;
}

function looksLikePython(text: string): boolean {
  const lines = text.split(/\r?\n/).filter((l) => l.trim() !== '');
  if (lines.length === 0) return false;
  // Any body line in diff form means a (headerless) diff, not a script.
  const diffish = lines.filter((l) => /^[+-](?![+-])/.test(l) || /^(---|\+\+\+) /.test(l)).length;
  if (diffish > 0 && diffish >= lines.length / 3) return false;
  let errors = 0;
  parser.parse(text).iterate({ enter: (n) => void (n.type.isError && errors++) });
  if (errors === 0) return true;
  return lines.some((l) => /^(import |from \S+ import |def |class |if __name__|print\()/.test(l));
}

/** Checks that every file a parsed patch touches is the script; returns an error or warnings. */
function checkFiles(patches: StructuredPatch[], fileName: string): { error?: string; warnings: string[] } {
  const warnings: string[] = [];
  const names = new Set<string>();
  for (const p of patches) {
    for (const n of [normaliseName(p.oldFileName), normaliseName(p.newFileName)]) if (n !== undefined) names.add(n);
    if (p.isDelete || normaliseName(p.newFileName) === '/dev/null') return { error: `the diff deletes ${fileName}; a repair must edit it`, warnings };
    if (p.isRename) return { error: `the diff renames ${fileName}; a repair must edit it in place`, warnings };
  }
  names.delete('/dev/null');
  const others = [...names].filter((n) => n !== fileName && !n.endsWith(`/${fileName}`));
  if (patches.length > 1 && others.length > 0) {
    return { error: `the diff touches other files (${others.join(', ')}); only ${fileName} may be changed`, warnings };
  }
  if (others.length > 0) warnings.push(`the diff names ${others.join(', ')}; applied to ${fileName}`);
  return { warnings };
}

function tryStrict(script: string, patches: StructuredPatch[]): string | false {
  let text = script;
  for (const p of patches) {
    if (p.hunks.length === 0) continue;
    const r = applyPatch(text, p);
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
function parseLooseHunks(text: string): LooseHunk[] {
  const hunks: LooseHunk[] = [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
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
      current = { header: bare.trim(), oldStart: m ? Number(m[1]) : 1, lines: [], at: idx + 1 };
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
      garbage ??= `submission line ${idx + 1} is not a diff line: ${JSON.stringify(bare.slice(0, 80))}`;
    }
  });
  close();
  return hunks.filter((h) => h.lines.some((l) => l[0] === '-' || l[0] === '+'));
}

function toStructured(h: LooseHunk): StructuredPatch {
  const oldLines = h.lines.filter((l) => l[0] === ' ' || l[0] === '-').length;
  const newLines = h.lines.filter((l) => l[0] === ' ' || l[0] === '+').length;
  const hunk: StructuredPatchHunk = { oldStart: h.oldStart, oldLines, newStart: h.oldStart, newLines, lines: h.lines };
  return { oldFileName: undefined, newFileName: undefined, oldHeader: undefined, newHeader: undefined, hunks: [hunk] };
}

// jsdiff may probe past the end of the file while fuzzing: `line` can be undefined there.
const trimEndEq = (_n: number, line: string | undefined, _op: string, content: string) =>
  typeof line === 'string' && line.trimEnd() === content.trimEnd();

/** Why a hunk does not fit: the first removed/context line not present in the script. */
function explainMiss(script: string, h: LooseHunk): string {
  const have = new Set(script.split(/\r?\n/).map((l) => l.trimEnd()));
  const idx = h.lines.findIndex((l) => (l[0] === ' ' || l[0] === '-') && !have.has(l.slice(1).trimEnd()));
  if (idx >= 0) return `line ${idx + 1} of the hunk (${JSON.stringify(h.lines[idx].slice(0, 80))}) is not in the script`;
  return 'its lines exist but not in this order (the context does not match)';
}

function applyLenient(script: string, hunks: LooseHunk[]): { text: string; applied: number; failures: string[]; notes: string[] } {
  let text = script;
  let applied = 0;
  const failures: string[] = [];
  const notes: string[] = [];
  hunks.forEach((h, i) => {
    const label = `hunk ${i + 1} (${h.header}, submission line ${h.at})`;
    if (h.malformed) {
      failures.push(`${label} was not applied: ${h.malformed}`);
      return;
    }
    const s = toStructured(h).hunks[0];
    if (h.claimed && (h.claimed.old !== s.oldLines || h.claimed.new !== s.newLines)) {
      notes.push(`${label}: the header counts ${h.claimed.old},${h.claimed.new} lines but the hunk has ${s.oldLines},${s.newLines}; the counts were recomputed`);
    }
    const r = applyPatch(text, toStructured(h), { fuzzFactor: LENIENT_FUZZ, compareLine: trimEndEq });
    if (r === false) failures.push(`${label} did not apply: ${explainMiss(text, h)}`);
    else {
      text = r;
      applied++;
    }
  });
  return { text, applied, failures, notes };
}

/** Applies a repair agent's submission to `script`. See the header comment for the order of attempts. */
export function applyRepairDiff(script: string, submission: string, fileName = 'train.py'): ApplyResult {
  try {
    if (typeof submission !== 'string' || submission.trim() === '') return { ok: true, script, mode: 'empty', warnings: [] };
    const { text, fenced } = stripFence(submission);
    const warnings = fenced ? ['the submission was wrapped in a code fence; the fence was removed'] : [];
    const hasHunks = text.split('\n').some((l) => l.startsWith('@@'));
    if (!hasHunks) {
      if (looksLikePython(text)) {
        return { ok: true, script: fenced ? text : submission, mode: 'whole_script', warnings: [...warnings, 'the submission is a whole script; it replaces the file'] };
      }
      const bodyLines = text.split('\n').filter((l) => /^[+-]/.test(l)).length;
      return {
        ok: false,
        error: bodyLines
          ? 'the diff has no "@@ -a,b +c,d @@" hunk header, so it cannot be placed in the script'
          : 'the submission is neither a unified diff (no "@@ -a,b +c,d @@" hunk header) nor a Python script',
      };
    }

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
      const strict = tryStrict(script, patches);
      if (strict !== false) return { ok: true, script: strict, mode: 'strict', warnings };
    } else {
      const names = [...text.matchAll(/^(?:---|\+\+\+) (\S+)/gm)].map((m) => normaliseName(m[1]) as string);
      const others = [...new Set(names)].filter((n) => n !== '/dev/null' && n !== fileName && !n.endsWith(`/${fileName}`));
      if (others.length && new Set(names.filter((n) => n !== '/dev/null')).size > 1) {
        return { ok: false, error: `the diff touches other files (${others.join(', ')}); only ${fileName} may be changed` };
      }
    }

    const hunks = parseLooseHunks(text);
    if (hunks.length === 0) return { ok: false, error: 'the diff has no usable hunk (no + or - lines after its @@ headers)' };
    const { text: out, applied, failures, notes } = applyLenient(script, hunks);
    if (applied === 0) return { ok: false, error: `the diff does not apply to ${fileName}: ${failures.join('; ')}` };
    const note = 'the diff did not apply exactly; its hunks were applied one by one, tolerating shifted lines and small context differences';
    return { ok: true, script: out, mode: 'lenient', warnings: [...warnings, note, ...notes, ...failures] };
  } catch (e) {
    return { ok: false, error: `the diff could not be applied: ${(e as Error).message}` };
  }
}

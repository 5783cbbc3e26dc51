// Reads a Python traceback out of a run's stderr so the editor can point at the failing line.
// Format knowledge (CPython 3.8–3.13): frames are `  File "<path>", line N, in <func>`, followed
// by the source line (indented 4, its own leading whitespace stripped) and, since 3.11, an
// optional marker line of `~` and `^` under the failing expression. A SyntaxError in the main
// script has no `Traceback` header: just the File line (no `in …`), the code, a caret and the
// error. Chained exceptions print several blocks; the last one is what ended the run.

export interface TracebackFrame {
  file: string;
  line: number;
  /** '' for the pseudo-frame of a SyntaxError (Python prints no function there). */
  function: string;
  code?: string;
  /** True when the frame is in the episode script (base name equals the script name). */
  inScript: boolean;
  /** 1-based column range of the `~`/`^` marker under the code, `endColumn` exclusive. */
  column?: number;
  endColumn?: number;
}

export interface ParsedError {
  exception_type: string;
  message: string;
  frames: TracebackFrame[];
  /**
   * Innermost frame in the script, or the SyntaxError position when it is in the script. Columns
   * are 1-based (`endColumn` exclusive, as Python's `end_offset`); they count from the start of
   * the source line when the script is passed to the parser, otherwise from its first non-blank
   * character (Python prints the line with its indentation stripped).
   */
  location?: { line: number; column?: number; endColumn?: number };
  /** The traceback stops before its exception line (output cut off or the process killed). */
  truncated?: boolean;
}

const HEADER = 'Traceback (most recent call last):';
const FRAME_RE = /^ {2}File "(.*)", line (\d+)(?:, in (.+))?\s*$/;
const MARKER_RE = /^(\s*)([~^]+)\s*$/;
const EXC_RE = /^([A-Za-z_][\w.]*)(?::[ \t]?(.*))?$/;
const CHAIN_MARKERS = ['During handling of the above exception', 'The above exception was the direct cause'];

function baseName(path: string): string {
  const parts = path.split(/[\\/]/);
  return parts[parts.length - 1];
}

/** Unwraps the top level of a 3.11 exception-group display into a plain traceback. */
function normaliseLine(line: string): string {
  if (/^ {2}\+ Exception Group Traceback \(most recent call last\):\s*$/.test(line)) return HEADER;
  if (/^ {2}\+-/.test(line)) return '';
  const m = /^ {2}\| ?(.*)$/.exec(line);
  return m ? m[1] : line;
}

function isMessageEnd(line: string): boolean {
  return (
    line.trim() === '' ||
    line.startsWith(HEADER) ||
    line.startsWith('[forgeenv]') ||
    FRAME_RE.test(line) ||
    CHAIN_MARKERS.some((m) => line.startsWith(m))
  );
}

interface Block {
  frames: TracebackFrame[];
  exception?: { type: string; message: string };
  /** Per frame: leading spaces of the displayed code line (to turn marker positions into columns). */
  codeIndent: number[];
  markerStart: Array<number | undefined>;
  markerLength: Array<number | undefined>;
}

function parseBlock(lines: string[], start: number, scriptName: string): { block: Block; next: number } {
  const block: Block = { frames: [], codeIndent: [], markerStart: [], markerLength: [] };
  let i = start;
  while (i < lines.length) {
    const m = FRAME_RE.exec(lines[i]);
    if (!m) {
      // `[Previous line repeated N more times]` and 3.13's `...<N lines>...` sit between frames.
      if (/^\s{2,}(\[Previous line repeated|\.\.\.<)/.test(lines[i])) {
        i++;
        continue;
      }
      break;
    }
    const frame: TracebackFrame = { file: m[1], line: Number(m[2]), function: m[3] ?? '', inScript: baseName(m[1]) === scriptName };
    const idx = block.frames.push(frame) - 1;
    i++;
    // The code line(s) and the marker line, all indented by at least 4.
    let sawCode = false;
    while (i < lines.length && /^ {4}/.test(lines[i]) && !FRAME_RE.test(lines[i])) {
      const marker = MARKER_RE.exec(lines[i]);
      if (marker && sawCode && block.markerStart[idx] === undefined) {
        block.markerStart[idx] = marker[1].length;
        block.markerLength[idx] = marker[2].length;
      } else if (!sawCode) {
        frame.code = lines[i].trim();
        block.codeIndent[idx] = lines[i].length - lines[i].trimStart().length;
        sawCode = true;
      }
      i++;
    }
  }
  const exc = i < lines.length ? EXC_RE.exec(lines[i]) : null;
  if (exc && block.frames.length > 0) {
    let message = exc[2] ?? '';
    i++;
    // Multi-line messages continue on unindented lines until a blank line or the next block.
    while (i < lines.length && !isMessageEnd(lines[i]) && !/^\s/.test(lines[i])) message += `\n${lines[i++]}`;
    block.exception = { type: exc[1], message };
  }
  return { block, next: i };
}

function frameColumns(block: Block, idx: number, script: string | undefined): { column?: number; endColumn?: number } {
  const start = block.markerStart[idx];
  const length = block.markerLength[idx];
  const frame = block.frames[idx];
  if (start === undefined || length === undefined) return {};
  let lead = 0;
  if (script !== undefined && frame.code !== undefined) {
    const src = script.split(/\r?\n/)[frame.line - 1];
    if (src !== undefined && src.trim() === frame.code) lead = src.length - src.trimStart().length;
  }
  const column = lead + (start - (block.codeIndent[idx] ?? 4)) + 1;
  if (column < 1) return {};
  return { column, endColumn: column + length };
}

/**
 * The last Python exception in `stderr`, or null when there is no traceback.
 * Pass the script to get columns counted from the start of the source line.
 */
export function parseTraceback(stderr: string, scriptName = 'train.py', script?: string): ParsedError | null {
  if (typeof stderr !== 'string' || !stderr) return null;
  const lines = stderr.split(/\r?\n/).map(normaliseLine);
  let last: Block | undefined;
  let i = 0;
  while (i < lines.length) {
    if (lines[i].startsWith(HEADER)) {
      const { block, next } = parseBlock(lines, i + 1, scriptName);
      last = block;
      i = Math.max(next, i + 1);
    } else if (FRAME_RE.test(lines[i])) {
      // A headerless block counts only when it ends in an exception (the SyntaxError display).
      const { block, next } = parseBlock(lines, i, scriptName);
      if (block.exception) last = block;
      i = Math.max(next, i + 1);
    } else i++;
  }
  if (!last) return null;

  last.frames.forEach((f, idx) => Object.assign(f, frameColumns(last, idx, script)));
  const result: ParsedError = {
    exception_type: last.exception?.type ?? 'Unknown',
    message: last.exception?.message ?? '(traceback cut off before the exception line)',
    frames: last.frames,
  };
  if (!last.exception) result.truncated = true;
  // For a SyntaxError in the script, its pseudo-frame is the innermost script frame.
  const innermost = [...last.frames].reverse().find((f) => f.inScript);
  if (innermost) {
    result.location = { line: innermost.line };
    if (innermost.column !== undefined) {
      result.location.column = innermost.column;
      result.location.endColumn = innermost.endColumn;
    }
  }
  return result;
}

// What the editor shows as problems after a run, computed without vscode (unit-tested alone):
// the Python exception on the innermost line of the episode script, every traceback frame in
// the script as related information, forbidden constructs on their lines, and the
// environment's own notes (timeout, output cap, cancel) when the run ended abnormally.
// Positions are 0-based here (VS Code's), converted from the traceback's 1-based ones.
import { parseTraceback } from '../../env/scoring/traceback';
import type { ExecutionResult } from '../../env/schemas';

export interface SpanSpec {
  line: number;
  startCharacter: number;
  endCharacter: number;
}

export interface RelatedSpec extends SpanSpec {
  message: string;
}

export interface DiagnosticSpec extends SpanSpec {
  severity: 'error' | 'warning' | 'information';
  message: string;
  /** Diagnostic code shown beside the message (exception type, `forbidden`, `timeout`, …). */
  code: string;
  related: RelatedSpec[];
}

/** The run outcome as one short sentence, or undefined for a clean exit. */
export function abnormalEndNote(
  exec: Pick<ExecutionResult, 'exit_code' | 'timed_out' | 'output_truncated' | 'killed' | 'violations' | 'stderr'>,
): string | undefined {
  if (exec.violations.length) return 'The script was not run: it uses constructs ForgeEnv forbids.';
  if (exec.timed_out) return 'The script timed out and was killed (see forgeenv.runTimeoutSeconds).';
  if (exec.output_truncated) return 'The script printed more than the output cap and was killed (see forgeenv.outputCapKiB).';
  if (exec.killed) return /cancelled/.test(exec.stderr) ? 'The run was cancelled.' : 'The run was stopped before it finished.';
  if (exec.exit_code === null) return firstForgeenvNote(exec.stderr) ?? 'The script did not run.';
  return undefined;
}

/** The environment's own `[forgeenv] …` lines in stderr (kill reasons, signals). */
export function forgeenvNotes(stderr: string): string[] {
  return stderr
    .split(/\r?\n/)
    .filter((l) => l.startsWith('[forgeenv]'))
    .map((l) => l.slice('[forgeenv]'.length).trim());
}

function firstForgeenvNote(stderr: string): string | undefined {
  const n = forgeenvNotes(stderr)[0];
  if (n) return n;
  const first = stderr.trim().split(/\r?\n/)[0];
  return first || undefined;
}

/** The span of a 0-based line's text without its indentation (the whole line if blank). */
export function lineSpan(lines: readonly string[], line: number): SpanSpec {
  const clamped = Math.min(Math.max(0, line), Math.max(0, lines.length - 1));
  const text = lines[clamped] ?? '';
  const start = text.length - text.trimStart().length;
  const end = text.trimEnd().length;
  return { line: clamped, startCharacter: end > start ? start : 0, endCharacter: end > start ? end : text.length };
}

const VIOLATION_RE = /^line (\d+): (.*)$/;

/**
 * Problems for the script `script` (named `scriptName` in tracebacks) after the run `exec`.
 * Empty when the run exited cleanly.
 */
export function diagnosticsForRun(
  exec: Pick<ExecutionResult, 'exit_code' | 'timed_out' | 'output_truncated' | 'killed' | 'violations' | 'stderr'>,
  script: string,
  scriptName = 'train.py',
): DiagnosticSpec[] {
  const lines = script.split(/\r?\n/);
  const out: DiagnosticSpec[] = [];
  if (exec.violations.length) {
    for (const v of exec.violations) {
      const m = VIOLATION_RE.exec(v);
      const span = lineSpan(lines, m ? Number(m[1]) - 1 : 0);
      out.push({
        ...span,
        severity: 'error',
        code: 'forbidden',
        message: `${m ? m[2] : v} (ForgeEnv does not run scripts that use it)`,
        related: [],
      });
    }
    return out;
  }
  const parsed = parseTraceback(exec.stderr, scriptName, script);
  const note = abnormalEndNote(exec);
  if (parsed) {
    const scriptFrames = parsed.frames.filter((f) => f.inScript);
    const related: RelatedSpec[] = scriptFrames.map((f, i) => ({
      ...lineSpan(lines, f.line - 1),
      message: `frame ${i + 1} of ${scriptFrames.length}${f.function ? ` in ${f.function}` : ''}${f.code ? `: ${f.code}` : ''}`,
    }));
    let span: SpanSpec;
    if (parsed.location) {
      const base = lineSpan(lines, parsed.location.line - 1);
      const { column, endColumn } = parsed.location;
      const lineText = lines[base.line] ?? '';
      span =
        column !== undefined && endColumn !== undefined && endColumn > column && column - 1 <= lineText.length
          ? { line: base.line, startCharacter: column - 1, endCharacter: Math.min(endColumn - 1, Math.max(lineText.length, column)) }
          : base;
    } else span = lineSpan(lines, 0); // the error came from outside the script (e.g. a library import)
    const where = parsed.location
      ? ''
      : ` (raised outside ${scriptName}${parsed.frames.length ? ` in ${parsed.frames[parsed.frames.length - 1].file}` : ''})`;
    const message = `${parsed.exception_type}: ${parsed.message}${where}${parsed.truncated && note ? ` — ${note}` : ''}`;
    out.push({ ...span, severity: 'error', code: parsed.exception_type, message, related });
    if (note && !parsed.truncated) out.push({ ...lineSpan(lines, 0), severity: 'warning', code: 'run', message: note, related: [] });
    return out;
  }
  if (note) {
    out.push({
      ...lineSpan(lines, 0),
      severity: 'error',
      code: exec.timed_out ? 'timeout' : exec.output_truncated ? 'output-cap' : 'run',
      message: note,
      related: [],
    });
    return out;
  }
  if (exec.exit_code !== 0 && exec.exit_code !== null) {
    const tail = exec.stderr.trim().split(/\r?\n/).slice(-1)[0];
    out.push({
      ...lineSpan(lines, 0),
      severity: 'error',
      code: 'exit',
      message: `The script exited with code ${exec.exit_code}${tail ? `: ${tail}` : ''}`,
      related: [],
    });
  }
  return out;
}

/**
 * A breakage that did not make the script fail, as a warning on the first line it changed: it
 * stays in the editor and the Problems view with the episode (a notification hides itself).
 * Undefined when the broken run failed (its own diagnostics say where) or ended abnormally.
 */
export function unbrokenBreakageNote(
  exec: Pick<ExecutionResult, 'exit_code' | 'timed_out' | 'output_truncated' | 'killed' | 'violations' | 'stderr'>,
  original: string,
  broken: string,
  primitive: string,
): DiagnosticSpec | undefined {
  if (exec.exit_code !== 0 || abnormalEndNote(exec)) return undefined;
  const a = original.split(/\r?\n/);
  const b = broken.split(/\r?\n/);
  let line = 0;
  while (line < b.length && line < a.length && a[line] === b[line]) line++;
  // Lines removed (b's line is one the original has further down): the line above is where they were.
  if (line > 0 && b.length < a.length && a.indexOf(b[line] ?? '', line + 1) > line) line--;
  return {
    ...lineSpan(b, line),
    severity: 'warning',
    code: 'breakage-did-not-break',
    message: `The ${primitive} breakage changed the script here, but train.py still runs cleanly under this library snapshot. Repair it anyway: the diff is scored against the intended API.`,
    related: [],
  };
}

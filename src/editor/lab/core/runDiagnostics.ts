// Turns a run of a script into editor-neutral problems (0-based line/character ranges) so the
// vscode layer only converts them to Diagnostics. No vscode import.
import { errorTraceOf } from '../../../env/episode/environment';
import type { ExecutionResult } from '../../../env/schemas';
import { parseTraceback, type ParsedError } from '../../../env/scoring/traceback';

export interface RunProblem {
  /** 0-based. */
  line: number;
  startCharacter: number;
  /** Exclusive; equal to startCharacter means "the whole line's text". */
  endCharacter: number;
  message: string;
  severity: 'error' | 'warning' | 'info';
  /** `ExceptionType` or a short kind such as `violation`, `timeout`. */
  code: string;
}

export interface RunOutcome {
  ok: boolean;
  parsed: ParsedError | null;
  problems: RunProblem[];
  /** One line for notifications. */
  headline: string;
}

function lineBounds(script: string, line0: number): { start: number; end: number } {
  const text = script.split(/\r?\n/)[line0] ?? '';
  const start = text.length - text.trimStart().length;
  return { start, end: Math.max(start, text.trimEnd().length) };
}

/** Problems of a finished run; the traceback location (or the last script frame) carries the error. */
export function runOutcome(exec: ExecutionResult, script: string, scriptName = 'train.py'): RunOutcome {
  const lineCount = script.split(/\r?\n/).length;
  const clampLine = (l: number) => Math.min(Math.max(0, l), Math.max(0, lineCount - 1));
  const problems: RunProblem[] = [];
  if (exec.violations.length) {
    for (const v of exec.violations) {
      const m = /line (\d+)/.exec(v);
      const line = clampLine(m ? Number(m[1]) - 1 : 0);
      const b = lineBounds(script, line);
      problems.push({ line, startCharacter: b.start, endCharacter: b.end, message: `Not run: ${v}`, severity: 'error', code: 'violation' });
    }
    return { ok: false, parsed: null, problems, headline: `Not run: ${exec.violations.join('; ')}` };
  }
  if (exec.exit_code === 0 && !exec.timed_out && !exec.output_truncated) {
    return { ok: true, parsed: null, problems, headline: `Ran cleanly in ${Math.round(exec.wall_time_ms)} ms` };
  }
  const parsed = parseTraceback(exec.stderr, scriptName, script);
  if (parsed) {
    const loc = parsed.location;
    const line = clampLine((loc?.line ?? 1) - 1);
    const b = lineBounds(script, line);
    const start = loc?.column !== undefined ? loc.column - 1 : b.start;
    const end = loc?.endColumn !== undefined ? loc.endColumn - 1 : b.end;
    const where = loc ? '' : ' (raised inside a library; no frame in the script)';
    problems.push({
      line,
      startCharacter: Math.max(0, start),
      endCharacter: Math.max(start, end),
      message: `${parsed.exception_type}: ${parsed.message}${where}`,
      severity: 'error',
      code: parsed.exception_type,
    });
    return { ok: false, parsed, problems, headline: `${parsed.exception_type}: ${parsed.message.split('\n')[0]}` };
  }
  const trace = errorTraceOf(exec).trim();
  const last = trace.split('\n').filter(Boolean).pop() ?? `exit code ${exec.exit_code}`;
  const code = exec.timed_out ? 'timeout' : exec.output_truncated ? 'output-cap' : 'exit-code';
  const b = lineBounds(script, 0);
  problems.push({ line: 0, startCharacter: b.start, endCharacter: b.end, message: last, severity: 'error', code });
  return { ok: false, parsed: null, problems, headline: last };
}

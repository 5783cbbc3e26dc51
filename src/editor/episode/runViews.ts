// What a run leaves in the editor: its output document and its diagnostics on train.py (the
// failing line, each traceback frame as related information). No vscode import.
import type { RepairEvaluation } from '../../env/episode/episodeTypes';
import { diagnosticsForRun, lineSpan, unbrokenBreakageNote, type DiagnosticSpec } from './diagnosticsModel';
import type { EpisodeEditor, RunKey } from './editorPort';
import type { LiveEpisode } from './liveEpisode';
import { formatRunOutput } from './runOutput';

/** Shows the diagnostics of the broken script's run or of run N; returns them (the error first). */
export function showRun(editor: EpisodeEditor, live: LiveEpisode, run: RunKey): readonly DiagnosticSpec[] {
  const ev = run === 'start' ? undefined : live.state.lastEvaluation;
  if (ev) storeRunOutput(editor, live, ev, run as number);
  const exec = ev ? ev.execution : live.state.start.brokenExecution;
  let specs: DiagnosticSpec[];
  if (exec) specs = diagnosticsForRun(exec, ev ? ev.repaired_script : live.state.start.brokenScript);
  else
    specs = [
      {
        ...lineSpan((live.state.lastScoredText ?? '').split(/\r?\n/), 0),
        severity: 'error',
        code: 'diff',
        message: ev?.error_trace || 'The repair diff did not apply.',
        related: [],
      },
    ];
  if (run === 'start') {
    // Also after a resume: the note lasts as long as the broken script's run is what is shown.
    const { start } = live.state;
    const note = unbrokenBreakageNote(start.brokenExecution, start.originalScript, start.brokenScript, start.breakageSpec.primitive_type);
    if (note) specs = [note, ...specs];
  }
  editor.showProblems(live.file, specs, live.episodeId, run);
  return specs;
}

export function storeRunOutput(editor: EpisodeEditor, live: LiveEpisode, ev: RepairEvaluation, n: number): void {
  const exec = ev.execution;
  const title = `run ${n} of train.py (${live.state.start.task.task_id}) · reward ${ev.reward.toFixed(2)}`;
  editor.setRunOutput(
    live.episodeId,
    n,
    exec
      ? formatRunOutput({
          title,
          exitCode: exec.exit_code,
          wallTimeMs: exec.wall_time_ms,
          mode: live.state.mode,
          interpreter: live.state.interpreter,
          stdout: exec.stdout,
          stderr: exec.stderr,
        })
      : `# run ${n}: not run\n\n${ev.error_trace}\n`,
  );
}

// The text of a run's output document (no vscode import; the session makes it, the editor shows it).

/** A short header, then stdout and stderr. */
export function formatRunOutput(args: {
  title: string;
  exitCode: number | null;
  wallTimeMs: number;
  mode: string;
  interpreter: string;
  stdout: string;
  stderr: string;
}): string {
  return [
    `# ${args.title}`,
    `# exit code: ${args.exitCode ?? 'none (not run or killed)'} · ${(args.wallTimeMs / 1000).toFixed(2)} s · mode ${args.mode} · ${args.interpreter}`,
    '',
    '── stdout ──',
    args.stdout.trimEnd() || '(empty)',
    '',
    '── stderr ──',
    args.stderr.trimEnd() || '(empty)',
    '',
  ].join('\n');
}

// How a record names the interpreter that ran a script, without the machine's paths: the
// snapshot's managed venv is `snapshot-venv:<id>` (any machine rebuilds it from the id), a path
// under the home folder is `~/…`, anything else (`python3`, `/usr/bin/python3`) stays as it is.
// Records (episodes, demonstrations, exports) are shared; a home path names the annotator's
// account and says nothing another machine can use. No vscode import.
import { homedir } from 'node:os';
import { isAbsolute, join, relative, sep } from 'node:path';

export const SNAPSHOT_VENV_PREFIX = 'snapshot-venv:';

/** The recorded name: `snapshot-venv:<id>` when `interpreter` is undefined (the managed venv), else the path with the home folder as `~`. */
export function interpreterLabel(interpreter: string | undefined, snapshotId: string, home: string = homedir()): string {
  if (interpreter === undefined) return `${SNAPSHOT_VENV_PREFIX}${snapshotId}`;
  return homeRelative(interpreter, home);
}

/** `~/x` for a path inside `home`; other text unchanged. */
export function homeRelative(path: string, home: string = homedir()): string {
  if (!home || !isAbsolute(path)) return path;
  const rel = relative(home, path);
  if (rel === '') return '~';
  if (rel.startsWith('..') || isAbsolute(rel)) return path;
  return `~/${rel.split(sep).join('/')}`;
}

/** What a recorded name means when an episode resumes: undefined for the managed venv, an absolute path for `~/…`. */
export function interpreterFromLabel(label: string, home: string = homedir()): string | undefined {
  if (label.startsWith(SNAPSHOT_VENV_PREFIX)) return undefined;
  if (label === '~') return home;
  if (label.startsWith('~/')) return join(home, label.slice(2));
  return label;
}

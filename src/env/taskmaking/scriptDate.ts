// The date a script last changed: its last commit's date when it is tracked in a git repository
// (git runs with an argument array; no shell), else undefined. Also the repository's root, where
// repo-local imports may resolve.
import { execFile } from 'node:child_process';
import { basename, dirname } from 'node:path';

function git(cwd: string, args: string[]): Promise<string | undefined> {
  return new Promise((resolve) => {
    execFile('git', ['-C', cwd, ...args], { timeout: 10_000, maxBuffer: 1 << 20 }, (err, stdout) =>
      resolve(err ? undefined : stdout.trim() || undefined),
    );
  });
}

export interface ScriptOrigin {
  /** ISO date of the last commit touching the file. */
  date?: string;
  /** The git work tree's root. */
  repoRoot?: string;
}

export async function scriptOrigin(scriptPath: string): Promise<ScriptOrigin> {
  const dir = dirname(scriptPath);
  const repoRoot = await git(dir, ['rev-parse', '--show-toplevel']);
  if (!repoRoot) return {};
  const date = await git(dir, ['log', '-1', '--format=%cI', '--', basename(scriptPath)]);
  return { repoRoot, ...(date ? { date } : {}) };
}

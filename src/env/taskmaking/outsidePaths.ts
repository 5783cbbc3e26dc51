// An absolute output path outside the run folder (SageMaker's `/opt/ml/model`) that the sandbox cannot
// write: where the script takes it from. An environment variable's or an option's default can be set
// to a run-relative folder; a literal in the code cannot, and make-task refuses naming it.

export type OutsidePathSource =
  { kind: 'env'; name: string; literal: string } | { kind: 'option'; name: string; literal: string } | { kind: 'literal'; literal: string };

/** The absolute path an `OSError`-family error names (`PermissionError: [Errno 13] Permission denied: '/opt'`). */
export const UNWRITABLE_PATH_ERROR =
  /(?:PermissionError|OSError): \[Errno (?:13|30)\] (?:Permission denied|Read-only file system): '(\/[^']*)'/;

const normal = (p: string): string => p.replace(/\/+$/, '') || '/';
const within = (a: string, b: string): boolean => a === b || a.startsWith(`${b}/`);

/** Where each string literal of the script that is (or holds) `errorPath` comes from, in script order. */
export function outsidePathSources(script: string, errorPath: string): OutsidePathSource[] {
  const err = normal(errorPath);
  if (err === '/') return [];
  const out: OutsidePathSource[] = [];
  for (const m of script.matchAll(/(["'])(\/[^"'\n]*)\1/g)) {
    const literal = m[2];
    const path = normal(literal);
    if (!within(path, err) && !within(err, path)) continue;
    // The statement's text before the literal (back to the line's start or an open call a few lines up).
    const before = script.slice(Math.max(0, m.index - 400), m.index);
    const env = /(?:os\.environ\.get|os\.getenv|environ\.get)\(\s*["'](\w+)["']\s*,\s*$/.exec(before);
    if (env) {
      out.push({ kind: 'env', name: env[1], literal });
      continue;
    }
    const arg = /add_argument\(\s*(?:["']-\w["']\s*,\s*)?["']--([\w-]+)["'][^()]*?\bdefault\s*=\s*$/.exec(before);
    const field = /^[ \t]*(\w+)\s*:[^=\n]*=\s*field\([^()]*?\bdefault\s*=\s*$/m.exec(before);
    if (arg ?? field) {
      out.push({ kind: 'option', name: (arg ?? field)![1], literal });
      continue;
    }
    out.push({ kind: 'literal', literal });
  }
  return out;
}

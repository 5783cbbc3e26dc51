// What Make Task proposes from a script's surroundings: the text files beside it a run may need,
// and a task id from its name. No vscode import.
import { lstatSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** Text files beside a script that a run may need (configs, small data), newest first. */
const EXTRA_FILE = /\.(ya?ml|json|jsonl|txt|csv|tsv|cfg|ini|toml|md)$/i;
export const EXTRA_FILE_MAX = 1_048_576;

export function candidateFiles(scriptPath: string): string[] {
  const dir = dirname(scriptPath);
  try {
    return readdirSync(dir)
      .filter((n) => EXTRA_FILE.test(n) && n !== 'tasks.json')
      .filter((n) => {
        // lstat: a link is not offered (readFolderFile would refuse it when the task is made).
        const st = lstatSync(join(dir, n));
        return st.isFile() && st.size <= EXTRA_FILE_MAX;
      })
      .sort();
  } catch {
    return [];
  }
}

/** A task id from the script's file name, not yet taken in the folder. */
export function suggestId(fileName: string, taken: ReadonlySet<string>): string {
  const base =
    fileName
      .replace(/\.py$/, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^[._-]+/, '') || 'task';
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

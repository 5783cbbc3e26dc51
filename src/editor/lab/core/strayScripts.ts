// Every `.py` of a task folder is a task (src/env/tasks/tasks.ts), so a folder of other scripts is a bad
// place for a new one. No vscode import.
import { existsSync, readdirSync } from 'node:fs';
import { readTaskMetadata } from './taskWriter';

/** `.py` files of `dir` without a tasks.json entry: saving a task there makes each of them a task too. */
export function strayScripts(dir: string): string[] {
  if (!existsSync(dir)) return [];
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.py'));
  } catch {
    return [];
  }
  let known = new Set<string>();
  try {
    known = new Set(readTaskMetadata(dir).map((e) => `${e.task_id}.py`));
  } catch {
    // An unreadable tasks.json: every script counts as stray.
  }
  return names.filter((n) => !known.has(n)).sort();
}

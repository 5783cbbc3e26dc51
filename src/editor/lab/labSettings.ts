// The settings the lab reads, through the editor's own settings module (same keys, defaults,
// validation and interpreter resolution as the episodes).
import { readSettings, resolveAgainstWorkspace, resolveInterpreter } from '../settings';
import { scriptRunOptionsFrom } from '../environmentFactory';

export async function interpreterSetting(): Promise<string> {
  return (await resolveInterpreter(readSettings().settings)).interpreter;
}

/** Limits, sandbox and warm runtime of a lab run: the ones every episode's environment gets. */
export function runSettings(): ReturnType<typeof scriptRunOptionsFrom> {
  return scriptRunOptionsFrom(readSettings().settings);
}

export function taskFoldersSetting(): string[] {
  return readSettings().settings.taskFolders.map(resolveAgainstWorkspace);
}

// The settings the lab reads, through the editor's own settings module (same keys, defaults,
// validation and interpreter resolution as the episodes).
import type { SandboxOptions } from '../../env/sandbox/options';
import { readSettings, resolveAgainstWorkspace, resolveInterpreter } from '../settings';
import { sandboxOptionsOf } from '../settingsSchema';

export async function interpreterSetting(): Promise<string> {
  return (await resolveInterpreter(readSettings().settings)).interpreter;
}

export function timeoutSetting(): number {
  return readSettings().settings.runTimeoutSeconds * 1000;
}

export function sandboxSetting(): SandboxOptions {
  return sandboxOptionsOf(readSettings().settings);
}

export function taskFoldersSetting(): string[] {
  return readSettings().settings.taskFolders.map(resolveAgainstWorkspace);
}

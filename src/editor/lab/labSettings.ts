// The settings the lab and review features read, parsed with the editor's own schemas
// (src/editor/settingsSchema.ts) so keys, defaults and validation are the same everywhere.
import { homedir } from 'node:os';
import { isAbsolute, join } from 'node:path';
import * as vscode from 'vscode';
import { parseSettings, type ForgeSettings } from '../settingsSchema';

export function forgeSettings(): ForgeSettings {
  const config = vscode.workspace.getConfiguration('forgeenv');
  return parseSettings((key) => config.get(key)).settings;
}

function workspaceRoot(): string | undefined {
  return vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** `~`, `${workspaceFolder}` and relative paths resolved against the first workspace folder. */
export function resolveSettingPath(p: string): string {
  let out = p.trim();
  const root = workspaceRoot();
  if (root) out = out.replace(/\$\{workspaceFolder\}/g, root);
  if (out === '~' || out.startsWith('~/')) out = join(homedir(), out.slice(1));
  if (!isAbsolute(out)) out = join(root ?? process.cwd(), out);
  return out;
}

export function interpreterSetting(): string {
  return forgeSettings().pythonPath || 'python3';
}

export function timeoutSetting(): number {
  return forgeSettings().runTimeoutSeconds * 1000;
}

export function taskFoldersSetting(): string[] {
  return forgeSettings().taskFolders.map(resolveSettingPath);
}

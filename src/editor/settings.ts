// Reads the `forgeenv.*` settings (validated by settingsSchema.ts) and resolves what they leave
// open: the interpreter (the Python extension's active one when it is installed), the annotator
// id and the dataset/episode folders.
import { userInfo } from 'node:os';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { parseSettings, type ForgeSettings, type SettingKey } from './settingsSchema';

export function readSettings(scope?: vscode.Uri): { settings: ForgeSettings; problems: string[] } {
  const config = vscode.workspace.getConfiguration('forgeenv', scope);
  // package.json declares the same defaults as the schema (checked by a unit test).
  return parseSettings((key: SettingKey) => config.get(key));
}

/** Subset of the Python extension's API (ms-python.python) that we use; everything optional. */
interface PythonExtensionApi {
  environments?: {
    getActiveEnvironmentPath?(resource?: vscode.Uri): { id?: string; path?: string } | undefined;
    resolveEnvironment?(env: { id?: string; path?: string } | string): Promise<{ executable?: { uri?: vscode.Uri } } | undefined>;
  };
}

const PYTHON_EXTENSION = 'ms-python.python';

export interface ResolvedInterpreter {
  interpreter: string;
  source: 'setting' | 'python-extension' | 'default';
}

/** forgeenv.pythonPath, else the Python extension's active interpreter, else `python3`. */
export async function resolveInterpreter(settings: ForgeSettings, resource?: vscode.Uri): Promise<ResolvedInterpreter> {
  if (settings.pythonPath) return { interpreter: settings.pythonPath, source: 'setting' };
  const ext = vscode.extensions.getExtension<PythonExtensionApi>(PYTHON_EXTENSION);
  if (ext) {
    try {
      const api = ext.isActive ? ext.exports : await withTimeout(ext.activate(), 10_000);
      const envPath = api?.environments?.getActiveEnvironmentPath?.(resource);
      if (envPath) {
        const resolved = await withTimeout(api?.environments?.resolveEnvironment?.(envPath) ?? Promise.resolve(undefined), 10_000).catch(
          () => undefined,
        );
        const exe = resolved?.executable?.uri?.fsPath ?? envPath.path;
        if (exe) return { interpreter: exe, source: 'python-extension' };
      }
    } catch {
      // The Python extension failed or timed out: fall back rather than block the episode.
    }
  }
  return { interpreter: 'python3', source: 'default' };
}

function withTimeout<T>(p: Thenable<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error('timed out')), ms);
    Promise.resolve(p).then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

/** forgeenv.datasetFolder, else `<first workspace folder>/.forgeenv/dataset`, else global storage. */
export function datasetFolder(settings: ForgeSettings, context: vscode.ExtensionContext): string {
  if (settings.datasetFolder) return resolveAgainstWorkspace(settings.datasetFolder);
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (folder && folder.uri.scheme === 'file') return join(folder.uri.fsPath, '.forgeenv', 'dataset');
  return join(context.globalStorageUri.fsPath, 'dataset');
}

/** forgeenv.episodesFolder, else workspace storage, else global storage. */
export function episodesFolder(settings: ForgeSettings, context: vscode.ExtensionContext): string {
  if (settings.episodesFolder) return resolveAgainstWorkspace(settings.episodesFolder);
  return join((context.storageUri ?? context.globalStorageUri).fsPath, 'episodes');
}

/** `~/x`, absolute paths, or paths relative to the first workspace folder. */
export function resolveAgainstWorkspace(p: string): string {
  if (p.startsWith('~/') || p === '~') return join(process.env.HOME ?? userInfo().homedir, p.slice(1));
  if (/^([/\\]|[A-Za-z]:)/.test(p)) return p;
  const folder = vscode.workspace.workspaceFolders?.[0];
  return folder ? join(folder.uri.fsPath, p) : p;
}

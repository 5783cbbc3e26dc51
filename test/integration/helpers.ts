// Shared by the integration suites (bundled into each by esbuild; not a suite itself).
import * as assert from 'node:assert/strict';
import { readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { ForgeEnvApi } from '../../src/extension';
import type { ForgeContext } from '../../src/editor/context';
import type { EpisodeFeature } from '../../src/editor/episode';
import type { CommandResult } from '../../src/editor/commandArgs';

export const EXTENSION_ID = 'forgeenv.forgeenv-studio';

export async function api(): Promise<{
  episode: () => EpisodeFeature;
  context: () => ForgeContext;
  reload: () => Promise<void>;
  extension: vscode.Extension<ForgeEnvApi>;
}> {
  const ext = vscode.extensions.getExtension<ForgeEnvApi>(EXTENSION_ID);
  assert.ok(ext, `extension ${EXTENSION_ID} not found`);
  const exports = await ext.activate();
  assert.ok(exports.testing, 'the testing API exists (extensionMode is Test)');
  const t = exports.testing;
  return {
    episode: () => {
      const e = t.episode();
      assert.ok(e, 'the episode feature is live');
      return e;
    },
    context: () => {
      const c = t.context();
      assert.ok(c, 'the editor layer is live');
      return c;
    },
    reload: () => t.reload(),
    extension: ext,
  };
}

export function workspaceDir(): string {
  const f = vscode.workspace.workspaceFolders?.[0];
  assert.ok(f, 'a workspace folder is open');
  return f.uri.fsPath;
}

/** The dataset folder a suite writes to (see useOwnDataset). */
export function datasetDir(name = 'dataset'): string {
  return join(workspaceDir(), '.forgeenv', name);
}

/**
 * Gives the calling suite its own dataset folder (`.forgeenv/<name>`, set as a workspace-relative
 * forgeenv.datasetFolder), so suites sharing one VS Code never see each other's records.
 */
export function useOwnDataset(name: string): void {
  suiteSetup(() => setSetting('datasetFolder', `.forgeenv/${name}`));
  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('datasetFolder', undefined);
  });
}

export function readJsonl(file: string): unknown[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

/** Runs a ForgeEnv command and asserts it succeeded; returns its result. */
export async function ok<T extends object>(command: string, args?: unknown): Promise<Extract<CommandResult<T>, { ok: true }>> {
  const r = await vscode.commands.executeCommand<CommandResult<T>>(command, ...(args === undefined ? [] : [args]));
  assert.ok(r, `${command} returned nothing`);
  if (!r.ok) assert.fail(`${command} failed: ${r.reason}: ${r.message}`);
  return r;
}

export async function replaceBuffer(uri: vscode.Uri, text: string): Promise<vscode.TextDocument> {
  const doc = await vscode.workspace.openTextDocument(uri);
  const edit = new vscode.WorkspaceEdit();
  edit.replace(uri, new vscode.Range(0, 0, doc.lineCount, 0), text);
  assert.ok(await vscode.workspace.applyEdit(edit), 'edit applied');
  assert.equal(doc.getText(), text);
  return doc;
}

export async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('forgeenv').update(key, value, vscode.ConfigurationTarget.Workspace);
}

/** Ends whatever episode a failed test left open, so the next suite starts clean. */
export async function endAnyEpisode(): Promise<void> {
  const r = await vscode.commands.executeCommand<CommandResult>('forgeenv.skipEpisode', { reason: 'other', note: 'test cleanup' });
  void r;
}

export function timing(what: string, ms: number): void {
  console.log(`    [timing] ${what}: ${ms} ms`);
}

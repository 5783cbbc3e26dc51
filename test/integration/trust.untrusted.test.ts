import * as assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CommandResult } from '../../src/editor/commandArgs';
import { UNTRUSTED_MESSAGE } from '../../src/editor/trust';
import { api, workspaceDir } from './helpers';

// Runs in the second VS Code launch: workspace trust enabled, the folder never trusted.
suite('Workspace Trust (untrusted folder)', () => {
  let a: Awaited<ReturnType<typeof api>>;
  suiteSetup(async () => {
    a = await api();
  });

  test('the folder really is in Restricted Mode', () => {
    assert.equal(vscode.workspace.isTrusted, false);
  });

  test('no script runs: start, run and submit refuse with the trust message', async () => {
    for (const cmd of ['forgeenv.startEpisode', 'forgeenv.nextTask', 'forgeenv.runAndScore', 'forgeenv.submitEpisode']) {
      const r = await vscode.commands.executeCommand<CommandResult>(
        cmd,
        ...(cmd === 'forgeenv.startEpisode' ? [{ taskId: 'simple_regression' }] : []),
      );
      assert.equal(r.ok, false, cmd);
      assert.equal(!r.ok && r.reason, 'untrusted', cmd);
      assert.equal(!r.ok && r.message, UNTRUSTED_MESSAGE);
    }
    assert.equal(a.episode().session.current, undefined);
    const storage = a.context().datasetDir();
    assert.ok(!existsSync(storage) || readdirSync(storage).length === 0, 'nothing was written');
  });

  test('browsing still works: the task queue lists the corpus', async () => {
    const r = await vscode.commands.executeCommand<CommandResult>('forgeenv.refreshTaskQueue');
    assert.equal(r.ok, true);
    const q = await a.episode().queue.current();
    assert.ok(q.todo.length >= 5, `${q.todo.length} tasks to do`);
  });

  test('workspace values of restricted settings are ignored', async () => {
    const dir = join(workspaceDir(), '.vscode');
    mkdirSync(dir, { recursive: true });
    const changed = new Promise<void>((resolve) => {
      const sub = vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration('forgeenv.annotatorId')) {
          sub.dispose();
          resolve();
        }
      });
    });
    // One restricted setting and one ordinary one: the ordinary one proves the file was read.
    writeFileSync(
      join(dir, 'settings.json'),
      JSON.stringify({ 'forgeenv.pythonPath': '/nonexistent/python-from-workspace', 'forgeenv.annotatorId': 'workspace-annotator' }),
    );
    await Promise.race([changed, new Promise((r) => setTimeout(r, 10_000))]);
    const config = vscode.workspace.getConfiguration('forgeenv');
    assert.equal(config.get('annotatorId'), 'workspace-annotator', 'the workspace settings file was read');
    assert.equal(config.get('pythonPath'), '', 'but its interpreter path does not apply in Restricted Mode');
    assert.equal(config.inspect('pythonPath')?.workspaceValue, undefined);
  });
});

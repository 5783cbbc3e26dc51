import * as assert from 'node:assert/strict';
import { join } from 'node:path';
import * as vscode from 'vscode';
import type { CommandResult } from '../../src/editor/commandArgs';
import type { ScoreResult, StartResult } from '../../src/editor/episode/results';
import { api, endAnyEpisode, ok, useOwnDataset, workspaceDir } from './helpers';

const PRIMITIVE = { primitive_type: 'RenameApiCall', params: { old_name: 'DataCollatorWithPadding', new_name: 'DataCollatorPadding' } };

/** The editor groups' sizes, side by side (orientation 0), as VS Code reports them. */
async function groupSizes(): Promise<{ orientation: number; sizes: number[] }> {
  const layout = await vscode.commands.executeCommand<{ orientation: number; groups: Array<{ size?: number }> }>('vscode.getEditorLayout');
  return { orientation: layout.orientation, sizes: layout.groups.map((g) => g.size ?? 0) };
}

function groupOf(match: (input: unknown) => boolean): vscode.ViewColumn | undefined {
  return vscode.window.tabGroups.all.find((g) => g.tabs.some((t) => match(t.input)))?.viewColumn;
}

// The first screen of `npm start` is the README with the walkthrough beside it; a newcomer who clicks
// the walkthrough (or the score view) leaves the second column focused when the episode starts.
suite('Episode layout', () => {
  let a: Awaited<ReturnType<typeof api>>;
  useOwnDataset('dataset-layout');
  suiteSetup(async () => {
    a = await api();
    await endAnyEpisode();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
  suiteTeardown(() => vscode.commands.executeCommand('workbench.action.closeAllEditors'));

  test('with the second column focused, the script opens in the first, keeps the larger share, and the score view opens beside it', async () => {
    const readme = vscode.Uri.file(join(workspaceDir(), 'README.md'));
    await vscode.window.showTextDocument(readme, { viewColumn: vscode.ViewColumn.One, preview: false });
    await vscode.window.showTextDocument(readme, { viewColumn: vscode.ViewColumn.Two, preview: false });
    assert.equal(vscode.window.tabGroups.activeTabGroup.viewColumn, vscode.ViewColumn.Two, 'the second column has focus');

    const start = await ok<StartResult>('forgeenv.startEpisode', { taskId: 'distilbert_sst2', seed: 7, primitive: PRIMITIVE });
    const script = vscode.Uri.file(start.filePath).toString();
    const isScript = (i: unknown) => i instanceof vscode.TabInputText && i.uri.toString() === script;
    assert.equal(groupOf(isScript), vscode.ViewColumn.One, 'train.py opened in the first column');
    assert.equal(vscode.window.activeTextEditor?.document.uri.toString(), script, 'and has focus');
    const opened = await groupSizes();
    assert.equal(opened.orientation, 0);
    assert.equal(opened.sizes.length, 2);
    assert.ok(opened.sizes[0] > opened.sizes[1], `the script's column is the wider one: ${opened.sizes.join(' / ')}`);

    await ok<ScoreResult>('forgeenv.runAndScore');
    const isScore = (i: unknown) => i instanceof vscode.TabInputWebview && i.viewType.includes('forgeenv.score');
    assert.equal(vscode.window.tabGroups.all.length, 2, 'no third column');
    assert.equal(groupOf(isScore), vscode.ViewColumn.Two, 'the score view sits beside the script');
    assert.equal(groupOf(isScript), vscode.ViewColumn.One);
    const scored = await groupSizes();
    assert.ok(scored.sizes[0] > scored.sizes[1], `the script keeps the larger share: ${scored.sizes.join(' / ')}`);
  });

  test('Start Repair Episode without arguments: one quick pick through task and breakage, opened at the failing line', async function () {
    this.timeout(90_000);
    await endAnyEpisode();
    const started = vscode.commands.executeCommand<CommandResult<StartResult>>('forgeenv.startEpisode');
    let done: CommandResult<StartResult> | undefined;
    void started.then((r) => (done = r));
    // Enter, as a user would, until the episode starts: "Next task", then "Let the Teacher choose".
    // The second Enter lands only if the pick is still there between the steps.
    let enters = 0;
    for (const t0 = Date.now(); !done && Date.now() - t0 < 60_000; enters++) {
      await vscode.commands.executeCommand('workbench.action.acceptSelectedQuickOpenItem');
      await new Promise((r) => setTimeout(r, 250));
    }
    assert.ok(done?.ok, JSON.stringify(done));
    const s = done as StartResult;
    assert.equal(s.taskId, (await a.episode().queue.current()).inProgress[0]?.task.task_id);
    const editor = vscode.window.activeTextEditor;
    assert.equal(editor?.document.uri.toString(), vscode.Uri.file(s.filePath).toString());
    const [first] = vscode.languages.getDiagnostics(editor.document.uri);
    if (s.broke) assert.equal(editor.selection.active.line, first?.range.start.line, 'the cursor is on the failing line');
    await endAnyEpisode();
  });
});

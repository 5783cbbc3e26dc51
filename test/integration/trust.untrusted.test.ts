import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
suite('Workspace Trust', () => {
  test('folder is untrusted', () => {
    console.log(`trusted=${vscode.workspace.isTrusted} folders=${vscode.workspace.workspaceFolders?.map((f) => f.uri.toString())}`);
    assert.equal(vscode.workspace.isTrusted, false);
  });
});

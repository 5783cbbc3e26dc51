import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
suite('Smoke', () => {
  test('trusted', () => {
    console.log(`trusted=${vscode.workspace.isTrusted} version=${vscode.version}`);
    assert.equal(vscode.workspace.isTrusted, true);
  });
});

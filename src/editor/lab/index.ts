// Drift primitives in the editor (issue 4): apply one to the current file and inspect the
// result, check all of them on a folder or the corpus, and run a script under another library
// snapshot. Everything is registered here; src/extension.ts calls registerLab once.
import * as vscode from 'vscode';
import type { ForgeContext } from '../context';
import { ApplicabilityService } from './applicabilityService';
import { applyPrimitiveCommand, BreakWithPrimitiveActions } from './applyPrimitive';
import { checkAllCommand, exportChecksCommand } from './checkAllCommand';
import { CHECKS_VIEW_ID, PrimitiveChecksView } from './checkAllView';
import { checkInverseCommand, resolveSession, runBrokenCommand } from './labActions';
import { LAB_SCHEME, LabDocuments, type LabSession } from './labDocuments';
import { makeTaskCommand } from './makeTask';
import { saveAsTaskCommand } from './saveAsTask';
import { snapshotDriftCommand } from './snapshotDrift';

export function registerLab(ctx: ForgeContext): void {
  const disposables: vscode.Disposable[] = [];
  // The lab's runs print where the episodes' runs do.
  const log = ctx.runs;
  const docs = new LabDocuments();
  const applicability = new ApplicabilityService();
  const brokenDiagnostics = vscode.languages.createDiagnosticCollection('forgeenv-lab');
  const snapshotDiagnostics = vscode.languages.createDiagnosticCollection('forgeenv-snapshot');
  const view = new PrimitiveChecksView(docs);
  const treeView = vscode.window.createTreeView(CHECKS_VIEW_ID, { treeDataProvider: view, showCollapseAll: true });
  disposables.push(docs, applicability, brokenDiagnostics, snapshotDiagnostics, view, treeView);

  const followUp = (session: LabSession) => {
    void vscode.window
      .showInformationMessage(
        `ForgeEnv: ${session.spec.primitive_type} applied in the diff (your file is unchanged).`,
        'Run broken version',
        'Check inverse',
        'Save as task',
      )
      .then((choice) => {
        const id = { session: session.id };
        if (choice === 'Run broken version') void vscode.commands.executeCommand('forgeenv.lab.runBroken', id);
        else if (choice === 'Check inverse') void vscode.commands.executeCommand('forgeenv.lab.checkInverse', id);
        else if (choice === 'Save as task') void vscode.commands.executeCommand('forgeenv.lab.saveAsTask', id);
      });
  };

  const cmd = (id: string, fn: (args: unknown) => Promise<unknown>) => ctx.commands.register(id, (args) => fn(args));
  const pythonSelector: vscode.DocumentSelector = [
    { language: 'python', scheme: 'file' },
    { language: 'python', scheme: 'untitled' },
  ];
  disposables.push(
    vscode.workspace.registerTextDocumentContentProvider(LAB_SCHEME, docs),
    vscode.languages.registerCodeActionsProvider(pythonSelector, new BreakWithPrimitiveActions(applicability), {
      providedCodeActionKinds: [BreakWithPrimitiveActions.kind],
    }),
    vscode.workspace.onDidCloseTextDocument((d) => {
      if (d.uri.scheme === LAB_SCHEME) brokenDiagnostics.delete(d.uri);
    }),
    vscode.workspace.onDidChangeTextDocument((e) => {
      // Snapshot diagnostics describe the text that ran; once it changes they would point at the wrong place.
      if (e.contentChanges.length && snapshotDiagnostics.has(e.document.uri)) snapshotDiagnostics.delete(e.document.uri);
    }),
    // A new repair episode starts clean: lab diagnostics would linger in Problems beside it.
    ctx.onWillStartEpisode(() => {
      brokenDiagnostics.clear();
      snapshotDiagnostics.clear();
    }),
  );
  cmd('forgeenv.lab.applyPrimitive', (args) => applyPrimitiveCommand({ docs, applicability, followUp }, args));
  cmd('forgeenv.lab.runBroken', (args) => runBrokenCommand({ forge: ctx, docs, diagnostics: brokenDiagnostics, log }, args));
  cmd('forgeenv.lab.checkInverse', (args) => checkInverseCommand({ docs }, args));
  cmd('forgeenv.lab.saveAsTask', async (args) => {
    const r = await saveAsTaskCommand(ctx, resolveSession(docs, args), args);
    if (r?.ok) ctx.invalidateTasks();
    return r;
  });
  cmd('forgeenv.lab.makeTask', (args) => makeTaskCommand(ctx, args));
  cmd('forgeenv.lab.checkAll', (args) => checkAllCommand({ forge: ctx, view }, args));
  cmd('forgeenv.lab.exportChecks', (args) => exportChecksCommand(view, args));
  cmd('forgeenv.lab.openCheckRow', (args) => view.openRow(args));
  // For tests and scripts: what the check view shows, flattened.
  cmd('forgeenv.lab.inspectChecks', async () => view.snapshot());
  cmd('forgeenv.lab.snapshotDrift', (args) => snapshotDriftCommand({ forge: ctx, diagnostics: snapshotDiagnostics, log }, args));
  for (const d of disposables) ctx.lifecycle.add(d);
}

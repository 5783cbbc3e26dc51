// "Library snapshot drift": run the current script under the simulated libraries of another
// snapshot (e.g. 2023-12 = transformers 4.36) and show the errors as diagnostics on the file,
// each with the real-world change it most likely corresponds to.
import * as vscode from 'vscode';
import { z } from 'zod';
import { executeScript, type RunResult } from '../../env/run/executor';
import { LIBRARY_SNAPSHOTS, SNAPSHOT_IDS, CORPUS_SNAPSHOT, snapshotVersions, type SnapshotId } from '../../env/snapshots/versions';
import { explainError, explanationText, type DriftExplanation } from './core/knownChanges';
import { driftTableHints } from './core/driftHints';
import { runOutcome } from './core/runDiagnostics';
import { documentFor, isPythonDocument } from './applyPrimitive';
import { toDiagnostics } from './diagnostics';
import type { ForgeContext } from '../context';
import { refusal, type CommandResult } from '../commandArgs';

export const SnapshotDriftArgsSchema = z
  .object({
    uri: z.string().optional(),
    snapshot: z.enum(SNAPSHOT_IDS).optional(),
    quiet: z.boolean().optional(),
  })
  .strict();

export interface SnapshotDriftResult {
  snapshot: SnapshotId;
  runsCleanly: boolean;
  headline: string;
  explanation?: DriftExplanation;
  diagnostics: number;
  uri: string;
}

function versionsText(id: SnapshotId): string {
  return Object.entries(LIBRARY_SNAPSHOTS[id])
    .map(([k, v]) => `${k} ${v}`)
    .join(', ');
}

export async function snapshotDriftCommand(
  ctx: { forge: ForgeContext; diagnostics: vscode.DiagnosticCollection; log: vscode.OutputChannel },
  rawArgs: unknown,
): Promise<CommandResult<SnapshotDriftResult>> {
  const parsed = SnapshotDriftArgsSchema.safeParse(rawArgs instanceof vscode.Uri ? { uri: rawArgs.toString() } : (rawArgs ?? {}));
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Snapshot Drift: ${parsed.error.message}`);
  const args = parsed.data;
  const document = await documentFor(args.uri);
  if (!document || !isPythonDocument(document)) {
    void vscode.window.showWarningMessage('ForgeEnv: open a Python training script first.');
    return refusal('invalid_args', 'No Python script to run.');
  }
  const untrusted = ctx.forge.refuseUntrusted();
  if (untrusted) return untrusted;
  let snapshot = args.snapshot;
  if (!snapshot) {
    const picked = await vscode.window.showQuickPick(
      SNAPSHOT_IDS.map((id) => ({
        label: id,
        description: id === CORPUS_SNAPSHOT ? 'latest (what the corpus targets)' : undefined,
        detail: versionsText(id),
        id,
      })),
      { ignoreFocusOut: true, title: 'ForgeEnv: run this script under the simulated libraries of…' },
    );
    if (!picked) return refusal('cancelled', 'No snapshot chosen.');
    snapshot = picked.id;
  }
  const script = document.getText();
  const interpreter = await ctx.forge.interpreter();
  const exec = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: running under snapshot ${snapshot}`, cancellable: true },
    (_p, token): Promise<RunResult> => {
      const ac = new AbortController();
      const sub = token.onCancellationRequested(() => ac.abort());
      return executeScript({
        script,
        mode: 'simulated',
        libraryVersions: snapshotVersions(snapshot),
        interpreter,
        ...ctx.forge.runOptions(),
        signal: ac.signal,
        validate: false,
      }).finally(() => {
        sub.dispose();
      });
    },
  );
  const outcome = runOutcome(exec, script);
  const explanation = outcome.parsed ? explainError(outcome.parsed, driftTableHints()) : undefined;
  const diags = toDiagnostics(outcome.problems, `ForgeEnv snapshot ${snapshot}`, () =>
    explanation ? `Real-world change: ${explanationText(explanation)}` : undefined,
  );
  ctx.diagnostics.set(document.uri, diags);
  ctx.log.appendLine(`--- ${document.uri.fsPath} under ${snapshot} (${versionsText(snapshot)}): exit ${exec.exit_code}`);
  if (exec.stderr.trim()) ctx.log.appendLine(exec.stderr.trimEnd());
  if (!args.quiet) {
    if (outcome.ok)
      void vscode.window.showInformationMessage(`ForgeEnv: the script runs cleanly under ${snapshot} (${versionsText(snapshot)}).`);
    else
      void vscode.window.showWarningMessage(
        `ForgeEnv: under ${snapshot}: ${outcome.headline}${explanation ? ` — ${explanationText(explanation)}` : ''}`,
      );
  }
  return {
    ok: true,
    snapshot,
    runsCleanly: outcome.ok,
    headline: outcome.headline,
    explanation,
    diagnostics: diags.length,
    uri: document.uri.toString(),
  };
}

// What can be done from a lab diff: run the broken side (simulated libraries), check that the
// inverse spec restores the original exactly.
import * as vscode from 'vscode';
import { z } from 'zod';
import { executeScript } from '../../env/executor';
import { snapshotVersions } from '../../env/versions';
import { checkInverse, type InverseCheck } from './core/inverseCheck';
import { runOutcome } from './core/runDiagnostics';
import { toDiagnostics } from './diagnostics';
import type { LabDocuments, LabSession } from './labDocuments';
import { interpreterSetting, timeoutSetting } from './labSettings';

export const SessionArgsSchema = z
  .object({ session: z.string().optional(), uri: z.string().optional(), quiet: z.boolean().optional() })
  .strict();

/** The session of an explicit id/URI, else of the active lab editor, else the latest one. */
export function resolveSession(docs: LabDocuments, rawArgs: unknown): LabSession | undefined {
  // Editor-title buttons pass the resource URI as the first argument.
  if (rawArgs instanceof vscode.Uri) return docs.sessionOf(rawArgs) ?? docs.latest();
  const args = SessionArgsSchema.safeParse(rawArgs ?? {});
  if (args.success && args.data.session) return docs.get(args.data.session);
  if (args.success && args.data.uri) return docs.sessionOf(vscode.Uri.parse(args.data.uri));
  return docs.sessionOf(vscode.window.activeTextEditor?.document.uri) ?? docs.latest();
}

function quiet(rawArgs: unknown): boolean {
  const args = SessionArgsSchema.safeParse(rawArgs ?? {});
  return args.success && args.data.quiet === true;
}

export interface RunBrokenOutcome {
  ok: boolean;
  headline: string;
  exit_code: number | null;
  brokenUri: string;
  diagnostics: number;
}

export async function runBrokenCommand(ctx: { docs: LabDocuments; diagnostics: vscode.DiagnosticCollection; log: vscode.OutputChannel }, rawArgs: unknown): Promise<RunBrokenOutcome | undefined> {
  const session = resolveSession(ctx.docs, rawArgs);
  if (!session) {
    void vscode.window.showWarningMessage('ForgeEnv: apply a primitive first (ForgeEnv: Apply a Drift Primitive).');
    return undefined;
  }
  if (!vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage('ForgeEnv: scripts are never run in an untrusted workspace. Trust this folder to run the broken version.');
    return undefined;
  }
  const brokenUri = ctx.docs.uriFor(session, 'broken');
  const versions = session.versions ?? snapshotVersions();
  const exec = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: running the broken ${session.fileName} (simulated libraries)`, cancellable: true },
    (_p, token) => {
      const ac = new AbortController();
      token.onCancellationRequested(() => ac.abort());
      return executeScript({ script: session.result.script, mode: 'simulated', libraryVersions: versions, interpreter: interpreterSetting(), timeoutMs: timeoutSetting(), signal: ac.signal });
    },
  );
  const outcome = runOutcome(exec, session.result.script);
  const diags = toDiagnostics(outcome.problems, 'ForgeEnv lab (broken run)');
  ctx.diagnostics.set(brokenUri, diags);
  ctx.log.appendLine(`--- ${session.spec.primitive_type} on ${session.fileName}: exit ${exec.exit_code} in ${Math.round(exec.wall_time_ms)} ms`);
  if (exec.stderr.trim()) ctx.log.appendLine(exec.stderr.trimEnd());
  if (!quiet(rawArgs)) {
    if (outcome.ok) void vscode.window.showWarningMessage(`ForgeEnv: the broken script still runs (${outcome.headline}); ${session.spec.primitive_type} did not break it under these versions.`);
    else void vscode.window.showInformationMessage(`ForgeEnv: the broken script fails: ${outcome.headline}`);
  }
  return { ok: outcome.ok, headline: outcome.headline, exit_code: exec.exit_code, brokenUri: brokenUri.toString(), diagnostics: diags.length };
}

export async function checkInverseCommand(ctx: { docs: LabDocuments }, rawArgs: unknown): Promise<InverseCheck | undefined> {
  const session = resolveSession(ctx.docs, rawArgs);
  if (!session) {
    void vscode.window.showWarningMessage('ForgeEnv: apply a primitive first (ForgeEnv: Apply a Drift Primitive).');
    return undefined;
  }
  const check = checkInverse(session.original, session.result.script, session.result.inverse);
  if (quiet(rawArgs)) return check;
  if (check.exact) {
    void vscode.window.showInformationMessage(`ForgeEnv: the inverse ${session.result.inverse.primitive_type} restores the original exactly.`);
  } else if (check.restored !== undefined) {
    const restoredUri = ctx.docs.uriFor(session, 'restored');
    ctx.docs.setText(restoredUri, check.restored);
    void vscode.window.showErrorMessage(`ForgeEnv: ${check.summary}`);
    await vscode.commands.executeCommand('vscode.diff', ctx.docs.uriFor(session, 'original'), restoredUri, `${session.fileName}: original ↔ restored by ${session.result.inverse.primitive_type}`);
  } else {
    void vscode.window.showErrorMessage(`ForgeEnv: ${check.summary}`);
  }
  return check;
}

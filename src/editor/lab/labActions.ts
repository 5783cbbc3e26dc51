// What can be done from a lab diff: run the broken side (simulated libraries) with its error
// as diagnostics on the diff's right side, and check that the inverse spec restores the
// original exactly.
import * as vscode from 'vscode';
import { z } from 'zod';
import { executeScript, type RunResult } from '../../env/run/executor';
import { snapshotVersions } from '../../env/snapshots/versions';
import { unbrokenBreakageNote } from '../episode/diagnosticsModel';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { checkInverse, type InverseCheck } from './core/inverseCheck';
import { runOutcome } from './core/runDiagnostics';
import { toDiagnostics } from './diagnostics';
import type { LabDocuments, LabSession } from './labDocuments';
import { showSandboxWarningOnce } from '../sandboxWarning';

export const SessionArgsSchema = z
  .object({ session: z.string().optional(), uri: z.string().optional(), quiet: z.boolean().optional() })
  .strict();

const NO_SESSION = 'Apply a primitive first (ForgeEnv: Apply a Drift Primitive to This File).';

/** The session of an explicit id/URI, else of the active lab editor, else the latest one. */
export function resolveSession(docs: LabDocuments, rawArgs: unknown): LabSession | undefined {
  // Editor-title buttons pass the resource URI as the first argument.
  if (rawArgs instanceof vscode.Uri) return docs.sessionOf(rawArgs) ?? docs.latest();
  const args = z
    .object({ session: z.string().optional(), uri: z.string().optional() })
    .passthrough()
    .safeParse(rawArgs ?? {});
  if (args.success && args.data.session) return docs.get(args.data.session);
  if (args.success && args.data.uri) return docs.sessionOf(vscode.Uri.parse(args.data.uri));
  return docs.sessionOf(vscode.window.activeTextEditor?.document.uri) ?? docs.latest();
}

function parseSessionArgs(rawArgs: unknown): z.infer<typeof SessionArgsSchema> | undefined {
  if (rawArgs === undefined || rawArgs instanceof vscode.Uri) return {};
  const args = SessionArgsSchema.safeParse(rawArgs);
  return args.success ? args.data : undefined;
}

export interface RunBrokenResult {
  session: string;
  broke: boolean;
  headline: string;
  exitCode: number | null;
  brokenUri: string;
  diagnostics: number;
}

export async function runBrokenCommand(
  ctx: { forge: ForgeContext; docs: LabDocuments; diagnostics: vscode.DiagnosticCollection; log: vscode.OutputChannel },
  rawArgs: unknown,
): Promise<CommandResult<RunBrokenResult>> {
  const args = parseSessionArgs(rawArgs);
  if (!args) return refusal('invalid_args', 'Invalid arguments for ForgeEnv: Run Broken Version (expected {session?, uri?, quiet?}).');
  const session = resolveSession(ctx.docs, rawArgs);
  if (!session) {
    void vscode.window.showWarningMessage(`ForgeEnv: ${NO_SESSION}`);
    return refusal('no_episode', NO_SESSION);
  }
  const untrusted = ctx.forge.refuseUntrusted();
  if (untrusted) return untrusted;
  const brokenUri = ctx.docs.uriFor(session, 'broken');
  const versions = session.versions ?? snapshotVersions();
  const interpreter = await ctx.forge.interpreter();
  const exec = await vscode.window.withProgress(
    {
      location: vscode.ProgressLocation.Notification,
      title: `ForgeEnv: running the broken ${session.fileName} (simulated libraries)`,
      cancellable: true,
    },
    (_p, token): Promise<RunResult> => {
      const ac = new AbortController();
      const sub = token.onCancellationRequested(() => ac.abort());
      return executeScript({
        script: session.result.script,
        mode: 'simulated',
        libraryVersions: versions,
        interpreter,
        ...ctx.forge.runOptions(),
        signal: ac.signal,
        validate: false,
      }).finally(() => {
        sub.dispose();
      });
    },
  );
  showSandboxWarningOnce(exec.sandbox_warning, (l) => ctx.log.appendLine(l));
  const outcome = runOutcome(exec, session.result.script);
  // A breakage that does not break stays visible on the line it changed (a notification hides itself).
  const note = unbrokenBreakageNote(exec, session.original, session.result.script, session.spec.primitive_type);
  const problems = note
    ? [
        {
          ...note,
          severity: 'warning' as const,
          message: `${session.spec.primitive_type} changed this line, but the broken script still runs under these library versions: it does not break it.`,
        },
        ...outcome.problems,
      ]
    : outcome.problems;
  const diags = toDiagnostics(problems, 'ForgeEnv lab');
  ctx.diagnostics.set(brokenUri, diags);
  ctx.log.appendLine(
    `── ${session.spec.primitive_type} on ${session.fileName}: exit ${exec.exit_code} in ${Math.round(exec.wall_time_ms)} ms`,
  );
  if (exec.stderr.trim()) ctx.log.appendLine(exec.stderr.trimEnd());
  if (!args.quiet) {
    if (outcome.ok)
      void vscode.window.showWarningMessage(
        `ForgeEnv: the broken script still runs; ${session.spec.primitive_type} does not break it under these library versions.`,
      );
    else void vscode.window.showInformationMessage(`ForgeEnv: the broken script fails: ${outcome.headline}`);
  }
  return {
    ok: true,
    session: session.id,
    broke: !outcome.ok,
    headline: outcome.headline,
    exitCode: exec.exit_code,
    brokenUri: brokenUri.toString(),
    diagnostics: diags.length,
  };
}

export async function checkInverseCommand(
  ctx: { docs: LabDocuments },
  rawArgs: unknown,
): Promise<CommandResult<InverseCheck & { session: string }>> {
  const args = parseSessionArgs(rawArgs);
  if (!args) return refusal('invalid_args', 'Invalid arguments for ForgeEnv: Check Inverse (expected {session?, uri?, quiet?}).');
  const session = resolveSession(ctx.docs, rawArgs);
  if (!session) {
    void vscode.window.showWarningMessage(`ForgeEnv: ${NO_SESSION}`);
    return refusal('no_episode', NO_SESSION);
  }
  const check = checkInverse(session.original, session.result.script, session.result.inverse);
  if (!check.exact && check.restored !== undefined) {
    const restoredUri = ctx.docs.uriFor(session, 'restored');
    ctx.docs.setText(restoredUri, check.restored);
    if (!args.quiet)
      await vscode.commands.executeCommand(
        'vscode.diff',
        ctx.docs.uriFor(session, 'original'),
        restoredUri,
        `${session.fileName}: original ↔ restored by ${session.result.inverse.primitive_type}`,
      );
  }
  if (!args.quiet) {
    if (check.exact)
      void vscode.window.showInformationMessage(
        `ForgeEnv: the inverse ${session.result.inverse.primitive_type} restores the original exactly.`,
      );
    else void vscode.window.showErrorMessage(`ForgeEnv: ${check.summary}`);
  }
  return { ok: true, session: session.id, ...check };
}

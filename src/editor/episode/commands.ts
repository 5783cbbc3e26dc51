// The episode commands, thin: check trust, parse the arguments (zod), call the session or show
// what was asked. Each returns a CommandResult, so tests and other extensions drive the loop.
import { access, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { refusal, SkipArgsSchema, StartArgsSchema, SubmitArgsSchema, type CommandResult } from '../commandArgs';
import { configureExecution } from '../configureExecution';
import type { ForgeContext } from '../context';
import type { EpisodeFeature } from '.';
import type { QueueNode } from './taskQueue';
import { brokenScriptUri, runOutputUri } from './virtualDocuments';

/** Parses optional command arguments; `undefined` stays undefined (the command asks instead). */
function parse<T>(
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { message: string } } },
  raw: unknown,
  title: string,
) {
  if (raw === undefined) return { ok: true as const, value: undefined };
  const p = schema.safeParse(raw);
  return p.success
    ? { ok: true as const, value: p.data }
    : { ok: false as const, refusal: refusal('invalid_args', `Invalid arguments for ForgeEnv: ${title}: ${p.error.message}`) };
}

export function registerEpisodeCommands(ctx: ForgeContext, { session, queue }: EpisodeFeature): void {
  const reg = (id: string, fn: (...args: unknown[]) => unknown) => ctx.commands.register(id, fn);
  const trusted = <T>(fn: () => Promise<T>) => ctx.refuseUntrusted() ?? fn();

  const start = (raw?: unknown) =>
    trusted(async () => {
      const args = parse(StartArgsSchema, raw, 'Start Episode');
      return args.ok ? session.start(args.value) : args.refusal;
    });
  reg('forgeenv.startEpisode', start);
  reg('forgeenv.nextTask', () => start({ next: true }));
  reg('forgeenv.startTask', (node) =>
    trusted(async () => {
      const n = node as QueueNode | undefined;
      if (!n || n.kind !== 'task') return session.start();
      const task = ctx.tasks().getById(n.entry.task.task_id);
      if (!task) return session.fail(`ForgeEnv: unknown task "${n.entry.task.task_id}".`);
      const choice = await session.editor.chooseBreakage(task);
      if (choice === undefined) return refusal('cancelled', 'No breakage chosen.');
      return session.start(choice ? { taskId: task.task_id, primitive: choice } : { taskId: task.task_id });
    }),
  );
  reg('forgeenv.runAndScore', () => trusted(() => session.runAndScore()));
  reg('forgeenv.submitEpisode', (raw) =>
    trusted(async () => {
      const args = parse(SubmitArgsSchema, raw, 'Submit Repair');
      return args.ok ? session.submit(args.value) : args.refusal;
    }),
  );
  reg('forgeenv.skipEpisode', async (raw) => {
    const args = parse(SkipArgsSchema, raw, 'Skip Episode');
    return args.ok ? session.skip(args.value) : args.refusal;
  });
  reg('forgeenv.reviewChanges', async (): Promise<CommandResult<{ left: string; right: string }>> => {
    const live = session.current;
    if (!live) return session.noEpisode();
    const left = brokenScriptUri(live.episodeId);
    const right = vscode.Uri.file(live.file);
    await vscode.commands.executeCommand('vscode.diff', left, right, `train.py: broken ↔ your repair (${live.state.start.task.task_id})`, {
      preview: true,
    });
    return { ok: true, left: left.toString(), right: right.toString() };
  });
  reg('forgeenv.showScore', async () => {
    if (!session.current) return session.noEpisode();
    session.render(undefined, true);
    return { ok: true };
  });
  reg('forgeenv.showRunOutput', async (): Promise<CommandResult<{ uri: string }>> => {
    const live = session.current;
    if (!live) return session.noEpisode();
    const uri = live.state.runs > 0 ? runOutputUri(live.episodeId, live.state.runs) : runOutputUri(live.episodeId, 'start');
    const doc = await vscode.workspace.openTextDocument(uri);
    await vscode.languages.setTextDocumentLanguage(doc, 'log').then(undefined, () => doc);
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside, preserveFocus: true });
    return { ok: true, uri: uri.toString() };
  });
  reg('forgeenv.openEpisodeFile', async (): Promise<CommandResult<{ uri: string }>> => {
    const live = session.current;
    if (!live) return session.noEpisode();
    await session.editor.openScript(live.file, { focus: true });
    return { ok: true, uri: vscode.Uri.file(live.file).toString() };
  });
  // The task list too: a task folder may have changed behind the watchers (a network drive, another tool).
  reg('forgeenv.refreshTaskQueue', () => (ctx.invalidateTasks(), queue.refresh(), { ok: true }));
  reg('forgeenv.openDatasetFolder', async (): Promise<CommandResult<{ dir: string }>> => {
    const dir = ctx.datasetDir();
    const uri = vscode.Uri.file(dir);
    await mkdir(dir, { recursive: true }).catch(() => undefined);
    if (vscode.workspace.getWorkspaceFolder(uri)) await vscode.commands.executeCommand('revealInExplorer', uri);
    else if (
      await access(join(dir, 'demonstrations.jsonl')).then(
        () => true,
        () => false,
      )
    )
      await vscode.window.showTextDocument(vscode.Uri.file(join(dir, 'demonstrations.jsonl')), { preview: true });
    else void vscode.window.showInformationMessage(`ForgeEnv dataset folder: ${dir} (no demonstrations yet).`);
    return { ok: true, dir };
  });
  reg('forgeenv.configureExecution', (args) => configureExecution(args, ctx.noteQuestion));
  reg('forgeenv.openWalkthrough', () =>
    vscode.commands.executeCommand('workbench.action.openWalkthrough', 'forgeenv.forgeenv-studio#gettingStarted', false),
  );
}

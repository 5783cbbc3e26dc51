// "Check All Primitives…" and "Export Checks": run every applicable primitive on the corpus or a
// folder of scripts (progress, cancel), show the results in the checks view, export them as JSON.
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { checkPrimitives, scriptsInFolder, type CheckRow, type CheckScript, type CheckSummary } from '../../env/primitives/checkPrimitives';
import { writeFileAtomic } from '../../store/atomicWrite';
import { checkExport } from './core/checkResults';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { CHECKS_VIEW_ID, CheckAllArgsSchema, type CheckRunState, type PrimitiveChecksView } from './checkAllView';

interface SourceChoice extends vscode.QuickPickItem {
  pick: { corpus: true } | { folder: string } | { browse: true };
}

async function chooseSource(taskDirs: readonly string[]): Promise<{ corpus: true } | { folder: string } | undefined> {
  const items: SourceChoice[] = [
    { label: '$(library) Built-in task corpus', description: 'every task shipped with ForgeEnv', pick: { corpus: true } },
    ...taskDirs.map((f): SourceChoice => ({ label: `$(folder) ${basename(f)}`, description: f, pick: { folder: f } })),
    ...(vscode.workspace.workspaceFolders ?? []).map((w): SourceChoice => ({
      label: `$(root-folder) ${w.name}`,
      description: `.py files in ${w.uri.fsPath}`,
      pick: { folder: w.uri.fsPath },
    })),
    { label: '$(folder-opened) Choose a folder…', pick: { browse: true } },
  ];
  const picked = await vscode.window.showQuickPick(items, { ignoreFocusOut: true, title: 'ForgeEnv: check every primitive on…' });
  if (!picked) return undefined;
  if ('browse' in picked.pick) {
    const dir = await vscode.window.showOpenDialog({ canSelectFolders: true, canSelectFiles: false, openLabel: 'Check these scripts' });
    return dir?.[0] ? { folder: dir[0].fsPath } : undefined;
  }
  return picked.pick;
}

interface LoadedScript extends CheckScript {
  path?: string;
}

function loadScripts(forge: ForgeContext, source: { corpus: true } | { folder: string }): { label: string; scripts: LoadedScript[] } {
  if ('corpus' in source) {
    return {
      label: 'corpus',
      scripts: forge.builtinTasks().map((t) => ({ name: t.task_id, script: t.script_content, versions: t.library_versions })),
    };
  }
  return {
    label: basename(source.folder),
    scripts: scriptsInFolder(source.folder).map((s) => ({ ...s, path: join(source.folder, s.name) })),
  };
}

export async function checkAllCommand(
  ctx: { forge: ForgeContext; view: PrimitiveChecksView },
  rawArgs: unknown,
): Promise<CommandResult<{ source: string; summary: CheckSummary; results: CheckRow[]; cancelled: boolean; noRun: boolean }>> {
  const parsed = CheckAllArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Check All Primitives: ${parsed.error.message}`);
  const args = parsed.data;
  const noRun = args.noRun ?? false;
  const trusted = ctx.forge.trusted;
  if (!noRun && !trusted) {
    void vscode.window.showWarningMessage(
      'ForgeEnv: scripts are never run in an untrusted workspace; checking without running them (apply / restore / diff only).',
    );
  }
  const effectiveNoRun = noRun || !trusted;
  const source = args.corpus ? { corpus: true as const } : args.folder ? { folder: args.folder } : await chooseSource(ctx.forge.taskDirs());
  if (!source) return refusal('cancelled', 'No folder chosen.');
  if (ctx.view.state?.running) return refusal('busy', 'A primitive check is already running.');
  let loaded: ReturnType<typeof loadScripts>;
  try {
    loaded = loadScripts(ctx.forge, source);
  } catch (e) {
    const msg = `Cannot read the scripts: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  if (loaded.scripts.length === 0) {
    void vscode.window.showInformationMessage(`ForgeEnv: no .py scripts in ${loaded.label}.`);
    return refusal('error', `No .py scripts in ${loaded.label}.`);
  }
  const interpreter = await ctx.forge.interpreter();
  const mode = args.mode ?? 'simulated';
  const state: CheckRunState = {
    source: loaded.label,
    mode,
    noRun: effectiveNoRun,
    scripts: new Map(loaded.scripts.map((s) => [s.name, s])),
    rows: [],
    running: true,
  };
  ctx.view.setState(state);
  void vscode.commands.executeCommand(`${CHECKS_VIEW_ID}.focus`).then(undefined, () => undefined);
  let cancelled = false;
  const out = await vscode.window.withProgress(
    { location: vscode.ProgressLocation.Notification, title: `ForgeEnv: checking every primitive on ${loaded.label}`, cancellable: true },
    async (progress, token) => {
      const ac = new AbortController();
      const sub = token.onCancellationRequested(() => {
        cancelled = true;
        ac.abort();
      });
      let last = 0;
      try {
        return await checkPrimitives(loaded.scripts, {
          mode,
          interpreter,
          ...ctx.forge.runOptions(),
          noRun: effectiveNoRun,
          primitives: args.primitives,
          signal: ac.signal,
          concurrency: 2,
          onRow: (row, done, total) => {
            state.rows.push(row);
            const pct = (done / Math.max(1, total)) * 100;
            progress.report({ message: `${done}/${total}: ${basename(row.script)} × ${row.primitive}`, increment: pct - last });
            last = pct;
            ctx.view.refreshSoon();
          },
        });
      } finally {
        sub.dispose();
        state.running = false;
      }
    },
  );
  // The final, sorted rows replace the streamed ones.
  state.rows = out.results;
  state.summary = out.summary;
  ctx.view.refreshNow();
  if (!args.quiet) {
    const s = out.summary;
    void vscode.window.showInformationMessage(
      `ForgeEnv: ${cancelled ? 'cancelled after ' : ''}${s.rows} checks on ${s.scripts} scripts in ${(s.wall_time_ms / 1000).toFixed(1)} s: ${s.applied} applied, ${s.broke} broke, ${s.restored} restored, ${s.passes_after_repair} pass after repair.`,
    );
  }
  return { ok: true, source: loaded.label, summary: out.summary, results: out.results, cancelled, noRun: effectiveNoRun };
}

export async function exportChecksCommand(
  view: PrimitiveChecksView,
  rawArgs: unknown,
): Promise<CommandResult<{ out: string; rows: number }>> {
  const args = z
    .object({ out: z.string().min(1).optional() })
    .strict()
    .safeParse(rawArgs ?? {});
  if (!args.success)
    return refusal('invalid_args', `Invalid arguments for ForgeEnv: Export Primitive Check Results: ${args.error.message}`);
  const state = view.state;
  if (!state || state.running || !state.summary) {
    const msg = state?.running ? 'The check is still running.' : 'Run "Check All Primitives" first.';
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`);
    return refusal(state?.running ? 'busy' : 'error', msg);
  }
  let out = args.data.out;
  if (!out) {
    const root = vscode.workspace.workspaceFolders?.[0]?.uri;
    const target = await vscode.window.showSaveDialog({
      title: 'Export primitive check results',
      filters: { JSON: ['json'] },
      defaultUri: root ? vscode.Uri.joinPath(root, `primitive-checks-${state.source}.json`) : undefined,
    });
    if (!target) return refusal('cancelled', 'No file chosen.');
    out = target.fsPath;
  }
  const data = checkExport({ source: state.source, mode: state.mode, noRun: state.noRun, summary: state.summary, results: state.rows });
  try {
    await writeFileAtomic(out, JSON.stringify(data, null, 2) + '\n');
  } catch (e) {
    const msg = `Could not write ${out}: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  if (!args.data.out) void vscode.window.showInformationMessage(`ForgeEnv: wrote ${state.rows.length} check rows to ${out}.`);
  return { ok: true, out, rows: state.rows.length };
}

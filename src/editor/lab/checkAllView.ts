// "Check all primitives" on a folder or the built-in corpus: a cancellable progress
// notification, results streamed into the `forgeenv.primitiveChecks` tree (script → primitive
// rows), each row opening its diff; Export results as JSON.
import { basename, join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { checkPrimitives, scriptsInFolder, type CheckRow, type CheckScript, type CheckSummary } from '../../env/checkPrimitives';
import { applySpec } from '../../env/primitives/registry';
import { ExecutionModeSchema, type ExecutionMode } from '../../env/schemas';
import { loadCorpus } from '../../env/tasks';
import { writeFileAtomic } from '../../store/atomicWrite';
import { checkExport, countRows, groupByScript, groupDescription, rowDescription, rowReason, rowStatus, type ScriptGroup } from './core/checkResults';
import { refusal, type CommandResult } from '../commandArgs';
import { openLabDiff } from './applyPrimitive';
import type { LabDocuments } from './labDocuments';
import { interpreterSetting, sandboxSetting, taskFoldersSetting, timeoutSetting } from './labSettings';

export const CHECKS_VIEW_ID = 'forgeenv.primitiveChecks';

export const CheckAllArgsSchema = z
  .object({
    /** A folder of .py scripts; omitted with `corpus` false: ask. */
    folder: z.string().min(1).optional(),
    corpus: z.boolean().optional(),
    mode: ExecutionModeSchema.optional(),
    /** Apply / restore / diff only, no Python runs. */
    noRun: z.boolean().optional(),
    primitives: z.array(z.string()).optional(),
    quiet: z.boolean().optional(),
  })
  .strict();

type Node = { kind: 'group'; group: ScriptGroup } | { kind: 'row'; row: CheckRow; group: ScriptGroup } | { kind: 'status'; text: string };

const ICONS: Record<ReturnType<typeof rowStatus>, [string, string]> = {
  broke: ['pass-filled', 'testing.iconPassed'],
  applied: ['circle-large-outline', 'descriptionForeground'],
  'not-broken': ['warning', 'list.warningForeground'],
  'not-applicable': ['circle-slash', 'disabledForeground'],
  'not-restored': ['error', 'list.errorForeground'],
  'internal-error': ['bug', 'list.errorForeground'],
};

export interface CheckRunState {
  source: string;
  mode: ExecutionMode;
  noRun: boolean;
  scripts: Map<string, CheckScript & { path?: string }>;
  rows: CheckRow[];
  summary?: CheckSummary;
  running: boolean;
}

export class PrimitiveChecksView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  state: CheckRunState | undefined;
  private refreshTimer: NodeJS.Timeout | undefined;

  constructor(private readonly docs: LabDocuments) {}

  setState(state: CheckRunState | undefined): void {
    this.state = state;
    void vscode.commands.executeCommand('setContext', 'forgeenv.lab.hasChecks', state !== undefined);
    this.refreshNow();
  }

  /** Throttled: rows stream in faster than the tree needs repainting. */
  refreshSoon(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.changed.fire(undefined);
    }, 150);
  }

  refreshNow(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.refreshTimer = undefined;
    this.changed.fire(undefined);
  }

  getChildren(node?: Node): Node[] {
    if (!this.state) return [];
    if (!node) {
      const groups = groupByScript(this.state.rows).map((group): Node => ({ kind: 'group', group }));
      const c = this.state.summary ?? countRows(this.state.rows);
      const head = this.state.running ? `Checking ${this.state.source}… ${c.rows} rows` : `${this.state.source}: ${c.applied} applied, ${c.broke} broke, ${c.restored} restored of ${c.rows}`;
      return [{ kind: 'status', text: head }, ...groups];
    }
    if (node.kind === 'group') return node.group.rows.map((row): Node => ({ kind: 'row', row, group: node.group }));
    return [];
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === 'status') {
      const item = new vscode.TreeItem(node.text, vscode.TreeItemCollapsibleState.None);
      item.iconPath = new vscode.ThemeIcon(this.state?.running ? 'loading~spin' : 'checklist');
      item.contextValue = 'forgeenv.check.status';
      return item;
    }
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(basename(node.group.script), vscode.TreeItemCollapsibleState.Collapsed);
      item.description = groupDescription(node.group);
      item.tooltip = node.group.script;
      item.iconPath = new vscode.ThemeIcon('file-code');
      item.contextValue = 'forgeenv.check.script';
      item.id = `script:${node.group.script}`;
      return item;
    }
    const r = node.row;
    const status = rowStatus(r);
    const item = new vscode.TreeItem(r.primitive, vscode.TreeItemCollapsibleState.None);
    item.id = `row:${r.script}:${r.primitive}`;
    item.description = rowDescription(r);
    const reason = rowReason(r);
    const tip = new vscode.MarkdownString();
    tip.appendMarkdown(`**${r.primitive}** on \`${basename(r.script)}\`\n\n`);
    tip.appendMarkdown(`applied: ${r.applied} · original runs: ${r.original_runs ?? '—'} · broke: ${r.broke ?? '—'} · restored: ${r.restored ?? '—'} · passes after repair: ${r.passes_after_repair ?? '—'} · diff lines: ${r.diff_lines ?? '—'}\n\n`);
    if (r.params) tip.appendCodeblock(JSON.stringify(r.params), 'json');
    if (reason) tip.appendMarkdown(`\n\nreason: ${reason.replace(/[\\`*_{}[\]()#+\-.!|]/g, '\\$&')}`);
    item.tooltip = tip;
    const [icon, color] = ICONS[status];
    item.iconPath = new vscode.ThemeIcon(icon, new vscode.ThemeColor(color));
    item.contextValue = r.applied ? 'forgeenv.check.applied' : 'forgeenv.check.row';
    item.command = { command: 'forgeenv.lab.openCheckRow', title: 'Open diff', arguments: [{ script: r.script, primitive: r.primitive }] };
    return item;
  }

  /** Opens the row's original ↔ broken diff (re-applying its spec, which is deterministic). */
  async openRow(args: unknown): Promise<CommandResult<{ session: string; brokenUri: string; script: string }>> {
    // The row's inline button passes the tree node itself.
    const fromNode = args && typeof args === 'object' && 'row' in args ? (args as { row: unknown }).row : args;
    const a = z.object({ script: z.string(), primitive: z.string() }).safeParse(fromNode);
    if (!a.success) return refusal('invalid_args', 'Expected {script, primitive} of a check row.');
    const row = this.state?.rows.find((r) => r.script === a.data.script && r.primitive === a.data.primitive);
    const source = this.state?.scripts.get(a.data.script);
    if (!row || !source) return refusal('invalid_args', `No check row ${a.data.script} × ${a.data.primitive}.`);
    if (!row.applied || !row.params) {
      const msg = `${row.primitive} does not apply to ${basename(row.script)}: ${rowReason(row) ?? 'no candidate'}`;
      void vscode.window.showInformationMessage(`ForgeEnv: ${msg}`);
      return refusal('error', msg);
    }
    const result = applySpec(source.script, { primitive_type: row.primitive, params: row.params });
    const session = this.docs.add({
      source: source.path ? vscode.Uri.file(source.path) : `corpus:${row.script}`,
      fileName: row.script.endsWith('.py') ? basename(row.script) : `${row.script}.py`,
      original: source.script,
      spec: { primitive_type: row.primitive, params: row.params },
      result,
      versions: source.versions,
      taskId: source.path ? undefined : row.script,
    });
    await openLabDiff(this.docs, session);
    return { ok: true, session: session.id, brokenUri: this.docs.uriFor(session, 'broken').toString(), script: result.script };
  }

  /** What the tree shows, flattened (tests compare it with checkPrimitives' own summary). */
  snapshot(): { status: string; groups: Array<{ label: string; description: string; rows: Array<{ label: string; description: string; status: string }> }> } {
    const top = this.getChildren();
    const status = top[0]?.kind === 'status' ? top[0].text : '';
    return {
      status,
      groups: top
        .filter((n): n is Extract<Node, { kind: 'group' }> => n.kind === 'group')
        .map((g) => ({
          label: String(this.getTreeItem(g).label),
          description: String(this.getTreeItem(g).description ?? ''),
          rows: this.getChildren(g).map((r) => {
            const item = this.getTreeItem(r);
            return { label: String(item.label), description: String(item.description ?? ''), status: r.kind === 'row' ? rowStatus(r.row) : '' };
          }),
        })),
    };
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.changed.dispose();
  }
}

interface SourceChoice extends vscode.QuickPickItem {
  pick: { corpus: true } | { folder: string } | { browse: true };
}

async function chooseSource(): Promise<{ corpus: true } | { folder: string } | undefined> {
  const items: SourceChoice[] = [
    { label: '$(library) Built-in task corpus', description: 'every task shipped with ForgeEnv', pick: { corpus: true } },
    ...taskFoldersSetting().map((f): SourceChoice => ({ label: `$(folder) ${basename(f)}`, description: f, pick: { folder: f } })),
    ...(vscode.workspace.workspaceFolders ?? []).map((w): SourceChoice => ({ label: `$(root-folder) ${w.name}`, description: `.py files in ${w.uri.fsPath}`, pick: { folder: w.uri.fsPath } })),
    { label: '$(folder-opened) Choose a folder…', pick: { browse: true } },
  ];
  const picked = await vscode.window.showQuickPick(items, { title: 'ForgeEnv: check every primitive on…' });
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

function loadScripts(source: { corpus: true } | { folder: string }): { label: string; scripts: LoadedScript[] } {
  if ('corpus' in source) {
    const { tasks } = loadCorpus({ extraDirs: [] });
    return { label: 'corpus', scripts: tasks.filter((t) => t.source === 'builtin').map((t) => ({ name: t.task_id, script: t.script_content, versions: t.library_versions })) };
  }
  return { label: basename(source.folder), scripts: scriptsInFolder(source.folder).map((s) => ({ ...s, path: join(source.folder, s.name) })) };
}

export async function checkAllCommand(ctx: { view: PrimitiveChecksView }, rawArgs: unknown): Promise<CommandResult<{ source: string; summary: CheckSummary; results: CheckRow[]; cancelled: boolean; noRun: boolean }>> {
  const parsed = CheckAllArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Check All Primitives: ${parsed.error.message}`);
  const args = parsed.data;
  const noRun = args.noRun ?? false;
  if (!noRun && !vscode.workspace.isTrusted) {
    void vscode.window.showWarningMessage('ForgeEnv: scripts are never run in an untrusted workspace; checking without running them (apply / restore / diff only).');
  }
  const effectiveNoRun = noRun || !vscode.workspace.isTrusted;
  const source = args.corpus ? { corpus: true as const } : args.folder ? { folder: args.folder } : await chooseSource();
  if (!source) return refusal('cancelled', 'No folder chosen.');
  if (ctx.view.state?.running) return refusal('busy', 'A primitive check is already running.');
  let loaded: ReturnType<typeof loadScripts>;
  try {
    loaded = loadScripts(source);
  } catch (e) {
    const msg = `Cannot read the scripts: ${e instanceof Error ? e.message : String(e)}`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  if (loaded.scripts.length === 0) {
    void vscode.window.showInformationMessage(`ForgeEnv: no .py scripts in ${loaded.label}.`);
    return refusal('error', `No .py scripts in ${loaded.label}.`);
  }
  const interpreter = await interpreterSetting();
  const mode = args.mode ?? 'simulated';
  const state: CheckRunState = { source: loaded.label, mode, noRun: effectiveNoRun, scripts: new Map(loaded.scripts.map((s) => [s.name, s])), rows: [], running: true };
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
          timeoutMs: timeoutSetting(),
          sandbox: sandboxSetting(),
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

export async function exportChecksCommand(view: PrimitiveChecksView, rawArgs: unknown): Promise<CommandResult<{ out: string; rows: number }>> {
  const args = z.object({ out: z.string().min(1).optional() }).strict().safeParse(rawArgs ?? {});
  if (!args.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Export Primitive Check Results: ${args.error.message}`);
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

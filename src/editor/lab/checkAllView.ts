// "Check all primitives" on a folder or the built-in corpus: a cancellable progress
// notification, results streamed into the `forgeenv.primitiveChecks` tree (script → primitive
// rows), each row opening its diff; Export results as JSON.
import { basename } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import type { CheckRow, CheckScript, CheckSummary } from '../../env/primitives/checkPrimitives';
import { applySpec } from '../../env/primitives/registry';
import { ExecutionModeSchema, type ExecutionMode } from '../../env/schemas';

const treeLabel = (l: string | vscode.TreeItemLabel | undefined): string => (typeof l === 'string' ? l : (l?.label ?? ''));
import { countRows, groupByScript, groupDescription, rowDescription, rowReason, rowStatus, type ScriptGroup } from './core/checkResults';
import { refusal, type CommandResult } from '../commandArgs';
import { openLabDiff } from './applyPrimitive';
import type { LabDocuments } from './labDocuments';

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
      const head = this.state.running
        ? `Checking ${this.state.source}… ${c.rows} rows`
        : `${this.state.source}: ${c.applied} applied, ${c.broke} broke, ${c.restored} restored of ${c.rows}`;
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
    tip.appendMarkdown(
      `applied: ${r.applied} · original runs: ${r.original_runs ?? '—'} · broke: ${r.broke ?? '—'} · restored: ${r.restored ?? '—'} · passes after repair: ${r.passes_after_repair ?? '—'} · diff lines: ${r.diff_lines ?? '—'}\n\n`,
    );
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
    const fromNode = args && typeof args === 'object' && 'row' in args ? args.row : args;
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
  snapshot(): {
    status: string;
    groups: Array<{ label: string; description: string; rows: Array<{ label: string; description: string; status: string }> }>;
  } {
    const top = this.getChildren();
    const status = top[0]?.kind === 'status' ? top[0].text : '';
    return {
      status,
      groups: top
        .filter((n): n is Extract<Node, { kind: 'group' }> => n.kind === 'group')
        .map((g) => ({
          label: treeLabel(this.getTreeItem(g).label),
          description: String(this.getTreeItem(g).description ?? ''),
          rows: this.getChildren(g).map((r) => {
            const item = this.getTreeItem(r);
            return {
              label: treeLabel(item.label),
              description: String(item.description ?? ''),
              status: r.kind === 'row' ? rowStatus(r.row) : '',
            };
          }),
        })),
    };
  }

  dispose(): void {
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    this.changed.dispose();
  }
}

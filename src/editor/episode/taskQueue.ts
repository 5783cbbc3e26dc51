// The Task Queue view: To do / In progress / Submitted / Skipped with their counts, read from the
// corpus and the dataset folder (refreshed on dataset changes, episode changes and on demand).
import * as vscode from 'vscode';
import { GROUP_LABELS, QUEUE_GROUPS, buildQueue, nextTaskId, type QueueEntry, type QueueGroup, type QueueTaskInfo } from './taskQueueModel';

export type QueueNode = { kind: 'group'; group: QueueGroup; count: number } | { kind: 'task'; entry: QueueEntry };

export interface QueueSource {
  tasks(): QueueTaskInfo[];
  /** Current demonstrations and skips of the dataset folder (an unreadable folder: empty, with a problem). */
  dataset(): Promise<{
    demonstrations: Array<{ task_id: string; visible_reward: number }>;
    skips: Array<{ task_id: string }>;
    problems: string[];
  }>;
  inProgressTaskId(): string | undefined;
}

const GROUP_ICONS: Record<QueueGroup, string> = {
  inProgress: 'debug-start',
  todo: 'circle-large-outline',
  submitted: 'pass',
  skipped: 'debug-step-over',
};

export class TaskQueueProvider implements vscode.TreeDataProvider<QueueNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<QueueNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private queue: Record<QueueGroup, QueueEntry[]> | undefined;
  private loading: Promise<Record<QueueGroup, QueueEntry[]>> | undefined;
  private problems: string[] = [];
  readonly view: vscode.TreeView<QueueNode>;

  constructor(private readonly source: QueueSource) {
    this.view = vscode.window.createTreeView('forgeenv.taskQueue', { treeDataProvider: this, showCollapseAll: true });
    this.updateMessage();
  }

  refresh(): void {
    this.queue = undefined;
    this.loading = undefined;
    this.changed.fire(undefined);
  }

  /** The queue as last computed (computing it when needed). */
  async current(): Promise<Record<QueueGroup, QueueEntry[]>> {
    if (this.queue) return this.queue;
    this.loading ??= (async () => {
      const data = await this.source.dataset();
      this.problems = data.problems;
      const q = buildQueue(this.source.tasks(), {
        demonstrations: data.demonstrations,
        skips: data.skips,
        inProgressTaskId: this.source.inProgressTaskId(),
      });
      this.queue = q;
      this.updateMessage();
      return q;
    })();
    return this.loading;
  }

  async nextTaskId(): Promise<string | undefined> {
    return nextTaskId(await this.current());
  }

  async getChildren(node?: QueueNode): Promise<QueueNode[]> {
    let q: Record<QueueGroup, QueueEntry[]>;
    try {
      q = await this.current();
    } catch (e) {
      this.problems = [`Could not read the task queue: ${(e as Error).message}`];
      this.updateMessage();
      return [];
    }
    if (!node)
      return QUEUE_GROUPS.filter((g) => g !== 'inProgress' || q.inProgress.length > 0).map((group) => ({
        kind: 'group',
        group,
        count: q[group].length,
      }));
    if (node.kind === 'group') return q[node.group].map((entry) => ({ kind: 'task', entry }));
    return [];
  }

  getTreeItem(node: QueueNode): vscode.TreeItem {
    if (node.kind === 'group') {
      const item = new vscode.TreeItem(
        `${GROUP_LABELS[node.group]} (${node.count})`,
        node.group === 'todo' || node.group === 'inProgress'
          ? vscode.TreeItemCollapsibleState.Expanded
          : vscode.TreeItemCollapsibleState.Collapsed,
      );
      item.id = `group:${node.group}`;
      item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[node.group]);
      item.contextValue = `forgeenv.group.${node.group}`;
      item.accessibilityInformation = { label: `${GROUP_LABELS[node.group]}: ${node.count} tasks` };
      return item;
    }
    const { task, group, demonstrations, skips, bestReward } = node.entry;
    const item = new vscode.TreeItem(task.task_id, vscode.TreeItemCollapsibleState.None);
    item.id = `task:${task.task_id}`;
    const facts = [task.difficulty, task.category.replace(/_/g, ' ')];
    if (bestReward !== undefined) facts.push(`best ${bestReward.toFixed(2)}`);
    item.description = facts.join(' · ');
    const md = new vscode.MarkdownString();
    md.appendMarkdown(`**${task.task_id}** — ${task.difficulty}, ${task.category}\n\n`);
    md.appendText(task.description);
    md.appendMarkdown(`\n\n${demonstrations} demonstration(s), ${skips} skip(s)`);
    item.tooltip = md;
    item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[group]);
    item.contextValue = `forgeenv.task.${group}`;
    item.accessibilityInformation = { label: `${task.task_id}, ${task.difficulty} ${task.category}, ${GROUP_LABELS[group]}` };
    if (group === 'inProgress') item.command = { command: 'forgeenv.openEpisodeFile', title: 'Open Episode Script' };
    return item;
  }

  private updateMessage(): void {
    const parts: string[] = [];
    if (!vscode.workspace.isTrusted) parts.push('Restricted Mode: episodes need a trusted workspace.');
    if (this.problems.length)
      parts.push(
        this.problems.length === 1 ? this.problems[0] : `${this.problems.length} problems reading the dataset (see the ForgeEnv log).`,
      );
    this.view.message = parts.length ? parts.join(' ') : undefined;
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

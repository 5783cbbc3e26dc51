// The task queue as data: every corpus task in exactly one group. A task is Submitted when the
// dataset holds a current (not superseded) demonstration for it, Skipped when it was skipped and
// never submitted, In progress while its episode is open, To do otherwise. No vscode import.
import type { Difficulty, Task } from '../../env/schemas';

export type QueueGroup = 'inProgress' | 'todo' | 'submitted' | 'skipped';
export const QUEUE_GROUPS: readonly QueueGroup[] = ['inProgress', 'todo', 'submitted', 'skipped'];
export const GROUP_LABELS: Readonly<Record<QueueGroup, string>> = {
  inProgress: 'In progress',
  todo: 'To do',
  submitted: 'Submitted',
  skipped: 'Skipped',
};

export type QueueTaskInfo = Pick<Task, 'task_id' | 'description' | 'difficulty' | 'category'>;

export interface QueueEntry {
  task: QueueTaskInfo;
  group: QueueGroup;
  demonstrations: number;
  skips: number;
  /** Best visible reward among the task's current demonstrations. */
  bestReward?: number;
}

export interface DatasetFacts {
  /** task_id and visible_reward of each current demonstration. */
  demonstrations: ReadonlyArray<{ task_id: string; visible_reward: number }>;
  skips: ReadonlyArray<{ task_id: string }>;
  inProgressTaskId?: string;
}

const DIFFICULTY_ORDER: Readonly<Record<Difficulty, number>> = { easy: 0, medium: 1, hard: 2 };

function byDifficultyThenId(a: QueueEntry, b: QueueEntry): number {
  return DIFFICULTY_ORDER[a.task.difficulty] - DIFFICULTY_ORDER[b.task.difficulty] || a.task.task_id.localeCompare(b.task.task_id);
}

export function buildQueue(tasks: readonly QueueTaskInfo[], facts: DatasetFacts): Record<QueueGroup, QueueEntry[]> {
  const demos = new Map<string, { n: number; best: number }>();
  for (const d of facts.demonstrations) {
    const cur = demos.get(d.task_id) ?? { n: 0, best: -Infinity };
    demos.set(d.task_id, { n: cur.n + 1, best: Math.max(cur.best, d.visible_reward) });
  }
  const skips = new Map<string, number>();
  for (const s of facts.skips) skips.set(s.task_id, (skips.get(s.task_id) ?? 0) + 1);
  const groups: Record<QueueGroup, QueueEntry[]> = { inProgress: [], todo: [], submitted: [], skipped: [] };
  for (const task of tasks) {
    const d = demos.get(task.task_id);
    const s = skips.get(task.task_id) ?? 0;
    const group: QueueGroup = task.task_id === facts.inProgressTaskId ? 'inProgress' : d ? 'submitted' : s > 0 ? 'skipped' : 'todo';
    groups[group].push({ task, group, demonstrations: d?.n ?? 0, skips: s, ...(d ? { bestReward: d.best } : {}) });
  }
  for (const g of QUEUE_GROUPS) groups[g].sort(byDifficultyThenId);
  return groups;
}

/** The task "Next task" starts: the easiest To do task, else the easiest skipped one. */
export function nextTaskId(queue: Record<QueueGroup, QueueEntry[]>): string | undefined {
  return (queue.todo[0] ?? queue.skipped[0])?.task.task_id;
}

// The quick picks of the repair loop: which task, which breakage (and where), why skip.
import * as vscode from 'vscode';
import { applicablePrimitives } from '../env/primitives/registry';
import type { Task } from '../env/schemas';
import type { TaskSampler } from '../env/tasks';
import { SKIP_REASONS, type SkipReason } from '../store/records';
import type { SkipArgs } from './commandArgs';
import type { QueueEntry, QueueGroup } from './taskQueueModel';

export type PrimitiveChoice = { primitive_type: string; params?: Record<string, unknown> };

export const SKIP_LABELS: Record<SkipReason, string> = {
  too_hard: 'Too hard for me',
  unclear_task: 'The task is unclear',
  broken_environment: 'The environment is broken (the original would not run either)',
  not_a_real_drift: 'Not a realistic library drift',
  other: 'Other…',
};

/** A task id, `'next'`, or undefined when cancelled. */
export async function pickTask(tasks: TaskSampler, queue: Record<QueueGroup, QueueEntry[]> | undefined): Promise<string | 'next' | undefined> {
  const groupOf = new Map<string, QueueGroup>();
  if (queue) for (const [g, entries] of Object.entries(queue) as Array<[QueueGroup, QueueEntry[]]>) for (const e of entries) groupOf.set(e.task.task_id, g);
  type Item = vscode.QuickPickItem & { id: string };
  const state = (id: string) => (groupOf.get(id) === 'submitted' ? ' · submitted' : groupOf.get(id) === 'skipped' ? ' · skipped' : '');
  const items: Item[] = [
    { id: 'next', label: '$(arrow-right) Next task', description: 'the easiest task without a demonstration', alwaysShow: true },
    { id: '', label: 'Tasks', kind: vscode.QuickPickItemKind.Separator },
    ...[...tasks.all]
      .sort((a, b) => a.task_id.localeCompare(b.task_id))
      .map((t) => ({ id: t.task_id, label: t.task_id, description: `${t.difficulty} · ${t.category.replace(/_/g, ' ')}${state(t.task_id)}`, detail: t.description })),
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: 'ForgeEnv: Start Repair Episode (1/2): task',
    placeHolder: 'Pick a task, or Next task',
    matchOnDescription: true,
    matchOnDetail: true,
    ignoreFocusOut: true, // as the breakage pick below
  });
  return pick ? pick.id : undefined;
}

/** The breakage: a primitive (and optionally where), null to let the Teacher choose, undefined when cancelled. */
export async function pickPrimitive(task: Task, log: vscode.LogOutputChannel): Promise<PrimitiveChoice | null | undefined> {
  let applicable: ReturnType<typeof applicablePrimitives> = [];
  try {
    applicable = applicablePrimitives(task.script_content, task.library_versions);
  } catch (e) {
    log.warn(`applicablePrimitives(${task.task_id}) failed: ${(e as Error).message}`);
  }
  type Item = vscode.QuickPickItem & { choice: string | null };
  const items: Item[] = [
    { choice: null, label: '$(sparkle) Let the Teacher choose', description: 'a category the Teacher picks, a breakage the drift generator proposes', alwaysShow: true },
    { choice: null, label: 'Breakage primitives that apply to this task', kind: vscode.QuickPickItemKind.Separator },
    ...applicable.map(({ primitive, candidates }) => ({
      choice: primitive.name,
      label: primitive.name,
      description: `${primitive.category} · ${candidates.length} place${candidates.length === 1 ? '' : 's'}`,
      detail: `${primitive.description} — e.g. ${candidates[0]?.label ?? ''}`,
    })),
  ];
  const pick = await vscode.window.showQuickPick(items, {
    title: `ForgeEnv: Start Repair Episode (2/2): breakage for ${task.task_id}`,
    placeHolder: 'How should the script break?',
    matchOnDetail: true,
    // Between the two picks focus goes back to the editor; when that is the walkthrough (its Start
    // Episode button), its page takes focus a moment later, which closed this pick before it was seen.
    ignoreFocusOut: true,
  });
  if (!pick) return undefined;
  if (pick.choice === null) return null;
  const name = pick.choice;
  const entry = applicable.find((a) => a.primitive.name === name);
  if (!entry || entry.candidates.length <= 1) return entry?.candidates[0] ? { primitive_type: name, params: entry.candidates[0].params } : { primitive_type: name };
  type Where = vscode.QuickPickItem & { params?: Record<string, unknown> };
  const where = await vscode.window.showQuickPick<Where>(
    [
      { label: '$(sparkle) Let the drift generator choose', alwaysShow: true },
      ...entry.candidates.map((c) => ({ label: c.label, description: c.drift, params: c.params as Record<string, unknown> })),
    ],
    { title: `ForgeEnv: where should ${name} act?`, ignoreFocusOut: true },
  );
  if (!where) return undefined;
  return where.params ? { primitive_type: name, params: where.params } : { primitive_type: name };
}

/** Reason and note for a skip, or undefined when cancelled. */
export async function pickSkip(taskId: string): Promise<SkipArgs | undefined> {
  const pick = await vscode.window.showQuickPick(
    SKIP_REASONS.map((r) => ({ label: SKIP_LABELS[r], reason: r })),
    { title: `ForgeEnv: skip ${taskId} — why?`, placeHolder: 'The reason is recorded with the skip' },
  );
  if (!pick) return undefined;
  const note = await vscode.window.showInputBox({
    title: 'ForgeEnv: skip note',
    prompt: pick.reason === 'other' ? 'Say why (required)' : 'Anything to add? (optional, Enter to skip)',
    validateInput: (v) => (pick.reason === 'other' && !v.trim() ? 'Please say why.' : undefined),
  });
  if (note === undefined) return undefined;
  return { reason: pick.reason, note: note.trim() };
}

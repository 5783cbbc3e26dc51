// The quick picks of the repair loop: which task, which breakage (and where), why skip.
import * as vscode from 'vscode';
import { applicablePrimitives } from '../../env/primitives/registry';
import type { Task } from '../../env/schemas';
import { SKIP_REASONS } from '../../store/records';
import type { PrimitiveChoice, SkipArgs } from '../commandArgs';
import { SKIP_LABELS } from './skipLabels';
import { GROUP_LABELS, QUEUE_GROUPS, type QueueEntry, type QueueGroup } from './taskQueueModel';



/**
 * A task id, `'next'`, or undefined when cancelled. Tasks are listed in the queue's order (its
 * groups, each easiest first), the same order as the Task Queue view.
 */
export async function pickTask(queue: Record<QueueGroup, QueueEntry[]>): Promise<string | 'next' | undefined> {
  type Item = vscode.QuickPickItem & { id: string };
  const items: Item[] = [{ id: 'next', label: '$(arrow-right) Next task', description: 'the easiest task without a demonstration', alwaysShow: true }];
  for (const group of QUEUE_GROUPS) {
    if (queue[group].length === 0) continue;
    items.push({ id: '', label: GROUP_LABELS[group], kind: vscode.QuickPickItemKind.Separator });
    for (const { task } of queue[group]) items.push({ id: task.task_id, label: task.task_id, description: `${task.difficulty} · ${task.category.replace(/_/g, ' ')}`, detail: task.description });
  }
  const pick = await vscode.window.showQuickPick(items, {
    title: 'ForgeEnv: Start Repair Episode (1/2): task',
    placeHolder: 'Pick a task, or Next task',
    matchOnDescription: true,
    matchOnDetail: true,
    // Clicking elsewhere (the score view, an editor) must not close it silently.
    ignoreFocusOut: true,
  });
  return pick ? pick.id : undefined;
}

/** The breakage: a primitive (and optionally where), null to let the Teacher choose, undefined when cancelled. */
export async function pickPrimitive(task: Task, log: Pick<vscode.LogOutputChannel, 'warn'>): Promise<PrimitiveChoice | null | undefined> {
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
  const pick = await vscode.window.showQuickPick(items, { title: `ForgeEnv: Start Repair Episode (2/2): breakage for ${task.task_id}`, placeHolder: 'How should the script break?', matchOnDetail: true, ignoreFocusOut: true });
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
    { title: `ForgeEnv: skip ${taskId} — why?`, placeHolder: 'The reason is recorded with the skip', ignoreFocusOut: true },
  );
  if (!pick) return undefined;
  const note = await vscode.window.showInputBox({
    title: 'ForgeEnv: skip note',
    prompt: pick.reason === 'other' ? 'Say why (required)' : 'Anything to add? (optional, Enter to skip)',
    validateInput: (v) => (pick.reason === 'other' && !v.trim() ? 'Please say why.' : undefined),
    ignoreFocusOut: true,
  });
  if (note === undefined) return undefined;
  return { reason: pick.reason, note: note.trim() };
}

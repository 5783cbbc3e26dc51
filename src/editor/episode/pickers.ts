// The quick picks of the repair loop: which task, which breakage (and where), why skip.
// Task and breakage are steps of one quick pick that stays open between them (busy while the
// session looks the task up), so keyboard focus never leaves it: with two separate picks, a
// webview that had focus (the walkthrough's Start Episode button) took it back in between.
import * as vscode from 'vscode';
import { applicablePrimitives } from '../../env/primitives/registry';
import type { Task } from '../../env/schemas';
import { SKIP_REASONS } from '../../store/records';
import type { PrimitiveChoice, SkipArgs } from '../commandArgs';
import { SKIP_LABELS } from './skipLabels';
import { GROUP_LABELS, QUEUE_GROUPS, type QueueEntry, type QueueGroup } from './taskQueueModel';

type Item = vscode.QuickPickItem & { value?: unknown };

interface Step {
  title: string;
  step: number;
  totalSteps: number;
  placeholder: string;
  items: Item[];
  matchOnDetail?: boolean;
}

/** One quick pick through the steps of starting an episode. */
export class EpisodePicker implements vscode.Disposable {
  private qp: vscode.QuickPick<Item> | undefined;
  /** The step being asked; a new question cancels it, as a new showQuickPick cancels the last. */
  private pending: (() => void) | undefined;
  /** Questions asked so far (tells a step whether the pick is still its own). */
  private asked = 0;

  /** A task id, `'next'`, or undefined when cancelled; tasks in the queue's order (its groups, easiest first). */
  async task(queue: Record<QueueGroup, QueueEntry[]>): Promise<string | 'next' | undefined> {
    const items: Item[] = [
      { value: 'next', label: '$(arrow-right) Next task', description: 'the easiest task without a demonstration', alwaysShow: true },
    ];
    for (const group of QUEUE_GROUPS) {
      if (queue[group].length === 0) continue;
      items.push({ label: GROUP_LABELS[group], kind: vscode.QuickPickItemKind.Separator });
      for (const { task } of queue[group])
        items.push({
          value: task.task_id,
          label: task.task_id,
          description: `${task.difficulty} · ${task.category.replace(/_/g, ' ')}`,
          detail: task.description,
        });
    }
    const pick = await this.ask({
      title: 'ForgeEnv: Start Repair Episode: task',
      step: 1,
      totalSteps: 2,
      placeholder: 'Pick a task, or Next task',
      items,
      matchOnDetail: true,
    });
    return pick?.value as string | undefined;
  }

  /** The breakage: a primitive (and optionally where), null to let the Teacher choose, undefined when cancelled. Closes the pick. */
  async breakage(task: Task, log: Pick<vscode.LogOutputChannel, 'warn'>): Promise<PrimitiveChoice | null | undefined> {
    let last = this.asked; // the task step's question, until this one asks its own
    try {
      let applicable: ReturnType<typeof applicablePrimitives> = [];
      try {
        applicable = applicablePrimitives(task.script_content, task.library_versions);
      } catch (e) {
        log.warn(`applicablePrimitives(${task.task_id}) failed: ${(e as Error).message}`);
      }
      const items: Item[] = [
        {
          value: null,
          label: '$(sparkle) Let the Teacher choose',
          description: 'a category the Teacher picks, a breakage the drift generator proposes',
          alwaysShow: true,
        },
        { label: 'Breakage primitives that apply to this task', kind: vscode.QuickPickItemKind.Separator },
        ...applicable.map(({ primitive, candidates }) => ({
          value: primitive.name,
          label: primitive.name,
          description: `${primitive.category} · ${candidates.length} place${candidates.length === 1 ? '' : 's'}`,
          detail: `${primitive.description} — e.g. ${candidates[0]?.label ?? ''}`,
        })),
      ];
      const asking = this.ask({
        title: `ForgeEnv: Start Repair Episode: breakage for ${task.task_id}`,
        step: 2,
        totalSteps: 2,
        placeholder: 'How should the script break?',
        items,
        matchOnDetail: true,
      });
      last = this.asked;
      const pick = await asking;
      if (!pick) return undefined;
      if (pick.value === null) return null;
      const name = pick.value as string;
      const entry = applicable.find((a) => a.primitive.name === name);
      if (!entry || entry.candidates.length <= 1)
        return entry?.candidates[0] ? { primitive_type: name, params: entry.candidates[0].params } : { primitive_type: name };
      const askingWhere = this.ask({
        title: `ForgeEnv: Start Repair Episode: where should ${name} act?`,
        step: 3,
        totalSteps: 3,
        placeholder: 'A place in the script, or let the drift generator choose',
        items: [
          { value: undefined, label: '$(sparkle) Let the drift generator choose', alwaysShow: true },
          ...entry.candidates.map((c) => ({ value: c.params, label: c.label, description: c.drift })),
        ],
      });
      last = this.asked;
      const where = await askingWhere;
      if (!where) return undefined;
      const params = where.value as Record<string, unknown> | undefined;
      return params ? { primitive_type: name, params } : { primitive_type: name };
    } finally {
      // Unless a newer start has taken the pick over meanwhile.
      if (this.asked === last) this.close();
    }
  }

  /** Ends the pick if it waits between steps (the session stopped after the task step), not while the user is choosing. */
  closeIfWaiting(): void {
    if (this.qp?.busy) this.close();
  }

  close(): void {
    this.qp?.dispose();
    this.qp = undefined;
  }

  dispose(): void {
    this.close();
  }

  /** Shows one step in the (reused) quick pick; undefined when the user cancelled it. */
  private ask(s: Step): Promise<Item | undefined> {
    if (!this.qp) {
      const qp = vscode.window.createQuickPick<Item>();
      // Clicking elsewhere (the score view, an editor) must not close it silently.
      qp.ignoreFocusOut = true;
      qp.matchOnDescription = true;
      this.qp = qp;
    }
    const qp = this.qp;
    Object.assign(qp, {
      title: s.title,
      step: s.step,
      totalSteps: s.totalSteps,
      placeholder: s.placeholder,
      matchOnDetail: !!s.matchOnDetail,
      value: '',
      items: s.items,
      busy: false,
      enabled: true,
    });
    this.pending?.();
    this.asked++;
    return new Promise((resolve) => {
      const settle = (item: Item | undefined) => {
        for (const d of subs) d.dispose();
        if (this.pending === cancel) this.pending = undefined;
        resolve(item);
      };
      const cancel = () => settle(undefined);
      const subs = [
        qp.onDidAccept(() => {
          const picked = qp.selectedItems[0];
          if (!picked) return;
          // Stays up, busy, until the next step or close().
          qp.busy = true;
          qp.enabled = false;
          settle(picked);
        }),
        qp.onDidHide(() => {
          if (this.qp === qp) this.qp = undefined;
          qp.dispose();
          cancel();
        }),
      ];
      this.pending = cancel;
      qp.show();
    });
  }
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
    prompt: pick.reason === 'other' ? 'Say why (required)' : 'Anything to add? (optional)',
    validateInput: (v) => (pick.reason === 'other' && !v.trim() ? 'Please say why.' : undefined),
    ignoreFocusOut: true,
  });
  if (note === undefined) return undefined;
  return { reason: pick.reason, note: note.trim() };
}

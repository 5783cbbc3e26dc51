// "Label": difficulty 1–3, tags from the configured taxonomy, confidence 1–5 and a note, for a
// task or a demonstration; keyboard-first (typing a digit picks it at once). Saved as an
// append-only label record.
import * as vscode from 'vscode';
import { DatasetStore } from '../../store/datasetStore';
import { labelTargetKey, type LabelRecord, type LabelTarget } from '../../store/records';
import type { ForgeContext } from '../context';
import { CONFIDENCE_CHOICES, DIFFICULTY_CHOICES, LabelArgsSchema, labelInput, targetTitle, type Choice } from './core/labelForm';
import { refusal, type CommandResult } from '../commandArgs';
import type { ReviewController } from './reviewMode';

/** A single-choice quick pick where typing an item's key (its label) selects it immediately. */
function pickWithAccelerators<T>(
  title: string,
  choices: ReadonlyArray<Choice<T>>,
  step: number,
  total: number,
  current?: T,
): Promise<T | undefined> {
  return new Promise((resolve) => {
    const qp = vscode.window.createQuickPick<vscode.QuickPickItem & { value: T }>();
    qp.ignoreFocusOut = true;
    qp.title = title;
    qp.step = step;
    qp.totalSteps = total;
    qp.placeholder = `Type ${choices.map((c) => c.label).join('/')} to choose`;
    qp.items = choices.map((c) => ({ label: c.label, description: c.description, value: c.value }));
    const active = qp.items.find((i) => i.value === current);
    if (active) qp.activeItems = [active];
    let done = false;
    const finish = (v: T | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidChangeValue((v) => {
      const hit = qp.items.find((i) => i.label === v.trim());
      if (hit) finish(hit.value);
    });
    qp.onDidAccept(() => finish(qp.selectedItems[0]?.value ?? qp.activeItems[0]?.value));
    qp.onDidHide(() => finish(undefined));
    qp.show();
  });
}

async function pickTags(tags: readonly string[], preselected: readonly string[]): Promise<string[] | undefined> {
  const items = tags.map((t) => ({ label: t, picked: preselected.includes(t) }));
  const picked = await vscode.window.showQuickPick(items, {
    ignoreFocusOut: true,
    title: 'Label: tags (Space toggles, Enter confirms)',
    canPickMany: true,
    placeHolder: 'forgeenv.labels.tags',
  });
  return picked?.map((p) => p.label);
}

async function chooseTarget(forge: ForgeContext, dir: string): Promise<{ target: LabelTarget; title: string } | undefined> {
  const items: Array<vscode.QuickPickItem & { kind2: 'task' | 'demo' }> = [
    { label: '$(tasklist) A task…', kind2: 'task' },
    { label: '$(file-code) A demonstration…', description: dir, kind2: 'demo' },
  ];
  const which = await vscode.window.showQuickPick(items, { ignoreFocusOut: true, title: 'Label what?' });
  if (!which) return undefined;
  if (which.kind2 === 'task') {
    const tasks = forge.tasks().all;
    const t = await vscode.window.showQuickPick(
      tasks.map((task) => ({ label: task.task_id, description: `${task.difficulty} · ${task.category}`, detail: task.description })),
      { ignoreFocusOut: true, title: 'Label a task', matchOnDescription: true, matchOnDetail: true },
    );
    return t ? { target: { type: 'task', task_id: t.label }, title: `task ${t.label}` } : undefined;
  }
  const snap = await new DatasetStore(dir).readAll();
  const d = await vscode.window.showQuickPick(
    snap.demonstrations.current.map((r) => ({
      label: `${r.task_id} · ${r.primitive_type}`,
      description: `${r.success ? 'success' : 'failed'} · ${r.info.annotator_id} · ${r.info.submitted_at}`,
      id: r.info.record_id,
    })),
    { ignoreFocusOut: true, title: 'Label a demonstration', matchOnDescription: true },
  );
  return d ? { target: { type: 'demonstration', record_id: d.id }, title: d.label } : undefined;
}

export async function labelCommand(
  forge: ForgeContext,
  review: ReviewController,
  rawArgs: unknown,
): Promise<CommandResult<{ label: LabelRecord; dir: string }>> {
  const parsed = LabelArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Label: ${parsed.error.message}`);
  const args = parsed.data;
  const dir = args.dataset ?? review.state?.dir ?? forge.datasetDir();
  let target = args.target;
  let title = target ? targetTitle(target) : '';
  if (!target) {
    const item = review.current();
    if (item) {
      target = { type: 'demonstration', record_id: item.record.info.record_id };
      title = `${item.record.task_id} · ${item.record.primitive_type}`;
    } else {
      const chosen = await chooseTarget(forge, dir);
      if (!chosen) return refusal('cancelled', 'Nothing chosen to label.');
      ({ target, title } = chosen);
    }
  }
  const store = new DatasetStore(dir);
  // Start from the latest label of this target, so relabeling is a quick confirm.
  const previous = (await store.readAll()).labels.latest.get(labelTargetKey(target));
  const interactive = args.difficulty === undefined || args.tags === undefined || args.confidence === undefined;
  const total = 4;
  const difficulty =
    args.difficulty ?? (await pickWithAccelerators(`Label ${title}: difficulty`, DIFFICULTY_CHOICES, 1, total, previous?.difficulty));
  if (difficulty === undefined) return refusal('cancelled', 'Label cancelled.');
  const tags = args.tags ?? (await pickTags(forge.labelTags(), previous?.tags ?? []));
  if (tags === undefined) return refusal('cancelled', 'Label cancelled.');
  const confidence =
    args.confidence ?? (await pickWithAccelerators(`Label ${title}: confidence`, CONFIDENCE_CHOICES, 3, total, previous?.confidence));
  if (confidence === undefined) return refusal('cancelled', 'Label cancelled.');
  let note = args.note;
  if (note === undefined) {
    note = interactive
      ? await vscode.window.showInputBox({
          title: `Label ${title}: note (optional, Enter to save)`,
          value: previous?.note ?? '',
          ignoreFocusOut: true,
        })
      : '';
    if (note === undefined) return refusal('cancelled', 'Label cancelled.');
  }
  let input;
  try {
    input = labelInput({ target, difficulty, tags, confidence, note, labeler: forge.annotatorId() });
  } catch (e) {
    return refusal('invalid_args', (e as Error).message);
  }
  const rec = await store.appendLabel(input);
  if (review.state?.dir === dir) await review.reload();
  if (interactive)
    void vscode.window.setStatusBarMessage(`ForgeEnv: labeled ${title} (difficulty ${rec.difficulty}, confidence ${rec.confidence})`, 4000);
  return { ok: true, label: rec, dir };
}

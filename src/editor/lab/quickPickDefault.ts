// A single-choice quick pick whose highlighted item is the proposed answer, so Enter saves what the
// user sees highlighted. (showQuickPick's `picked` only ticks items of a multi-select pick, and its
// placeholder names a value while Enter takes the first item.)
import * as vscode from 'vscode';

/** Told each time a question opens: its title, the highlighted item's label and every item (tests wait on it). */
export type QuestionListener = (q: { title: string; active: string | undefined; items: Array<{ label: string; detail?: string }> }) => void;

export function pickWithDefault<T extends vscode.QuickPickItem>(
  items: readonly T[],
  active: T | undefined,
  o: { title: string; placeholder?: string; onQuestion?: QuestionListener },
): Promise<T | undefined> {
  const qp = vscode.window.createQuickPick<T>();
  qp.title = o.title;
  qp.placeholder = o.placeholder;
  qp.ignoreFocusOut = true;
  qp.matchOnDescription = true;
  qp.items = items;
  if (active) qp.activeItems = [active];
  return new Promise<T | undefined>((resolve) => {
    let done = false;
    const finish = (v: T | undefined) => {
      if (done) return;
      done = true;
      resolve(v);
      qp.dispose();
    };
    qp.onDidAccept(() => finish(qp.selectedItems[0] ?? qp.activeItems[0]));
    qp.onDidHide(() => finish(undefined));
    qp.show();
    // Again once shown: showing may reset the active item to the first one.
    if (active) qp.activeItems = [active];
    o.onQuestion?.({
      title: o.title,
      active: active?.label,
      items: items.map((i) => ({ label: i.label, ...(i.detail ? { detail: i.detail } : {}) })),
    });
  });
}

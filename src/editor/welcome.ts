// First start: the walkthrough opens once per user profile, beside whatever the workbench opened at
// start-up (the demo's README, see scripts/start.sh), so a newcomer sees what to do without Help > Welcome.
import * as vscode from 'vscode';

export const WALKTHROUGH_ID = 'forgeenv.forgeenv-studio#gettingStarted';
/** globalState key: the walkthrough was opened once (by this hook, not by the user). */
export const WELCOME_SHOWN_KEY = 'forgeenv.welcomeShown';
/** How long to wait for the start-up editors (restored ones, the README) before opening anyway. */
const SETTLE_MS = 4000;
/** The walkthrough page's own delayed focus is 250 ms (VS Code 1.139); give it back after that. */
const FOCUS_BACK_MS = 600;

/** Opens the walkthrough on the first activation in this profile; never when VS Code runs the tests. */
export function showWelcomeOnFirstStart(context: vscode.ExtensionContext): void {
  if (context.extensionMode === vscode.ExtensionMode.Test) return;
  void openOnce(context.globalState).catch(() => undefined); // a missing walkthrough must not break activation
}

/** Exported for the integration test, which calls it with the real globalState. */
export async function openOnce(state: vscode.Memento, settleMs = SETTLE_MS): Promise<boolean> {
  if (state.get<boolean>(WELCOME_SHOWN_KEY)) return false;
  // Flag first: a window reload while the page opens must not open it a second time.
  await state.update(WELCOME_SHOWN_KEY, true);
  // The workbench opens its start-up editor (the README) only when no editor is active yet, and the
  // extension may activate before that: wait for the first tab so both end up open, side by side.
  await firstTab(settleMs);
  const beside = vscode.window.tabGroups.all.some((g) => g.tabs.length > 0);
  await vscode.commands.executeCommand('workbench.action.openWalkthrough', WALKTHROUGH_ID, { toSide: beside });
  if (beside) {
    // The walkthrough page focuses its first step a moment after it is built; left focused, it takes
    // focus back after the Command Palette closes and the episode's quick picks close with it.
    await new Promise((r) => setTimeout(r, FOCUS_BACK_MS));
    await vscode.commands.executeCommand('workbench.action.focusFirstEditorGroup');
  }
  return true;
}

function firstTab(ms: number): Promise<void> {
  if (vscode.window.tabGroups.all.some((g) => g.tabs.length > 0)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const timer = setTimeout(done, ms);
    const sub = vscode.window.tabGroups.onDidChangeTabs(done);
  });
}

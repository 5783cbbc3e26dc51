// The score view (and on the first start the walkthrough) sits beside the script; VS Code splits
// the editor area evenly, which leaves the script ~40 columns in a laptop-sized window. When the
// window holds just those two columns, the script gets the larger share. Any other arrangement (more groups, stacked groups) is the user's
// and is left alone.
import * as vscode from 'vscode';
import { z } from 'zod';

/** The script column's share of the editor area's width when the score view sits beside it. */
export const SCRIPT_SHARE = 0.64;

const LayoutSchema = z.object({
  orientation: z.number(),
  groups: z.array(z.object({ groups: z.array(z.unknown()).optional(), size: z.number().optional() })),
});

/** Call right after the score panel was created beside the active editor. */
export async function widenScriptBeside(panel: vscode.WebviewPanel): Promise<void> {
  if (panel.viewColumn === undefined) await firstViewState(panel);
  if (panel.viewColumn === vscode.ViewColumn.Two) await widenFirstColumn();
}

/** Call after the episode's script opened: the walkthrough (or anything else) beside it gets the smaller share. */
export async function widenScriptColumn(): Promise<void> {
  if (vscode.window.activeTextEditor?.viewColumn === vscode.ViewColumn.One) await widenFirstColumn();
}

async function widenFirstColumn(): Promise<void> {
  const layout = LayoutSchema.safeParse(await vscode.commands.executeCommand('vscode.getEditorLayout'));
  // orientation 0: groups side by side (horizontal); nested groups mean a layout the user made.
  if (!layout.success || layout.data.orientation !== 0 || layout.data.groups.length !== 2 || layout.data.groups.some((g) => g.groups))
    return;
  await vscode.commands.executeCommand('vscode.setEditorLayout', {
    orientation: 0,
    groups: [{ size: SCRIPT_SHARE }, { size: 1 - SCRIPT_SHARE }],
  });
}

function firstViewState(panel: vscode.WebviewPanel): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      sub.dispose();
      resolve();
    };
    const timer = setTimeout(done, 2000);
    const sub = panel.onDidChangeViewState(done);
  });
}

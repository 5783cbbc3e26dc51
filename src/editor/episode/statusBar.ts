// The status bar item: episode state, task, active time and last reward; a click runs & scores
// (or starts an episode when none is open).
import * as vscode from 'vscode';
import { formatElapsed } from './activeTime';

export type StatusState =
  | { kind: 'idle' }
  | { kind: 'starting' }
  | { kind: 'active'; taskId: string; activeMs: number; lastReward: number | null; runs: number; primitive: string; counting: boolean }
  | { kind: 'running'; taskId: string; activeMs: number; what: string };

export class EpisodeStatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('forgeenv.status', vscode.StatusBarAlignment.Left, 50);

  constructor() {
    this.item.name = 'ForgeEnv Episode';
    this.update({ kind: 'idle' });
    this.item.show();
  }

  update(s: StatusState): void {
    const item = this.item;
    item.backgroundColor = undefined;
    switch (s.kind) {
      case 'idle':
        item.text = '$(debug-start) ForgeEnv';
        item.tooltip = 'ForgeEnv: no episode open. Click to start one.';
        item.command = 'forgeenv.startEpisode';
        item.accessibilityInformation = { label: 'ForgeEnv: no episode open; activate to start one' };
        return;
      case 'starting':
        item.text = '$(sync~spin) ForgeEnv: starting…';
        item.tooltip = 'ForgeEnv is breaking the script and running it once.';
        item.command = undefined;
        item.accessibilityInformation = { label: 'ForgeEnv: starting an episode' };
        return;
      case 'running':
        item.text = `$(sync~spin) ${s.taskId} · ${s.what}…`;
        item.tooltip = `ForgeEnv: ${s.what} train.py of ${s.taskId}`;
        item.command = undefined;
        item.accessibilityInformation = { label: `ForgeEnv: ${s.what} ${s.taskId}` };
        return;
      case 'active': {
        const reward = s.lastReward === null ? 'not scored' : s.lastReward.toFixed(2);
        item.text = `$(beaker) ${s.taskId} · ${formatElapsed(s.activeMs)}${s.counting ? '' : ' $(debug-pause)'} · ${reward}`;
        const md = new vscode.MarkdownString(
          `**ForgeEnv episode**\n\n` +
            `- Task: \`${s.taskId}\`\n- Breakage: \`${s.primitive}\`\n- Active time: ${formatElapsed(s.activeMs)}${s.counting ? '' : ' (paused: idle or editor not focused)'}\n` +
            `- Runs: ${s.runs}\n- Last reward: ${reward}\n\n` +
            `[Run & Score](command:forgeenv.runAndScore) · [Submit](command:forgeenv.submitEpisode) · [Skip](command:forgeenv.skipEpisode)`,
        );
        md.isTrusted = { enabledCommands: ['forgeenv.runAndScore', 'forgeenv.submitEpisode', 'forgeenv.skipEpisode'] };
        item.tooltip = md;
        item.command = { command: 'forgeenv.runAndScore', title: 'Run & Score' };
        item.accessibilityInformation = {
          label: `ForgeEnv episode ${s.taskId}, active ${formatElapsed(s.activeMs)}, last reward ${reward}; activate to run and score`,
        };
        return;
      }
    }
  }

  dispose(): void {
    this.item.dispose();
  }
}

// "Choose Interpreter and Execution Mode…": the walkthrough's first step, and the fix offered
// when the interpreter cannot run. Settings go to the user (global) scope.
import * as vscode from 'vscode';
import { probeInterpreter } from '../env/executor';
import { ConfigureArgsSchema, refusal, type CommandResult } from './commandArgs';
import { readSettings } from './settings';

export async function configureExecution(rawArgs?: unknown): Promise<CommandResult<{ mode: string; pythonPath: string }>> {
  const config = vscode.workspace.getConfiguration('forgeenv');
  const target = vscode.ConfigurationTarget.Global;
  const result = () => {
    const s = readSettings().settings;
    return { ok: true as const, mode: s.executionMode, pythonPath: s.pythonPath };
  };
  if (rawArgs !== undefined) {
    const parsed = ConfigureArgsSchema.safeParse(rawArgs);
    if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Choose Interpreter and Execution Mode: ${parsed.error.message}`);
    if (parsed.data.mode !== undefined) await config.update('executionMode', parsed.data.mode, target);
    if (parsed.data.pythonPath !== undefined) await config.update('pythonPath', parsed.data.pythonPath || undefined, target);
    return result();
  }
  const current = readSettings().settings;
  const mode = await vscode.window.showQuickPick(
    [
      { label: 'simulated', description: current.executionMode === 'simulated' ? 'current' : '', detail: "ForgeEnv's stand-in libraries for the episode's version snapshot: needs only Python 3, deterministic scoring" },
      { label: 'real', description: current.executionMode === 'real' ? 'current' : '', detail: 'The libraries installed in your interpreter (transformers, datasets, trl, torch…)' },
    ],
    { ignoreFocusOut: true, title: 'ForgeEnv (1/2): execution mode' },
  );
  if (!mode) return refusal('cancelled', 'Cancelled.');
  await config.update('executionMode', mode.label, target);
  const hasPythonExt = !!vscode.extensions.getExtension('ms-python.python');
  type Item = vscode.QuickPickItem & { id: 'ext' | 'path' | 'default' };
  const items: Item[] = [
    ...(hasPythonExt ? [{ id: 'ext' as const, label: "$(python) Use the Python extension's interpreter", detail: 'Follows the interpreter you select with Python: Select Interpreter' }] : []),
    { id: 'path', label: '$(file) Enter an interpreter path…' },
    { id: 'default', label: '$(terminal) python3 on PATH', detail: hasPythonExt ? undefined : 'The Python extension is not installed' },
  ];
  const which = await vscode.window.showQuickPick(items, { ignoreFocusOut: true, title: 'ForgeEnv (2/2): Python interpreter', placeHolder: current.pythonPath ? `current: ${current.pythonPath}` : 'current: automatic' });
  if (!which) return refusal('cancelled', 'Cancelled.');
  if (which.id === 'ext') {
    await config.update('pythonPath', undefined, target);
    await vscode.commands.executeCommand('python.setInterpreter').then(undefined, () => undefined);
  } else if (which.id === 'default') await config.update('pythonPath', 'python3', target);
  else {
    const path = (await vscode.window.showInputBox({ title: 'ForgeEnv: Python interpreter', prompt: 'Absolute path of the python executable', value: current.pythonPath, ignoreFocusOut: true }))?.trim();
    if (!path) return refusal('cancelled', 'Cancelled.');
    const probe = await probeInterpreter(path);
    if (!probe.ok) {
      const message = `ForgeEnv: "${path}" is not a usable Python: ${probe.error}`;
      void vscode.window.showErrorMessage(message);
      return refusal('error', message);
    }
    await config.update('pythonPath', path, target);
    void vscode.window.showInformationMessage(`ForgeEnv will use ${probe.version} (${path}).`);
  }
  return result();
}

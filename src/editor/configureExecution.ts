// "Choose Interpreter and Execution Mode…": the walkthrough's first step, and the fix offered
// when the interpreter cannot run. Settings go to the user (global) scope.
import * as vscode from 'vscode';
import { probeInterpreter } from '../env/run/executor';
import { probeLibraries } from '../env/run/realMode';
import { CORPUS_SNAPSHOT } from '../env/snapshots/versions';
import { pickWithDefault, type QuestionListener } from './lab/quickPickDefault';
import { ConfigureArgsSchema, refusal, type CommandResult } from './commandArgs';
import { readSettings } from './settings';

export async function configureExecution(
  rawArgs?: unknown,
  onQuestion?: QuestionListener,
): Promise<CommandResult<{ mode: string; pythonPath: string }>> {
  const config = vscode.workspace.getConfiguration('forgeenv');
  const target = vscode.ConfigurationTarget.Global;
  const result = () => {
    const s = readSettings().settings;
    return { ok: true as const, mode: s.executionMode, pythonPath: s.pythonPath };
  };
  if (rawArgs !== undefined) {
    const parsed = ConfigureArgsSchema.safeParse(rawArgs);
    if (!parsed.success)
      return refusal('invalid_args', `Invalid arguments for ForgeEnv: Choose Interpreter and Execution Mode: ${parsed.error.message}`);
    if (parsed.data.mode !== undefined) await config.update('executionMode', parsed.data.mode, target);
    if (parsed.data.pythonPath !== undefined) await config.update('pythonPath', parsed.data.pythonPath || undefined, target);
    return result();
  }
  const current = readSettings().settings;
  const modes = [
    {
      label: 'simulated',
      description: current.executionMode === 'simulated' ? 'current' : '',
      detail: "ForgeEnv's stand-in libraries for the episode's version snapshot: needs only Python 3, deterministic scoring",
    },
    {
      label: 'real',
      description: current.executionMode === 'real' ? 'current' : '',
      detail: "The real pinned releases (transformers, datasets, trl, torch…), in the snapshot's managed environment or your interpreter",
    },
  ];
  // The current mode is highlighted: Enter keeps it.
  const mode = await pickWithDefault(
    modes,
    modes.find((m) => m.label === current.executionMode),
    { title: 'ForgeEnv (1/2): execution mode', onQuestion },
  );
  if (!mode) return refusal('cancelled', 'Cancelled.');
  await config.update('executionMode', mode.label, target);
  if (mode.label === 'real') return chooseRealInterpreter(current.pythonPath, result, onQuestion);
  const hasPythonExt = !!vscode.extensions.getExtension('ms-python.python');
  type Item = vscode.QuickPickItem & { id: 'ext' | 'path' | 'default' };
  const items: Item[] = [
    ...(hasPythonExt
      ? [
          {
            id: 'ext' as const,
            label: "$(python) Use the Python extension's interpreter",
            detail: 'Follows the interpreter you select with Python: Select Interpreter',
          },
        ]
      : []),
    { id: 'path', label: '$(file) Enter an interpreter path…' },
    { id: 'default', label: '$(terminal) python3 on PATH', detail: hasPythonExt ? undefined : 'The Python extension is not installed' },
  ];
  const which = await vscode.window.showQuickPick(items, {
    ignoreFocusOut: true,
    title: 'ForgeEnv (2/2): Python interpreter',
    placeHolder: current.pythonPath ? `current: ${current.pythonPath}` : 'current: automatic',
  });
  if (!which) return refusal('cancelled', 'Cancelled.');
  if (which.id === 'ext') {
    await config.update('pythonPath', undefined, target);
    await vscode.commands.executeCommand('python.setInterpreter').then(undefined, () => undefined);
  } else if (which.id === 'default') await config.update('pythonPath', 'python3', target);
  else {
    const path = await askPath(current.pythonPath);
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

async function askPath(current: string): Promise<string | undefined> {
  return (
    (
      await vscode.window.showInputBox({
        title: 'ForgeEnv: Python interpreter',
        prompt: 'Absolute path of the python executable',
        value: current,
        ignoreFocusOut: true,
      })
    )?.trim() || undefined
  );
}

/** What `interpreter` lacks for real mode, in words; undefined when it has every required library. */
export async function realModeShortfall(interpreter: string): Promise<string | undefined> {
  const probe = await probeLibraries(interpreter);
  if (!probe.ok) return probe.error;
  return probe.missing.length ? `cannot import ${probe.missing.join(', ')}` : undefined;
}

/**
 * Real mode's interpreter: the snapshot's managed environment (no interpreter set; the default),
 * or one the user names, probed for the real libraries first so `python3` without transformers
 * never looks right. The Python extension's interpreter is not offered: real mode without
 * forgeenv.pythonPath always runs the managed environment.
 */
async function chooseRealInterpreter<R>(
  currentPath: string,
  result: () => R,
  onQuestion?: QuestionListener,
): Promise<R | ReturnType<typeof refusal>> {
  const config = vscode.workspace.getConfiguration('forgeenv');
  const target = vscode.ConfigurationTarget.Global;
  const onPath = await realModeShortfall('python3');
  type Item = vscode.QuickPickItem & { id: 'managed' | 'path' | 'default' };
  const managed: Item = {
    id: 'managed',
    label: `$(package) The managed environment of snapshot ${CORPUS_SNAPSHOT} (and of each task's own snapshot)`,
    description: currentPath ? 'recommended' : 'current · recommended',
    detail: "ForgeEnv builds each snapshot's pinned releases once (~/.cache/forgeenv/venvs) and runs there; no interpreter is set",
  };
  const items: Item[] = [
    managed,
    {
      id: 'path',
      label: '$(file) Enter an interpreter path…',
      detail: 'It must have the real libraries installed (torch, transformers, datasets, …)',
    },
    {
      id: 'default',
      label: `${onPath ? '$(warning)' : '$(terminal)'} python3 on PATH`,
      description: currentPath === 'python3' ? 'current' : undefined,
      detail: onPath ? `Not usable for real mode: ${onPath}` : 'Has the real libraries',
    },
  ];
  const which = await pickWithDefault(items, managed, {
    title: 'ForgeEnv (2/2): Python for real mode',
    placeholder: currentPath ? `current: ${currentPath}` : 'current: the managed environment',
    onQuestion,
  });
  if (!which) return refusal('cancelled', 'Cancelled.');
  if (which.id === 'managed') {
    await config.update('pythonPath', undefined, target);
    return result();
  }
  const path = which.id === 'default' ? 'python3' : await askPath(currentPath);
  if (!path) return refusal('cancelled', 'Cancelled.');
  const shortfall = which.id === 'default' ? onPath : await realModeShortfall(path);
  if (shortfall) {
    const useManaged = 'Use the Managed Environment';
    const choice = await vscode.window.showWarningMessage(
      `${path} ${shortfall}: real mode cannot run training scripts with it.`,
      {
        modal: true,
        detail: `Install them there, or let ForgeEnv use the managed environment of the task's snapshot (it needs no interpreter setting).`,
      },
      useManaged,
      'Use It Anyway',
    );
    if (!choice) return refusal('cancelled', 'Cancelled.');
    await config.update('pythonPath', choice === useManaged ? undefined : path, target);
    return result();
  }
  await config.update('pythonPath', path, target);
  return result();
}

// The one place the editor turns `forgeenv.*` settings into an embedded environment: episodes,
// resumed episodes, revisions and Rescore Dataset all build theirs here, so a setting that
// affects runs (timeouts, caps, the sandbox, the diff limit, warm runtime, model architectures)
// reaches every one of them. No vscode import: unit tests check it against the setting list.
import { ForgeEnvironment } from '../env/episode/environment';
import type { EnvironmentConfigInput } from '../env/episode/episodeTypes';
import type { ExecutionMode } from '../env/schemas';
import type { TaskSampler } from '../env/tasks/tasks';
import type { SandboxOptions } from '../env/sandbox/options';
import type { TeacherStore } from '../env/episode/teacher';
import { sandboxOptionsOf, type ForgeSettings, type SettingKey } from './settingsSchema';

export interface EnvironmentChoice {
  mode: ExecutionMode;
  /** Undefined: real mode's managed snapshot venv. */
  interpreter: string | undefined;
  /** Task folders, already resolved against the workspace. */
  taskDirs: string[];
}

export interface EnvironmentDeps {
  tasks?: TaskSampler;
  teacherStore?: TeacherStore;
  /** Real mode reports the minutes-long first build of its venv and local hub. */
  onProgress?: (message: string) => void;
}

/**
 * Settings that change how a run behaves, each read here and nowhere else. Every other setting is
 * listed in `NOT_RUN_SETTINGS` with the reason; a unit test fails on a setting in neither list.
 */
export const RUN_SETTINGS = [
  'runTimeoutSeconds',
  'outputCapKiB',
  'maxDiffBytes',
  'warmRuntime',
  'real.modelArchitectures',
  'sandbox.mode',
  'sandbox.allowNetwork',
  'sandbox.passEnv',
  'sandbox.cpuSeconds',
  'sandbox.addressSpaceMiB',
  'sandbox.fileSizeMiB',
  'sandbox.processes',
  'sandbox.diskMiB',
] as const satisfies readonly SettingKey[];

/** Settings that reach runs through `EnvironmentChoice` or do not concern the environment at all. */
export const NOT_RUN_SETTINGS = {
  pythonPath: 'resolved into EnvironmentChoice.interpreter (interpreterForMode)',
  executionMode: 'EnvironmentChoice.mode (a revision keeps its record’s mode)',
  taskFolders: 'resolved against the workspace into EnvironmentChoice.taskDirs',
  datasetFolder: 'where demonstrations are stored',
  episodesFolder: 'where episode scripts are opened',
  annotatorId: 'recorded in demonstrations',
  backend: 'embedded or remote: chooses whether an environment is built here at all',
  remoteUrl: 'the remote backend',
  remoteToken: 'the remote backend',
  idleThresholdSeconds: 'active-time tracking in the editor',
  migrationHints: 'what the observation shows, passed per episode',
  'model.endpoint': 'Suggest Repair asks this model; its proposal is scored like any repair',
  'model.name': 'Suggest Repair',
  'model.temperature': 'Suggest Repair',
  'model.maxTokens': 'Suggest Repair',
  'model.requestTimeoutSeconds': 'Suggest Repair',
} as const satisfies Partial<Record<SettingKey, string>>;

/** Real mode without an explicit forgeenv.pythonPath runs the snapshot's managed venv (built on first use). */
export function interpreterForMode(mode: ExecutionMode, resolved: { interpreter: string; source: string }): string | undefined {
  return mode === 'real' && resolved.source !== 'setting' ? undefined : resolved.interpreter;
}

/** What a single script run outside an episode takes (the lab, Make Task): the same limits and sandbox. */
export function scriptRunOptionsFrom(settings: ForgeSettings): {
  timeoutMs: number;
  outputCapBytes: number;
  sandbox: SandboxOptions;
  warm: boolean;
} {
  return {
    timeoutMs: settings.runTimeoutSeconds * 1000,
    outputCapBytes: settings.outputCapKiB * 1024,
    sandbox: sandboxOptionsOf(settings),
    warm: settings.warmRuntime,
  };
}

export function environmentConfigFrom(settings: ForgeSettings, choice: EnvironmentChoice): EnvironmentConfigInput {
  return {
    mode: choice.mode,
    interpreter: choice.interpreter,
    taskDirs: choice.taskDirs,
    ...scriptRunOptionsFrom(settings),
    maxDiffBytes: settings.maxDiffBytes,
    modelArchitectures: settings['real.modelArchitectures'],
  };
}

export function environmentFrom(settings: ForgeSettings, choice: EnvironmentChoice, deps: EnvironmentDeps = {}): ForgeEnvironment {
  return new ForgeEnvironment(environmentConfigFrom(settings, choice), deps);
}

/**
 * One environment per execution mode, built from the settings on first use: replaying records of
 * either mode (Rescore Dataset, the trl-dpo export). `dispose()` ends every one it built.
 */
export function environmentsByMode(
  settings: ForgeSettings,
  resolved: { interpreter: string; source: string },
  taskDirs: string[],
): { envFor: (mode: ExecutionMode) => ForgeEnvironment; dispose: () => Promise<void> } {
  const envs = new Map<ExecutionMode, ForgeEnvironment>();
  return {
    envFor: (mode) => {
      let env = envs.get(mode);
      if (!env) {
        env = environmentFrom(settings, { mode, interpreter: interpreterForMode(mode, resolved), taskDirs });
        envs.set(mode, env);
      }
      return env;
    },
    dispose: async () => {
      for (const env of envs.values()) await env.dispose();
    },
  };
}

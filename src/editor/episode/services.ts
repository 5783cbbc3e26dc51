// What the repair session needs from the rest of the extension, as plain functions and objects
// (settings, the task corpus, where things are stored, the write queue), so session.ts stays
// free of vscode and a unit test can hand it its own.
import type { TaskSampler } from '../../env/tasks/tasks';
import type { TeacherStore } from '../../env/episode/teacher';
import type { ForgeSettings } from '../settingsSchema';
import type { KeyValueStore, PendingWrites, WriteOutcome } from './pendingWrites';

export interface SessionLog {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface SessionServices {
  settings(): ForgeSettings;
  tasks(): TaskSampler;
  /** forgeenv.taskFolders resolved against the workspace. */
  taskDirs(): string[];
  datasetDir(): string;
  episodesDir(): string;
  /** Where the open episode is persisted (VS Code's workspaceState). */
  state: KeyValueStore;
  /** Records wait here until they are in the dataset: nothing is lost when a write fails. */
  pending: PendingWrites;
  reportWriteFailure(outcome: Extract<WriteOutcome, { ok: false }>): void;
  /** The task queue view: its next task, and a refresh when a record changed it. */
  queue: { nextTaskId(): Promise<string | undefined>; refresh(): void };
  resolveInterpreter(settings: ForgeSettings): Promise<{ interpreter: string; source: 'setting' | 'python-extension' | 'default' }>;
  probeInterpreter(interpreter: string): Promise<{ ok: true } | { ok: false; error: string }>;
  teacherStore(): TeacherStore;
  /** Runs an editor command (the actions offered in messages). */
  command(id: string, ...args: unknown[]): void;
  /** Shown once per window when runs fall back to weaker isolation. */
  sandboxWarning(text: string | undefined): void;
  log: SessionLog;
  sessionId: string;
  extensionVersion: string;
  client: { app: string; vscode_version: string; ui_kind: 'web' | 'desktop' };
}

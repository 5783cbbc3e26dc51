// Which environment an episode runs in, from the settings: the embedded ForgeEnvironment (in this
// process) or a remote OpenEnv server. Used to start an episode and to resume a saved one.
import { EmbeddedEpisodeSession, type EpisodeSession } from '../../env/episode/episodeSession';
import { RemoteEpisodeSession } from '../../env/openenv/remoteEpisodeSession';
import type { ExecutionMode } from '../../env/schemas';
import type { TaskSampler } from '../../env/tasks/tasks';
import type { TeacherStore } from '../../env/episode/teacher';
import { environmentFrom } from '../environmentFactory';
import { remoteTokenOf, type ForgeSettings } from '../settingsSchema';
import type { EpisodeBackend } from './episodeRecord';

export interface BackendOptions {
  settings: ForgeSettings;
  tasks: TaskSampler;
  mode: ExecutionMode;
  /** Undefined: real mode's managed snapshot venv. */
  interpreter: string | undefined;
  /** forgeenv.taskFolders resolved against the workspace. */
  taskDirs: string[];
  teacherStore?: TeacherStore;
  /** Real mode reports the minutes-long first build of its venv and local hub. */
  onProgress?: (message: string) => void;
}

export function createBackend(backend: EpisodeBackend, o: BackendOptions): EpisodeSession {
  if (backend.kind === 'remote') return new RemoteEpisodeSession(backend.url, { tasks: o.tasks, token: remoteTokenOf(o.settings) });
  const env = environmentFrom(
    o.settings,
    { mode: o.mode, interpreter: o.interpreter, taskDirs: o.taskDirs },
    { tasks: o.tasks, teacherStore: o.teacherStore, onProgress: o.onProgress },
  );
  return new EmbeddedEpisodeSession(env);
}

// Starting an episode once the task and breakage are chosen: check the interpreter, create the
// environment, break the script and run it once (with progress and cancel), and write train.py
// into a fresh episode folder. Returns what the session persists, or why nothing started.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { EpisodeSession } from '../../env/episode/episodeSession';
import { startHumanEpisode, type HumanEpisodeStart } from '../../env/episode/humanEpisode';
import { snapshotIdForVersions } from '../../env/run/realMode';
import { isCancelledRemoteError } from '../../env/openenv/remoteEpisodeSession';
import { interpreterLabel } from '../../env/run/interpreterLabel';
import type { LibraryVersions, Task } from '../../env/schemas';
import { snapshotVersions } from '../../env/snapshots/versions';
import { refusal, type Refusal, type StartArgs } from '../commandArgs';
import { createBackend } from './backend';
import { interpreterForMode } from '../environmentFactory';
import type { Action, EpisodeEditor } from './editorPort';
import type { PersistedEpisode } from './episodeRecord';
import type { PrimitiveChoice } from '../commandArgs';
import type { SessionServices } from './services';

export type Fail = (message: string, detail?: unknown, ...actions: Action[]) => Refusal;

export interface OpenedEpisode {
  env: EpisodeSession;
  start: HumanEpisodeStart;
  persisted: PersistedEpisode;
}

export async function openEpisode(
  editor: EpisodeEditor,
  s: SessionServices,
  fail: Fail,
  what: { task: Task | undefined; primitive: PrimitiveChoice | undefined; args: StartArgs | undefined },
): Promise<OpenedEpisode | Refusal> {
  const settings = s.settings();
  const remote = settings.backend === 'remote';
  let libraryVersions: LibraryVersions | undefined;
  try {
    libraryVersions = what.args?.snapshot === undefined ? undefined : snapshotVersions(what.args.snapshot);
  } catch (e) {
    return fail(`ForgeEnv cannot start the episode: ${(e as Error).message}`);
  }
  const resolved = await s.resolveInterpreter(settings);
  const interpreter = interpreterForMode(settings.executionMode, resolved);
  // A remote server runs the scripts with its own Python: none is needed here.
  const probe = interpreter === undefined || remote ? { ok: true as const } : await s.probeInterpreter(interpreter);
  if (!probe.ok) {
    const from =
      resolved.source === 'setting'
        ? 'forgeenv.pythonPath'
        : resolved.source === 'python-extension'
          ? "the Python extension's interpreter"
          : 'default';
    return fail(`ForgeEnv cannot run Python with "${interpreter}" (${from}): ${probe.error}`, undefined, {
      title: 'Choose Interpreter',
      run: () => s.command('forgeenv.configureExecution'),
    });
  }
  let report: ((m: string) => void) | undefined;
  const env = createBackend(remote ? { kind: 'remote', url: settings.remoteUrl } : { kind: 'embedded' }, {
    settings,
    tasks: s.tasks(),
    taskDirs: s.taskDirs(),
    mode: settings.executionMode,
    interpreter,
    // The Teacher's history outlives the window, so its least-asked category really cycles across episodes.
    teacherStore: s.teacherStore(),
    onProgress: (m) => report?.(m),
  });
  const where = remote
    ? `on the ForgeEnv server at ${settings.remoteUrl}`
    : `${settings.executionMode}, ${interpreter ?? 'the snapshot venv'}`;
  const out = editor.runOutput(`breaking ${what.task?.task_id ?? 'a sampled task'} and running it once (${where})`);
  let start: HumanEpisodeStart;
  try {
    start = await editor.withProgress('ForgeEnv: breaking the script and running it once…', async (signal, progress) => {
      report = (m) => (out.write('stdout', `[real mode] ${m}\n`), progress(m));
      try {
        return await startHumanEpisode(env, {
          taskId: what.task?.task_id,
          difficulty: what.args?.difficulty,
          seed: what.args?.seed,
          primitive: what.primitive,
          signal,
          onOutput: out.write,
          migrationHints: settings.migrationHints,
          libraryVersions,
        });
      } finally {
        out.flush();
        if (signal.aborted) await env.dispose();
      }
    });
  } catch (e) {
    await env.dispose();
    if (isCancelledRemoteError(e)) return refusal('cancelled', 'Episode start cancelled.');
    return fail(`ForgeEnv could not start the episode: ${(e as Error)?.message ?? String(e)}`, e);
  }
  s.sandboxWarning(env.sandboxWarning);
  if (start.brokenExecution.killed && /cancelled/.test(start.brokenExecution.stderr)) {
    await env.dispose();
    return refusal('cancelled', 'Episode start cancelled.');
  }
  const filePath = join(s.episodesDir(), `${start.task.task_id}-${start.episodeId.slice(0, 8)}`, 'train.py');
  try {
    await mkdir(join(filePath, '..'), { recursive: true });
    await writeFile(filePath, start.brokenScript, 'utf8');
  } catch (e) {
    await env.dispose();
    return fail(`ForgeEnv could not write the episode script to ${filePath}: ${(e as Error).message}`, e, {
      title: 'Open Settings',
      run: () => s.command('workbench.action.openSettings', 'forgeenv.episodesFolder'),
    });
  }
  // The dataset folder exists from the first episode on: with the default location this puts
  // `.forgeenv/` in the workspace, which activates the extension after a reload (resume).
  await mkdir(s.datasetDir(), { recursive: true }).catch(() => undefined);
  if (!env.state) {
    await env.dispose();
    return fail('ForgeEnv: the environment lost the episode it just started.');
  }
  const fromServer = remote && env.runsOn;
  const persisted: PersistedEpisode = {
    version: 1,
    backend: remote ? { kind: 'remote', url: settings.remoteUrl } : { kind: 'embedded' },
    env: env.state,
    start,
    filePath,
    // Remote: how the server says it runs them.
    mode: fromServer ? fromServer.mode : settings.executionMode,
    // Named without machine paths (`snapshot-venv:<id>`, `~/…`): provenance and exports are shared; a resume maps it back.
    interpreter: fromServer ? fromServer.interpreter : interpreterLabel(interpreter, snapshotIdForVersions(start.libraryVersions)),
    startedAt: new Date().toISOString(),
    activeMs: 0,
    runs: 0,
    runHistory: [],
    timelineEvents: 0,
    lastEvaluation: null,
    lastScoredText: null,
  };
  return { env, start, persisted };
}

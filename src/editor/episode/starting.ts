// Start Episode: which task and which breakage (from the command's arguments, or asked), then the
// episode opens through RepairSession.opening at the failing line. No vscode import.
import { refusal, type CommandResult, type StartArgs } from '../commandArgs';
import { openEpisode } from './episodeStart';
import type { StartResult } from './results';
import { openEpisodeMessage } from './revisionStart';
import { showRun } from './runViews';
import type { RepairSession } from './session';

export async function startEpisode(session: RepairSession, args: StartArgs | undefined): Promise<CommandResult<StartResult>> {
  const t0 = Date.now();
  const s = session.services;
  if (session.current) {
    const msg = openEpisodeMessage(session.current.state);
    if (!args)
      session.editor.warn(
        msg,
        { title: 'Open It', run: () => s.command('forgeenv.openEpisodeFile') },
        { title: 'Skip It…', run: () => s.command('forgeenv.skipEpisode') },
      );
    return refusal('episode_open', msg);
  }
  if (session.starting) return refusal('busy', 'An episode is already being started.');
  const settings = s.settings();
  if (settings.backend === 'remote' && !settings.remoteUrl) {
    const msg =
      'ForgeEnv: forgeenv.backend is "remote" but no server is configured: set forgeenv.remoteUrl, or set forgeenv.backend to "embedded".';
    return session.fail(msg, undefined, {
      title: 'Open Settings',
      run: () => s.command('workbench.action.openSettings', 'forgeenv.backend'),
    });
  }
  let tasks;
  try {
    tasks = s.tasks();
  } catch (e) {
    return session.fail(`ForgeEnv could not load the task corpus: ${(e as Error).message}`, e);
  }
  // Which task, and which breakage: from the arguments, or asked.
  const picked = args ? undefined : await session.editor.chooseTask();
  if (!args && !picked) return session.cancelled('No episode started: no task was chosen.');
  const next = args ? !args.taskId && args.next : picked === 'next';
  const taskId = args?.taskId ?? (next ? await s.queue.nextTaskId() : picked);
  if (!taskId && next) return session.fail('ForgeEnv: every task has a demonstration; there is no next task.');
  const task = taskId ? tasks.getById(taskId) : undefined;
  if (taskId && !task) return session.fail(`ForgeEnv: unknown task "${taskId}".`);
  let primitive = args?.primitive;
  if (!args && task) {
    const choice = await session.editor.chooseBreakage(task);
    if (choice === undefined) return session.cancelled(`No episode started: no breakage was chosen for ${task.task_id}.`);
    primitive = choice ?? undefined;
  }
  return session.opening(
    () => openEpisode(session.editor, s, session.fail, { task, primitive, args }),
    async (live, { start }) => {
      live.timeline.record({ kind: 'focus', event: 'episode_start', task_id: start.task.task_id });
      const specs = showRun(session.editor, live, 'start'); // opened at the failing line, below
      await session.editor.openScript(live.file, { focus: true, line: specs[0]?.line });
      const broke = start.brokenExecution.exit_code !== 0;
      if (!broke)
        session.editor.warn(
          `ForgeEnv: the ${start.breakageSpec.primitive_type} breakage did not make train.py fail under this library snapshot (a warning on the changed line says so until the first run). Repair it anyway: the diff is scored against the intended API.`,
        );
      const openMs = Date.now() - t0;
      s.log.info(
        `episode ${start.episodeId} started: task ${start.task.task_id}, ${start.breakageSpec.primitive_type}, seed ${start.seed}, opened in ${openMs} ms`,
      );
      return {
        ok: true,
        episodeId: start.episodeId,
        taskId: start.task.task_id,
        seed: start.seed,
        primitive: start.breakageSpec,
        filePath: live.file,
        broke,
        diagnostics: specs.length,
        openMs,
      };
    },
  );
}

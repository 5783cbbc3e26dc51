// Resuming the episode a reload, crash or restart left open: its saved state is validated, its
// environment re-created (a remote one on its server), train.py recreated if it went missing,
// and its diagnostics shown again. An unusable saved state is moved aside, never thrown away.
import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { EpisodeSession } from '../../env/episode/episodeSession';
import { interpreterFromLabel } from '../../env/run/interpreterLabel';
import type { CommandResult } from '../commandArgs';
import { createBackend } from './backend';
import { PersistedEpisodeSchema } from './episodeRecord';
import { EPISODE_STATE_KEY } from './liveEpisode';
import { showRun } from './runViews';
import type { RepairSession } from './session';

export const UNUSABLE_STATE_KEY = 'forgeenv.episode.unrestorable';

export type RestoreResult = CommandResult<{ episodeId: string | null; restoreMs?: number }>;

export async function resumeEpisode(session: RepairSession): Promise<RestoreResult> {
  const t0 = Date.now();
  const { services: s, editor } = session;
  const raw = s.state.get<unknown>(EPISODE_STATE_KEY);
  if (raw === undefined || session.current) return { ok: true, episodeId: session.current?.episodeId ?? null };
  const keepAside = async (why: string, filePath?: string) => {
    await s.state.update(UNUSABLE_STATE_KEY, raw);
    await s.state.update(EPISODE_STATE_KEY, undefined);
    return session.fail(`ForgeEnv could not resume the open episode: ${why}${filePath ? ` Your script is still at ${filePath}.` : ''}`);
  };
  const parsed = PersistedEpisodeSchema.safeParse(raw);
  if (!parsed.success) return keepAside(`its saved state is invalid (${parsed.error.issues.length} problem(s)).`);
  const p = parsed.data;
  let env: EpisodeSession;
  try {
    env = createBackend(p.backend, {
      settings: s.settings(),
      tasks: s.tasks(),
      taskDirs: s.taskDirs(),
      mode: p.mode,
      interpreter: p.backend.kind === 'remote' ? p.interpreter : interpreterFromLabel(p.interpreter),
    });
    await env.restore(p.env);
  } catch (e) {
    return keepAside((e as Error).message, p.filePath);
  }
  const exists = await access(p.filePath).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await mkdir(dirname(p.filePath), { recursive: true });
    await writeFile(p.filePath, p.lastScoredText ?? p.start.brokenScript, 'utf8');
    editor.warn(
      `ForgeEnv: the episode's train.py was missing; it was recreated from the ${p.lastScoredText !== null ? 'last scored version' : 'broken script'}.`,
    );
  }
  const live = session.attach(env, p);
  await editor.openScript(live.file, { focus: false, onlyIfClosed: true });
  showRun(editor, live, p.lastEvaluation ? p.runs : 'start');
  const restoreMs = Date.now() - t0;
  s.log.info(
    `episode ${live.episodeId} resumed in ${restoreMs} ms (task ${p.start.task.task_id}, ${p.runs} runs, ${Math.round(p.activeMs / 1000)} s active)`,
  );
  return { ok: true, episodeId: live.episodeId, restoreMs };
}

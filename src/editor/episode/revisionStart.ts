// Starting a revision: the repair session's other mode. A submitted demonstration's episode is
// rebuilt from its record (task, seed, primitive, mode), checked to be the same task (task hash),
// and its recorded repair is put back into an editable train.py; Submit then writes a record that
// supersedes it through the same builder and write path as an episode. No vscode import.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { startHumanEpisode, type HumanEpisodeStart } from '../../env/episode/humanEpisode';
import { interpreterLabel } from '../../env/run/interpreterLabel';
import { snapshotIdForVersions } from '../../env/run/realMode';
import { createRepairDiff } from '../../env/diff/diff';
import { rawCompletion } from '../../store/completion';
import { taskHash } from '../../store/hashing';
import type { DemonstrationRecord } from '../../store/records';
import { refusal, type CommandResult, type Refusal } from '../commandArgs';
import { interpreterForMode } from '../environmentFactory';
import { applyRepairDiffTolerant, brokenScriptFromPrompt } from '../review/core/reviewItems';
import { createBackend } from './backend';
import type { EpisodeEditor } from './editorPort';
import type { PersistedEpisode } from './episodeRecord';
import type { Fail, OpenedEpisode } from './episodeStart';
import { timelineFileOf, type LiveEpisode } from './liveEpisode';
import type { SessionServices } from './services';
import type { RepairSession } from './session';

export interface RevisionArgs {
  /** The current record to revise (a superseded one cannot be revised). */
  previous: DemonstrationRecord;
  /** The dataset the record is in: the revision is written there. */
  datasetDir: string;
  /** The revised script to start from (headless use); default: the recorded repair. */
  script?: string;
}

/** Where revision N+1 of an episode is edited: the same folder for every attempt at it. */
export function revisionFile(episodesDir: string, previous: DemonstrationRecord): string {
  return join(episodesDir, 'revisions', `${previous.info.episode_id}-r${previous.info.revision + 1}`, 'train.py');
}

export async function openRevision(
  editor: EpisodeEditor,
  s: SessionServices,
  fail: Fail,
  what: RevisionArgs,
): Promise<OpenedEpisode | Refusal> {
  const { previous } = what;
  const settings = s.settings();
  let tasks;
  try {
    tasks = s.tasks();
  } catch (e) {
    return fail(`ForgeEnv could not load the task corpus: ${(e as Error).message}`, e);
  }
  if (!tasks.getById(previous.task_id))
    return refusal('error', `Task ${previous.task_id} is not in the corpus or the task folders, so the repair cannot be scored again.`);
  // A revision runs where and how its record did: embedded, in the record's mode.
  const mode = previous.info.mode;
  const interpreter = interpreterForMode(mode, await s.resolveInterpreter(settings));
  const env = createBackend({ kind: 'embedded' }, { settings, tasks, taskDirs: s.taskDirs(), mode, interpreter });
  let start: HumanEpisodeStart;
  try {
    const primitive = { primitive_type: previous.info.primitive.primitive_type, params: previous.info.primitive.params };
    start = await editor.withProgress(`ForgeEnv: rebuilding ${previous.task_id} · ${previous.primitive_type}`, (signal) =>
      startHumanEpisode(env, { taskId: previous.task_id, seed: previous.info.seed, primitive, signal }),
    );
  } catch (e) {
    await env.dispose();
    return refusal('error', `Could not rebuild the episode: ${(e as Error)?.message ?? String(e)}`);
  }
  const th = taskHash({
    script: start.originalScript,
    primitive: start.breakageSpec,
    seed: start.seed,
    library_versions: start.libraryVersions,
  });
  if (th !== previous.info.task_hash || !env.state) {
    await env.dispose();
    return refusal(
      'error',
      `Task ${previous.task_id} changed since this demonstration was recorded (task hash differs), so a revision would not be of the same task.`,
    );
  }
  s.sandboxWarning(env.sandboxWarning);
  const repaired = applyRepairDiffTolerant(start.brokenScript, previous.repair_completion);
  const initial = repaired.ok ? repaired.script : (brokenScriptFromPrompt(previous.repair_prompt) ?? start.brokenScript);
  const filePath = revisionFile(s.episodesDir(), previous);
  try {
    await mkdir(join(filePath, '..'), { recursive: true });
    await writeFile(filePath, what.script ?? initial, 'utf8');
    // A discarded earlier attempt at this revision leaves its timeline: this attempt starts its own.
    await rm(timelineFileOf(filePath), { force: true });
  } catch (e) {
    await env.dispose();
    return fail(`ForgeEnv could not write the revision script to ${filePath}: ${(e as Error).message}`, e);
  }
  const persisted: PersistedEpisode = {
    version: 1,
    backend: { kind: 'embedded' },
    env: env.state,
    start,
    filePath,
    mode,
    interpreter: interpreterLabel(interpreter, snapshotIdForVersions(start.libraryVersions)),
    startedAt: new Date().toISOString(),
    activeMs: 0,
    runs: 0,
    runHistory: [],
    timelineEvents: 0,
    lastEvaluation: null,
    lastScoredText: null,
    revision: { previous, datasetDir: what.datasetDir },
  };
  return { env, start, persisted };
}

/** Why `text` cannot be submitted as a revision of `previous` (its diff is the recorded one), if so. */
export function unchangedRevision(start: HumanEpisodeStart, previous: DemonstrationRecord, text: string): string | undefined {
  if (createRepairDiff(start.brokenScript, text) !== rawCompletion(previous.repair_completion)) return undefined;
  return `Nothing to submit: this revision's diff is identical to revision ${previous.info.revision}. Change the repair, or discard the revision.`;
}

/** Why another episode or revision cannot start while `state`'s is open. */
export function openEpisodeMessage(state: Pick<PersistedEpisode, 'start' | 'revision'>): string {
  if (state.revision)
    return `A revision of ${state.revision.previous.task_id} is open: submit it (ForgeEnv: Submit Revision) or discard it first.`;
  return `An episode is open (task ${state.start.task.task_id}): submit or skip it before starting another.`;
}

export function revisionDiscardedMessage(p: DemonstrationRecord): string {
  return `Revision ${p.info.revision + 1} of ${p.task_id} · ${p.primitive_type} discarded; revision ${p.info.revision} is unchanged and still current.`;
}

/** Reopens a submitted demonstration as revision N+1 of the session: its episode rebuilt, train.py holding its repair. */
export function startRevision(
  session: RepairSession,
  args: RevisionArgs,
  opts: { open: boolean },
): Promise<CommandResult<{ file: string; recordId: string; revision: number }>> {
  if (session.current) return Promise.resolve(refusal('episode_open', openEpisodeMessage(session.current.state)));
  const p = args.previous;
  return session.opening(
    () => openRevision(session.editor, session.services, session.fail, args),
    async (live) => {
      live.timeline.record({ kind: 'focus', event: 'revision_start', revises: p.info.record_id, revision: p.info.revision + 1 });
      if (opts.open) await session.editor.openScript(live.file, { focus: true });
      session.services.log.info(`revision ${p.info.revision + 1} of ${p.info.record_id} (${p.task_id}) started`);
      return { ok: true, file: live.file, recordId: p.info.record_id, revision: p.info.revision + 1 };
    },
  );
}

/** Ends the session's open revision without writing anything: the revised record stays current. */
export async function discardRevision(session: RepairSession): Promise<CommandResult<{ message: string }>> {
  const live = session.current;
  const rev = live?.state.revision;
  if (!live || !rev) return refusal('no_episode', 'No reopened demonstration.');
  if (live.running) return refusal('busy', 'A run is in progress; discard the revision when it has finished.');
  await session.end(live, { discard: true });
  return { ok: true, message: revisionDiscardedMessage(rev.previous) };
}

/** Refuses (and says so, offering Discard) to submit a revision whose diff is the revised record's. */
export function refuseUnchangedRevision(session: RepairSession, live: LiveEpisode, text: string): Refusal | undefined {
  const rev = live.state.revision;
  const why = rev && unchangedRevision(live.start, rev.previous, text);
  if (!why) return undefined;
  session.editor.warn(`ForgeEnv: ${why}`, {
    title: 'Discard Revision',
    run: () => session.services.command('forgeenv.review.discardRevision'),
  });
  return refusal('unchanged', why);
}

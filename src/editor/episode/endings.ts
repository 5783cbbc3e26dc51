// How an episode ends with a record: Submit (a demonstration, or for a revision a record that
// supersedes the old one) and Skip (a skip record with its reason). Both queue the record before
// the episode ends, so nothing is lost (RepairSession.finish). No vscode import.
import { IdenticalRevisionError } from '../../store/demonstrationBuilder';
import type { SkipReason } from '../../store/records';
import { refusal, type CommandResult, type SkipArgs, type SubmitArgs } from '../commandArgs';
import { annotatorId } from '../settingsSchema';
import { recordNaturalDriftSolved } from './naturalDriftSolved';
import type { StoredResult } from './results';
import { retryIfBusy } from './retry';
import { refuseUnchangedRevision } from './revisionStart';
import type { RepairSession } from './session';
import { SKIP_LABELS } from './skipLabels';
import { announceSaved, demonstrationOf } from './submission';

export type SubmittedResult = StoredResult & { recordId: string; reward: number; success: boolean; revision?: number; supersedes?: string };
export type SkippedResult = StoredResult & { reason: SkipReason };

export async function submitEpisode(session: RepairSession, args: SubmitArgs): Promise<CommandResult<SubmittedResult>> {
  const live = session.current;
  if (!live) return session.noEpisode();
  if (live.running) return refusal('busy', 'A run is in progress; submit when it has finished.');
  const text = await session.editor.readScript(live.file);
  const rev = live.state.revision;
  const unchanged = refuseUnchangedRevision(session, live, text); // before scoring: the revision stays open
  if (unchanged) return unchanged;
  if (live.state.lastScoredText !== text || !live.state.lastEvaluation) {
    // The buffer changed since the last score: what is submitted is always what was scored.
    const r = await session.runAndScore();
    if (!r.ok) return r;
  }
  const last = live.state.lastEvaluation;
  if (!last) return session.fail('ForgeEnv: the repair has no score to submit.');
  if (!last.success && !args.force && !(await session.editor.confirmFailingSubmit(last.reward)))
    return refusal('cancelled', 'Submit cancelled.');
  let obs;
  try {
    obs = await live.env.step({ repair: { unified_diff: last.unified_diff } });
  } catch (e) {
    return session.fail(
      `ForgeEnv could not submit: ${(e as Error)?.message ?? String(e)}`,
      e,
      ...retryIfBusy(session.services, e, 'forgeenv.submitEpisode'),
    );
  }
  if (typeof obs.info.error === 'string') return session.fail(`ForgeEnv could not submit: ${obs.info.error}`);
  const final = live.env.state?.final;
  if (!final) return session.fail('ForgeEnv: the environment did not record the final repair.');
  const s = session.services;
  const submittedAt = new Date();
  let record;
  try {
    record = demonstrationOf(live, s, final, submittedAt);
  } catch (e) {
    if (e instanceof IdenticalRevisionError) return refusal('unchanged', e.message);
    return session.fail(`ForgeEnv could not build the demonstration record: ${(e as Error).message}`, e);
  }
  live.timeline.record({ kind: 'save', event: 'submit', reward: final.reward, success: final.success });
  if (!rev) await recordNaturalDriftSolved(live.start.task, final, session.services.log);
  const stored = await session.finish(live, 'demonstration', record, 'submitted');
  if (stored.stored) announceSaved(session.editor, s, record, final);
  return {
    ok: true,
    ...stored,
    ...(rev && { revision: record.info.revision, supersedes: record.info.supersedes ?? undefined }),
    recordId: record.info.record_id,
    reward: final.reward,
    success: final.success,
  };
}

export async function skipEpisode(session: RepairSession, args: SkipArgs | undefined): Promise<CommandResult<SkippedResult>> {
  const live = session.current;
  if (!live) return session.noEpisode();
  if (live.running) return refusal('busy', 'A run is in progress; skip when it has finished.');
  if (live.state.revision)
    return refusal('invalid_args', 'A revision is not skipped: discard it (ForgeEnv: Discard Revision) and the old record stays current.');
  const start = live.state.start;
  const chosen = args ?? (await session.editor.chooseSkip(start.task.task_id));
  if (!chosen) return refusal('cancelled', 'Skip cancelled.');
  const s = session.services;
  const skip = {
    episode_id: start.episodeId,
    task_id: start.task.task_id,
    primitive: start.breakageSpec,
    reason: chosen.reason,
    note: chosen.note ?? '',
    annotator_id: annotatorId(s.settings()),
    session_id: s.sessionId,
    seed: start.seed,
  };
  live.timeline.record({ kind: 'save', event: 'skip', reason: chosen.reason });
  const stored = await session.finish(live, 'skip', skip, 'skipped');
  if (stored.stored) session.editor.info(`ForgeEnv: skipped ${start.task.task_id} (${SKIP_LABELS[chosen.reason].replace(/…$/, '')}).`);
  return { ok: true, ...stored, reason: chosen.reason };
}

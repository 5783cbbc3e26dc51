// Reopen a submitted demonstration as a new revision: the commands. The revision itself is a mode
// of the repair session (src/editor/episode/revisionStart.ts): the episode is rebuilt from the
// record, train.py holds its repair, and Submit writes a NEW record (revision N+1, `supersedes` =
// the old record id) through the same builder and write path as an episode. The old line is
// never touched.
import * as vscode from 'vscode';
import { z } from 'zod';
import { DatasetStore } from '../../store/datasetStore';
import type { DemonstrationRecord } from '../../store/records';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';
import { discardRevision, startRevision } from '../episode/revisionStart';
import type { RepairSession } from '../episode/session';
import type { ReviewController } from './reviewMode';

export const ReopenArgsSchema = z
  .object({
    recordId: z.uuid().optional(),
    dataset: z.string().min(1).optional(),
    /** Headless: the revised repaired script; with `submit`, scored and stored at once. */
    script: z.string().optional(),
    submit: z.boolean().optional(),
  })
  .strict();

async function findRecord(review: ReviewController, dir: string, recordId: string | undefined): Promise<DemonstrationRecord | undefined> {
  if (!recordId) return review.current()?.record;
  const snap = await new DatasetStore(dir).readAll();
  return snap.demonstrations.current.find((r) => r.info.record_id === recordId);
}

type Stored = { recordId: string; revision: number; supersedes: string };

export async function reopenCommand(
  forge: ForgeContext,
  review: ReviewController,
  session: RepairSession,
  rawArgs: unknown,
): Promise<CommandResult<{ file: string; recordId: string; revision: number; stored?: Stored }>> {
  const parsed = ReopenArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Reopen Demonstration: ${parsed.error.message}`);
  const args = parsed.data;
  const untrusted = forge.refuseUntrusted();
  if (untrusted) return untrusted;
  const dir = args.dataset ?? review.state?.dir ?? forge.datasetDir();
  const previous = await findRecord(review, dir, args.recordId);
  if (!previous) {
    const msg = args.recordId
      ? `Demonstration ${args.recordId} is not a current record in ${dir} (a superseded one cannot be reopened; reopen its latest revision).`
      : 'Open a demonstration in review mode first, or pass its record id.';
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`);
    return refusal('invalid_args', msg);
  }
  const started = await startRevision(session, { previous, datasetDir: dir, script: args.script }, { open: !args.submit });
  if (!started.ok) return started;
  if (args.submit) {
    const stored = await submitRevisionCommand(review, session, {});
    if (!stored.ok) return stored;
    return { ...started, stored: { recordId: stored.recordId, revision: stored.revision, supersedes: stored.supersedes } };
  }
  void vscode.window
    .showInformationMessage(
      `ForgeEnv: revision ${started.revision} of ${previous.task_id} · ${previous.primitive_type}: edit the repair, then submit it. The old record stays, superseded.`,
      'Submit Revision',
      'Discard',
    )
    .then((c) => {
      if (c === 'Submit Revision') void vscode.commands.executeCommand('forgeenv.review.submitRevision');
      else if (c === 'Discard') void vscode.commands.executeCommand('forgeenv.review.discardRevision');
    });
  return started;
}

export async function submitRevisionCommand(
  review: ReviewController,
  session: RepairSession,
  rawArgs: unknown,
): Promise<CommandResult<Stored & { reward: number; success: boolean }>> {
  const args = z
    .object({ force: z.boolean().optional() })
    .strict()
    .safeParse(rawArgs ?? {});
  if (!args.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Submit Revision: ${args.error.message}`);
  const rev = session.current?.state.revision;
  if (!rev) {
    // Always in the palette (so typing "Submit Revision" never runs Reopen instead): say what to do.
    const msg = 'No revision is open. Open one with "ForgeEnv: Reopen Demonstration as a New Revision", edit it, then submit.';
    void vscode.window.showInformationMessage(`ForgeEnv: ${msg}`);
    return refusal('no_episode', msg);
  }
  // A revision is a reviewer's deliberate correction: it is stored without the failing-repair question.
  const r = await session.submit({ force: true });
  if (!r.ok) return r;
  if (!r.stored || r.revision === undefined || !r.supersedes) {
    return refusal(
      'error',
      `The revision could not be saved: ${r.error ?? 'no revision record'} It is kept and retried when ForgeEnv starts again.`,
    );
  }
  if (review.state?.dir === rev.datasetDir) await review.reload();
  return { ok: true, recordId: r.recordId, revision: r.revision, supersedes: r.supersedes, reward: r.reward, success: r.success };
}

export async function discardRevisionCommand(session: RepairSession): Promise<CommandResult<{ message: string }>> {
  const r = await discardRevision(session);
  if (!r.ok) {
    if (r.reason === 'no_episode')
      void vscode.window.showInformationMessage('ForgeEnv: No revision is open, so there is nothing to discard.');
    return r;
  }
  void vscode.window.showInformationMessage(`ForgeEnv: ${r.message}`);
  return r;
}

// Reopen a submitted demonstration: the same task, breakage, seed and snapshot are rebuilt, the
// recorded repair is put back into an editable train.py, and submitting writes a NEW record
// (revision N+1, `supersedes` = the old record id) through the store's revision support. The
// old line is never touched.
import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as vscode from 'vscode';
import { z } from 'zod';
import { createRepairDiff } from '../../env/diff';
import { ENV_VERSION, type ForgeEnvironment } from '../../env/environment';
import { startHumanEpisode, type HumanEpisodeStart } from '../../env/humanEpisode';
import { snapshotIdOf } from '../../env/versions';
import { rawCompletion } from '../../store/completion';
import { DatasetStore } from '../../store/datasetStore';
import { buildDemonstration, IdenticalRevisionError } from '../../store/demonstrationBuilder';
import { taskHash } from '../../store/hashing';
import type { DemonstrationRecord } from '../../store/records';
import { ActiveTimeTracker } from '../episode/activeTime';
import { PendingWrites } from '../episode/pendingWrites';
import { TimelineRecorder } from '../episode/timeline';
import type { TimelineEvent } from '../../store/records';
import { refusal, type CommandResult } from '../commandArgs';
import { interpreterLabel } from '../../env/interpreterLabel';
import { snapshotIdForVersions } from '../../env/realMode';
import type { ForgeContext } from '../context';
import { applyRepairDiffTolerant, brokenScriptFromPrompt } from './core/reviewItems';
import type { ReviewController } from './reviewMode';
import { environmentFrom, interpreterForMode } from '../environmentFactory';

export const REVISION_CONTEXT_KEY = 'forgeenv.revisionActive';

export const ReopenArgsSchema = z
  .object({
    recordId: z.uuid().optional(),
    dataset: z.string().min(1).optional(),
    /** Headless: the revised repaired script; with `submit`, scored and stored at once. */
    script: z.string().optional(),
    submit: z.boolean().optional(),
  })
  .strict();

interface Revision {
  env: ForgeEnvironment;
  start: HumanEpisodeStart;
  previous: DemonstrationRecord;
  dir: string;
  file: vscode.Uri;
  startedAt: Date;
  tracker: ActiveTimeTracker;
  runs: number;
  mode: 'simulated' | 'real';
  /** As the record shows it: home-relative, or the snapshot's managed venv. */
  interpreter: string;
  /** The revision's own edit timeline (stored as timelines/<episode_id>.r<N>.jsonl). */
  timeline: TimelineRecorder;
  /** Every event recorded, so Submit never reads the file back. */
  events: TimelineEvent[];
  listeners: vscode.Disposable[];
}

let current: Revision | undefined;
const sessionId = randomUUID();

/**
 * Ends the open revision. With `closeTabs` (Submit, Discard) its train.py tabs are closed, so an
 * ended revision is not left open for edits that would go nowhere.
 */
async function endRevision(opts: { closeTabs?: boolean } = {}): Promise<void> {
  const rev = current;
  if (!rev) return;
  current = undefined;
  for (const l of rev.listeners) l.dispose();
  await rev.timeline.dispose();
  await rev.env.dispose();
  await vscode.commands.executeCommand('setContext', REVISION_CONTEXT_KEY, false);
  if (opts.closeTabs) await closeTabsOf(rev.file);
}

/**
 * Closes every tab showing `file`. Unsaved edits are first reverted to the file on disk (what was
 * submitted, or what is discarded anyway), so closing never stops on a "Save changes?" dialog.
 */
async function closeTabsOf(file: vscode.Uri): Promise<void> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === file.toString());
  if (doc?.isDirty) {
    const onDisk = await readFile(file.fsPath, 'utf8').catch(() => undefined);
    if (onDisk !== undefined) {
      const edit = new vscode.WorkspaceEdit();
      edit.replace(file, new vscode.Range(doc.positionAt(0), doc.positionAt(doc.getText().length)), onDisk);
      if (await vscode.workspace.applyEdit(edit)) await doc.save();
    }
  }
  const tabs = vscode.window.tabGroups.all.flatMap((g) => g.tabs).filter((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === file.toString());
  if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
}

async function findRecord(review: ReviewController, dir: string, recordId: string | undefined): Promise<DemonstrationRecord | undefined> {
  if (!recordId) return review.current()?.record;
  const snap = await new DatasetStore(dir).readAll();
  return snap.demonstrations.current.find((r) => r.info.record_id === recordId);
}

export async function reopenCommand(forge: ForgeContext, review: ReviewController, rawArgs: unknown): Promise<CommandResult<{ file: string; recordId: string; revision: number; stored?: { recordId: string; revision: number; supersedes: string } }>> {
  const parsed = ReopenArgsSchema.safeParse(rawArgs ?? {});
  if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Reopen Demonstration: ${parsed.error.message}`);
  const args = parsed.data;
  const untrusted = forge.refuseUntrusted();
  if (untrusted) return untrusted;
  if (current) return refusal('episode_open', `A revision of ${current.previous.task_id} is open: submit it (ForgeEnv: Submit Revision) or discard it first.`);
  const dir = args.dataset ?? review.state?.dir ?? forge.datasetDir();
  const previous = await findRecord(review, dir, args.recordId);
  if (!previous) {
    const msg = args.recordId ? `Demonstration ${args.recordId} is not a current record in ${dir} (a superseded one cannot be reopened; reopen its latest revision).` : 'Open a demonstration in review mode first, or pass its record id.';
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`);
    return refusal('invalid_args', msg);
  }
  const settings = forge.settings();
  const taskDirs = forge.taskDirs();
  const tasks = forge.tasks();
  const task = tasks.getById(previous.task_id);
  if (!task) return refusal('error', `Task ${previous.task_id} is not in the corpus or the task folders, so the repair cannot be scored again.`);
  const resolved = await forge.resolvedInterpreter();
  const mode = previous.info.mode;
  const interpreter = interpreterForMode(mode, resolved);
  const env = environmentFrom(settings, { mode, interpreter, taskDirs }, { tasks });
  let start: HumanEpisodeStart;
  try {
    start = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: `ForgeEnv: rebuilding ${previous.task_id} · ${previous.primitive_type}` }, () =>
      startHumanEpisode(env, { taskId: previous.task_id, seed: previous.info.seed, primitive: { primitive_type: previous.info.primitive.primitive_type, params: previous.info.primitive.params } }),
    );
  } catch (e) {
    await env.dispose();
    return refusal('error', `Could not rebuild the episode: ${(e as Error).message}`);
  }
  const th = taskHash({ script: start.originalScript, primitive: start.breakageSpec, seed: start.seed, library_versions: start.libraryVersions });
  if (th !== previous.info.task_hash) {
    await env.dispose();
    return refusal('error', `Task ${previous.task_id} changed since this demonstration was recorded (task hash differs), so a revision would not be of the same task.`);
  }
  const broken = brokenScriptFromPrompt(previous.repair_prompt) ?? start.brokenScript;
  const repaired = applyRepairDiffTolerant(start.brokenScript, previous.repair_completion);
  const initial = repaired.ok ? repaired.script : broken;
  const folder = join(forge.episodesDir(), 'revisions', `${previous.info.episode_id}-r${previous.info.revision + 1}`);
  await mkdir(folder, { recursive: true });
  const filePath = join(folder, 'train.py');
  await writeFile(filePath, args.script ?? initial, 'utf8');
  const file = vscode.Uri.file(filePath);
  const tracker = new ActiveTimeTracker({ idleMs: settings.idleThresholdSeconds * 1000 });
  const startedAt = new Date();
  const timelineFile = join(folder, '.timeline.jsonl');
  await rm(timelineFile, { force: true }); // a discarded earlier attempt at this revision
  const events: TimelineEvent[] = [];
  const timeline = new TimelineRecorder({ file: timelineFile, startedAtMs: startedAt.getTime(), onEvent: (e) => events.push(e) });
  timeline.record({ kind: 'focus', event: 'revision_start', revises: previous.info.record_id, revision: previous.info.revision + 1 });
  const rev: Revision = { env, start, previous, dir, file, startedAt, tracker, runs: 0, mode, interpreter: interpreterLabel(interpreter, snapshotIdForVersions(start.libraryVersions)), timeline, events, listeners: [] };
  const isOurs = (e?: vscode.TextEditor) => e?.document.uri.toString() === file.toString();
  const refocus = () => {
    const was = tracker.isCounting;
    tracker.setFocused(vscode.window.state.focused && isOurs(vscode.window.activeTextEditor));
    if (was !== tracker.isCounting) timeline.record({ kind: tracker.isCounting ? 'focus' : 'blur' });
  };
  tracker.setFocused(vscode.window.state.focused && isOurs(vscode.window.activeTextEditor));
  rev.listeners.push(
    vscode.window.onDidChangeActiveTextEditor(refocus),
    vscode.window.onDidChangeWindowState(refocus),
    vscode.workspace.onDidChangeTextDocument((e) => {
      if (e.document.uri.toString() !== file.toString() || e.contentChanges.length === 0) return;
      tracker.activity();
      timeline.record({
        kind: 'change',
        version: e.document.version,
        changes: e.contentChanges.map((c) => ({
          range: { start: { line: c.range.start.line, character: c.range.start.character }, end: { line: c.range.end.line, character: c.range.end.character } },
          text: c.text,
        })),
      });
    }),
    vscode.workspace.onDidSaveTextDocument((d) => {
      if (d.uri.toString() === file.toString()) timeline.record({ kind: 'save' });
    }),
  );
  current = rev;
  await vscode.commands.executeCommand('setContext', REVISION_CONTEXT_KEY, true);
  if (args.submit) {
    const stored = await submitRevisionCommand(forge, review, {});
    if (!stored.ok) return stored;
    return { ok: true, file: filePath, recordId: previous.info.record_id, revision: previous.info.revision + 1, stored: { recordId: stored.recordId, revision: stored.revision, supersedes: stored.supersedes } };
  }
  await vscode.window.showTextDocument(file, { preview: false });
  void vscode.window.showInformationMessage(`ForgeEnv: revision ${previous.info.revision + 1} of ${previous.task_id} · ${previous.primitive_type}: edit the repair, then submit it. The old record stays, superseded.`, 'Submit Revision', 'Discard').then((c) => {
    if (c === 'Submit Revision') void vscode.commands.executeCommand('forgeenv.review.submitRevision');
    else if (c === 'Discard') void vscode.commands.executeCommand('forgeenv.review.discardRevision');
  });
  return { ok: true, file: filePath, recordId: previous.info.record_id, revision: previous.info.revision + 1 };
}

export async function submitRevisionCommand(forge: ForgeContext, review: ReviewController, rawArgs: unknown): Promise<CommandResult<{ recordId: string; revision: number; supersedes: string; reward: number; success: boolean }>> {
  const args = z.object({ force: z.boolean().optional() }).strict().safeParse(rawArgs ?? {});
  if (!args.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Submit Revision: ${args.error.message}`);
  const rev = current;
  if (!rev) {
    // Always in the palette (so typing "Submit Revision" never runs Reopen instead): say what to do.
    const msg = 'No revision is open. Open one with "ForgeEnv: Reopen Demonstration as a New Revision", edit it, then submit.';
    void vscode.window.showInformationMessage(`ForgeEnv: ${msg}`);
    return refusal('no_episode', msg);
  }
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === rev.file.toString());
  if (doc?.isDirty) await doc.save();
  // The file on disk is the revision: an editor left open by a discarded attempt at the same revision may hold stale text.
  const diff = createRepairDiff(rev.start.brokenScript, await readFile(rev.file.fsPath, 'utf8'));
  if (diff === rawCompletion(rev.previous.repair_completion)) {
    // Checked before scoring, so the revision stays open for more edits.
    const msg = `Nothing to submit: this revision's diff is identical to revision ${rev.previous.info.revision}. Change the repair, or discard the revision.`;
    void vscode.window.showWarningMessage(`ForgeEnv: ${msg}`, 'Discard Revision').then((c) => {
      if (c) void vscode.commands.executeCommand('forgeenv.review.discardRevision');
    });
    return refusal('unchanged', msg);
  }
  const evaluation = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'ForgeEnv: scoring the revision' }, () => rev.env.evaluateRepair(diff));
  rev.runs++;
  rev.timeline.record({ kind: 'run', n: rev.runs, reward: evaluation.reward, success: evaluation.success });
  const obs = await rev.env.step({ repair: { unified_diff: diff } });
  const final = rev.env.state?.final ?? evaluation;
  if (typeof obs.info.error === 'string') return refusal('error', `Could not score the revision: ${obs.info.error}`);
  const submittedAt = new Date();
  const provenance = {
    session_id: sessionId,
    annotator_id: forge.annotatorId(),
    mode: rev.mode,
    interpreter: rev.interpreter,
    extension_version: forge.extensionVersion,
    env_version: ENV_VERSION,
    started_at: rev.startedAt.toISOString(),
    submitted_at: submittedAt.toISOString(),
    active_ms: Math.round(rev.tracker.activeMs),
    wall_ms: Math.max(0, submittedAt.getTime() - rev.startedAt.getTime()),
    runs: rev.runs,
  };
  let record: DemonstrationRecord;
  try {
    record = buildDemonstration({
      start: rev.start,
      final,
      provenance,
      info: { library_snapshot: snapshotIdOf(rev.start.libraryVersions) ?? null, reopened_from: rev.previous.info.record_id },
      previous: rev.previous,
    });
  } catch (e) {
    if (e instanceof IdenticalRevisionError) return refusal('unchanged', e.message);
    return refusal('error', `Could not build the revision record: ${(e as Error).message}`);
  }
  rev.timeline.record({ kind: 'save', event: 'submit', reward: final.reward, success: final.success });
  await rev.timeline.flush();
  const events = rev.events;
  // The editor's one write path: queued first (nothing is lost if the folder is not writable), then the store's storeEpisode.
  const pending = new PendingWrites(forge.extension.globalState);
  const queued = await pending.enqueue({ kind: 'demonstration', datasetDir: rev.dir, episodeId: rev.previous.info.episode_id, taskId: rev.previous.task_id, record, timeline: events });
  const outcome = await pending.attempt(queued.id);
  await endRevision({ closeTabs: true });
  if (!outcome.ok) {
    const msg = `The revision could not be saved: ${outcome.error} It is kept and retried when ForgeEnv starts again.`;
    void vscode.window.showErrorMessage(`ForgeEnv: ${msg}`);
    return refusal('error', msg);
  }
  if (review.state?.dir === rev.dir) await review.reload();
  void vscode.window.showInformationMessage(`ForgeEnv: revision ${record.info.revision} saved (reward ${final.reward.toFixed(2)}); it supersedes ${record.info.supersedes}.`);
  return { ok: true, recordId: record.info.record_id, revision: record.info.revision, supersedes: record.info.supersedes!, reward: final.reward, success: final.success };
}

export async function discardRevisionCommand(): Promise<CommandResult<{ message: string }>> {
  const rev = current;
  if (!rev) {
    void vscode.window.showInformationMessage('ForgeEnv: No revision is open, so there is nothing to discard.');
    return refusal('no_episode', 'No reopened demonstration.');
  }
  await endRevision({ closeTabs: true });
  const p = rev.previous;
  const message = `Revision ${p.info.revision + 1} of ${p.task_id} · ${p.primitive_type} discarded; revision ${p.info.revision} is unchanged and still current.`;
  void vscode.window.showInformationMessage(`ForgeEnv: ${message}`);
  return { ok: true, message };
}

export function disposeRevision(): void {
  void endRevision();
}

// Review mode: walk the current demonstrations of the dataset folder, each as broken ↔
// repaired in the diff editor with its scores in a CodeLens header above the repaired script
// (and in the status bar); Approve / Reject append a review record (the demonstration line
// itself is never edited).
import * as vscode from 'vscode';
import { z } from 'zod';
import { DatasetStore } from '../../store/datasetStore';
import type { ReviewRecord, ReviewVerdict } from '../../store/records';
import { buildReviewItems, firstUnreviewed, scoreMarkdown, statusText, type ReviewItem } from './core/reviewItems';
import { refusal, type CommandResult } from '../commandArgs';
import type { ForgeContext } from '../context';

export const REVIEW_SCHEME = 'forgeenv-review';
export const REVIEW_CONTEXT_KEY = 'forgeenv.reviewActive';
/**
 * Language of both review documents: Python highlighting (media/review/review-python.tmLanguage.json)
 * plus package.json's configurationDefaults for it, which turn on word wrap and CodeLens in the
 * diff editor for review documents only (a [python] default would change every Python diff).
 */
export const REVIEW_LANGUAGE = 'forgeenv-review';

/** Shortcuts as contributed in package.json, shown in tooltips and titles. */
export const REVIEW_KEYS = { next: 'Alt+N', previous: 'Alt+P', approve: 'Alt+A', reject: 'Alt+R', label: 'Alt+L' } as const;

export const StartArgsSchema = z
  .object({
    dataset: z.string().min(1).optional(),
    /** Start at this record instead of the first unreviewed one. */
    recordId: z.string().optional(),
    index: z.number().int().nonnegative().optional(),
  })
  .strict();

export const VerdictArgsSchema = z.object({ comment: z.string().optional(), advance: z.boolean().optional() }).strict();

class ReviewDocuments implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? '';
  }

  set(uri: vscode.Uri, text: string): void {
    this.texts.set(uri.toString(), text);
    this.changed.fire(uri);
  }

  clear(): void {
    this.texts.clear();
  }

  dispose(): void {
    this.changed.dispose();
  }
}

export interface ReviewState {
  dir: string;
  items: ReviewItem[];
  index: number;
}

export class ReviewController implements vscode.Disposable {
  readonly docs = new ReviewDocuments();
  private readonly status = vscode.window.createStatusBarItem('forgeenv.review.status', vscode.StatusBarAlignment.Left, 50);
  private readonly changed = new vscode.EventEmitter<ReviewItem | undefined>();
  /** Fires when the shown item changes (label CodeLens and summary refresh on it). */
  readonly onDidChangeItem = this.changed.event;
  state: ReviewState | undefined;

  constructor(private readonly forge: ForgeContext) {
    this.status.name = 'ForgeEnv review';
    this.status.command = 'forgeenv.review.actions';
  }

  current(): ReviewItem | undefined {
    return this.state ? this.state.items[this.state.index] : undefined;
  }

  uriFor(item: ReviewItem, side: 'broken' | 'repaired'): vscode.Uri {
    return vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${item.record.info.record_id}/${side}/train.py` });
  }

  async start(
    rawArgs: unknown,
  ): Promise<CommandResult<{ dir: string; total: number; index: number; recordId?: string; problems: number }>> {
    const parsed = StartArgsSchema.safeParse(rawArgs ?? {});
    if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Start Review: ${parsed.error.message}`);
    const args = parsed.data;
    const dir = args.dataset ?? this.forge.datasetDir();
    const snapshot = await new DatasetStore(dir).readAll();
    const items = buildReviewItems(snapshot);
    if (snapshot.problems.length) {
      void vscode.window.showWarningMessage(
        `ForgeEnv: ${snapshot.problems.length} unusable line(s) in ${dir} were skipped (see the dataset summary).`,
      );
    }
    if (items.length === 0) {
      void vscode.window.showInformationMessage(`ForgeEnv: no submitted demonstrations in ${dir}.`);
      return { ok: true, dir, total: 0, index: 0, problems: snapshot.problems.length };
    }
    let index = firstUnreviewed(items);
    if (args.recordId) {
      const i = items.findIndex((it) => it.record.info.record_id === args.recordId);
      if (i < 0) return refusal('invalid_args', `Demonstration ${args.recordId} is not a current record in ${dir}.`);
      index = i;
    } else if (args.index !== undefined) index = Math.min(args.index, items.length - 1);
    this.state = { dir, items, index };
    await vscode.commands.executeCommand('setContext', REVIEW_CONTEXT_KEY, true);
    await this.show();
    return { ok: true, dir, total: items.length, index, recordId: items[index].record.info.record_id, problems: snapshot.problems.length };
  }

  async move(delta: number): Promise<CommandResult<{ index: number; recordId: string; moved: boolean }>> {
    if (!this.state) return this.notReviewing();
    const next = this.state.index + delta;
    if (next < 0 || next >= this.state.items.length) {
      void vscode.window.showInformationMessage(
        delta > 0 ? 'ForgeEnv: this is the last demonstration.' : 'ForgeEnv: this is the first demonstration.',
      );
      return { ok: true, index: this.state.index, recordId: this.current()!.record.info.record_id, moved: false };
    }
    this.state.index = next;
    await this.show();
    return { ok: true, index: next, recordId: this.current()!.record.info.record_id, moved: true };
  }

  private notReviewing(): CommandResult<never> {
    const msg = 'Start review mode first (ForgeEnv: Start Review).';
    void vscode.window.showInformationMessage(`ForgeEnv: ${msg}`);
    return refusal('no_episode', msg);
  }

  async verdict(verdict: ReviewVerdict, rawArgs: unknown): Promise<CommandResult<{ review: ReviewRecord; index: number }>> {
    const item = this.current();
    const state = this.state;
    if (!state || !item) return this.notReviewing();
    const parsed = VerdictArgsSchema.safeParse(rawArgs ?? {});
    if (!parsed.success) return refusal('invalid_args', `Invalid arguments for ForgeEnv: Review ${verdict}: ${parsed.error.message}`);
    const args = parsed.data;
    if (verdict === 'reject' && args.comment !== undefined && !args.comment.trim())
      return refusal('invalid_args', 'A rejection needs a comment saying why.');
    let comment = args.comment;
    if (comment === undefined) {
      comment = await vscode.window.showInputBox({
        title: `${verdict === 'approve' ? 'Approve' : 'Reject'} ${item.record.task_id} · ${item.record.primitive_type}`,
        prompt: verdict === 'reject' ? 'Why is it rejected? (required)' : 'Comment (optional)',
        ignoreFocusOut: true,
        validateInput: (t) => (verdict === 'reject' && !t.trim() ? 'Say why, so the annotator can learn from it' : undefined),
      });
      if (comment === undefined) return refusal('cancelled', 'Review cancelled.');
    }
    // The walk may have moved or stopped while the comment box was open: the verdict is for `item` regardless.
    const rec = await new DatasetStore(state.dir).appendReview({
      record_id: item.record.info.record_id,
      reviewer: this.forge.annotatorId(),
      verdict,
      comment: comment.trim(),
    });
    item.review = rec;
    if (this.state !== state || this.current() !== item) return { ok: true, review: rec, index: item.index };
    if (args.advance !== false && state.index < state.items.length - 1) {
      state.index++;
      await this.show();
    } else {
      this.render();
      this.changed.fire(item);
      if (args.advance !== false)
        void vscode.window.showInformationMessage(
          `ForgeEnv: ${verdict === 'approve' ? 'approved' : 'rejected'}; that was the last demonstration.`,
        );
    }
    return { ok: true, review: rec, index: state.index };
  }

  /** Re-reads the folder (after a label or a revision) keeping the position on the same record. */
  async reload(): Promise<void> {
    if (!this.state) return;
    const id = this.current()?.record.info.record_id;
    const items = buildReviewItems(await new DatasetStore(this.state.dir).readAll());
    const i = items.findIndex((it) => it.record.info.record_id === id);
    this.state = { ...this.state, items, index: i >= 0 ? i : Math.min(this.state.index, Math.max(0, items.length - 1)) };
    if (items.length) await this.show({ announce: false });
    else await this.stop();
  }

  async stop(): Promise<void> {
    this.state = undefined;
    this.status.hide();
    this.docs.clear();
    await vscode.commands.executeCommand('setContext', REVIEW_CONTEXT_KEY, false);
    this.changed.fire(undefined);
  }

  private async show(opts: { announce?: boolean } = {}): Promise<void> {
    const item = this.current();
    if (!item || !this.state) return;
    const broken = this.uriFor(item, 'broken');
    const repaired = this.uriFor(item, 'repaired');
    this.docs.set(broken, item.broken ?? "# The broken script could not be recovered from this record's repair_prompt.\n");
    this.docs.set(
      repaired,
      item.repaired.ok
        ? item.repaired.script
        : `# The recorded diff does not apply to the broken script:\n# ${item.repaired.error.replace(/\n/g, '\n# ')}\n\n${item.record.repair_completion}`,
    );
    const r = item.record;
    const title = `Review ${item.index + 1}/${this.state.items.length}: ${r.task_id} · ${r.primitive_type} · ${r.success ? '✓' : '✗'} ${Math.round(r.visible_reward * 100) / 100}${item.duplicates.length ? ' · ⚠ duplicate' : ''}`;
    // The language is set before the diff opens, so its first layout already wraps and shows the header.
    for (const uri of [broken, repaired]) {
      const doc = await vscode.workspace.openTextDocument(uri);
      if (doc.languageId !== REVIEW_LANGUAGE) await vscode.languages.setTextDocumentLanguage(doc, REVIEW_LANGUAGE);
    }
    await vscode.commands.executeCommand('vscode.diff', broken, repaired, title, { preview: true });
    this.render();
    if (item.duplicates.length && opts.announce !== false)
      void vscode.window.showWarningMessage(`ForgeEnv: ${r.task_id} · ${r.primitive_type}: ${item.duplicates.join('; ')}`);
    this.changed.fire(item);
  }

  private render(): void {
    const item = this.current();
    if (!item || !this.state) return;
    this.status.text = `$(checklist) ${statusText(item, this.state.items.length)}`;
    const md = new vscode.MarkdownString(
      `${scoreMarkdown(item)}\n\n---\n\nApprove ${REVIEW_KEYS.approve} · Reject ${REVIEW_KEYS.reject} · Label ${REVIEW_KEYS.label} · Previous ${REVIEW_KEYS.previous} · Next ${REVIEW_KEYS.next}`,
    );
    this.status.tooltip = md;
    this.status.backgroundColor = item.duplicates.length ? new vscode.ThemeColor('statusBarItem.warningBackground') : undefined;
    this.status.show();
  }

  /** Quick pick of the review actions (status bar click), each with its shortcut. */
  async actions(): Promise<void> {
    if (!this.current()) return;
    const items = [
      { label: `$(check) Approve`, description: REVIEW_KEYS.approve, command: 'forgeenv.review.approve' },
      { label: `$(close) Reject`, description: REVIEW_KEYS.reject, command: 'forgeenv.review.reject' },
      { label: `$(tag) Label`, description: REVIEW_KEYS.label, command: 'forgeenv.review.label' },
      { label: `$(arrow-right) Next`, description: REVIEW_KEYS.next, command: 'forgeenv.review.next' },
      { label: `$(arrow-left) Previous`, description: REVIEW_KEYS.previous, command: 'forgeenv.review.previous' },
      { label: `$(history) Reopen as a new revision`, description: '', command: 'forgeenv.review.reopen' },
      { label: `$(debug-stop) Stop reviewing`, description: '', command: 'forgeenv.review.stop' },
    ];
    const picked = await vscode.window.showQuickPick(items, { ignoreFocusOut: true, title: 'ForgeEnv review' });
    if (picked) await vscode.commands.executeCommand(picked.command);
  }

  dispose(): void {
    this.status.dispose();
    this.docs.dispose();
    this.changed.dispose();
  }
}

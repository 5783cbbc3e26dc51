// Labeling, review mode and the dataset summary (issue 5). src/extension.ts calls
// registerReview once.
import * as vscode from 'vscode';
import type { ForgeContext } from '../context';
import { labelCommand } from './labelCommand';
import { exportCommand } from './exportCommand';
import { rescoreCommand } from './rescoreCommand';
import { ReviewCodeLens } from './reviewCodeLens';
import { REVIEW_SCHEME, ReviewController } from './reviewMode';
import type { RepairSession } from '../episode/session';
import { discardRevisionCommand, reopenCommand, submitRevisionCommand } from './reopen';
import { SummaryPanel } from './summaryPanel';

/** `session`: the repair session, whose revision mode Reopen starts. */
export function registerReview(ctx: ForgeContext, session: RepairSession): void {
  const disposables: vscode.Disposable[] = [];
  const review = new ReviewController(ctx);
  const summary = new SummaryPanel(ctx);
  const lens = new ReviewCodeLens(review);
  disposables.push(review, summary, lens);
  // Reviews, labels and revisions change the numbers: keep an open summary current.
  disposables.push(review.onDidChangeItem(() => void (summary.isOpen ? summary.render() : undefined)));
  // Editor-title buttons pass the editor's URI as the first argument; these commands take options objects only.
  const cmd = (id: string, fn: (args: unknown) => Promise<unknown>) =>
    ctx.commands.register(id, (args) => fn(args), { dropUriArgument: true });
  disposables.push(
    vscode.workspace.registerTextDocumentContentProvider(REVIEW_SCHEME, review.docs),
    vscode.languages.registerCodeLensProvider({ scheme: REVIEW_SCHEME }, lens),
  );
  cmd('forgeenv.review.start', (a) => review.start(a));
  cmd('forgeenv.review.next', () => review.move(1));
  cmd('forgeenv.review.previous', () => review.move(-1));
  cmd('forgeenv.review.approve', (a) => review.verdict('approve', a));
  cmd('forgeenv.review.reject', (a) => review.verdict('reject', a));
  cmd('forgeenv.review.stop', () => review.stop());
  cmd('forgeenv.review.actions', () => review.actions());
  cmd('forgeenv.review.label', (a) => labelCommand(ctx, review, a));
  cmd('forgeenv.review.reopen', (a) => reopenCommand(ctx, review, session, a));
  cmd('forgeenv.review.submitRevision', (a) => submitRevisionCommand(review, session, a));
  cmd('forgeenv.review.discardRevision', () => discardRevisionCommand(session));
  cmd('forgeenv.review.summary', (a) => summary.open(a));
  cmd('forgeenv.review.export', (a) => exportCommand(ctx, a));
  cmd('forgeenv.review.rescore', (a) => rescoreCommand(ctx, a));
  // For tests: what the review walk and the summary panel currently show.
  cmd('forgeenv.review.inspect', async () => ({
    active: review.state !== undefined,
    dir: review.state?.dir,
    index: review.state?.index,
    total: review.state?.items.length,
    current: review.current() && {
      recordId: review.current()!.record.info.record_id,
      duplicates: review.current()!.duplicates,
      brokenUri: review.uriFor(review.current()!, 'broken').toString(),
      repairedUri: review.uriFor(review.current()!, 'repaired').toString(),
      repairedOk: review.current()!.repaired.ok,
    },
    summaryOpen: summary.isOpen,
    summaryHtml: summary.html,
    rejectedMessages: summary.rejectedMessages,
  }));
  for (const d of disposables) ctx.lifecycle.add(d);
}

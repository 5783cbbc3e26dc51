// The user-facing side of writing records into the dataset folder: a failed write is reported
// with Retry / Save As… / Choose Dataset Folder…, and records left from an earlier session are
// retried on start-up. The records themselves wait safely in PendingWrites until written.
import * as vscode from 'vscode';
import { saveEpisodeAs } from '../../store/episodeWriter';
import type { PendingWrites, WriteOutcome } from './pendingWrites';

export class DatasetWriter {
  constructor(
    readonly pending: PendingWrites,
    private readonly log: vscode.LogOutputChannel,
    /** Where "Save As…" proposes to save. */
    private readonly saveAsDir: () => string,
    /** A record reached a dataset (the task queue refreshes). */
    private readonly onStored: () => void,
  ) {}

  reportFailure(outcome: Extract<WriteOutcome, { ok: false }>): void {
    const p = outcome.pending;
    this.log.error(`dataset write failed (${outcome.kind}): ${outcome.error}`);
    if (!p) return;
    void vscode.window
      .showErrorMessage(
        `ForgeEnv could not save the ${p.kind}: ${outcome.error} It is kept and nothing is lost.`,
        'Retry',
        'Save As…',
        'Choose Dataset Folder…',
      )
      .then((c) => {
        if (c === 'Retry') void this.retry(p.id);
        else if (c === 'Save As…') void this.saveAs(p.id);
        else if (c === 'Choose Dataset Folder…') void this.retryElsewhere(p.id);
      });
  }

  /** Writes a queued record into its dataset folder, or into `datasetDir`. */
  async retry(id: string, datasetDir?: string): Promise<WriteOutcome> {
    const outcome = await this.pending.attempt(id, datasetDir);
    if (outcome.ok) {
      void vscode.window.showInformationMessage(`ForgeEnv: saved to ${outcome.datasetDir}.`);
      this.onStored();
    } else this.reportFailure(outcome);
    return outcome;
  }

  private async retryElsewhere(id: string): Promise<void> {
    const picked = await vscode.window.showOpenDialog({
      canSelectFolders: true,
      canSelectFiles: false,
      title: 'ForgeEnv: dataset folder for this record',
      openLabel: 'Save Here',
    });
    if (picked?.[0]) await this.retry(id, picked[0].fsPath);
  }

  /** Appends a queued record to a JSONL file of the user's choice (its timeline beside it). */
  async saveAs(id: string, target?: string): Promise<boolean> {
    const p = this.pending.list().find((x) => x.id === id);
    if (!p) return false;
    let file = target;
    if (!file) {
      const uri = await vscode.window.showSaveDialog({
        title: 'ForgeEnv: save the record as',
        filters: { 'JSON Lines': ['jsonl'] },
        defaultUri: vscode.Uri.joinPath(vscode.Uri.file(this.saveAsDir()), `${p.kind}-${p.episodeId}.jsonl`),
      });
      if (!uri) return false;
      file = uri.fsPath;
    }
    try {
      // The store's checks and append, into the chosen file: an invalid record is refused here too.
      await saveEpisodeAs(file, p);
    } catch (e) {
      this.reportFailure({ ok: false, error: `${file}: ${(e as Error).message}`, kind: 'not_writable', pending: p });
      return false;
    }
    await this.pending.remove(id);
    void vscode.window.showInformationMessage(`ForgeEnv: saved to ${file}.`);
    return true;
  }

  /** Start-up: writes what an earlier session could not; reports the first failure once. */
  async retryWaiting(): Promise<void> {
    const waiting = this.pending.list();
    if (waiting.length === 0) return;
    let failed: Extract<WriteOutcome, { ok: false }> | undefined;
    let n = 0;
    for (const p of waiting) {
      const o = await this.pending.attempt(p.id);
      if (o.ok) n++;
      else failed ??= o;
    }
    if (n) {
      this.log.info(`wrote ${n} record(s) that were waiting from an earlier session`);
      this.onStored();
    }
    if (failed) this.reportFailure(failed);
  }
}

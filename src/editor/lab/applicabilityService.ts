// Applicability per open document, computed lazily off the typing path (chunked async scan,
// see core/applicability.ts), cached by URI + version, stale scans aborted.
import * as vscode from 'vscode';
import { computeApplicable, type ApplicablePrimitive } from './core/applicability';
import { CancelledError, VersionedComputeCache } from './core/computeCache';

export class ApplicabilityService implements vscode.Disposable {
  private readonly cache = new VersionedComputeCache<ApplicablePrimitive[]>(
    (text, signal) => computeApplicable(text, undefined, signal),
    16,
  );
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor() {
    this.subscriptions.push(vscode.workspace.onDidCloseTextDocument((d) => this.cache.delete(d.uri.toString())));
  }

  /** Resolves to the applicable primitives of this exact version; rejects with CancelledError if the document changed meanwhile. */
  get(document: vscode.TextDocument): Promise<ApplicablePrimitive[]> {
    return this.cache.get(document.uri.toString(), document.version, () => document.getText());
  }

  peek(document: vscode.TextDocument): ApplicablePrimitive[] | undefined {
    return this.cache.peek(document.uri.toString(), document.version);
  }

  /** Like get, but `undefined` instead of an error when superseded or cancelled by `token`. */
  async tryGet(document: vscode.TextDocument, token?: vscode.CancellationToken): Promise<ApplicablePrimitive[] | undefined> {
    const cancelled = new Promise<undefined>((resolve) => token?.onCancellationRequested(() => resolve(undefined)));
    try {
      return await Promise.race([this.get(document), cancelled]);
    } catch (e) {
      if (e instanceof CancelledError) return undefined;
      throw e;
    }
  }

  dispose(): void {
    this.cache.clear();
    for (const s of this.subscriptions) s.dispose();
  }
}

// One owner for disposables (cf. vscode-pull-request-github's src/common/lifecycle.ts): what the
// editor layer creates is added to exactly one store and disposed once, newest first; one failing
// dispose never keeps the others from running. No vscode import (vscode.Disposable fits).
export interface Disposable {
  dispose(): unknown;
}

export class DisposableStore implements Disposable {
  private items: Disposable[] = [];
  private disposed = false;

  get isDisposed(): boolean {
    return this.disposed;
  }

  /** Takes ownership; adding to a disposed store disposes the item at once (nothing leaks). */
  add<T extends Disposable>(item: T): T {
    if (this.disposed) void Promise.resolve().then(() => item.dispose());
    else this.items.push(item);
    return item;
  }

  /** Disposes everything, newest first, awaiting async disposes; rejects with every error at the end. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    const items = this.items.reverse();
    this.items = [];
    const errors: unknown[] = [];
    for (const item of items) {
      try {
        await item.dispose();
      } catch (e) {
        errors.push(e);
      }
    }
    if (errors.length) throw new AggregateError(errors, `${errors.length} disposable(s) failed to dispose`);
  }
}

/** A disposable that runs `fn` once. */
export function toDisposable(fn: () => unknown): Disposable {
  let done = false;
  return {
    dispose: () => {
      if (done) return;
      done = true;
      return fn();
    },
  };
}

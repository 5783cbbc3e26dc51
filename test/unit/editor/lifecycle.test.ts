import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DisposableStore, toDisposable } from '../../../src/editor/lifecycle';

describe('DisposableStore', () => {
  test('disposes newest first, awaits async disposes, and only once', async () => {
    const order: string[] = [];
    const store = new DisposableStore();
    store.add(toDisposable(() => order.push('a')));
    store.add({ dispose: async () => (await new Promise((r) => setTimeout(r, 5)), order.push('b')) });
    store.add(toDisposable(() => order.push('c')));
    await store.dispose();
    await store.dispose();
    assert.deepEqual(order, ['c', 'b', 'a']);
    assert.equal(store.isDisposed, true);
  });

  test('a failing dispose does not stop the others, and is reported', async () => {
    const done: string[] = [];
    const store = new DisposableStore();
    store.add(toDisposable(() => done.push('first')));
    store.add(
      toDisposable(() => {
        throw new Error('boom');
      }),
    );
    store.add(toDisposable(() => done.push('last')));
    await assert.rejects(store.dispose(), (e: unknown) => e instanceof AggregateError && (e.errors[0] as Error).message === 'boom');
    assert.deepEqual(done, ['last', 'first']);
  });

  test('what is added after dispose is disposed at once', async () => {
    const store = new DisposableStore();
    await store.dispose();
    let disposed = false;
    store.add(toDisposable(() => (disposed = true)));
    await new Promise((r) => setImmediate(r));
    assert.equal(disposed, true);
  });
});

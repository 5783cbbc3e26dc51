// The warm pool's bookkeeping (warm/pool.ts) with stand-in zygote handles: no zygote starts while
// every core runs a run, two shapes of one snapshot get distinct labels, and a shape with no memory
// for its zygotes takes it from a shape used less recently. The zygotes themselves are tested for
// real in warmRuntime.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { WarmPool, RETIRED, type ParkedHandle } from '../../src/env/warm/pool';

function handle(key: string): ParkedHandle & { retired: boolean } {
  const h = {
    key,
    ready: true,
    retired: false,
    get alive() {
      return !h.retired;
    },
    failure: undefined as string | undefined,
    settled: Promise.resolve(),
    closed: Promise.resolve(),
    rssMiB: () => 10,
    retire() {
      h.retired = true;
      h.failure = RETIRED;
    },
  };
  return h;
}

const until = async (cond: () => boolean, ms = 2_000) => {
  for (const t = Date.now(); !cond();) {
    if (Date.now() - t > ms) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 10));
  }
};

test('no zygote starts while the cores are busy; it starts once they are not', async () => {
  let busy = true;
  const started: string[] = [];
  const pool = new WarmPool<null>({
    start: (key) => (started.push(key), Promise.resolve(handle(key))),
    perKey: 1,
    idleMs: 60_000,
    busy: () => busy,
  });
  pool.want('a', null, 'simulated 2026-11');
  await new Promise((r) => setTimeout(r, 400));
  assert.deepEqual(started, [], 'held back while busy');
  busy = false;
  await until(() => started.length === 1);
  assert.ok(pool.claim('a'));
  await pool.clear();
});

test('busy cores hold back only the specs the predicate names (real mode), not the others', async () => {
  const started: string[] = [];
  const pool = new WarmPool<'real' | 'simulated'>({
    start: (key) => (started.push(key), Promise.resolve(handle(key))),
    perKey: 1,
    idleMs: 60_000,
    busy: (mode) => mode === 'real',
  });
  pool.want('r', 'real', 'real 2026-11');
  pool.want('s', 'simulated', 'simulated 2026-11');
  await until(() => started.length === 1);
  await new Promise((r) => setTimeout(r, 400));
  assert.deepEqual(started, ['s'], 'the simulated zygote started, the real one was held back');
  await pool.clear();
});

test('concurrentStarts lets cheap zygotes start together; one start at a time otherwise', async () => {
  for (const overlap of [1, 2]) {
    const started: string[] = [];
    let release: () => void = () => undefined;
    const gate = new Promise<void>((r) => (release = r));
    const pool = new WarmPool<null>({
      // Each zygote stays "importing" until the gate opens.
      start: (key) => (started.push(key), Promise.resolve({ ...handle(key), settled: gate })),
      perKey: 2,
      idleMs: 60_000,
      concurrentStarts: () => overlap,
    });
    pool.want('a', null, 'simulated 2026-11');
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(started.length, overlap, `concurrentStarts ${overlap}`);
    release();
    await until(() => started.length === 2);
    await pool.clear();
  }
});

test('a second shape of a snapshot is labelled apart and takes memory from the one used less recently', async () => {
  const handles: ReturnType<typeof handle>[] = [];
  let room = 2;
  const pool = new WarmPool<null>({
    start: (key) => {
      const live = handles.filter((h) => !h.retired).length;
      if (live >= room) return Promise.resolve(undefined); // no memory for another parked zygote
      const h = handle(key);
      handles.push(h);
      return Promise.resolve(h);
    },
    perKey: 2,
    idleMs: 60_000,
  });
  pool.want('base', null, 'real 2026-11');
  await until(() => pool.stats().keys[0]?.ready === 2);
  await new Promise((r) => setTimeout(r, 5));
  pool.want('task', null, 'real 2026-11');
  assert.deepEqual(
    pool.stats().keys.map((k) => k.label),
    ['real 2026-11', 'real 2026-11 #2'],
  );
  await until(() => (pool.stats().keys.find((k) => k.label.endsWith('#2'))?.ready ?? 0) === 2);
  assert.equal(handles.filter((h) => h.key === 'base' && h.retired).length, 2, 'the older shape gave its memory back');
  room = 0;
  await pool.clear();
});

test('a zygote whose preparation printed at a step is not a failure in a row: the next one, without the step, starts', async () => {
  const logged: string[] = [];
  let n = 0;
  const pool = new WarmPool<null>({
    start: (key) => {
      n++;
      const h = handle(key);
      // The first three print, each at another step (the executor leaves each to the script); then one imports quietly.
      if (n > 3) return Promise.resolve(h);
      h.retired = true;
      const failure = `the zygote cannot serve runs: the preparation printed 9 bytes at step${n} (a cold run prints them where the script gets there): b'x'`;
      return Promise.resolve({ ...h, ready: false, alive: false, failure, retire: () => undefined });
    },
    perKey: 1,
    idleMs: 60_000,
    log: (line) => logged.push(line),
  });
  pool.want('a', null, 'real 2025-09');
  await until(() => n >= 4 && pool.claim('a') !== undefined, 5_000);
  assert.ok(!logged.some((l) => /its runs stay cold/.test(l)), logged.join('\n'));
  await pool.clear();
});

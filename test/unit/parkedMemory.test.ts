// Parked zygotes' memory (memory.ts `tryAcquireParked`): kept apart from the runs' budget, so that a
// parked zygote never shrinks or delays a run, and a claimed one runs with a cold run's limits only
// when the run's whole footprint fits.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MemoryLedger } from '../../src/env/sandbox/memory';

const BUDGET = { budgetMiB: 20_000, parkedMiB: 2_500, concurrency: 2 };
const OVERHEAD = 512;

test('parked zygotes reserve their own allowance, never the runs', async () => {
  const ledger = new MemoryLedger(BUDGET);
  const p1 = ledger.tryAcquireParked(16_384, OVERHEAD, 1_200);
  const p2 = ledger.tryAcquireParked(16_384, OVERHEAD, 1_200);
  assert.ok(p1 && p2);
  assert.equal(ledger.tryAcquireParked(16_384, OVERHEAD, 1_200), undefined, 'a third does not fit the allowance');
  // Its limit is the full share a cold run gets on an idle machine.
  assert.equal(p1.addressSpaceMiB, ledger.fairShare(OVERHEAD));
  assert.equal(ledger.reservedMiB, 0, 'parked memory is not the runs');
  const a = await ledger.acquire(16_384, OVERHEAD);
  const b = await ledger.acquire(16_384, OVERHEAD);
  assert.equal(a.addressSpaceMiB, p1.addressSpaceMiB, 'two cold runs get full shares next to parked zygotes');
  assert.equal(b.addressSpaceMiB, p1.addressSpaceMiB);
  assert.equal(p1.activate?.(), false, 'no room for a third run: the claim is refused');
  a.release();
  assert.equal(p1.activate?.(), true);
  assert.equal(p1.activate?.(), true, 'activating twice reserves once');
  assert.equal(ledger.reservedMiB, b.addressSpaceMiB + p1.addressSpaceMiB + 2 * OVERHEAD);
  // Its parked share is free again for the next zygote.
  const p3 = ledger.tryAcquireParked(16_384, OVERHEAD, 1_200);
  assert.ok(p3);
  p1.release();
  p1.release();
  b.release();
  p2.release();
  p3.release();
  assert.equal(ledger.reservedMiB, 0);
  assert.ok(ledger.tryAcquireParked(16_384, OVERHEAD, 2_500), 'the whole allowance is back');
});

test('no parked zygote while a run waits for memory, and none without an allowance', async () => {
  const ledger = new MemoryLedger(BUDGET);
  const a = await ledger.acquire(16_384, OVERHEAD);
  const b = await ledger.acquire(16_384, OVERHEAD);
  const waiting = ledger.acquire(16_384, OVERHEAD);
  assert.equal(ledger.tryAcquireParked(16_384, OVERHEAD, 100), undefined);
  a.release();
  (await waiting).release();
  b.release();
  assert.equal(new MemoryLedger({ budgetMiB: 20_000, concurrency: 2 }).tryAcquireParked(16_384, OVERHEAD, 100), undefined);
});

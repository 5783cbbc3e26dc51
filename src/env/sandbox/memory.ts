// How much memory a run may take, so that concurrent runs together cannot exceed the machine. Each
// run's `RLIMIT_AS` was a flat 16 GiB: two concurrent runs on a 24 GiB machine were granted 30 GiB
// between them. Now every run reserves its footprint from one budget per ForgeEnv process (the
// machine's memory less a reserve for the system and ForgeEnv itself) while it runs:
//
//   footprint = RLIMIT_AS + the run folder's tmpfs quota (as root, quota.ts) + the sandbox's /tmp and /dev/shm
//
// and its RLIMIT_AS is the smallest of the setting, a fair share (the budget divided by the number
// of cores: the server's default run concurrency, `forgeenv serve --max-runs`) and what is left.
// A run that finds too little left waits for running runs to finish (never over-commits); a run
// alone always starts. RLIMIT_AS is per process (a run's worker processes each have it), virtual
// (more than the resident memory), and there is no usable cgroup to cap a run's processes together
// (cgroup v1 here, not delegated): docs/sandbox.md says what that leaves open.
import { availableParallelism, totalmem } from 'node:os';

const MIB = 1024 * 1024;
/** Kept for the system, the editor and ForgeEnv itself. */
export const HOST_RESERVE_MIB = 2048;
/** Below this, `import torch` alone fails (it maps ~3.1 GB): a run waits rather than start with less. */
export const MIN_ADDRESS_SPACE_MIB = 4096;

export interface MemoryBudget {
  /** Total MiB runs may reserve together. */
  budgetMiB: number;
  /** Runs expected at once (the fair share's divisor). */
  concurrency: number;
}

export const machineBudget = (): MemoryBudget => ({
  budgetMiB: Math.max(MIN_ADDRESS_SPACE_MIB, Math.floor(totalmem() / MIB) - HOST_RESERVE_MIB),
  concurrency: Math.max(1, availableParallelism()),
});

export interface MemoryGrant {
  /** The run's RLIMIT_AS in MiB (0: none, as the setting asked). */
  addressSpaceMiB: number;
  release(): void;
}

interface Waiter {
  /** The RLIMIT_AS it would get now, or undefined while it does not fit. */
  want: () => number | undefined;
  /** Reserves and hands over the grant. */
  start: (as: number) => void;
}

export class MemoryLedger {
  private reserved = 0;
  private running = 0;
  private readonly waiting: Waiter[] = [];
  /**
   * Frees memory held ahead of time (the warm pool's parked zygotes, warm/pool.ts): called while a
   * run would get less than its full share; returns false when there is nothing left to free.
   */
  onPressure: (() => boolean) | undefined;

  constructor(private readonly budget: MemoryBudget = machineBudget()) {}

  /** MiB reserved by the runs now running. */
  get reservedMiB(): number {
    return this.reserved;
  }

  /** Runs waiting for memory. */
  get queued(): number {
    return this.waiting.length;
  }

  /**
   * Reserves a run's memory. `requestedMiB` is the setting (0 = no limit: nothing is reserved, the
   * user chose so); `overheadMiB` the rest of its footprint. Resolves when it fits (at once, or when
   * other runs have released), first come first served; an aborted signal resolves at once with a
   * no-op grant (the caller sees its own signal and does not run).
   */
  acquire(requestedMiB: number, overheadMiB: number, signal?: AbortSignal): Promise<MemoryGrant> {
    const none: MemoryGrant = { addressSpaceMiB: 0, release: () => undefined };
    if (requestedMiB === 0) return Promise.resolve(none);
    const fair = this.fairShare(overheadMiB);
    // Memory parked ahead never makes a run wait or get less than a cold run would.
    while (this.onPressure && this.budget.budgetMiB - this.reserved - overheadMiB < Math.min(requestedMiB, fair) && this.onPressure());
    const want = (): number | undefined => {
      // Alone, a run always starts, with its share even where the machine is small.
      if (this.running === 0) return Math.min(requestedMiB, fair);
      const as = Math.min(requestedMiB, fair, this.budget.budgetMiB - this.reserved - overheadMiB);
      return as >= Math.min(requestedMiB, MIN_ADDRESS_SPACE_MIB) ? as : undefined;
    };
    return new Promise<MemoryGrant>((resolve) => {
      const onAbort = () => {
        const i = this.waiting.indexOf(w);
        if (i >= 0) this.waiting.splice(i, 1);
        resolve(none);
      };
      const w: Waiter = {
        want,
        start: (as) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(this.grant(as, overheadMiB));
        },
      };
      if (signal?.aborted) return resolve(none);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(w);
      this.wake();
    });
  }

  /**
   * Reserves a run's memory only if it gets its full share at once and nobody waits (a zygote
   * started ahead, warm/pool.ts); undefined otherwise.
   */
  tryAcquire(requestedMiB: number, overheadMiB: number): MemoryGrant | undefined {
    if (requestedMiB === 0) return { addressSpaceMiB: 0, release: () => undefined };
    const as = Math.min(requestedMiB, this.fairShare(overheadMiB));
    if (this.waiting.length || this.budget.budgetMiB - this.reserved - overheadMiB < as) return undefined;
    return this.grant(as, overheadMiB);
  }

  /** The RLIMIT_AS a run gets when the machine is not short (the setting permitting). */
  fairShare(overheadMiB: number): number {
    return Math.max(MIN_ADDRESS_SPACE_MIB, Math.floor(this.budget.budgetMiB / this.budget.concurrency) - overheadMiB);
  }

  private grant(as: number, overheadMiB: number): MemoryGrant {
    const footprint = as + overheadMiB;
    this.reserved += footprint;
    this.running++;
    let released = false;
    return {
      addressSpaceMiB: as,
      release: () => {
        if (released) return;
        released = true;
        this.reserved -= footprint;
        this.running--;
        this.wake();
      },
    };
  }

  private wake(): void {
    while (this.waiting.length) {
      const as = this.waiting[0].want();
      if (as === undefined) return;
      this.waiting.shift()!.start(as);
    }
  }
}

/** The ledger of this process's runs. */
export const runMemory = new MemoryLedger();

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
  /**
   * MiB kept apart for warm zygotes parked ahead (warm/pool.ts), each reserving about its resident
   * memory: they never take a run's room, and a run never waits for them (default none).
   */
  parkedMiB?: number;
  /** Runs expected at once (the fair share's divisor). */
  concurrency: number;
}

/** An eighth of what runs may use is kept for parked zygotes (two real-mode ones on a 24 GiB machine). */
export function machineBudget(): MemoryBudget {
  const total = Math.floor(totalmem() / MIB) - HOST_RESERVE_MIB;
  const parkedMiB = total - Math.floor(total / 8) >= MIN_ADDRESS_SPACE_MIB ? Math.floor(total / 8) : 0;
  return {
    budgetMiB: Math.max(MIN_ADDRESS_SPACE_MIB, total - parkedMiB),
    parkedMiB,
    concurrency: Math.max(1, availableParallelism()),
  };
}

export interface MemoryGrant {
  /** The run's RLIMIT_AS in MiB (0: none, as the setting asked). */
  addressSpaceMiB: number;
  release(): void;
  /**
   * A parked grant (`tryAcquireParked`) only: reserves the run's whole footprint now that it runs;
   * false (nothing changed) when that does not fit at once. A running grant returns true.
   */
  activate?: () => boolean;
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
  /** MiB reserved by parked zygotes, out of `budget.parkedMiB`. */
  private parkedReserved = 0;

  constructor(private readonly budget: MemoryBudget = machineBudget()) {}

  /** MiB reserved by the runs now running. */
  get reservedMiB(): number {
    return this.reserved;
  }

  /** Runs running (claimed zygotes included, parked ones not). */
  get runningCount(): number {
    return this.running;
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
   * A zygote parked ahead (warm/pool.ts): its RLIMIT_AS is the full share a cold run would get now,
   * but while it only waits it reserves `parkedMiB` (about its resident memory) of the budget's
   * `parkedMiB`, apart from the runs' (undefined when that is full or a run waits). `activate`
   * reserves the run's whole footprint when it is claimed, and refuses (the run is then cold) when
   * that does not fit: runs together never exceed the budget, and a warm run never gets other
   * limits than a cold run would.
   */
  tryAcquireParked(requestedMiB: number, overheadMiB: number, parkedMiB: number): MemoryGrant | undefined {
    if (requestedMiB === 0) return { addressSpaceMiB: 0, release: () => undefined, activate: () => true };
    const as = Math.min(requestedMiB, this.fairShare(overheadMiB));
    if (this.waiting.length || this.parkedReserved + parkedMiB > (this.budget.parkedMiB ?? 0)) return undefined;
    this.parkedReserved += parkedMiB;
    let held: 'parked' | 'running' | 'released' = 'parked';
    return {
      addressSpaceMiB: as,
      activate: () => {
        if (held === 'running') return true;
        if (held !== 'parked') return false;
        const full = as + overheadMiB;
        if (this.waiting.length || this.budget.budgetMiB - this.reserved < full) return false;
        this.parkedReserved -= parkedMiB;
        this.reserved += full;
        this.running++;
        held = 'running';
        return true;
      },
      release: () => {
        if (held === 'released') return;
        if (held === 'running') {
          this.reserved -= as + overheadMiB;
          this.running--;
        } else this.parkedReserved -= parkedMiB;
        held = 'released';
        this.wake();
      },
    };
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

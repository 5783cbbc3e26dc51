// The warm pool: per run shape (a key: interpreter, mode, versions, sandbox options, binds, the
// environment), up to `perKey` zygotes started ahead and parked until a run claims one (zygote.ts).
// A claimed zygote is never returned: the pool starts another in the background, one start at a
// time on the whole machine (each imports the libraries: 20-30 s of CPU for torch and friends), or
// as many as `concurrentStarts` allows for a spec (simulated zygotes: a few tenths of a second each).
// A key unused for `idleMs` is dropped with its zygotes; parked zygotes reserve memory apart from
// the runs' (memory.ts `tryAcquireParked`), and a key used less recently gives its zygotes' memory
// to a key that has none to start with. Plain bookkeeping
// here; the executor knows how to start one (executor.ts `startParked`).

import { printedStep } from './zygote';

/** A zygote started ahead, as the pool sees it. */
export interface ParkedHandle {
  readonly key: string;
  /** True once its imports are done. */
  readonly ready: boolean;
  /** False once it died or misbehaved (or was retired): never handed out. */
  readonly alive: boolean;
  /** Why it is not alive, when it failed. */
  readonly failure: string | undefined;
  /** Resolves once it is ready or has failed. */
  readonly settled: Promise<void>;
  /** Resolves once, retired or dead, its resources are given back. */
  readonly closed: Promise<void>;
  /** Resident memory of the zygote in MiB (0 when unknown). */
  rssMiB(): number;
  /** Kills it and gives back its run folder, uid and memory (memory at once). */
  retire(): void;
}

export interface WarmStats {
  enabled: boolean;
  /** Per run shape, by label (never the key: it holds the runs' environment). */
  keys: {
    label: string;
    parked: number;
    ready: number;
    starting: boolean;
    lastError?: string;
    claims: number;
    misses: number;
    rssMiB: number;
  }[];
}

interface KeyState<S> {
  spec: S;
  label: string;
  /** The label asked for; `label` adds a number when another shape already has it. */
  baseLabel: string;
  parked: ParkedHandle[];
  lastUsed: number;
  claims: number;
  misses: number;
  lastError?: string;
  /** Zygotes of this key that failed to import in a row: past 2 the key is given up. */
  failures: number;
}

export interface WarmPoolOptions<S> {
  /** Spawns one zygote for a spec; undefined when it cannot now (no memory to spare): retried later. */
  start(key: string, spec: S): Promise<ParkedHandle | { error: string } | undefined>;
  perKey: number;
  idleMs: number;
  /**
   * True while no zygote of this spec should start because the machine's cores are all running
   * runs: a real-mode zygote imports every library, more than a run of the same shape does, so
   * under sustained load it would only slow the runs it was meant to speed up; the pool fills in
   * the gaps instead. Asked per spec: a simulated zygote imports what each of its runs imports and
   * saves the run its shutdown (zygote.ts, the prompt exit), so it pays even under load.
   */
  busy?: (spec: S) => boolean;
  /**
   * How many zygotes may be starting at once while one of this spec starts (default 1). Starts of
   * cheap zygotes may overlap so that the pool keeps up with runs that each take one.
   */
  concurrentStarts?: (spec: S) => number;
  log?: (line: string) => void;
}

const RETRY_MS = 3_000;
/** How soon a pool held back by busy cores looks again. */
const BUSY_RETRY_MS = 250;
/** The failure of a zygote retired on purpose (idle, memory, shutdown): not a fault of its key. */
export const RETIRED = 'retired';

export class WarmPool<S> {
  private readonly keys = new Map<string, KeyState<S>>();
  /** Keys with a zygote starting, one entry per start. */
  private readonly starting: string[] = [];
  /** The starts in progress (settled, never rejected), so `clear` can wait for a zygote spawned meanwhile. */
  private readonly startingRuns = new Set<Promise<unknown>>();
  private timer: NodeJS.Timeout | undefined;
  enabled = true;

  constructor(private readonly opts: WarmPoolOptions<S>) {}

  /** Where pool events are written (the editor's output channel, serve's log). */
  setLog(log: ((line: string) => void) | undefined): void {
    this.opts.log = log;
  }

  /** Writes a line to the pool's log (the executor's notes on runs that missed it). */
  log(line: string): void {
    this.opts.log?.(line);
  }

  /** Asks for warm zygotes of this shape (lazily started in the background). */
  want(key: string, spec: S, label: string): void {
    if (!this.enabled) return;
    let k = this.keys.get(key);
    if (!k) {
      // Two shapes of one snapshot (a task's own hub, variables or shims) must not read as one pool.
      const same = [...this.keys.values()].filter((x) => x.baseLabel === label).length;
      const shown = same ? `${label} #${same + 1}` : label;
      k = { spec, label: shown, baseLabel: label, parked: [], lastUsed: Date.now(), claims: 0, misses: 0, failures: 0 };
      this.keys.set(key, k);
      this.opts.log?.(`[warm] pool for ${shown}: up to ${this.opts.perKey} zygote(s)`);
    }
    k.lastUsed = Date.now();
    this.pump();
  }

  /** A ready, healthy zygote of this key, removed from the pool (the caller owns it), or undefined. */
  claim(key: string): ParkedHandle | undefined {
    const k = this.keys.get(key);
    if (!k) return undefined;
    k.lastUsed = Date.now();
    k.parked = k.parked.filter((p) => p.alive || (p.retire(), false));
    const i = k.parked.findIndex((p) => p.ready);
    if (i < 0) {
      k.misses++;
      return undefined;
    }
    const [p] = k.parked.splice(i, 1);
    k.claims++;
    this.pump();
    return p;
  }

  /** Keys of other shapes with this label holding ready zygotes: what a run of `key` just missed (for the log). */
  readyLookalikes(key: string, label: string): string[] {
    return [...this.keys.entries()]
      .filter(([other, k]) => other !== key && k.baseLabel === label && k.parked.some((p) => p.ready && p.alive))
      .map(([other]) => other);
  }

  /** Resolves once `count` zygotes of this key are ready (true), or false after `timeoutMs` or when the key was given up. */
  async waitReady(key: string, count: number, timeoutMs: number): Promise<boolean> {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const k = this.keys.get(key);
      if (!k || k.failures >= 2) return false;
      if (k.parked.filter((p) => p.ready && p.alive).length >= Math.min(count, this.opts.perKey)) return true;
      if (Date.now() > until) return false;
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  /**
   * Retires one parked zygote of a key used less recently than `forKey` (the oldest first), to give
   * its memory to `forKey`'s pool; false when there is none.
   */
  private evictFor(forKey: string): boolean {
    const asking = this.keys.get(forKey);
    if (!asking) return false;
    const order = [...this.keys.entries()]
      .filter(([key, k]) => key !== forKey && k.lastUsed < asking.lastUsed && k.parked.length)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    const victim = order[0]?.[1];
    const p = victim?.parked.shift();
    if (!victim || !p) return false;
    p.retire();
    this.opts.log?.(`[warm] retired a ${victim.label} zygote: the pool of ${asking.label} needed its memory`);
    return true;
  }

  stats(): WarmStats {
    return {
      enabled: this.enabled,
      keys: [...this.keys.entries()].map(([key, k]) => ({
        label: k.label,
        parked: k.parked.length,
        ready: k.parked.filter((p) => p.ready && p.alive).length,
        starting: this.starting.includes(key),
        claims: k.claims,
        misses: k.misses,
        rssMiB: Math.round(k.parked.reduce((s, p) => s + p.rssMiB(), 0)),
        ...(k.lastError ? { lastError: k.lastError } : {}),
      })),
    };
  }

  /** Retires every zygote and forgets every key; resolves once their run folders are given back. */
  async clear(): Promise<void> {
    const all = [...this.keys.values()].flatMap((k) => k.parked);
    for (const p of all) p.retire();
    this.keys.clear();
    clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all(all.map((p) => p.closed));
    // A zygote still spawning when the keys were cleared is retired by its own start: wait for it.
    await Promise.all([...this.startingRuns]);
  }

  /** Starts the next missing zygotes (one at a time, or as many as `concurrentStarts` allows); drops idle keys. */
  private pump(): void {
    if (!this.enabled) return;
    const now = Date.now();
    for (const [key, k] of this.keys) {
      if (now - k.lastUsed > this.opts.idleMs) {
        for (const p of k.parked) p.retire();
        this.keys.delete(key);
        this.opts.log?.(`[warm] pool for ${k.label} idle: retired`);
      }
    }
    // The shape used last first: memory one gave back (evictFor) goes to the shape that asked.
    const byUse = [...this.keys.entries()].sort((a, b) => b[1].lastUsed - a[1].lastUsed);
    let heldBack = false;
    k: for (const [key, k] of byUse) {
      k.parked = k.parked.filter((p) => p.alive || (p.retire(), false));
      for (;;) {
        const mine = this.starting.filter((s) => s === key).length;
        if (k.parked.length + mine >= this.opts.perKey || k.failures >= 2) continue k;
        if (!this.mayStart(k.spec)) return;
        if (this.opts.busy?.(k.spec)) {
          heldBack = true;
          continue k;
        }
        this.launch(key, k);
      }
    }
    if (this.starting.length) return;
    if (heldBack) this.schedule(BUSY_RETRY_MS);
    // Nothing to start: look again for idle keys later.
    else if (this.keys.size) this.schedule(Math.min(this.opts.idleMs, 60_000));
  }

  /** True when a zygote of `spec` may start now: none is starting, or every start (this one too) may overlap that many. */
  private mayStart(spec: S): boolean {
    const n = this.starting.length;
    if (n === 0) return true;
    const overlap = (x: S | undefined) => (x === undefined ? 1 : Math.max(1, this.opts.concurrentStarts?.(x) ?? 1));
    return overlap(spec) > n && this.starting.every((key) => overlap(this.keys.get(key)?.spec) > n);
  }

  /** Starts one zygote of `key` in the background; the pool looks again once it is ready or failed. */
  private launch(key: string, k: KeyState<S>): void {
    this.starting.push(key);
    const started = this.startOne(key, k);
    const settled = started.catch(() => undefined);
    this.startingRuns.add(settled);
    const done = () => {
      this.starting.splice(this.starting.indexOf(key), 1);
      this.startingRuns.delete(settled);
    };
    void started.then(
      (retryMs) => {
        done();
        this.schedule(retryMs);
      },
      (e: unknown) => {
        done();
        k.failures++;
        k.lastError = (e as Error).message;
        this.schedule(RETRY_MS);
      },
    );
  }

  /** Spawns one zygote and waits until it is ready or failed (one import at a time); the delay before the next. */
  private async startOne(key: string, k: KeyState<S>): Promise<number> {
    const t0 = Date.now();
    const r = await this.opts.start(key, k.spec);
    // No memory for parked zygotes: a pool used less recently gives it back.
    if (r === undefined) return this.evictFor(key) ? 0 : RETRY_MS;
    if ('error' in r) {
      k.failures++;
      k.lastError = r.error;
      this.opts.log?.(`[warm] ${k.label}: ${r.error}${k.failures >= 2 ? ' (its runs stay cold)' : ''}`);
      return RETRY_MS;
    }
    if (this.keys.get(key) !== k || !this.enabled) {
      // Cleared while it spawned: `clear` waits for this start, so the folder is given back before it resolves.
      r.retire();
      await r.closed;
      return 0;
    }
    // Parked at once, so that its memory can be given back to a cold run while it imports.
    k.parked.push(r);
    await r.settled;
    if (r.alive) {
      k.failures = 0;
      this.opts.log?.(
        `[warm] ${k.label}: zygote ready in ${((Date.now() - t0) / 1000).toFixed(1)} s (${k.parked.filter((p) => p.ready && p.alive).length}/${this.opts.perKey} ready)`,
      );
      return 0;
    }
    if (r.failure === RETIRED) return RETRY_MS;
    // A step that printed is left to the script by the next zygote (executor.ts): not a failure in a row.
    if (printedStep(r.failure) !== undefined) return 0;
    k.failures++;
    k.lastError = r.failure;
    this.opts.log?.(`[warm] ${k.label}: ${r.failure ?? 'zygote failed'}${k.failures >= 2 ? ' (its runs stay cold)' : ''}`);
    return RETRY_MS;
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.pump(), ms);
    this.timer.unref();
  }
}

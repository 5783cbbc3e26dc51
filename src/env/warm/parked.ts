// One zygote started ahead (zygote.ts), from spawn to claim: it watches for the ready marker and
// treats anything else as a fault (output before the run, death, an import that failed), so a
// zygote that is not exactly "imported and silent" is never handed out. Until claimed it does not
// keep Node alive (bwrap's --die-with-parent ends it with ForgeEnv).
import { readFileSync } from 'node:fs';
import { killProcessTree } from '../run/processTree';
import { sandboxedPid } from '../sandbox/pids';
import { RETIRED, type ParkedHandle } from './pool';
import { encodeRequest, FAILED_MARKER, READY_MARKER, type RunRequest } from './zygote';

/** What a launched process looks like to the zygote (executor.ts `Launched`). */
export interface ZygoteProcess {
  child: import('node:child_process').ChildProcess;
  sandboxed: boolean;
  status: () => string;
}

const STATUS_FD = 4;

export class Parked implements ParkedHandle {
  ready = false;
  healthy = true;
  failure: string | undefined;
  readonly settled: Promise<void>;
  /** Resolves once an unclaimed zygote's process is gone and its run folder, uid and memory given back. */
  readonly closed: Promise<void>;
  readonly startedAt = Date.now();
  readyAt: number | undefined;
  private claimed = false;
  private out = '';
  private settle: () => void = () => undefined;
  private markClosed: () => void = () => undefined;
  private readonly onOut = (b: Buffer) => this.sawOutput(b.toString('utf8'));
  private readonly onErr = (b: Buffer) =>
    this.fault(`the zygote wrote to stderr before its run: ${b.toString('utf8').slice(0, 300).trim()}`);

  /**
   * `release`: gives back the run folder, uid and memory once the process is gone (a parked zygote
   * only); `releaseMemory`: the memory alone, at once (retire).
   */
  constructor(
    readonly key: string,
    private readonly proc: ZygoteProcess,
    private readonly release: () => Promise<void>,
    private readonly releaseMemory: () => void,
    /** Keeps Node alive while it starts (a run waits for it); otherwise only once claimed. */
    awaited = false,
  ) {
    this.settled = new Promise((r) => (this.settle = r));
    this.closed = new Promise((r) => (this.markClosed = r));
    const { child } = proc;
    child.stdout?.on('data', this.onOut);
    child.stderr?.on('data', this.onErr);
    child.once('exit', () => {
      if (this.claimed) return;
      this.fault(this.failure ?? 'the zygote exited before its run');
      void this.release().finally(() => this.markClosed());
    });
    child.once('error', (e) => this.fault(`the zygote could not start: ${e.message}`));
    if (!awaited) this.setRef(false);
  }

  private sawOutput(text: string): void {
    this.out += text;
    if (this.out === READY_MARKER) {
      this.ready = true;
      this.readyAt = Date.now();
      this.settle();
    } else if (this.out.startsWith(FAILED_MARKER) && this.out.endsWith('\n')) {
      this.fault(`the zygote cannot serve runs: ${this.out.slice(FAILED_MARKER.length).trim()}`);
    } else if (!READY_MARKER.startsWith(this.out) && !this.out.startsWith(FAILED_MARKER)) {
      this.fault('the zygote wrote to stdout before its run');
    }
  }

  private fault(why: string): void {
    if (!this.healthy || this.claimed) return;
    this.healthy = false;
    this.ready = false;
    this.failure = why;
    this.settle();
    this.kill();
  }

  private kill(): void {
    const pid = this.proc.child.pid;
    if (pid !== undefined && this.proc.child.exitCode === null && this.proc.child.signalCode === null) void killProcessTree(pid, 0);
  }

  /** Streams and the process keep Node's event loop alive only once claimed. */
  private setRef(on: boolean): void {
    const { child } = this.proc;
    const handles = [child, child.stdin, child.stdout, child.stderr, child.stdio[STATUS_FD]] as (
      { ref?: () => void; unref?: () => void } | null | undefined
    )[];
    for (const h of handles) {
      const sock = h;
      if (on) sock?.ref?.();
      else sock?.unref?.();
    }
  }

  /** Still usable: healthy, and its process alive. */
  get alive(): boolean {
    const c = this.proc.child;
    return this.healthy && c.exitCode === null && c.signalCode === null;
  }

  rssMiB(): number {
    const pid = this.proc.child.pid === undefined ? undefined : sandboxedPid(this.proc.child.pid, true);
    if (pid === undefined) return 0;
    try {
      const m = /VmRSS:\s+(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
      return m ? Number(m[1]) / 1024 : 0;
    } catch {
      return 0;
    }
  }

  retire(): void {
    if (this.claimed) return;
    // Until its exit is seen, so that whoever waits for `closed` is not left pending.
    this.setRef(true);
    this.fault(this.failure ?? RETIRED);
    this.releaseMemory();
  }

  /** Hands the process to the run: the pool's watchers go, the request goes to the zygote's stdin. */
  adopt(request: RunRequest): ZygoteProcess {
    this.claimed = true;
    this.markClosed();
    const { child } = this.proc;
    child.stdout?.removeListener('data', this.onOut);
    child.stderr?.removeListener('data', this.onErr);
    this.setRef(true);
    const stdin = child.stdin;
    stdin?.on('error', () => undefined);
    stdin?.end(encodeRequest(request));
    return this.proc;
  }
}

// Where time goes, one entry per phase as it ends, in order. make-task (issue 20: <= 2 min per
// script): snapshot inference, each run's hub items, each run, each breakage's broken run, oracle run
// and verifier. A run (executor.ts `onPhase`) and an episode (StepOptions `onPhase`, issue 18): run
// folder, claim, process, scrub, cleanup, diff apply, verifier. Numbers for `--json` and the
// benches; nothing decides on them.

export interface PhaseTime {
  /** What ran: `snapshot inference`, `hub items`, `help run`, `adapt run 2`, `broken run (rename_kwarg)`, … */
  phase: string;
  ms: number;
  /** A run's runtime: `warm` when a zygote started ahead ran it. */
  runtime?: 'warm' | 'cold';
}

export type PhaseSink = (p: PhaseTime) => void;

/** Times `work` as `phase` into `sink` (also when it throws). */
export async function timed<T>(sink: PhaseSink | undefined, phase: string, work: () => Promise<T>): Promise<T> {
  const t = performance.now();
  try {
    return await work();
  } finally {
    sink?.({ phase, ms: Math.round(performance.now() - t) });
  }
}

/** Times a synchronous step as `phase` into `sink`. */
export function timedSync<T>(sink: PhaseSink | undefined, phase: string, work: () => T): T {
  const t = performance.now();
  try {
    return work();
  } finally {
    sink?.({ phase, ms: Math.round(performance.now() - t) });
  }
}

/** The phases summed by kind (the label up to its first digit or parenthesis): `adapt run` 3 runs, 41 s. */
export function phaseTotals(phases: readonly PhaseTime[]): Array<{ phase: string; count: number; ms: number }> {
  const out = new Map<string, { count: number; ms: number }>();
  for (const p of phases) {
    const kind = p.phase.replace(/\s*[\d(].*$/, '').trim() || p.phase;
    const t = out.get(kind) ?? { count: 0, ms: 0 };
    t.count++;
    t.ms += p.ms;
    out.set(kind, t);
  }
  return [...out].map(([phase, t]) => ({ phase, ...t }));
}

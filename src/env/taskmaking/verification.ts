// Verification of a candidate task through the environment itself, as episodes will run it:
// - breakages: the drift candidates on the script (real drifts the snapshot rejects first, distinct
//   primitives), each applied in an episode; verified when the broken script fails with an error
//   that names the changed API and the oracle repair (`evaluateRepair(oracleDiff())`) passes the
//   verifier;
// - the original: every oracle repair IS the original script (the inverse restores it byte for
//   byte), so each oracle run is a run of the original judged by the verifier; the environment's
//   reference run (the original's own verification) is one more. 3 of 3 verified is required; when
//   fewer breakages broke, episodes are repeated until three runs of the original were judged. An episode
//   whose breakage cannot count skips its oracle run while later candidates can still bring them.
import { changedApiNames, mentionsChangedApi } from '../primitives/checkPrimitives';
import { breaksReally } from '../drift/generator';
import { ForgeEnvironment, type OriginalRun } from '../episode/environment';
import { applySpec, breakagePrimitives } from '../primitives/registry';
import type { PrimitiveCandidate } from '../primitives/types';
import type { ExecutionMode, LibraryVersions, Task } from '../schemas';
import { TaskSampler } from '../tasks/tasks';
import type { BreakageCheck, MakeTaskVerdict } from './provenance';
import { lastErrorLine } from './rules';
import { infoText } from '../schemas';
import type { PhaseSink } from '../phaseTimes';
import { availableParallelism } from 'node:os';

export interface VerifyOptions {
  task: Task;
  mode: ExecutionMode;
  snapshot: string;
  versions: LibraryVersions;
  timeoutMs: number;
  interpreter?: string;
  /** Breakages to try at most (each costs a broken run, an oracle run and a verifier run). */
  maxBreakages?: number;
  signal?: AbortSignal;
  onProgress?: (message: string) => void;
  /** Each episode's phases: the broken run, the oracle run, the verifier's runs (with the reference's the first time). */
  onPhase?: PhaseSink;
  /** Why the original's own verification (the reference) failed, when it did: checked before any episode run. */
  onReferenceFailed?: (reason: string) => void;
  /** Episodes' runs through the warm runtime (the environment's `warm`). */
  warm?: boolean;
  /** A clean run of this task's original made exactly as episodes run it (referenceReuse.ts): judged as the reference. */
  originalRun?: OriginalRun;
  /**
   * Breakage episodes run side by side (each in its own environment; the reference is shared). Default: two on
   * a machine with two cores or more (an episode's runs are single-threaded), else one.
   */
  lanes?: number;
}

/** The default number of breakage episodes run side by side: one per core, two at most (two are verified). */
export function defaultVerifyLanes(cores: number = availableParallelism()): number {
  return Math.max(1, Math.min(2, cores));
}

interface Candidate {
  primitive_type: string;
  params: Record<string, unknown>;
  drift_id?: string;
  real: boolean;
}

/** Breakage candidates on the script: real drifts that break first, one per primitive, then the rest. */
export function breakageCandidates(script: string, versions: LibraryVersions): Candidate[] {
  const all: Array<{ p: string; c: PrimitiveCandidate }> = [];
  for (const p of breakagePrimitives()) {
    let cs: PrimitiveCandidate[];
    try {
      cs = p.candidates(script, versions);
    } catch {
      cs = [];
    }
    for (const c of cs) all.push({ p: p.name, c });
  }
  const rank = (x: { c: PrimitiveCandidate }) => (breaksReally(x.c) ? 0 : x.c.breaks !== false ? 1 : 2);
  const sorted = all.filter((x) => rank(x) < 2).sort((a, b) => rank(a) - rank(b));
  // Distinct primitives first (spread), then second candidates of the same primitives.
  const firsts: typeof sorted = [];
  const rest: typeof sorted = [];
  const seen = new Set<string>();
  for (const x of sorted) {
    (seen.has(x.p) ? rest : firsts).push(x);
    seen.add(x.p);
  }
  return [...firsts, ...rest].map((x) => ({
    primitive_type: x.p,
    params: x.c.params,
    real: breaksReally(x.c),
    ...(x.c.drift_entry ? { drift_id: x.c.drift_entry } : {}),
  }));
}

/**
 * Whether the broken run's error names the changed API: the same criterion as check-primitives
 * (the names the breakage's edits touch, found as words in the traceback's end).
 */
export function errorNamesApi(
  errorTrace: string,
  script: string,
  spec: { primitive_type: string; params: Record<string, unknown> },
): boolean {
  let names: string[];
  try {
    names = changedApiNames(script, spec.params, applySpec(script, spec));
  } catch {
    return false;
  }
  return mentionsChangedApi(errorTrace.trim().split('\n').slice(-15).join('\n'), names);
}

/**
 * Whether an episode's oracle repair is worth its run (the original's, with the verifier): always for a
 * breakage that can be verified (it broke and its error names the changed API); otherwise only when the
 * later candidates could not bring the two oracle runs the verdict needs (with the reference: three judged
 * runs of the original). A breakage that cannot count saves its oracle run.
 */
export function oracleWorthRunning(s: { broke: boolean; namesApi: boolean; originalRuns: number; laterCandidates: number }): boolean {
  return (s.broke && s.namesApi) || s.laterCandidates < 2 - s.originalRuns;
}

export async function verifyTask(o: VerifyOptions): Promise<MakeTaskVerdict> {
  const makeEnv = () =>
    new ForgeEnvironment(
      { mode: o.mode, timeoutMs: o.timeoutMs, ...(o.interpreter ? { interpreter: o.interpreter } : {}), ...(o.warm ? { warm: true } : {}) },
      { tasks: new TaskSampler([o.task]), onProgress: o.onProgress, ...(o.originalRun ? { originalRun: o.originalRun } : {}) },
    );
  const env = makeEnv();
  const envs = [env];
  // Episodes' outcomes by candidate index: the record lists them in the candidates' order, whatever finished first.
  const done: BreakageCheck[] = [];
  const breakages: BreakageCheck[] = [];
  let originalRuns = 0;
  let referenceNote: string | undefined;
  let originalVerified = 0;
  let referenceOk: boolean | undefined;
  const maxBreakages = o.maxBreakages ?? 4;
  try {
    const candidates = breakageCandidates(o.task.script_content, o.versions).slice(0, maxBreakages);
    const episode = async (c: Candidate, mustScore = false, env = envs[0]): Promise<BreakageCheck> => {
      await env.reset({ task_id: o.task.task_id, seed: 0, library_versions: o.versions });
      o.onProgress?.(`breakage ${c.primitive_type}: running the broken script`);
      const tb = performance.now();
      const obs = await env.step({ breakage: { primitive_type: c.primitive_type, params: c.params } }, { signal: o.signal });
      const rt = obs.info.runtime;
      const brokenRuntime: { runtime?: 'warm' | 'cold' } = rt === 'warm' || rt === 'cold' ? { runtime: rt } : {};
      o.onPhase?.({ phase: `broken run (${c.primitive_type})`, ms: Math.round(performance.now() - tb), ...brokenRuntime });
      const base = { primitive_type: c.primitive_type, ...(c.drift_id ? { drift_id: c.drift_id } : {}) };
      if (obs.info.error)
        return { ...base, broke: false, names_api: false, oracle_verified: false, note: infoText(obs.info.error).slice(0, 500) };
      const trace = obs.error_trace ?? '';
      const broke = obs.info.broke === true;
      const names = broke && errorNamesApi(trace, o.task.script_content, c);
      const later = candidates.length - candidates.indexOf(c) - 1;
      if (!mustScore && !oracleWorthRunning({ broke, namesApi: names, originalRuns, laterCandidates: later })) {
        o.onProgress?.(
          `breakage ${c.primitive_type}: ${broke ? 'broke, but its error does not name the changed API' : 'did not break'}; not scored`,
        );
        return {
          ...base,
          broke,
          names_api: names,
          oracle_verified: false,
          ...(broke ? { error: lastErrorLine(trace) } : {}),
          note: 'oracle repair not scored: this breakage cannot be verified',
        };
      }
      o.onProgress?.(`breakage ${c.primitive_type}: ${broke ? 'broke' : 'did not break'}; scoring the oracle repair (the original)`);
      const te = performance.now();
      const ev = await env.evaluateRepair(env.oracleDiff(), { signal: o.signal });
      const oracleMs = Math.round(ev.execution?.wall_time_ms ?? 0);
      o.onPhase?.({
        phase: `oracle run (${c.primitive_type})`,
        ms: oracleMs,
        ...(ev.execution?.runtime ? { runtime: ev.execution.runtime } : {}),
      });
      o.onPhase?.({
        phase: `verifier (${c.primitive_type})`,
        ms: Math.max(0, Math.round(performance.now() - te) - oracleMs),
      });
      originalRuns++;
      if (ev.success) originalVerified++;
      if (referenceOk === undefined && ev.verification) referenceOk = ev.verification.reference_loss !== undefined;
      return {
        ...base,
        broke,
        names_api: names,
        oracle_verified: ev.success,
        ...(broke ? { error: lastErrorLine(trace) } : {}),
        ...(!ev.success ? { note: (ev.verification?.findings[0] ?? ev.findings[0] ?? lastErrorLine(ev.error_trace)).slice(0, 500) } : {}),
      };
    };
    // The reference first (cached for the episodes' oracle repairs): an original that does not verify, or a check
    // the task must still declare (`set verify.base_model`), is known before any broken or oracle run is spent.
    if (candidates.length) {
      await env.reset({ task_id: o.task.task_id, seed: 0, library_versions: o.versions });
      const tr = performance.now();
      const ref = await env.referenceVerification({ signal: o.signal });
      // `reused`: judged on the last adapt run's folder (no run of the original here).
      o.onPhase?.({ phase: o.originalRun ? 'reference reused' : 'reference', ms: Math.round(performance.now() - tr) });
      if (!ref.ok && !o.signal?.aborted) {
        referenceOk = false;
        referenceNote = ref.reason.slice(0, 1000);
        o.onReferenceFailed?.(ref.reason);
        o.onProgress?.(`the original's own verification failed: ${ref.reason.slice(0, 300)}`);
      }
    }
    const good = () => done.filter((b) => b.broke && b.names_api && b.oracle_verified).length;
    // As one after another, but `lanes` at once: no episode starts once two verified breakages and two oracle
    // runs are in (or would be, were the episodes under way to verify), or once the original failed to verify
    // (its reference included: 3/3 is then out of reach).
    const lanes = Math.max(1, Math.min(o.lanes ?? defaultVerifyLanes(), candidates.length));
    for (let i = 1; i < lanes; i++) envs.push(makeEnv());
    let next = 0;
    const running = new Set<Promise<void>>();
    // An episode that throws ends the verification as it would alone, once the others under way have ended.
    let failure: { error: unknown } | undefined;
    const over = () => failure || o.signal?.aborted || referenceOk === false || originalRuns > originalVerified;
    const enough = () => good() + running.size >= 2 && originalRuns + running.size >= 2;
    const free = [...envs];
    while (referenceOk !== false && next < candidates.length && !over()) {
      if (enough() || !free.length) {
        if (!running.size) break;
        await Promise.race(running);
        continue;
      }
      const i = next++;
      const lane = free.pop()!;
      const p: Promise<void> = episode(candidates[i], false, lane)
        .then(
          (b) => void (done[i] = b),
          (error: unknown) => void (failure ??= { error }),
        )
        .finally(() => {
          running.delete(p);
          free.push(lane);
        });
      running.add(p);
    }
    await Promise.all(running);
    if (failure) throw failure.error;
    breakages.push(...done.filter(Boolean));
    // Fewer than two oracle runs: repeat an episode so that the original is judged three times.
    const again = referenceOk === false ? undefined : candidates.find((c) => breakages.some((b) => b.primitive_type === c.primitive_type));
    while (again && originalRuns < 2 && originalRuns === originalVerified && !o.signal?.aborted) await episode(again, true);
  } finally {
    await Promise.all(envs.map((e) => e.dispose()));
  }
  const runs = { verified: originalVerified + (referenceOk ? 1 : 0), of: originalRuns + (referenceOk === undefined ? 0 : 1) };
  const verifiedBreakages = breakages.filter((b) => b.broke && b.names_api && b.oracle_verified).length;
  return {
    mode: o.mode,
    snapshot: o.snapshot,
    original_runs: runs,
    breakages,
    ...(referenceNote ? { reference_note: referenceNote } : {}),
    verified: runs.of >= 3 && runs.verified === runs.of && verifiedBreakages >= 2,
    checked_at: new Date().toISOString(),
  };
}

// Re-scores every stored demonstration in its recorded snapshot and execution mode, and reports
// any whose reward or success now differs (or whose task changed since). Sequential (scripts are
// the cost), with progress after each record and cancellation between and inside runs.
import type { ForgeEnvironment } from '../env/episode/environment';
import type { ExecutionMode } from '../env/schemas';
import { replayRepair } from '../env/episode/replay';
import { readDemonstrationEntries } from './datasetStore';
import { breakageFailed } from './demonstrationBuilder';
import { taskHash } from './hashing';
import type { StoreProblem } from './jsonlFile';
import type { DemonstrationRecord } from './records';

/** Rewards are rounded by the environment; anything beyond float noise is a difference. */
export const REWARD_TOLERANCE = 1e-9;

export type RescoreStatus = 'same' | 'differs' | 'task_changed' | 'error';

export interface RescoreEntry {
  record_id: string;
  task_id: string;
  primitive_type: string;
  mode: ExecutionMode;
  status: RescoreStatus;
  stored: { reward: number; success: boolean };
  now?: { reward: number; success: boolean };
  /** What differs, or the error. */
  detail?: string;
}

export interface RescoreReport {
  dir: string;
  total: number;
  done: number;
  cancelled: boolean;
  counts: Record<RescoreStatus, number>;
  /** Stored as successes, no longer verified as such (the verifier re-ran on the repair's artifact). */
  no_longer_pass: number;
  /** Every entry that is not `same`. */
  differences: RescoreEntry[];
  problems: StoreProblem[];
}

export interface RescoreOptions {
  /** One environment per mode (the caller owns and disposes them). */
  envFor: (mode: ExecutionMode) => ForgeEnvironment;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, entry: RescoreEntry) => void;
  /** Only these record ids (default: every valid line, superseded revisions included). */
  recordIds?: ReadonlySet<string>;
}

async function rescoreOne(rec: DemonstrationRecord, opts: RescoreOptions): Promise<RescoreEntry> {
  const base = {
    record_id: rec.info.record_id,
    task_id: rec.task_id,
    primitive_type: rec.primitive_type,
    mode: rec.info.mode,
    stored: { reward: rec.visible_reward, success: rec.success },
  };
  try {
    const env = opts.envFor(rec.info.mode);
    const spec = {
      taskId: rec.task_id,
      seed: rec.info.seed,
      primitive: { primitive_type: rec.info.primitive.primitive_type, params: rec.info.primitive.params },
      libraryVersions: rec.info.library_versions,
    };
    const r = await replayRepair(env, spec, rec.repair_completion, { signal: opts.signal });
    const th = taskHash({ script: r.originalScript, primitive: spec.primitive, seed: spec.seed, library_versions: spec.libraryVersions });
    const now = { reward: r.evaluation.reward, success: r.evaluation.success };
    if (th !== rec.info.task_hash)
      return {
        ...base,
        now,
        status: 'task_changed',
        detail: `task ${rec.task_id} changed since it was recorded (task hash ${th.slice(0, 12)}… ≠ ${rec.info.task_hash.slice(0, 12)}…)`,
      };
    const diffs: string[] = [];
    if (Math.abs(now.reward - base.stored.reward) > REWARD_TOLERANCE) diffs.push(`reward ${base.stored.reward} → ${now.reward}`);
    if (now.success !== base.stored.success) {
      // Why it no longer passes: the verifier's finding, where it has one (records from before it often claim success on printed text).
      const why = now.success ? '' : (r.evaluation.verification?.findings[0] ?? r.evaluation.findings[0]);
      diffs.push(`success ${base.stored.success} → ${now.success}${why ? ` (${why})` : ''}`);
    }
    const flag = breakageFailed(rec);
    if (flag !== undefined && flag !== r.breakageFailed) diffs.push(`breakage_failed ${flag} → ${r.breakageFailed}`);
    return diffs.length ? { ...base, now, status: 'differs', detail: diffs.join(', ') } : { ...base, now, status: 'same' };
  } catch (e) {
    return { ...base, status: 'error', detail: (e as Error).message };
  }
}

export async function rescoreDataset(dir: string, opts: RescoreOptions): Promise<RescoreReport> {
  const records: DemonstrationRecord[] = [];
  const problems: StoreProblem[] = [];
  for await (const e of readDemonstrationEntries(dir)) {
    if (!e.ok) problems.push(e.problem);
    else if (!opts.recordIds || opts.recordIds.has(e.value.info.record_id)) records.push(e.value);
  }
  const report: RescoreReport = {
    dir,
    total: records.length,
    done: 0,
    cancelled: false,
    counts: { same: 0, differs: 0, task_changed: 0, error: 0 },
    no_longer_pass: 0,
    differences: [],
    problems,
  };
  for (const rec of records) {
    if (opts.signal?.aborted) break;
    const entry = await rescoreOne(rec, opts);
    // A run cut short by the cancel is not a result.
    if (opts.signal?.aborted) break;
    report.done++;
    report.counts[entry.status]++;
    if (entry.status !== 'same') report.differences.push(entry);
    if (entry.stored.success && entry.now && !entry.now.success) report.no_longer_pass++;
    opts.onProgress?.(report.done, report.total, entry);
  }
  report.cancelled = report.done < report.total;
  return report;
}

export function renderRescoreText(r: RescoreReport): string {
  const c = r.counts;
  const out = [
    `Rescored ${r.done} of ${r.total} demonstration(s) in ${r.dir}${r.cancelled ? ' (cancelled)' : ''}: ${c.same} identical, ${c.differs} differ, ${c.task_changed} task changed, ${c.error} error(s)`,
  ];
  if (r.no_longer_pass) out.push(`  ${r.no_longer_pass} stored success(es) no longer pass the verifier`);
  for (const d of r.differences)
    out.push(`  ${d.status.padEnd(12)} ${d.record_id} ${d.task_id} ${d.primitive_type} (${d.mode}): ${d.detail ?? ''}`);
  if (r.problems.length) out.push(`  ${r.problems.length} unusable line(s) were not rescored (see forgeenv summary)`);
  return out.join('\n');
}

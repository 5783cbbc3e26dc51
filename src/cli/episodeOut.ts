// `forgeenv episode --out DIR`: the finished episode becomes a demonstration in the dataset folder
// DIR through the store's builder and write path (the same as the editor's Submit), so
// `forgeenv summary` and `forgeenv export` read it like any other demonstration.
import { randomUUID } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ENV_VERSION, EnvironmentError, type ForgeEnvironment } from '../env/episode/environment';
import { resourcesDir } from '../env/paths';
import type { RolloutResult } from '../env/schemas';
import { snapshotIdOf } from '../env/snapshots/versions';
import { buildDemonstration, type DemonstrationProvenance } from '../store/demonstrationBuilder';
import { storeEpisode } from '../store/episodeWriter';
import type { DemonstrationRecord } from '../store/records';

/** One id per CLI process, like the editor's per-window session id. */
const SESSION_ID = `cli-${randomUUID()}`;

/** Why `--out` cannot be a dataset folder, or undefined. */
export function outFolderProblem(out: string): string | undefined {
  const st = statSync(out, { throwIfNoEntry: false });
  if (st?.isFile() || (!st && /\.jsonl$/i.test(out))) {
    return `--out is a dataset folder (demonstrations.jsonl is written inside it), not a file: ${out}. For the plain RolloutResult line, leave out --out and redirect standard output.`;
  }
  if (st && !st.isDirectory()) return `--out ${out} is not a folder`;
  return undefined;
}

export function cliVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(join(dirname(resourcesDir()), 'package.json'), 'utf8')) as { version?: unknown };
    return typeof pkg.version === 'string' ? pkg.version : '0.0.0';
  } catch {
    return '0.0.0';
  }
}

export interface CliEpisodeProvenance {
  annotator: string;
  startedAt: Date;
  interpreter: string;
}

/** Builds the demonstration of the episode `env` just finished (its state and the rollout's prompts) and stores it in `dir`. */
export async function storeCliEpisode(
  env: ForgeEnvironment,
  result: RolloutResult,
  dir: string,
  p: CliEpisodeProvenance,
): Promise<DemonstrationRecord> {
  const state = env.state;
  if (!state?.final || !state.breakage_spec || !state.broken_execution) {
    // An EnvironmentError: the command ran but failed (exit 1), nothing was stored.
    throw new EnvironmentError(
      `the episode did not reach a repair (${result.error_trace || 'drift refused'}), so there is no demonstration to store`,
    );
  }
  const submittedAt = new Date();
  const provenance: DemonstrationProvenance = {
    session_id: SESSION_ID,
    annotator_id: p.annotator,
    mode: env.config.mode,
    interpreter: p.interpreter,
    extension_version: cliVersion(),
    env_version: ENV_VERSION,
    started_at: p.startedAt.toISOString(),
    submitted_at: submittedAt.toISOString(),
    active_ms: 0,
    wall_ms: Math.max(0, submittedAt.getTime() - p.startedAt.getTime()),
    runs: 1,
  };
  const hint = result.info.migration_hint as { shown: boolean; drift_id?: string } | undefined;
  const record = buildDemonstration({
    start: {
      episodeId: state.episode_id,
      seed: state.seed,
      task: { task_id: state.task_id },
      libraryVersions: state.library_versions,
      targetCategory: state.target_category,
      breakageSpec: state.breakage_spec,
      originalScript: state.original_script,
      brokenExecution: state.broken_execution,
      driftPrompt: result.drift_prompt,
      driftCompletion: result.drift_completion,
      repairPrompt: result.repair_prompt,
      migrationHint: hint,
    },
    final: state.final,
    provenance,
    info: { library_snapshot: snapshotIdOf(state.library_versions) ?? null, client: { app: 'forgeenv-cli' } },
  });
  const t = provenance.wall_ms;
  const timeline = [
    { t_ms: 0, kind: 'focus' as const, event: 'episode_start', task_id: state.task_id, source: 'cli' },
    { t_ms: t, kind: 'run' as const, n: 1, reward: state.final.reward, success: state.final.success },
    { t_ms: t, kind: 'save' as const, event: 'submit', reward: state.final.reward, success: state.final.success },
  ];
  const stored = await storeEpisode(dir, { kind: 'demonstration', record, timeline });
  return stored.record as DemonstrationRecord;
}

// The last adapt round's clean run IS a run of the task's original: when it ran exactly as the
// environment will run the task (same snapshot, args, environment, shims, mounts, hub items, and
// nothing the hub refused), the verifier judges its kept folder as the reference instead of running
// the original once more (environment.ts `originalRun`). Any difference: the reference runs as before.
import type { HubNeeds } from '../hub/needs';
import { isBaseHubModel } from '../hub/modelTable';
import type { TaskMetadata } from '../tasks/tasks';
import type { HubRunState } from './hubSupply';
import type { CandidateRun } from './runner';

/** A clean adapt run kept for the verification: what ran, where, and what the hub provided. */
export interface KeptRun {
  snapshot: string;
  run: CandidateRun;
  runDir: string;
  hub: HubRunState | undefined;
}

const canonical = (v: unknown): string =>
  JSON.stringify(v, (_k, x: unknown) =>
    x && typeof x === 'object' && !Array.isArray(x)
      ? Object.fromEntries(Object.entries(x as Record<string, unknown>).sort(([a], [b]) => a.localeCompare(b)))
      : x,
  );

const hubOf = (n: HubNeeds | undefined) => ({
  models: n?.models ?? [],
  datasets: n?.datasets ?? [],
  metrics: n?.metrics?.length ? n.metrics : [],
});

/** Whether the kept run is the run the environment would make of `entry` at `snapshot` (then it can be the reference). */
export function keptRunMatchesTask(kept: KeptRun, entry: TaskMetadata, snapshot: string): boolean {
  if (kept.snapshot !== snapshot) return false;
  if (canonical(kept.run.args) !== canonical(entry.args ?? [])) return false;
  if (canonical(kept.run.env) !== canonical(entry.env ?? {})) return false;
  if (canonical(kept.run.runtime ?? null) !== canonical(entry.runtime ?? null)) return false;
  if (canonical(kept.run.mounts ?? []) !== canonical(entry.mounts ?? [])) return false;
  if (canonical(kept.run.files) !== canonical(entry.files ?? {})) return false;
  // The hub: what the run was given is what the task declares (nothing refused), and the verifier's
  // base model adds no item the run did not have.
  if (kept.hub?.refusals.length) return false;
  const base = entry.verify?.base_model;
  if (base && !isBaseHubModel(base) && !(entry.hub?.models ?? []).some((m) => m.id === base)) return false;
  return canonical(hubOf(kept.hub?.needs)) === canonical(hubOf(entry.hub));
}

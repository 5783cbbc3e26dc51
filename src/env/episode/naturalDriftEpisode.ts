// Episodes on a natural-drift task (make-task --upgrade-to; docs/make-task.md): the script, written
// for an earlier snapshot, fails for real at the task's (later) snapshot. The state machine is the
// usual one with one more breakage action, `{primitive_type: "NaturalDrift", params: {}}`: nothing
// is applied, the broken script is the original itself, and its run at the task's snapshot gives
// the real error the repair starts from.
//
// The verifier's band cannot come from the original here: at the task's snapshot it fails, and its
// run at `from_snapshot` trains another random tiny model (each snapshot's local hub is built by its
// own transformers) on other libraries, so its losses are not comparable. A repair is therefore
// judged on "runs and trains": its artifact loads with the real loader and beats the untrained
// model on held-out data by the task's margin, or (short runs of tiny models) training changed most
// of its starting weights. No band: `in_range` follows `trained`, and the findings say so.
import type { Evidence } from '../verify/judge';
import type { VerifySpec } from '../verify/spec';
import type { VerifierOutcome } from '../verify/verifier';
import type { BreakageAction, Task } from '../schemas';

export const NATURAL_DRIFT_PRIMITIVE = 'NaturalDrift';
export const NATURAL_DRIFT_CATEGORY = 'natural_drift';

/**
 * Without a reference, the share of starting weights training must change for `weights_moved` to
 * count as trained: an optimiser step touches almost every weight, saving the untrained model none.
 */
export const MIN_MOVED_SHARE = 0.5;

/** Why the action cannot start this task's episode, or undefined when it can. */
export function naturalDriftProblem(task: Task, breakage: BreakageAction, episodeVersions: Record<string, string>): string | undefined {
  const isDrift = breakage.primitive_type === NATURAL_DRIFT_PRIMITIVE;
  if (!task.natural_drift)
    return isDrift
      ? `${NATURAL_DRIFT_PRIMITIVE} applies only to a natural-drift task (made by make-task --upgrade-to); "${task.task_id}" is not one.`
      : undefined;
  if (!isDrift)
    return `"${task.task_id}" is a natural-drift task: its breakage is the real one between ${task.natural_drift.from_snapshot} and ${task.natural_drift.to_snapshot} (${NATURAL_DRIFT_PRIMITIVE}), not ${breakage.primitive_type}.`;
  if (Object.keys(breakage.params).length) return `${NATURAL_DRIFT_PRIMITIVE} takes no params.`;
  if (task.library_versions && JSON.stringify(sorted(task.library_versions)) !== JSON.stringify(sorted(episodeVersions))) {
    return `a natural-drift episode runs at the task's own snapshot ${task.natural_drift.to_snapshot}; this episode was reset with other library versions.`;
  }
  return undefined;
}

const sorted = (v: Record<string, string>) => Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b)));

/** "Runs and trains": the evidence of a natural-drift repair, without the original's band (see above). */
export function judgeRunsAndTrains(repair: VerifierOutcome, spec: Pick<VerifySpec, 'margin'>): Evidence {
  const none =
    'natural-drift task: no band from the original (it fails at this snapshot), so the repair is judged on running and training only';
  if (!repair.ok)
    return {
      loaded: false,
      trained: false,
      in_range: false,
      verified: false,
      improvement_share: 0,
      range_score: 0,
      findings: [`no verified artifact: ${repair.reason}`, none],
    };
  const U = repair.untrained_loss;
  const T = repair.trained_loss;
  const r = (U - T) / Math.max(1e-9, Math.abs(U));
  const byLoss = r >= spec.margin;
  const byWeights = repair.moved !== undefined && repair.moved >= MIN_MOVED_SHARE;
  const trained = byLoss || byWeights;
  const findings = [
    none,
    `${repair.artifact} (loaded with ${repair.loaded_with}): held-out loss ${T.toFixed(4)}, untrained ${U.toFixed(4)}`,
  ];
  if (!trained) {
    findings.push(
      `${repair.artifact} is not a trained model: its held-out loss ${T.toFixed(4)} improves on the untrained model's ${U.toFixed(4)} by ${pct(r)} (margin ${pct(spec.margin)})` +
        (repair.moved !== undefined
          ? `, and training changed ${pct(repair.moved)} of its starting weights (needs ${pct(MIN_MOVED_SHARE)})`
          : ''),
    );
  }
  return {
    loaded: true,
    trained,
    in_range: trained,
    verified: trained,
    check: byLoss || repair.moved === undefined ? 'held_out_loss' : 'weights_moved',
    improvement_share: trained ? 1 : 0,
    range_score: trained ? 1 : 0,
    findings,
  };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

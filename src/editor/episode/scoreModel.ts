// What the score view shows, as plain data built from a RepairEvaluation (no vscode import):
// the visible reward with its weighted components, the held-out checks, findings and the
// run's abnormal-end notes (timeout, output cap, forbidden constructs, cancel).
import type { RepairEvaluation } from '../../env/episode/episodeTypes';
import { MAX_VISIBLE_REWARD, VISIBLE_WEIGHTS, type HeldOutBreakdown, type VisibleBreakdown } from '../../env/scoring/reward';
import { abnormalEndNote, forgeenvNotes } from './diagnosticsModel';
import type { RunSummary } from './episodeRecord';

export interface ScoreRow {
  key: string;
  label: string;
  value: number;
  /** The component's maximum (visible) or 1 (held-out). */
  max: number;
  /** What the component measures, for screen readers and tooltips. */
  help: string;
}

export type ScoreState = 'idle' | 'running' | 'scored' | 'submitted' | 'skipped';

export interface ScoreModel {
  state: ScoreState;
  taskId: string;
  taskDescription: string;
  primitive: string;
  mode: string;
  run?: {
    n: number;
    reward: number;
    maxReward: number;
    success: boolean;
    exitCode: number | null;
    wallTimeMs: number;
    visible: ScoreRow[];
    heldOut: ScoreRow[];
    findings: string[];
    notes: string[];
    applyWarnings: string[];
    applyError?: string;
  };
  history: RunSummary[];
}

// Typed by the reward's own breakdowns: a key added to or renamed in src/env/scoring/reward.ts fails to compile here until labelled.
const VISIBLE_HELP: Record<keyof VisibleBreakdown, [string, string]> = {
  script_executes: ['Script executes', 'Exit code 0 and a verified trained model (the verifier checked the artifact)'],
  loss_decreased: ['Loss decreased', 'Share of consecutive logged losses that fall (counted only with a verified model)'],
  checkpoint_appeared: ['Checkpoint written', "The task's artifact loads and is a trained model (verifier)"],
  diff_size_penalty: ['Diff size penalty', 'Negative when the repair changes more than half of the lines'],
};
const HELD_OUT_HELP: Record<keyof HeldOutBreakdown, [string, string]> = {
  executed_cleanly: ['Executed cleanly', 'Exit 0, no timeout, no traceback'],
  checkpoint_valid: ['Checkpoint valid', 'The artifact loads with the real library loader (verifier)'],
  loss_decreased: ['Loss decreased', "Share of the original's held-out loss improvement the artifact reaches (verifier)"],
  metrics_in_range: ['Held-out loss in range', "The artifact's held-out loss is within the band the unbroken original reaches (verifier)"],
  no_forbidden_workarounds: ['No forbidden workarounds', 'No swallowed exceptions, fake output, forced exits or removed training'],
  intent_preserved: ['Intent preserved', 'Overlap of calls and imports with the original script'],
  hidden_tests_passed: [
    'Hidden tests passed',
    "The verifier's held-out checks: loads, beats the untrained model, within the original's band",
  ],
};

function rows(breakdown: Record<string, number>, help: Record<string, [string, string]>, max: (k: string) => number): ScoreRow[] {
  const known = Object.keys(help).filter((k) => k in breakdown);
  const extra = Object.keys(breakdown)
    .filter((k) => !(k in help))
    .sort();
  return [...known, ...extra].map((key) => ({
    key,
    label: help[key]?.[0] ?? key.replace(/_/g, ' '),
    value: breakdown[key],
    max: max(key),
    help: help[key]?.[1] ?? '',
  }));
}

export function scoreModel(args: {
  state: ScoreState;
  taskId: string;
  taskDescription: string;
  primitive: string;
  mode: string;
  evaluation?: RepairEvaluation | null;
  runNumber?: number;
  history?: RunSummary[];
}): ScoreModel {
  const model: ScoreModel = {
    state: args.state,
    taskId: args.taskId,
    taskDescription: args.taskDescription,
    primitive: args.primitive,
    mode: args.mode,
    history: args.history ?? [],
  };
  const ev = args.evaluation;
  if (ev) {
    const exec = ev.execution;
    const notes: string[] = [];
    if (exec) {
      const end = abnormalEndNote(exec);
      if (end) notes.push(end);
      for (const v of exec.violations) notes.push(`Forbidden: ${v}`);
      for (const n of forgeenvNotes(exec.stderr)) if (!notes.includes(n)) notes.push(n);
    }
    model.run = {
      n: args.runNumber ?? 1,
      reward: ev.reward,
      maxReward: MAX_VISIBLE_REWARD,
      success: ev.success,
      exitCode: exec?.exit_code ?? null,
      wallTimeMs: exec?.wall_time_ms ?? 0,
      visible: rows(ev.reward_breakdown, VISIBLE_HELP, (k) =>
        k in VISIBLE_WEIGHTS ? VISIBLE_WEIGHTS[k as keyof typeof VISIBLE_WEIGHTS] : 1,
      ),
      heldOut: rows(ev.held_out_breakdown, HELD_OUT_HELP, () => 1),
      findings: ev.findings,
      notes,
      applyWarnings: ev.apply.warnings,
      ...(ev.apply.ok ? {} : { applyError: ev.apply.error ?? 'the diff did not apply' }),
    };
  }
  return model;
}

// Decides from the verifier's evidence, never from what the script printed: a repair is verified
// when its artifact loads with the real loader, beats the untrained model on held-out data by the
// task's margin, and lands within the band the unbroken original reaches. Pure, so scores stay
// deterministic and testable without a run.
import { z } from 'zod';
import type { VerifySpec } from './spec';
import type { VerifierOutcome } from './verifier';

export interface Evidence {
  /** The artifact loaded with the mode's real loader. */
  loaded: boolean;
  /** Held-out loss beats the untrained model's by the task's margin. */
  trained: boolean;
  /** Held-out loss within the band the unbroken original reaches. */
  in_range: boolean;
  /** All three: the episode may succeed. */
  verified: boolean;
  /**
   * What decided `trained`: the held-out loss, or (where the original's own held-out improvement is
   * under five margins, as with real mode's tiny models, so run-to-run noise could decide) the share
   * of starting weights training changed.
   */
  check?: 'held_out_loss' | 'weights_moved';
  /** Share of the original's held-out improvement the repair reached (0 when not loaded). */
  improvement_share: number;
  /** Closeness to the original's band: 1 inside, falling to 0 at twice the band's width outside. */
  range_score: number;
  findings: string[];
  /** What was measured, for the record (`info.verification`). */
  measured?: {
    artifact: string;
    loaded_with: string;
    trained_loss: number;
    untrained_loss: number;
    reference_loss: number;
    reference_untrained_loss: number;
  };
}

/** What a record keeps of the verification (`info.verification`): enough to audit the verdict. */
export const VerificationSchema = z.object({
  verified: z.boolean(),
  loaded: z.boolean(),
  trained: z.boolean(),
  in_range: z.boolean(),
  check: z.enum(['held_out_loss', 'weights_moved']).optional(),
  artifact: z.string().optional(),
  loaded_with: z.string().optional(),
  trained_loss: z.number().optional(),
  untrained_loss: z.number().optional(),
  reference_loss: z.number().optional(),
  reference_untrained_loss: z.number().optional(),
  findings: z.array(z.string()).default([]),
});
export type Verification = z.infer<typeof VerificationSchema>;

export function verificationRecord(e: Evidence): Verification {
  return {
    verified: e.verified,
    loaded: e.loaded,
    trained: e.trained,
    in_range: e.in_range,
    ...(e.check ? { check: e.check } : {}),
    ...(e.measured ?? {}),
    findings: e.findings,
  };
}

/** How many margins the original's held-out improvement must reach for held-out loss to decide. */
export const HELD_OUT_SIGNAL = 5;

const round = (x: number) => Math.round(x * 1e6) / 1e6;
const clamp01 = (x: number) => Math.min(1, Math.max(0, x));

export const NO_EVIDENCE = (finding: string): Evidence => ({
  loaded: false,
  trained: false,
  in_range: false,
  verified: false,
  improvement_share: 0,
  range_score: 0,
  findings: [finding],
});

export function judgeEvidence(
  repair: VerifierOutcome,
  reference: VerifierOutcome,
  spec: Pick<VerifySpec, 'margin' | 'tolerance'>,
  context: { mode?: 'real' | 'simulated' } = {},
): Evidence {
  if (!reference.ok)
    return NO_EVIDENCE(`the task's check cannot verify anything: the unbroken original's own artifact fails it (${reference.reason})`);
  const r0 = (reference.untrained_loss - reference.trained_loss) / Math.max(1e-9, Math.abs(reference.untrained_loss));
  // Held-out loss decides only when the original's own improvement stands well clear of run-to-run
  // noise (a head initialised afresh each run moves it by a few percent in real mode's short runs).
  // On the probe sentences a real model's loss says nothing of training (labels by position, a head
  // initialised afresh each run): there, where the weights-moved measure exists, it decides.
  const probeOnly = context.mode === 'real' && reference.probe === true && reference.moved !== undefined;
  const decisive = !probeOnly && (r0 >= HELD_OUT_SIGNAL * spec.margin || (reference.moved === undefined && r0 >= spec.margin));
  if (!decisive) {
    if (!(reference.moved !== undefined && reference.moved > 0)) {
      return NO_EVIDENCE(
        `the task's check cannot verify anything: the unbroken original improves on the untrained model's held-out loss by ${pct(r0)}, under the task's margin of ${pct(spec.margin)}`,
      );
    }
    return repair.ok ? judgeMovedWeights(repair, reference, r0) : NO_EVIDENCE(`no verified artifact: ${repair.reason}`);
  }
  if (!repair.ok) return NO_EVIDENCE(`no verified artifact: ${repair.reason}`);
  const findings: string[] = [];
  const U = repair.untrained_loss;
  const T = repair.trained_loss;
  const T0 = reference.trained_loss;
  const gain0 = reference.untrained_loss - T0;
  const r = (U - T) / Math.max(1e-9, Math.abs(U));
  const trained = r >= spec.margin;
  if (!trained) {
    findings.push(
      `${repair.artifact} is not a trained model: its held-out loss ${fmt(T)} improves on the untrained model's ${fmt(U)} by ${pct(r)}, under the task's margin of ${pct(spec.margin)}`,
    );
  }
  const band = spec.tolerance * gain0;
  const distance = Math.abs(T - T0);
  const in_range = distance <= band;
  if (!in_range) {
    findings.push(
      `${repair.artifact}'s held-out loss ${fmt(T)} is outside the band the unbroken original reaches (${fmt(T0 - band)}–${fmt(T0 + band)})`,
    );
  }
  return {
    loaded: true,
    trained,
    in_range,
    verified: trained && in_range,
    check: 'held_out_loss',
    improvement_share: round(clamp01((U - T) / Math.max(1e-9, gain0))),
    range_score: round(in_range ? 1 : clamp01(1 - (distance - band) / Math.max(1e-9, 2 * band))),
    findings,
    measured: {
      artifact: repair.artifact,
      loaded_with: repair.loaded_with,
      trained_loss: round(T),
      untrained_loss: round(U),
      reference_loss: round(T0),
      reference_untrained_loss: round(reference.untrained_loss),
    },
  };
}

type Loaded = Extract<VerifierOutcome, { ok: true }>;

/**
 * The weaker check, for a mode whose training is too short to show on held-out data: the repair's
 * artifact must have changed at least half as many of its starting weights as the original's did.
 * Saving the untrained model fails it; deliberately perturbing weights without training would not,
 * and the findings say which check decided.
 */
function judgeMovedWeights(repair: Loaded, reference: Loaded, r0: number): Evidence {
  const moved = repair.moved ?? 0;
  const needed = 0.5 * (reference.moved ?? 0);
  const trained = moved >= needed && moved > 0;
  const gain0 = reference.untrained_loss - reference.trained_loss;
  const why = reference.probe ? `the held-out data is the verifier's probe data` : `the unbroken original improves it by ${pct(r0)}`;
  const findings = [
    `held-out loss cannot show training here (${why}), so the check is the weights training changed: ${pct(moved)} of the starting weights (the original changes ${pct(reference.moved ?? 0)})`,
  ];
  if (!trained)
    findings.push(
      `${repair.artifact} is not a trained model: it changed ${pct(moved)} of its starting weights, under half of the original's ${pct(reference.moved ?? 0)}`,
    );
  return {
    loaded: true,
    trained,
    in_range: trained,
    verified: trained,
    check: 'weights_moved',
    improvement_share: gain0 > 0 ? round(clamp01((repair.untrained_loss - repair.trained_loss) / gain0)) : trained ? 1 : 0,
    range_score: trained ? 1 : 0,
    findings,
    measured: {
      artifact: repair.artifact,
      loaded_with: repair.loaded_with,
      trained_loss: round(repair.trained_loss),
      untrained_loss: round(repair.untrained_loss),
      reference_loss: round(reference.trained_loss),
      reference_untrained_loss: round(reference.untrained_loss),
    },
  };
}

const fmt = (x: number) => x.toFixed(4);
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

// What an episode keeps about the model's suggestions, and what its demonstration says about them:
// `info.suggestion` (the proposal as the model made it, kept apart from the human's final diff:
// the demonstration's own `repair_completion`), and `info.time_to_verified_fix` (episode open →
// first Run & Score that succeeded, and whether an accepted suggestion came before it). Persisted
// with the episode (episodeRecord.ts), so a reload keeps both. No vscode import.
import { z } from 'zod';
import { SamplingSchema } from '../../env/agent/chatEndpoint';
import { BreakdownSchema } from '../../env/schemas';

/** Who proposed the repair: the `info.agent` shape of evaluate-model, for one request. */
export const SuggestionAgentSchema = z.object({
  kind: z.literal('model'),
  source: z.literal('endpoint'),
  endpoint: z.string(),
  model: z.string(),
  sampling: SamplingSchema,
});
export type SuggestionAgent = z.infer<typeof SuggestionAgentSchema>;

/** The suggestion scored as it stands ("Score Suggestion": run by the environment, not submitted). */
export const SuggestionScoreSchema = z.object({
  reward: z.number(),
  success: z.boolean(),
  exit_code: z.number().int().nullable(),
  reward_breakdown: BreakdownSchema,
  held_out_breakdown: BreakdownSchema,
  scored_at: z.string(),
});
export type SuggestionScore = z.infer<typeof SuggestionScoreSchema>;

export const SuggestionSchema = z.object({
  agent: SuggestionAgentSchema,
  /** The proposal as a unified diff against the broken script (what Accept puts in the editor). */
  diff: z.string(),
  /** Whether the model answered a diff or a whole script. */
  answer_kind: z.enum(['diff', 'script']),
  /** The model's text as it came. */
  completion: z.string(),
  asked_at: z.string(),
  latency_ms: z.number().nonnegative(),
  /** 1-based: the how-many-th suggestion of the episode. */
  n: z.number().int().min(1),
  accepted: z.boolean(),
  decision: z.enum(['pending', 'accepted', 'discarded']),
  decided_at: z.string().optional(),
  score: SuggestionScoreSchema.optional(),
});
export type Suggestion = z.infer<typeof SuggestionSchema>;

export const VerifiedFixSchema = z.object({
  /** Episode open → the first Run & Score whose repair succeeded (held-out check). */
  ms: z.number().nonnegative(),
  run: z.number().int().min(1),
  /** An accepted suggestion was in the editor before that run. */
  with_suggestion: z.boolean(),
});
export type VerifiedFix = z.infer<typeof VerifiedFixSchema>;

/** The part of the persisted episode this feature reads and writes. */
export interface SuggestionState {
  suggestions?: Suggestion[];
  verifiedFix?: VerifiedFix;
}

/**
 * The suggestion a demonstration keeps: the accepted one (the last accepted if several), else the
 * last one asked for. The others are counted.
 */
export function suggestionOfRecord(state: SuggestionState): Suggestion | undefined {
  const all = state.suggestions ?? [];
  return [...all].reverse().find((s) => s.accepted) ?? all.at(-1);
}

/** The demonstration's `info` fields of this feature. */
export function suggestionInfo(state: SuggestionState): Record<string, unknown> {
  const s = suggestionOfRecord(state);
  const accepted = (state.suggestions ?? []).some((x) => x.accepted);
  return {
    ...(s
      ? {
          suggestion: {
            agent: s.agent,
            diff: s.diff,
            answer_kind: s.answer_kind,
            completion: s.completion,
            accepted: s.accepted,
            decision: s.decision,
            asked_at: s.asked_at,
            latency_ms: s.latency_ms,
            ...(s.score ? { score: s.score } : {}),
            asked: state.suggestions?.length ?? 1,
          },
        }
      : {}),
    // Null when no run succeeded before Submit (a failing repair submitted anyway).
    time_to_verified_fix: state.verifiedFix
      ? { ms: state.verifiedFix.ms, run: state.verifiedFix.run, with_suggestion: state.verifiedFix.with_suggestion }
      : { ms: null, run: null, with_suggestion: accepted },
  };
}

/** The verified-fix mark a scored run sets (only the first successful run counts). */
export function verifiedFixAfterRun(
  state: SuggestionState & { startedAt: string },
  run: number,
  success: boolean,
  now = Date.now(),
): VerifiedFix | undefined {
  if (!success || state.verifiedFix) return undefined;
  return { ms: Math.max(0, now - Date.parse(state.startedAt)), run, with_suggestion: (state.suggestions ?? []).some((s) => s.accepted) };
}

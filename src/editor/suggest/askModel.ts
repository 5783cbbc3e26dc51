// Asks the configured model for a repair of the open episode's broken script, through the same
// agent client evaluate-model uses (src/env/agent/): the environment's own repair prompt, the
// completion read by parseRepairAnswer, and the proposal turned into a whole proposed script (the
// right side of the diff view) and a normalised diff against the broken script. Every way it can
// fail comes back as a message that says which step failed; nothing here touches the episode.
// No vscode import.
import { chatComplete, chatCompletionsUrl, type RequestStats, type Sampling } from '../../env/agent/chatEndpoint';
import { parseRepairAnswer } from '../../env/agent/repairAnswer';
import { applyRepairDiff, createRepairDiff } from '../../env/diff/diff';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../env/episode/prompts';
import type { ForgeSettings } from '../settingsSchema';
import type { SuggestionAgent } from './suggestionRecord';

export interface ModelChoice {
  endpoint: string;
  model: string;
  sampling: Sampling;
  timeoutMs: number;
  retries: number;
}

export type ModelChoiceResult =
  { ok: true; choice: ModelChoice } | { ok: false; setting: 'model.endpoint' | 'model.name'; message: string };

/** The model Suggest Repair asks, from the `forgeenv.model.*` settings (validated by settingsSchema.ts). */
export function modelChoiceOf(s: ForgeSettings): ModelChoiceResult {
  if (!s['model.endpoint']) {
    return {
      ok: false,
      setting: 'model.endpoint',
      message:
        'ForgeEnv: no model is configured for Suggest Repair: set forgeenv.model.endpoint (an OpenAI-compatible chat endpoint, e.g. http://127.0.0.1:8089/v1 from `npm run model:serve`) and forgeenv.model.name.',
    };
  }
  try {
    chatCompletionsUrl(s['model.endpoint']);
  } catch (e) {
    return {
      ok: false,
      setting: 'model.endpoint',
      message: `ForgeEnv: forgeenv.model.endpoint cannot be used: ${(e as Error).message.replace(/^--endpoint/, 'the endpoint')}`,
    };
  }
  if (!s['model.name'])
    return {
      ok: false,
      setting: 'model.name',
      message: 'ForgeEnv: forgeenv.model.name is empty: set the model id the endpoint serves (any name for a single-model server).',
    };
  return {
    ok: true,
    choice: {
      endpoint: s['model.endpoint'],
      model: s['model.name'],
      sampling: { temperature: s['model.temperature'], max_tokens: s['model.maxTokens'] },
      timeoutMs: s['model.requestTimeoutSeconds'] * 1000,
      retries: 2,
    },
  };
}

export function agentOf(choice: ModelChoice): SuggestionAgent {
  return { kind: 'model', source: 'endpoint', endpoint: choice.endpoint, model: choice.model, sampling: choice.sampling };
}

export interface Proposal {
  agent: SuggestionAgent;
  /** The broken script with the proposal applied. */
  script: string;
  /** Normalised: createRepairDiff(broken, script). */
  diff: string;
  answerKind: 'diff' | 'script';
  completion: string;
  stats: RequestStats;
}

export type AskOutcome =
  | { ok: true; proposal: Proposal }
  | { ok: false; stage: 'endpoint' | 'answer' | 'apply' | 'unchanged'; message: string; completion?: string; stats?: RequestStats };

export interface AskInput {
  brokenScript: string;
  repairPrompt: string;
  maxDiffBytes: number;
  apiKey?: string;
  signal?: AbortSignal;
}

export async function askForRepair(choice: ModelChoice, input: AskInput): Promise<AskOutcome> {
  const where = `${choice.model} at ${choice.endpoint}`;
  const answer = await chatComplete(
    {
      endpoint: choice.endpoint,
      model: choice.model,
      timeoutMs: choice.timeoutMs,
      retries: choice.retries,
      apiKey: input.apiKey,
      signal: input.signal,
    },
    REPAIR_AGENT_SYSTEM_PROMPT,
    input.repairPrompt,
    choice.sampling,
  );
  if (!answer.ok)
    return {
      ok: false,
      stage: 'endpoint',
      message: `ForgeEnv: the model (${where}) gave no suggestion: ${answer.error}.`,
      stats: answer.stats,
    };
  const parsed = parseRepairAnswer(answer.text);
  if (!parsed.ok)
    return {
      ok: false,
      stage: 'answer',
      message: `ForgeEnv: the model's answer holds no repair: ${parsed.reason}.`,
      completion: answer.text,
      stats: answer.stats,
    };
  const applied = applyRepairDiff(input.brokenScript, parsed.submission, { maxBytes: input.maxDiffBytes });
  if (!applied.ok)
    return {
      ok: false,
      stage: 'apply',
      message: `ForgeEnv: the model's ${parsed.kind} does not apply to the broken script: ${applied.error}`,
      completion: answer.text,
      stats: answer.stats,
    };
  const diff = createRepairDiff(input.brokenScript, applied.script);
  if (diff === '')
    return {
      ok: false,
      stage: 'unchanged',
      message: 'ForgeEnv: the model proposed no change to the broken script.',
      completion: answer.text,
      stats: answer.stats,
    };
  return {
    ok: true,
    proposal: {
      agent: agentOf(choice),
      script: applied.script,
      diff,
      answerKind: parsed.kind,
      completion: answer.text,
      stats: answer.stats,
    },
  };
}

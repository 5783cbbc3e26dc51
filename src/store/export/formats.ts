// Row shapes of each export format. Every row of a format has the same keys in the same order
// with the same JSON types (strings stay strings, no nulls, nested maps are JSON strings), so
// Hugging Face `datasets`' JSON loader infers one schema for the whole file.
import { canonicalJson, sha256Hex } from '../hashing';
import type { DemonstrationRecord } from '../records';
import { verifiedSuccess, type SelectionFilters } from './selection';

export const EXPORT_FORMATS = ['trl-sft', 'trl-grpo', 'trl-kto', 'swebench', 'swebench-instances'] as const;
export type ExportFormat = (typeof EXPORT_FORMATS)[number];
/** Every format `forgeenv export` takes: trl-dpo re-executes both sides of each pair, so it has a path of its own (src/store/export/dpo.ts). */
export const CLI_EXPORT_FORMATS = ['trl-sft', 'trl-grpo', 'trl-kto', 'trl-dpo', 'swebench', 'swebench-instances'] as const;
export const PROMPT_STYLES = ['standard', 'conversational'] as const;
export type PromptStyle = (typeof PROMPT_STYLES)[number];
/** `raw`: the scored diff as stored; `fenced`: inside a ```diff block, as the repair system prompt asks a model to answer. */
export const COMPLETION_FORMS = ['raw', 'fenced'] as const;
export type CompletionForm = (typeof COMPLETION_FORMS)[number];

export interface RowContext {
  systemPrompt: string;
  style: PromptStyle;
  completion: CompletionForm;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

export interface ColumnDoc {
  name: string;
  type: string;
  meaning: string;
}

export interface FormatSpec {
  format: ExportFormat;
  /** Whether --style shapes the rows (the TRL formats). */
  styled: boolean;
  /** Rows with the same key are exported once (the first in file order); `row` is the shaped row's JSON. */
  dedupeKey: (rec: DemonstrationRecord, row: string) => string;
  dedupeReason?: string;
  row: (rec: DemonstrationRecord, ctx: RowContext) => Record<string, unknown>;
  /** Filters this format needs other than the shared defaults when none are given (trl-kto takes failures too). */
  defaultFilters?: Partial<SelectionFilters>;
  /** Whether --completion raw|fenced applies. */
  completionForms?: boolean;
  columns: (style: PromptStyle, completion?: CompletionForm) => ColumnDoc[];
  description: (style: PromptStyle) => string;
}

/** The string prompt of the standard style: what the model sees, system prompt first. */
export function flatPrompt(systemPrompt: string, repairPrompt: string): string {
  return `${systemPrompt}\n\n${repairPrompt}`;
}

/** A ```diff block whose fence is longer than any backtick run in the diff, so it cannot close early. */
export function fencedDiff(diff: string): string {
  let longest = 0;
  for (const m of diff.matchAll(/`{3,}/g)) longest = Math.max(longest, m[0].length);
  const ticks = '`'.repeat(Math.max(3, longest + 1));
  return `${ticks}diff\n${diff}${diff.endsWith('\n') || diff === '' ? '' : '\n'}${ticks}\n`;
}

function completionText(rec: DemonstrationRecord, form: CompletionForm): string {
  return form === 'fenced' ? fencedDiff(rec.repair_completion) : rec.repair_completion;
}

function chatPrompt(systemPrompt: string, repairPrompt: string): ChatMessage[] {
  return [
    { role: 'system', content: systemPrompt },
    { role: 'user', content: repairPrompt },
  ];
}

/** The held-out check an instance counts as resolved by (our FAIL_TO_PASS). */
export const INSTANCE_FAIL_TO_PASS = ['executed_cleanly'] as const;

/** Stable across exports: the same task (script, breakage, seed, snapshot) always gets the same id. */
export function swebenchInstanceId(rec: DemonstrationRecord): string {
  return `${rec.task_id}__${rec.primitive_type}__${rec.info.seed}__${rec.info.task_hash.slice(0, 12)}`;
}

const promptColumn = (style: PromptStyle): ColumnDoc =>
  style === 'standard'
    ? {
        name: 'prompt',
        type: 'string',
        meaning: 'repair-agent system prompt, a blank line, then the repair prompt the environment rendered',
      }
    : {
        name: 'prompt',
        type: 'list of {role, content}',
        meaning: 'system message (repair-agent system prompt) and user message (repair prompt)',
      };

export const FORMATS: Record<ExportFormat, FormatSpec> = {
  'trl-sft': {
    format: 'trl-sft',
    styled: true,
    completionForms: true,
    // The row itself: two episodes can differ (seed, snapshot, annotator) and still shape into the
    // same prompt and completion, which SFT would then see twice.
    dedupeKey: (_r, row) => sha256Hex(row),
    dedupeReason: 'identical prompt and completion (an identical row was already written)',
    row: (r, { systemPrompt, style, completion }) =>
      style === 'standard'
        ? { prompt: flatPrompt(systemPrompt, r.repair_prompt), completion: completionText(r, completion) }
        : {
            prompt: chatPrompt(systemPrompt, r.repair_prompt),
            completion: [{ role: 'assistant', content: completionText(r, completion) }],
          },
    columns: (style, completion = 'raw') => {
      const what =
        completion === 'fenced'
          ? 'the unified diff the annotator submitted (exactly what was scored), in a ```diff block'
          : 'the unified diff the annotator submitted (exactly what was scored)';
      return [
        promptColumn(style),
        style === 'standard'
          ? { name: 'completion', type: 'string', meaning: what }
          : { name: 'completion', type: 'list of {role, content}', meaning: `one assistant message: ${what}` },
      ];
    },
    description: (style) =>
      `TRL SFT ${style === 'standard' ? 'prompt-completion' : 'conversational prompt-completion'} rows: train the repair agent on human repairs (\`SFTTrainer\` with the default completion-only loss).`,
  },
  'trl-grpo': {
    format: 'trl-grpo',
    styled: true,
    dedupeKey: (r) => r.info.task_hash,
    dedupeReason: 'the same task (task_hash) already has a prompt row',
    row: (r, { systemPrompt, style }) => ({
      prompt: style === 'standard' ? flatPrompt(systemPrompt, r.repair_prompt) : chatPrompt(systemPrompt, r.repair_prompt),
      task_id: r.task_id,
      primitive_type: r.primitive_type,
      primitive_params: canonicalJson(r.info.primitive.params),
      seed: r.info.seed,
      library_versions: canonicalJson(r.info.library_versions),
    }),
    columns: (style) => [
      promptColumn(style),
      { name: 'task_id', type: 'string', meaning: 'ForgeEnv task id' },
      { name: 'primitive_type', type: 'string', meaning: 'breakage primitive class name' },
      { name: 'primitive_params', type: 'string (JSON object, sorted keys)', meaning: 'the primitive params; `json.loads` it' },
      { name: 'seed', type: 'int', meaning: 'episode seed; with the columns above, `reset` reproduces the broken script' },
      {
        name: 'library_versions',
        type: 'string (JSON object, sorted keys)',
        meaning: 'library snapshot, e.g. {"datasets":"3.2.0",...}; `json.loads` it',
      },
    ],
    description: () =>
      'TRL GRPO prompt-only rows (one per distinct task): the extra columns reach the reward function as keyword arguments, so it can rebuild the episode and score completions in ForgeEnv.',
  },
  'trl-kto': {
    format: 'trl-kto',
    styled: true,
    completionForms: true,
    // Unpaired preference data: failures are the negatives, so every attempt is taken unless --status says otherwise.
    defaultFilters: { status: 'all' },
    dedupeKey: (_r, row) => sha256Hex(row),
    dedupeReason: 'identical prompt, completion and label (an identical row was already written)',
    row: (r, { systemPrompt, style, completion }) => {
      // The label is the verified outcome (the environment's verifier passed the artifact and no held-out check flags it), never the printed text.
      const label = verifiedSuccess(r);
      return style === 'standard'
        ? { prompt: flatPrompt(systemPrompt, r.repair_prompt), completion: completionText(r, completion), label }
        : {
            prompt: chatPrompt(systemPrompt, r.repair_prompt),
            completion: [{ role: 'assistant', content: completionText(r, completion) }],
            label,
          };
    },
    columns: (style, completion = 'raw') => {
      const what =
        completion === 'fenced'
          ? "the repair that was scored (a human's or a model's diff), in a ```diff block"
          : "the repair that was scored (a human's or a model's diff)";
      return [
        promptColumn(style),
        style === 'standard'
          ? { name: 'completion', type: 'string', meaning: what }
          : { name: 'completion', type: 'list of {role, content}', meaning: `one assistant message: ${what}` },
        {
          name: 'label',
          type: 'bool',
          meaning: 'true when the environment verified the repair (verifier passed, no held-out check flags it), else false',
        },
      ];
    },
    description: (style) =>
      `TRL KTO ${style === 'standard' ? 'unpaired preference' : 'conversational unpaired preference'} rows, one per attempt (\`KTOTrainer\`): \`label\` is the attempt's verified outcome, so failed repairs are the undesirable examples.`,
  },
  swebench: {
    format: 'swebench',
    styled: false,
    dedupeKey: swebenchInstanceId,
    dedupeReason: 'instance_id already has a prediction (a predictions file holds one patch per instance)',
    row: (r) => ({
      instance_id: swebenchInstanceId(r),
      model_name_or_path: `human:${r.info.annotator_id}`,
      model_patch: r.repair_completion,
    }),
    columns: () => [
      { name: 'instance_id', type: 'string', meaning: '`<task_id>__<primitive_type>__<seed>__<first 12 hex of task_hash>`' },
      { name: 'model_name_or_path', type: 'string', meaning: '`human:<annotator_id>`' },
      { name: 'model_patch', type: 'string', meaning: 'the submitted unified diff' },
    ],
    description: () =>
      'SWE-bench-style predictions (one patch per instance), for comparing human repairs with model repairs in the same harness format.',
  },
  'swebench-instances': {
    format: 'swebench-instances',
    styled: false,
    dedupeKey: swebenchInstanceId,
    dedupeReason: 'instance_id already has an instance row',
    row: (r) => ({
      instance_id: swebenchInstanceId(r),
      repo: `forgeenv/${r.task_id}`,
      base_commit: r.info.task_hash,
      environment_setup_commit: r.info.task_hash,
      version: canonicalJson(r.info.library_versions),
      problem_statement: r.repair_prompt,
      hints_text: '',
      created_at: r.info.submitted_at,
      patch: r.repair_completion,
      test_patch: '',
      FAIL_TO_PASS: JSON.stringify(INSTANCE_FAIL_TO_PASS),
      PASS_TO_PASS: '[]',
      task_id: r.task_id,
      primitive_type: r.primitive_type,
      primitive_params: canonicalJson(r.info.primitive.params),
      seed: r.info.seed,
      library_versions: canonicalJson(r.info.library_versions),
      mode: r.info.mode,
    }),
    columns: () => [
      { name: 'instance_id', type: 'string', meaning: 'as in the swebench predictions export' },
      { name: 'repo', type: 'string', meaning: '`forgeenv/<task_id>`' },
      { name: 'base_commit', type: 'string', meaning: 'task_hash: the original script, breakage, seed and snapshot the patch applies to' },
      { name: 'environment_setup_commit', type: 'string', meaning: 'task_hash (the environment is the snapshot in library_versions)' },
      { name: 'version', type: 'string (JSON object, sorted keys)', meaning: 'the library snapshot' },
      { name: 'problem_statement', type: 'string', meaning: 'the repair prompt (broken script, error trace, versions)' },
      { name: 'hints_text', type: 'string', meaning: 'empty' },
      { name: 'created_at', type: 'string', meaning: 'when the reference repair was submitted' },
      { name: 'patch', type: 'string', meaning: 'the reference (gold) patch: the human repair' },
      { name: 'test_patch', type: 'string', meaning: 'empty: the held-out checks live in ForgeEnv' },
      {
        name: 'FAIL_TO_PASS',
        type: 'string (JSON list)',
        meaning: '["executed_cleanly"]: the broken script fails, a resolving patch runs cleanly',
      },
      { name: 'PASS_TO_PASS', type: 'string (JSON list)', meaning: 'empty' },
      {
        name: 'task_id, primitive_type, primitive_params, seed, library_versions, mode',
        type: 'string / int',
        meaning: 'what `forgeenv evaluate` rebuilds the episode from',
      },
    ],
    description: () =>
      'SWE-bench-style task instances (one per instance_id) for the predictions exports: the harness loader reads them as a local dataset, and `forgeenv evaluate --instances FILE --predictions FILE` re-scores predictions against them in ForgeEnv.',
  },
};

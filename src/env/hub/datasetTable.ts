// Real features of well-known Hub datasets (columns, kinds, label names, splits), from their dataset
// cards and viewers, so a script that uses a column without naming it (a trainer reading `chosen`)
// still gets it. Rows stay synthetic. Sources are the dataset pages (https://huggingface.co/datasets/<id>).
import type { ColumnKind } from './needs';
import type { NestedShape } from './nestedShapes';

export interface KnownDataset {
  columns: Record<string, ColumnKind>;
  labels?: Record<string, string[]>;
  /** The structure of the `nested` columns. */
  shapes?: Record<string, NestedShape>;
  splits: string[];
  configs?: Record<string, { columns: Record<string, ColumnKind>; labels?: Record<string, string[]> }>;
}

const GLUE_PAIR = { columns: { sentence1: 'string', sentence2: 'string', label: 'label', idx: 'int' } } as const;

const GLUE: KnownDataset = {
  columns: { sentence: 'string', label: 'label', idx: 'int' },
  splits: ['train', 'validation', 'test'],
  configs: {
    mrpc: { ...GLUE_PAIR, labels: { label: ['not_equivalent', 'equivalent'] } },
    rte: { ...GLUE_PAIR, labels: { label: ['entailment', 'not_entailment'] } },
    wnli: { ...GLUE_PAIR, labels: { label: ['not_entailment', 'entailment'] } },
    stsb: { columns: { sentence1: 'string', sentence2: 'string', label: 'float', idx: 'int' } },
    cola: { columns: { sentence: 'string', label: 'label', idx: 'int' }, labels: { label: ['unacceptable', 'acceptable'] } },
    sst2: { columns: { sentence: 'string', label: 'label', idx: 'int' }, labels: { label: ['negative', 'positive'] } },
    qnli: {
      columns: { question: 'string', sentence: 'string', label: 'label', idx: 'int' },
      labels: { label: ['entailment', 'not_entailment'] },
    },
    qqp: {
      columns: { question1: 'string', question2: 'string', label: 'label', idx: 'int' },
      labels: { label: ['not_duplicate', 'duplicate'] },
    },
    mnli: {
      columns: { premise: 'string', hypothesis: 'string', label: 'label', idx: 'int' },
      labels: { label: ['entailment', 'neutral', 'contradiction'] },
    },
  },
};

// UltraFeedback's model pool as its rows name it (https://github.com/OpenBMB/UltraFeedback, README "Model pool").
const ULTRAFEEDBACK_MODELS = [
  'gpt-4',
  'gpt-3.5-turbo',
  'bard',
  'ultralm-13b',
  'ultralm-65b',
  'wizardlm-7b',
  'wizardlm-13b',
  'wizardlm-70b',
  'vicuna-33b',
  'alpaca-7b',
  'pythia-12b',
  'falcon-40b-instruct',
  'starchat',
  'mpt-30b-chat',
  'llama-2-7b-chat',
  'llama-2-13b-chat',
  'llama-2-70b-chat',
];
// An UltraFeedback aspect's annotation: a rating "1".."5" (a string in the dataset) and its rationale.
const RATED: Record<string, NestedShape> = {
  Rating: { value: 'string', values: ['1', '2', '3', '4', '5'] },
  Rationale: { value: 'string' },
};

export const KNOWN_DATASETS: Readonly<Record<string, KnownDataset>> = {
  // https://huggingface.co/datasets/nyu-mll/glue (configs mrpc, rte, stsb, qnli, qqp, cola, sst2, mnli)
  glue: GLUE,
  'nyu-mll/glue': GLUE,
  // https://huggingface.co/datasets/stanfordnlp/imdb
  'stanfordnlp/imdb': {
    columns: { text: 'string', label: 'label' },
    labels: { label: ['neg', 'pos'] },
    splits: ['train', 'test', 'unsupervised'],
  },
  // https://huggingface.co/datasets/Samsung/samsum
  samsum: { columns: { id: 'string', dialogue: 'string', summary: 'string' }, splits: ['train', 'validation', 'test'] },
  'Samsung/samsum': { columns: { id: 'string', dialogue: 'string', summary: 'string' }, splits: ['train', 'validation', 'test'] },
  // https://huggingface.co/datasets/knkarthick/dialogsum
  'knkarthick/dialogsum': {
    columns: { id: 'string', dialogue: 'string', summary: 'string', topic: 'string' },
    splits: ['train', 'validation', 'test'],
  },
  // https://huggingface.co/datasets/lvwerra/stack-exchange-paired
  'lvwerra/stack-exchange-paired': {
    columns: { qid: 'int', question: 'string', date: 'string', metadata: 'strings', response_j: 'string', response_k: 'string' },
    splits: ['train', 'test'],
  },
  // https://huggingface.co/datasets/Anthropic/hh-rlhf
  'Anthropic/hh-rlhf': { columns: { chosen: 'string', rejected: 'string' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/openai/gsm8k (config main)
  gsm8k: { columns: { question: 'string', answer: 'string' }, splits: ['train', 'test'] },
  'openai/gsm8k': { columns: { question: 'string', answer: 'string' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/AI-MO/NuminaMath-TIR
  'AI-MO/NuminaMath-TIR': { columns: { problem: 'string', solution: 'string', messages: 'messages' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/trl-lib/tldr
  'trl-lib/tldr': { columns: { prompt: 'string', completion: 'string' }, splits: ['train', 'validation', 'test'] },
  // https://huggingface.co/datasets/trl-internal-testing/hh-rlhf-helpful-base-trl-style (README dataset_info: chosen and
  // rejected are lists of {content, role}, prompt a string; the TRL ORPO/DPO examples of 2024 apply the chat template themselves)
  'trl-internal-testing/hh-rlhf-helpful-base-trl-style': {
    columns: { chosen: 'messages', rejected: 'messages', prompt: 'string' },
    splits: ['train', 'test'],
  },
  // https://huggingface.co/datasets/trl-lib/Capybara
  'trl-lib/Capybara': { columns: { messages: 'messages' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/HuggingFaceH4/ultrachat_200k
  'HuggingFaceH4/ultrachat_200k': {
    columns: { prompt: 'string', prompt_id: 'string', messages: 'messages' },
    splits: ['train_sft', 'test_sft'],
  },
  // https://huggingface.co/datasets/trl-lib/ultrafeedback_binarized
  'trl-lib/ultrafeedback_binarized': {
    columns: { chosen: 'messages', rejected: 'messages', score_chosen: 'float', score_rejected: 'float' },
    splits: ['train', 'test'],
  },
  // https://huggingface.co/datasets/trl-lib/ultrafeedback-prompt
  'trl-lib/ultrafeedback-prompt': { columns: { prompt: 'messages' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/trl-lib/kto-mix-14k
  'trl-lib/kto-mix-14k': { columns: { prompt: 'messages', completion: 'messages', label: 'bool' }, splits: ['train', 'test'] },
  // https://huggingface.co/datasets/openbmb/UltraFeedback (README dataset_info: `models` a sequence of strings, `completions`
  // a list of {annotations: {helpfulness, honesty, instruction_following, truthfulness}: {Rating: string, Rationale, ...},
  // critique, custom_system_prompt, fine-grained_score, model, overall_score, principle, response}); 4 completions per
  // prompt, each from a different model of the pool, ratings "1".."5" (https://github.com/OpenBMB/UltraFeedback, README
  // "Dataset Construction" and "Example").
  'openbmb/UltraFeedback': {
    columns: {
      source: 'string',
      instruction: 'string',
      models: 'nested',
      completions: 'nested',
      correct_answers: 'strings',
      incorrect_answers: 'strings',
    },
    shapes: {
      models: { list: { value: 'string', values: ULTRAFEEDBACK_MODELS }, length: 4 },
      completions: {
        list: {
          struct: {
            annotations: {
              struct: {
                helpfulness: { struct: { ...RATED, 'Rationale For Rating': { value: 'string' }, Type: { list: { value: 'string' } } } },
                honesty: { struct: RATED },
                instruction_following: { struct: RATED },
                truthfulness: { struct: { ...RATED, 'Rationale For Rating': { value: 'string' }, Type: { list: { value: 'string' } } } },
              },
            },
            critique: { value: 'string' },
            custom_system_prompt: { value: 'string' },
            'fine-grained_score': { value: 'float' },
            model: { value: 'string', values: ULTRAFEEDBACK_MODELS },
            overall_score: { value: 'float' },
            principle: { value: 'string', values: ['helpfulness', 'honesty', 'truthfulness', 'verbalized_calibration'] },
            response: { value: 'string' },
          },
        },
        length: 4,
      },
    },
    splits: ['train'],
  },
  // https://huggingface.co/datasets/tatsu-lab/alpaca
  'tatsu-lab/alpaca': { columns: { instruction: 'string', input: 'string', output: 'string', text: 'string' }, splits: ['train'] },
  // https://huggingface.co/datasets/databricks/databricks-dolly-15k
  'databricks/databricks-dolly-15k': {
    columns: { instruction: 'string', context: 'string', response: 'string', category: 'string' },
    splits: ['train'],
  },
  // https://huggingface.co/datasets/Abirate/english_quotes
  'Abirate/english_quotes': { columns: { quote: 'string', author: 'string', tags: 'strings' }, splits: ['train'] },
  // https://huggingface.co/datasets/fancyzhx/ag_news
  ag_news: {
    columns: { text: 'string', label: 'label' },
    labels: { label: ['World', 'Sports', 'Business', 'Sci/Tech'] },
    splits: ['train', 'test'],
  },
  // https://huggingface.co/datasets/Yelp/yelp_review_full
  yelp_review_full: {
    columns: { label: 'label', text: 'string' },
    labels: { label: ['1 star', '2 star', '3 stars', '4 stars', '5 stars'] },
    splits: ['train', 'test'],
  },
  // https://huggingface.co/datasets/AI-Lab-Makerere/beans
  beans: {
    columns: { image_file_path: 'string', image: 'image', labels: 'label' },
    labels: { labels: ['angular_leaf_spot', 'bean_rust', 'healthy'] },
    splits: ['train', 'validation', 'test'],
  },
  // https://huggingface.co/datasets/ethz/food101
  food101: {
    columns: { image: 'image', label: 'label' },
    labels: { label: ['apple_pie', 'baby_back_ribs', 'baklava'] },
    splits: ['train', 'validation'],
  },
  // https://huggingface.co/datasets/naver-clova-ix/cord-v2
  'naver-clova-ix/cord-v2': { columns: { image: 'image', ground_truth: 'string' }, splits: ['train', 'validation', 'test'] },
  // https://huggingface.co/datasets/ybelkada/football-dataset
  'ybelkada/football-dataset': { columns: { image: 'image', text: 'string' }, splits: ['train'] },
  // https://huggingface.co/datasets/wikitext (other configs than the base hub's)
  wikitext: { columns: { text: 'string' }, splits: ['train', 'validation', 'test'] },
};

/**
 * The id of a synthetic dataset a task gets when its dataset id was a placeholder (the script names
 * none) whose fixed schema lacks what the script reads: in no table and not in the base hub, so the
 * hub builds it with the columns derived from the script and its trainer (needs.ts).
 */
export const SYNTHETIC_DATASET_ID = 'forgeenv/synthetic-dataset';

/** The corpus datasets of the base hub (resources/localhub/make_hub.py DATASETS): served as they are. */
const BASE_HUB: ReadonlyArray<[string, string | undefined]> = [
  ['glue', 'sst2'],
  ['conll2003', undefined],
  ['wikitext', 'wikitext-2-raw-v1'],
  ['cnn_dailymail', '3.0.0'],
  ['cifar10', undefined],
  ['imdb', undefined],
  ['squad', undefined],
  ['rotten_tomatoes', undefined],
  ['mnist', undefined],
  ['timdettmers/openassistant-guanaco', undefined],
];

export function isBaseHubDataset(path: string, config: string | undefined): boolean {
  return BASE_HUB.some(([p, c]) => p === path && (c === config || (c !== undefined && config === undefined)));
}

/** The base hub's config of `path` (undefined: none, or not a base-hub dataset). */
export function baseHubConfig(path: string): string | undefined {
  return BASE_HUB.find(([p]) => p === path)?.[1];
}

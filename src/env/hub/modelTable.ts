// Which tiny model stands in for a hub model id: the transformers `model_type`, the head its weights
// are saved with (one that the common Auto classes load), the tokenizer family (special tokens) and
// the chat template. Resolution order: the user's mapping (`forgeenv.real.modelArchitectures`), a
// `config.json` in the task's files, the table of well-known ids, name patterns of families.
import { z } from 'zod';

export type ModelHead =
  'causal_lm' | 'seq2seq_lm' | 'masked_lm' | 'image_classification' | 'speech_seq2seq' | 'ctc' | 'vision2seq' | 'base';
export type ChatTemplate = 'llama3' | 'llama2' | 'chatml' | 'chatml-smollm' | 'mistral' | 'gemma' | 'phi3' | 'zephyr' | 'qwen2_5' | 'qwen3';

export interface ModelRecipe {
  id: string;
  model_type: string;
  head: ModelHead;
  /** Tokenizer family of resources/localhub/make_hub_items.py; null: no tokenizer (vision, CTC audio). */
  tokenizer: string | null;
  chat_template: ChatTemplate | null;
  /** The user's config.json (the architecture's own settings; sizes are shrunk). */
  config: Record<string, unknown> | null;
  /** How the architecture was chosen (shown in refusals and the bench). */
  resolvedBy: 'setting' | 'config.json' | 'table' | 'pattern';
}

export class UnknownModelError extends Error {
  override readonly name = 'UnknownModelError';
  constructor(readonly id: string) {
    super(
      `ForgeEnv cannot tell the architecture of model "${id}" (not in its table of families, no config.json in the task). ` +
        `Map it in the setting forgeenv.real.modelArchitectures (CLI: --model-architectures FILE.json), e.g. {"${id}": "llama"} ` +
        `(a transformers model_type or a well-known model id).`,
    );
  }
}

const INSTRUCT = /instruct|chat|-it\b|-it-|zephyr|-sft\b|-dpo\b/i;

type Family = {
  model_type: string;
  head: ModelHead;
  tokenizer: string | null;
  template?: ChatTemplate | ((id: string) => ChatTemplate | null);
  instructTokenizer?: string;
};

const tpl = (t: ChatTemplate) => (id: string) => (INSTRUCT.test(id) ? t : null);

/** Families by model_type: head, tokenizer family and template. */
const FAMILIES: Record<string, Omit<Family, 'model_type'>> = {
  llama: { head: 'causal_lm', tokenizer: 'llama2', template: tpl('llama2') },
  mistral: { head: 'causal_lm', tokenizer: 'mistral', template: tpl('mistral') },
  mixtral: { head: 'causal_lm', tokenizer: 'mistral', template: tpl('mistral') },
  // Qwen base repos ship their chat template too (Qwen/Qwen2-0.5B, Qwen/Qwen2.5-0.5B, Qwen/Qwen3-0.6B-Base
  // tokenizer_config.json): Qwen2's ChatML, Qwen2.5's (tools, default system text), Qwen3's (thinking).
  qwen2: {
    head: 'causal_lm',
    tokenizer: 'qwen',
    template: (id) => (/qwen2\.5|qwen2_5/i.test(id) ? 'qwen2_5' : 'chatml'),
    instructTokenizer: 'qwen-instruct',
  },
  qwen3: { head: 'causal_lm', tokenizer: 'qwen', template: () => 'qwen3', instructTokenizer: 'qwen-instruct' },
  gemma: { head: 'causal_lm', tokenizer: 'gemma', template: tpl('gemma') },
  gemma2: { head: 'causal_lm', tokenizer: 'gemma', template: tpl('gemma') },
  gemma3_text: { head: 'causal_lm', tokenizer: 'gemma', template: tpl('gemma') },
  phi: { head: 'causal_lm', tokenizer: 'phi' },
  phi3: { head: 'causal_lm', tokenizer: 'phi3', template: tpl('phi3') },
  opt: { head: 'causal_lm', tokenizer: 'opt' },
  gpt_neox: { head: 'causal_lm', tokenizer: 'neox' },
  gpt_neo: { head: 'causal_lm', tokenizer: 'gpt2' },
  gptj: { head: 'causal_lm', tokenizer: 'gpt2' },
  falcon: { head: 'causal_lm', tokenizer: 'falcon' },
  bloom: { head: 'causal_lm', tokenizer: 'bloom' },
  gpt2: { head: 'causal_lm', tokenizer: 'gpt2' },
  t5: { head: 'seq2seq_lm', tokenizer: 't5' },
  mt5: { head: 'seq2seq_lm', tokenizer: 't5' },
  bart: { head: 'seq2seq_lm', tokenizer: 'bart' },
  mbart: { head: 'seq2seq_lm', tokenizer: 'bart' },
  pegasus: { head: 'seq2seq_lm', tokenizer: 'bart' },
  bert: { head: 'masked_lm', tokenizer: 'bert-cased' },
  roberta: { head: 'masked_lm', tokenizer: 'roberta' },
  'xlm-roberta': { head: 'masked_lm', tokenizer: 'roberta' },
  camembert: { head: 'masked_lm', tokenizer: 'roberta' },
  deberta: { head: 'masked_lm', tokenizer: 'roberta' },
  'deberta-v2': { head: 'masked_lm', tokenizer: 'roberta' },
  distilbert: { head: 'masked_lm', tokenizer: 'bert-uncased' },
  electra: { head: 'masked_lm', tokenizer: 'bert-uncased' },
  albert: { head: 'masked_lm', tokenizer: 'albert' },
  luke: { head: 'masked_lm', tokenizer: 'roberta' },
  layoutlmv3: { head: 'base', tokenizer: 'roberta' },
  whisper: { head: 'speech_seq2seq', tokenizer: 'whisper' },
  // Pretraining-only checkpoints (facebook/wav2vec2-base, xlsr-53, hubert-base: no tokenizer, no CTC head): the
  // script's own head, sized by the vocabulary it builds, is initialised on load as with the real ones.
  wav2vec2: { head: 'base', tokenizer: null },
  hubert: { head: 'base', tokenizer: null },
  vit: { head: 'image_classification', tokenizer: null },
  deit: { head: 'image_classification', tokenizer: null },
  swin: { head: 'image_classification', tokenizer: null },
  convnext: { head: 'image_classification', tokenizer: null },
  resnet: { head: 'image_classification', tokenizer: null },
  clip: { head: 'base', tokenizer: 'clip' },
  'vision-encoder-decoder': { head: 'vision2seq', tokenizer: 'bart' },
  idefics: { head: 'vision2seq', tokenizer: 'idefics' },
  idefics2: { head: 'vision2seq', tokenizer: 'idefics', template: tpl('mistral') },
  idefics3: { head: 'vision2seq', tokenizer: 'smollm', template: () => 'chatml-smollm', instructTokenizer: 'smollm-instruct' },
  llava: { head: 'vision2seq', tokenizer: 'llava' },
};

/** Well-known ids whose family the patterns below would get wrong (or that a user may name as the mapping). */
const TABLE: Record<string, string> = {
  'HuggingFaceTB/SmolLM-135M': 'llama',
  'HuggingFaceTB/SmolLM2-135M': 'llama',
  'HuggingFaceTB/SmolLM2-360M': 'llama',
  'HuggingFaceTB/SmolLM2-135M-Instruct': 'llama',
  'HuggingFaceTB/SmolLM2-360M-Instruct': 'llama',
  'HuggingFaceTB/SmolVLM-256M-Instruct': 'idefics3',
  'HuggingFaceTB/SmolVLM-Instruct': 'idefics3',
  'HuggingFaceM4/idefics-9b': 'idefics',
  'HuggingFaceM4/idefics-9b-instruct': 'idefics',
  'HuggingFaceM4/Idefics3-8B-Llama3': 'idefics3',
  'naver-clova-ix/donut-base': 'vision-encoder-decoder',
  'TinyLlama/TinyLlama-1.1B-Chat-v1.0': 'llama',
  'EleutherAI/pythia-70m': 'gpt_neox',
  'lvwerra/gpt2-imdb': 'gpt2',
  'microsoft/DialoGPT-small': 'gpt2',
  'bigscience/bloomz-560m': 'bloom',
  'studio-ousia/luke-base': 'luke',
  'studio-ousia/luke-large': 'luke',
  'microsoft/layoutlmv3-base': 'layoutlmv3',
  'facebook/wav2vec2-base': 'wav2vec2',
  'facebook/wav2vec2-large-xlsr-53': 'wav2vec2',
  'trl-internal-testing/tiny-Qwen2ForCausalLM-2.5': 'qwen2',
  // Remote-code models (trust_remote_code) served as the standard architecture their code extends:
  // nomic-bert is a BERT encoder (https://huggingface.co/nomic-ai/nomic-bert-2048); a script that reads
  // AutoModel's hidden states (mean pooling) runs the same on BertModel.
  'nomic-ai/nomic-embed-text-v1': 'bert',
  'nomic-ai/nomic-embed-text-v1.5': 'bert',
};

/** The ids of the table of well-known models. */
export const wellKnownModelIds = (): string[] => Object.keys(TABLE);

/** Name patterns of families, most specific first (ids are matched lower-cased). */
const PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/smolvlm|idefics3/, 'idefics3'],
  [/idefics2/, 'idefics2'],
  [/idefics/, 'idefics'],
  [/llava/, 'llava'],
  [/donut|trocr/, 'vision-encoder-decoder'],
  [/whisper/, 'whisper'],
  [/wav2vec2|xlsr|xls-r|\bmms-/, 'wav2vec2'],
  [/hubert/, 'hubert'],
  [/clip/, 'clip'],
  [/swin/, 'swin'],
  [/deit/, 'deit'],
  [/convnext/, 'convnext'],
  [/resnet/, 'resnet'],
  [/\bvit\b|vit-|google\/vit/, 'vit'],
  [/layoutlmv3/, 'layoutlmv3'],
  [/mixtral/, 'mixtral'],
  [/mistral|zephyr/, 'mistral'],
  [/qwen3/, 'qwen3'],
  [/qwen/, 'qwen2'],
  [/smollm/, 'llama'],
  [/gemma-?3/, 'gemma3_text'],
  [/gemma-?2/, 'gemma2'],
  [/gemma/, 'gemma'],
  [/phi-?[34]/, 'phi3'],
  [/phi-/, 'phi'],
  [/llama|vicuna|alpaca|codellama/, 'llama'],
  [/\bopt-/, 'opt'],
  [/pythia|gpt-neox|neox/, 'gpt_neox'],
  [/gpt-neo/, 'gpt_neo'],
  [/gpt-j/, 'gptj'],
  [/falcon/, 'falcon'],
  [/bloom/, 'bloom'],
  [/gpt2|dialogpt|distilgpt/, 'gpt2'],
  [/\bmt5/, 'mt5'],
  [/t5|\bt0/, 't5'],
  [/mbart/, 'mbart'],
  [/pegasus/, 'pegasus'],
  [/bart/, 'bart'],
  [/xlm-roberta|xlmr/, 'xlm-roberta'],
  [/camembert/, 'camembert'],
  [/deberta-v[23]/, 'deberta-v2'],
  [/deberta/, 'deberta'],
  [/roberta/, 'roberta'],
  [/distilbert/, 'distilbert'],
  [/electra/, 'electra'],
  [/albert/, 'albert'],
  [/luke/, 'luke'],
  [/nomic-(embed-text|bert)/, 'bert'],
  [/bert/, 'bert'],
];

export const ModelArchitecturesSchema = z.record(z.string().min(1).max(200), z.string().min(1).max(200));
export type ModelArchitectures = z.infer<typeof ModelArchitecturesSchema>;

const ConfigJsonSchema = z.object({ model_type: z.string().min(1) }).passthrough();

/** The family (model_type) of a well-known id or a name pattern, undefined when unknown. */
export function familyOf(id: string): { model_type: string; by: 'table' | 'pattern' } | undefined {
  if (TABLE[id]) return { model_type: TABLE[id], by: 'table' };
  const lower = id.toLowerCase();
  for (const [re, t] of PATTERNS) if (re.test(lower)) return { model_type: t, by: 'pattern' };
  return undefined;
}

/** A user's config.json for `id` in the task files (`<id>/config.json`), if any. */
function userConfig(id: string, files: Readonly<Record<string, string>>): Record<string, unknown> | undefined {
  const key = `${id.replace(/^\.\//, '').replace(/\/$/, '')}/config.json`;
  const text = files[key];
  if (text === undefined) return undefined;
  try {
    const r = ConfigJsonSchema.safeParse(JSON.parse(text));
    return r.success ? r.data : undefined;
  } catch {
    return undefined;
  }
}

/** The recipe of the tiny model for `id`; throws UnknownModelError when nothing tells the architecture. */
export function resolveModel(
  id: string,
  opts: { architecture?: string; files?: Readonly<Record<string, string>>; mapping?: ModelArchitectures } = {},
): ModelRecipe {
  let modelType: string | undefined;
  let by: ModelRecipe['resolvedBy'] = 'table';
  let config: Record<string, unknown> | null = null;
  const mapped = opts.architecture ?? opts.mapping?.[id];
  if (mapped) {
    // A model_type, or a well-known id whose family to take.
    modelType = FAMILIES[mapped] ? mapped : (familyOf(mapped)?.model_type ?? mapped);
    by = 'setting';
  } else {
    const cfg = userConfig(id, opts.files ?? {});
    if (cfg) {
      modelType = String(cfg.model_type);
      config = cfg;
      by = 'config.json';
    } else {
      const f = familyOf(id);
      if (f) {
        modelType = f.model_type;
        by = f.by;
      }
    }
  }
  if (!modelType) throw new UnknownModelError(id);
  const fam = FAMILIES[modelType] ?? { head: 'base' as const, tokenizer: 'gpt2' };
  const instruct = INSTRUCT.test(id);
  let tokenizer = instruct && fam.instructTokenizer ? fam.instructTokenizer : fam.tokenizer;
  // Llama 3 ids keep the Llama family's model_type with Llama 3's tokens and template.
  let template = typeof fam.template === 'function' ? fam.template(id) : (fam.template ?? null);
  if (modelType === 'llama') {
    const lower = id.toLowerCase();
    if (/llama-?3|llama3/.test(lower)) {
      tokenizer = instruct ? 'llama3-instruct' : 'llama3';
      template = instruct ? 'llama3' : null;
    } else if (/smollm/.test(lower)) {
      tokenizer = instruct ? 'smollm-instruct' : 'smollm';
      template = 'chatml-smollm';
    }
  }
  // Zephyr and TinyLlama's chat models ship Zephyr's template (<|user|>/<|system|>/<|assistant|>), not their base family's.
  if (/zephyr|tinyllama.*chat/.test(id.toLowerCase())) template = 'zephyr';
  if (modelType === 'bert' && /uncased|chinese|nomic/.test(id.toLowerCase()))
    tokenizer = /uncased|nomic/.test(id.toLowerCase()) ? 'bert-uncased' : 'bert-cased';
  if (modelType === 'distilbert' && /-cased/.test(id.toLowerCase())) tokenizer = 'bert-cased';
  return { id, model_type: modelType, head: fam.head, tokenizer, chat_template: template, config, resolvedBy: by };
}

/**
 * The chat model a task gets when its model id was a placeholder (the script names none) and the script
 * applies a chat template: Llama architecture (every snapshot's transformers has it) and a real
 * ChatML template (https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct, tagged conversational).
 */
export const CHAT_PLACEHOLDER_MODEL = 'HuggingFaceTB/SmolLM2-135M-Instruct';

/** The corpus models of the base hub (resources/localhub/make_hub.py MODELS): served as they are. */
const BASE_HUB_MODELS = new Set([
  'distilbert-base-uncased',
  'bert-base-cased',
  'google/electra-small-discriminator',
  'roberta-base',
  'albert-base-v2',
  'gpt2',
  't5-small',
  'google/vit-base-patch16-224-in21k',
]);

export function isBaseHubModel(id: string): boolean {
  return BASE_HUB_MODELS.has(id);
}

/** The base hub's models, in its order (rules pick one of a model type the offline hub always has). */
export function baseHubModelIds(): string[] {
  return [...BASE_HUB_MODELS];
}

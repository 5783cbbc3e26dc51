// Placeholders make-task put in a task's args (a dataset or model id the script does not name, chosen
// by the derivation: `imdb`, `gpt2`) that turn out not to fit the script, and what replaces them.
// - A fixed-schema dataset (the base hub's, or one of the table of real schemas) that lacks a column
//   the script or its trainer reads: a synthetic dataset id instead, which the hub builds with the
//   columns derived from the script (hub/needs.ts), since no real dataset was asked for.
// - A model without a chat template where the script (or its trainer) applies one: a small chat model
//   whose real tokenizer ships one, valid in every snapshot's transformers.
// A placeholder is exactly the value the derivation gives that option (scriptArgs.ts) and one the script
// itself does not name (a string literal of its source): the script's own choice failing is the real
// behaviour, and a user's own value is theirs.
import { CHAT_PLACEHOLDER_MODEL } from '../hub/modelTable';
import { KNOWN_DATASETS, SYNTHETIC_DATASET_ID, isBaseHubDataset } from '../hub/datasetTable';
import { optionValue } from './argEdits';
import { valueForArgument } from '../tasks/scriptArgs';

/** Option names that carry a dataset id (as hub/needs.ts reads them). */
const DATASET_OPTION = /^(train_)?dataset(_name|_id|_path)?(_or_path)?$/;
/** Option names that carry a model or tokenizer id. */
const MODEL_OPTION = /^(pretrained_)?(base_)?(model|tokenizer)(_name)?(_or_path|_id|_path)?$|^model_(name_or_path|id)$/;

/** Keys of TRL's dataset formats (TRL docs, "Dataset formats and types"): a trainer reads them without the script naming them. */
export const TRL_FORMAT_KEYS = new Set(['prompt', 'completion', 'chosen', 'rejected', 'label', 'messages', 'text', 'images']);

const escapeRe = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Whether the script's source names `value` as a string literal (its own id, not a placeholder). */
export function scriptNames(script: string, value: string): boolean {
  return new RegExp(`["']${escapeRe(value)}["']`).test(script);
}

/** Whether `value` of `--option` is the derivation's choice for a script that names no id of its own there. */
function isPlaceholder(script: string, option: string, value: string): boolean {
  return !scriptNames(script, value) && valueForArgument(script, option.replace(/-/g, '_')) === value;
}

/** The `--name value` pairs of an argv. */
function options(args: readonly string[]): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const a of args) {
    if (!a.startsWith('--')) continue;
    const name = a.slice(2).split('=')[0];
    const v = optionValue(args, name);
    if (v !== undefined && v !== 'true' && !out.some(([n]) => n === name)) out.push([name, v]);
  }
  return out;
}

/** A dataset option holding a fixed-schema placeholder, with the synthetic id to put instead. */
export function placeholderDataset(
  script: string,
  args: readonly string[],
): { option: string; value: string; replacement: string } | undefined {
  for (const [option, value] of options(args)) {
    if (!DATASET_OPTION.test(option.replace(/-/g, '_')) || value === SYNTHETIC_DATASET_ID) continue;
    const fixed = isBaseHubDataset(value, undefined) || KNOWN_DATASETS[value] !== undefined;
    if (fixed && isPlaceholder(script, option, value)) return { option, value, replacement: SYNTHETIC_DATASET_ID };
  }
  return undefined;
}

/** The model options holding a placeholder (an id the script does not name), to be the chat model instead. */
export function placeholderModels(script: string, args: readonly string[]): Array<{ option: string; value: string }> {
  return options(args)
    .filter(
      ([option, value]) =>
        MODEL_OPTION.test(option.replace(/-/g, '_')) && value !== CHAT_PLACEHOLDER_MODEL && isPlaceholder(script, option, value),
    )
    .map(([option, value]) => ({ option, value }));
}

// Run -> diagnose -> adapt: each rule is keyed on an error a run printed and answers with a change
// of the task's args or environment, or with a refusal that says what cannot be provided. Rules are
// general (keyed on the error text and the script's own parser, never on a script) and ordered:
// the first rule whose pattern matches and that has an answer decides.
import { firstOption, type ParserOptions } from './parserOptions';
import { optionIndex, optionValue, removeOption, setOption } from './argEdits';
import { valueForArgument } from '../tasks/scriptArgs';
import type { Adaptation } from './provenance';
import type { HubNeeds } from '../hub/needs';
import {
  missingHubItem,
  needsHave,
  withColumn,
  withFiles,
  withItem,
  withMetric,
  withSplit,
  EMPTY_HUB_NEEDS,
  type HubRunState,
} from './hubSupply';
import { hubFileId, hubFileUrls, sameHubFile } from '../hub/hubFiles';
import { splitSubscript } from './splitProvenance';
import { outsidePathSources, UNWRITABLE_PATH_ERROR } from './outsidePaths';
import { KNOWN_DATASETS, SYNTHETIC_DATASET_ID } from '../hub/datasetTable';
import { deriveHubNeeds, kindOf, looksLikeModelId, MAX_SYNTHETIC_ROWS } from '../hub/needs';
import { SHIM_EFFECTS, withShim, type RuntimeShim, type TaskRuntime } from '../run/runtimeShims';
import { CHAT_PLACEHOLDER_MODEL, familyOf, wellKnownModelIds } from '../hub/modelTable';
import { placeholderDataset, placeholderModels, scriptNames, TRL_FORMAT_KEYS } from './placeholders';
import { metricNameOf, missingMetric, offlineMetrics } from '../hub/metrics';
import { dictLiteralKeys, dictsKeyedBy, keyedChoice, MODEL_TYPE_OPTION } from './keyedChoice';
import { diskDatasetNeed, isRunRelativeFolder, readsFromDisk } from '../hub/diskDatasets';
import { SEQUENCE_LENGTH_OPTIONS } from './shortRun';
import { familyForTargets, targetModulesOfError } from '../hub/moduleNames';
import { posix } from 'node:path';
import { RunMountsSchema } from '../schemas';

export interface RuleContext {
  script: string;
  args: string[];
  env: Record<string, string>;
  /** The parser's options (from `--help`); undefined when the script has no parser or help failed. */
  options: ParserOptions | undefined;
  /** The parser's options that take no value (`store_true` flags), normalised names; from the same `--help`. */
  flags?: ReadonlySet<string>;
  /** The parser's option defaults as its `--help` prints them, normalised names; from the same `--help`. */
  defaults?: ReadonlyMap<string, string>;
  /** Real mode with the hub: what the last run asked the hub for and what it refused. */
  hub?: HubRunState;
  /** Hub items added by earlier adaptations (ids errors named). */
  hubExtra?: HubNeeds;
  /** Runtime shims added by earlier adaptations (runtimeShims.ts). */
  runtime?: TaskRuntime;
  /** Absolute output folders earlier adaptations mapped into the run folder (the task's `mounts`). */
  mounts?: readonly string[];
}

export type RuleOutcome =
  | {
      kind: 'adapt';
      adaptation: Omit<Adaptation, 'round' | 'error'>;
      args?: string[];
      env?: Record<string, string>;
      hub?: HubNeeds;
      runtime?: TaskRuntime;
      mounts?: string[];
    }
  | { kind: 'refuse'; rule: string; reason: string };

export interface Rule {
  id: string;
  /** Matched against the run's stderr + stdout tail. */
  pattern: RegExp;
  /** 'exception': matched against the run's last exception line only (the error itself, not a warning or a source line shown in the traceback). */
  scope?: 'exception';
  /** Undefined: the rule has no answer here (the next matching rule is tried). */
  apply(match: RegExpExecArray, ctx: RuleContext): RuleOutcome | undefined;
}

const adaptArgs = (rule: string, args: string[], change: string): RuleOutcome => ({
  kind: 'adapt',
  adaptation: { rule, kind: 'args', change },
  args,
});
const refuse = (rule: string, reason: string): RuleOutcome => ({ kind: 'refuse', rule, reason });

/**
 * A GPU assumption the script makes in its code (no option of its parser turns it off): the runtime
 * shim that adapts it to the CPU for every run of the task (runtimeShims.ts), or undefined when the
 * task has it already (then the shim did not cover this use, and the rule says so).
 */
function addShim(rule: string, ctx: RuleContext, shim: RuntimeShim): RuleOutcome | undefined {
  if (ctx.runtime?.shims.includes(shim)) return undefined;
  return {
    kind: 'adapt',
    adaptation: { rule, kind: 'runtime', change: `runtime shim ${shim}: ${SHIM_EFFECTS[shim]}` },
    runtime: withShim(ctx.runtime, shim),
  };
}

/**
 * A download of hub repo files by URL (`https://huggingface.co/datasets/<repo>/resolve/main/x.png`, named by the
 * error, or else the script's literal hub file URLs when the error names none): the hub gets a synthetic file of
 * each (hubFiles.ts) and the offline-hub-files shim answers their URLs from it. Undefined when no hub file URL is
 * involved, or when the task has both already (then the download is not one the shim serves: refused as before).
 */
function hubFileDownload(url: string | undefined, ctx: RuleContext): RuleOutcome | undefined {
  const named = url ? hubFileUrls(url, 'a URL a run fetched') : [];
  if (url && !named.length) return undefined;
  const files = named.length ? named : hubFileUrls(ctx.script, 'a hub file URL in the script');
  if (!files.length) return undefined;
  const have = ctx.hubExtra?.files ?? [];
  const newFiles = files.filter((f) => !have.some((h) => sameHubFile(h, f)));
  const hasShim = ctx.runtime?.shims.includes('offline-hub-files') ?? false;
  if (!newFiles.length && hasShim) return undefined;
  return {
    kind: 'adapt',
    adaptation: {
      rule: 'hub-file-url',
      kind: 'hub',
      change: `${files.map(hubFileId).join(', ')}: a synthetic file of each in the offline hub, and runtime shim offline-hub-files: ${SHIM_EFFECTS['offline-hub-files']}`,
    },
    hub: withFiles(ctx.hubExtra ?? EMPTY_HUB_NEEDS, files),
    runtime: withShim(ctx.runtime, 'offline-hub-files'),
  };
}

/** Sets the first option of `names` the parser has to `value` (when not already so). */
function setFirst(rule: string, ctx: RuleContext, names: readonly string[], value: string): RuleOutcome | undefined {
  const name = firstOption(ctx.options, names) ?? names.find((n) => optionIndex(ctx.args, n) >= 0);
  if (!name || optionValue(ctx.args, name) === value) return undefined;
  // A flag without a value (argparse `store_true`): absent is false, present is true; `--flag false` is refused.
  if (ctx.flags?.has(name.replace(/-/g, '_')) && (value === 'false' || value === 'true')) {
    if (value === 'false')
      return optionIndex(ctx.args, name) >= 0
        ? adaptArgs(rule, removeOption(ctx.args, name), `removed --${name} (a flag: absent is false)`)
        : undefined;
    return adaptArgs(rule, [...removeOption(ctx.args, name), `--${name}`], `--${name} (a flag)`);
  }
  return adaptArgs(rule, setOption(ctx.args, name, value), `--${name} ${value}`);
}

/** A value for an environment variable the script reads, by its name. */
export function envValueFor(name: string): string {
  if (/^SM_CHANNEL_(\w+)$/.test(name)) return `data/${name.slice('SM_CHANNEL_'.length).toLowerCase()}`;
  if (/_DIR$|_PATH$/.test(name)) return `out/${name.toLowerCase()}`;
  if (/^SM_NUM_(GPUS|NEURONS)$/.test(name)) return '0';
  if (name === 'SM_NUM_CPUS') return '1';
  if (name === 'SM_HOSTS') return '["algo-1"]';
  if (name === 'SM_CURRENT_HOST') return 'algo-1';
  if (/^(WORLD_SIZE|LOCAL_WORLD_SIZE)$/.test(name)) return '1';
  if (/^(RANK|LOCAL_RANK|NODE_RANK|GROUP_RANK)$/.test(name)) return '0';
  if (name === 'MASTER_ADDR') return '127.0.0.1';
  if (name === 'MASTER_PORT') return '29500';
  if (/TOKEN|KEY|SECRET|PASSWORD/.test(name)) return '';
  return 'x';
}

/**
 * The folder a task mounts for absolute literal paths the script writes (`/opt/ml/model/`, `/opt/ml/model/code/x.py`):
 * the outermost one (a file's folder when it names a file), if RunMountsSchema takes it (not a system folder).
 */
export function mountFor(literals: readonly string[]): string | undefined {
  const paths = literals.map((l) => l.replace(/\/+$/, '')).filter(Boolean);
  const top = paths.sort((a, b) => a.split('/').length - b.split('/').length)[0];
  if (!top) return undefined;
  const folder = /\.\w{1,5}$/.test(top.split('/').pop() ?? '') ? posix.dirname(top) : top;
  return RunMountsSchema.safeParse([folder]).success ? folder : undefined;
}

/**
 * The environment variables of `name`'s family (its prefix before the first `_`: `SM_`) that the script reads
 * by subscript (`os.environ["SM_CHANNEL_TEST"]`, a KeyError when unset), in source order; launcher variables excluded.
 */
export function requiredEnvSiblings(script: string, name: string): string[] {
  const prefix = /^[A-Z][A-Z0-9]*_/.exec(name)?.[0];
  if (!prefix) return [];
  const out: string[] = [];
  for (const m of script.matchAll(/environ\s*\[\s*["']([A-Z][A-Z0-9_]*)["']\s*\]/g))
    if (m[1] !== name && m[1].startsWith(prefix) && !LAUNCHER_ENV.test(m[1]) && !out.includes(m[1])) out.push(m[1]);
  return out;
}
const LAUNCHER_ENV = /^(MASTER_ADDR|MASTER_PORT|WORLD_SIZE|LOCAL_WORLD_SIZE|RANK|LOCAL_RANK|NODE_RANK|GROUP_RANK)$/;

/** A Hub upload the script makes in its code (a call, not the `--push_to_hub` option's name). */
const HUB_WRITE_CALL = /\.push_to_hub\s*\(|\b(?:create_repo|upload_folder|upload_file|upload_large_folder|create_commit)\s*\(/;
/** How an upload fails offline or without a token, across huggingface_hub releases. */
const HUB_WRITE_ERROR =
  /(?:requests\.exceptions\.ConnectionError|urllib3\.exceptions\.\w+Error|OfflineModeIsEnabled|LocalTokenNotFoundError|HfHubHTTPError|RepositoryNotFoundError|\b401 Client Error|Invalid user token|Token is required|You must be logged in|not logged in)[^\n]*/;

const QUANTIZATION = /bitsandbytes|load_in_8bit|load_in_4bit|BitsAndBytesConfig|8-bit|4-bit|\bint8\b|quantization/i;

// The last alternative is a script's own check of where from_pretrained(device_map="auto") put the model
// ("Training on CPU or disk is not supported.", PEFT's int8 examples).
const GPU_ONLY =
  /Torch not compiled with CUDA enabled|No CUDA GPUs are available|Found no NVIDIA driver|CUDA driver version is insufficient|no CUDA-capable device|Cannot access accelerator device|The NVIDIA driver on your system|requires a GPU|CUDA is not available|cuda\(\) .*not available|Expected all tensors to be on the same device|[Tt]raining on (?:the )?CPU[^\n]{0,40} not supported|invalid argument to reset_peak_memory_stats/;

// The errors of a model or dataset missing offline (transformers, huggingface_hub, datasets; all eras).
const HUB_ERROR =
  /(?:Unrecognized configuration class [^\n]* for this kind of AutoModel[^\n]*|We couldn't connect to 'https:\/\/huggingface\.co'[^\n]*|is not a local folder and is not a valid model identifier[^\n]*|Repository Not Found[^\n]*|LocalEntryNotFoundError[^\n]*|Couldn't find (?:a dataset script|any data file|[^\n]*on the Hugging Face Hub)[^\n]*|DatasetNotFoundError[^\n]*|Dataset '[^']+' doesn't exist on the Hub[^\n]*|Can't load (?:tokenizer|the model|config)[^\n]*|offline mode is enabled[^\n]*|Couldn't reach[^\n]*)/;

/** A well-known model id per Auto class whose kind a text model lacks (the hub's table builds each tiny). */
export const MODEL_FOR_AUTO_CLASS: Readonly<Record<string, string>> = {
  AutoModelForImageTextToText: 'HuggingFaceTB/SmolVLM-256M-Instruct',
  AutoModelForVision2Seq: 'HuggingFaceTB/SmolVLM-256M-Instruct',
  AutoModelForImageClassification: 'google/vit-base-patch16-224-in21k',
  AutoModelForSpeechSeq2Seq: 'openai/whisper-tiny',
  AutoModelForCTC: 'facebook/wav2vec2-base',
  AutoModelForAudioClassification: 'facebook/wav2vec2-base',
  AutoModelForSeq2SeqLM: 't5-small',
  // Encoders of the base hub whose real configs carry a pad token (RoBERTa: the PEFT and transformers
  // sequence-classification examples' default family): a batch of several sequences can be classified.
  AutoModelForSequenceClassification: 'roberta-base',
  AutoModelForMaskedLM: 'bert-base-cased',
  AutoModelForTokenClassification: 'bert-base-cased',
  AutoModelForQuestionAnswering: 'bert-base-cased',
  AutoModelForCausalLM: 'gpt2',
};

/** The well-known model of the first Auto class of MODEL_FOR_AUTO_CLASS the script loads with (source order), if any. */
export function modelForScriptAutoClass(script: string): { autoClass: string; id: string } | undefined {
  let best: { autoClass: string; id: string; at: number } | undefined;
  for (const [autoClass, id] of Object.entries(MODEL_FOR_AUTO_CLASS)) {
    const at = script.search(new RegExp(`\\b${autoClass}\\.from_(?:pretrained|config)\\b`));
    if (at >= 0 && (!best || at < best.at)) best = { autoClass, id, at };
  }
  return best && { autoClass: best.autoClass, id: best.id };
}

/** A causal LM of Linear layers (Llama architecture, in every snapshot's transformers) for a placeholder whose family is GPT-2's Conv1D. */
export const LINEAR_CAUSAL_PLACEHOLDER_MODEL = 'HuggingFaceTB/SmolLM2-135M';

/** Model types whose projections are transformers' Conv1D (weights stored transposed), not torch.nn.Linear. */
const CONV1D_MODEL_TYPES = new Set(['gpt2']);

const MODEL_OPTIONS = ['model_name_or_path', 'model_name', 'model_id', 'model', 'base_model', 'pretrained_model_name_or_path'];
/** Options that name a PEFT adapter apart from the base model. */
const ADAPTER_OPTIONS = [
  'adapter_name_or_path',
  'adapter_path',
  'adapter_model_name_or_path',
  'adapter_model',
  'peft_model_id',
  'peft_model_path',
  'lora_path',
  'lora_weights',
];

const describeNeeds = (n: HubNeeds): string =>
  [...n.models.map((m) => `model ${m.id}`), ...n.datasets.map((d) => `dataset ${d.path}${d.config ? `/${d.config}` : ''}`)].join(', ') ||
  'nothing';

/**
 * The columns of datasets' `remove_columns` error ("Column to remove ['rejected', 'chosen'] not in the dataset"),
 * a Python list's repr; empty when there is none.
 */
export function removedColumns(list: string | undefined): string[] {
  return [...(list ?? '').matchAll(/'([^']+)'|"([^"]+)"/g)].map((x) => x[1] ?? x[2]);
}

/** The rules, in the order they are tried. */
export const RULES: readonly Rule[] = [
  // --- args: what the script's parser says it needs or refuses ---
  {
    id: 'missing-required-option',
    pattern: /the following arguments are required: ([^\n]+)/,
    apply(m, ctx) {
      let args = [...ctx.args];
      const added: string[] = [];
      for (const raw of m[1].split(/,\s*/)) {
        const flag = raw.trim().split('/')[0].trim();
        if (!flag) continue;
        if (flag.startsWith('-')) {
          const name = flag.replace(/^-+/, '');
          if (optionIndex(args, name) >= 0) continue;
          const value = valueForArgument(ctx.script, name.replace(/-/g, '_'));
          args = setOption(args, name, value);
          added.push(`--${name} ${value}`);
        } else {
          const value = valueForArgument(ctx.script, flag);
          args = [value, ...args];
          added.push(`${flag}=${value} (positional)`);
        }
      }
      return added.length ? adaptArgs('missing-required-option', args, added.join(', ')) : undefined;
    },
  },
  {
    id: 'missing-one-of-options',
    pattern: /one of the arguments (--?[\w.-]+)[^\n]* is required/,
    apply(m, ctx) {
      const name = m[1].replace(/^-+/, '');
      if (optionIndex(ctx.args, name) >= 0) return undefined;
      const value = valueForArgument(ctx.script, name.replace(/-/g, '_'));
      return adaptArgs('missing-one-of-options', setOption(ctx.args, name, value), `--${name} ${value} (the first of a required group)`);
    },
  },
  {
    id: 'missing-dataclass-field',
    pattern: /__init__\(\) missing \d+ required (?:positional|keyword-only) arguments?: ([^\n]+)/,
    apply(m, ctx) {
      const names = [...m[1].matchAll(/'(\w+)'/g)].map((x) => x[1]);
      let args = [...ctx.args];
      const added: string[] = [];
      for (const n of names) {
        if (optionIndex(args, n) >= 0) continue;
        const v = valueForArgument(ctx.script, n);
        args = setOption(args, n, v);
        added.push(`--${n} ${v}`);
      }
      return added.length ? adaptArgs('missing-dataclass-field', args, added.join(', ')) : undefined;
    },
  },
  {
    id: 'unrecognized-arguments',
    pattern: /(?:unrecognized arguments: |Some specified arguments are not used by the HfArgumentParser: \[)([^\n\]]+)/,
    apply(m, ctx) {
      const names = [...m[1].matchAll(/'?--?([\w.-]+)/g)].map((x) => x[1]).filter((n) => optionIndex(ctx.args, n) >= 0);
      if (!names.length) {
        // A value the args give a flag that takes none (`--fp16 false` for a `store_true` flag): the flag
        // alone for a true value, nothing for a false one (absent is false).
        for (const word of m[1].trim().split(/\s+/)) {
          const at = ctx.args.findIndex(
            (a, i) => i > 0 && a === word && ctx.args[i - 1].startsWith('--') && !ctx.args[i - 1].includes('='),
          );
          if (at < 0 || !/^(true|false|yes|no|1|0)$/i.test(word)) continue;
          const flag = ctx.args[at - 1].slice(2);
          const on = /^(true|yes|1)$/i.test(word);
          const args = [...ctx.args.slice(0, on ? at : at - 1), ...ctx.args.slice(at + 1)];
          return adaptArgs(
            'unrecognized-arguments',
            args,
            on ? `--${flag} without a value (a flag)` : `removed --${flag} ${word} (a flag: absent is false)`,
          );
        }
        return undefined;
      }
      const args = names.reduce((a, n) => removeOption(a, n), ctx.args);
      return adaptArgs('unrecognized-arguments', args, `removed ${names.map((n) => `--${n}`).join(', ')}`);
    },
  },
  {
    id: 'invalid-choice',
    pattern: /argument --?([\w.-]+)(?:\/[^:]+)?: invalid choice: '[^']*' \(choose from ([^)]+)\)/,
    apply(m, ctx) {
      const first = /'([^']*)'|(\S+)/.exec(m[2]);
      const v = first?.[1] ?? first?.[2];
      return v === undefined
        ? undefined
        : adaptArgs('invalid-choice', setOption(ctx.args, m[1], v), `--${m[1]} ${v} (the parser's first choice)`);
    },
  },
  {
    id: 'invalid-type',
    pattern: /argument --?([\w.-]+)(?:\/[^:]+)?: invalid (\w+) value: '([^']*)'/,
    apply(m, ctx) {
      const v = /int/.test(m[2]) ? '1' : /float/.test(m[2]) ? '0.1' : /bool/.test(m[2]) ? 'false' : undefined;
      return v === undefined ? undefined : adaptArgs('invalid-type', setOption(ctx.args, m[1], v), `--${m[1]} ${v} (a ${m[2]})`);
    },
  },
  {
    // A bitsandbytes optimizer (`--optim paged_adamw_32bit`, `adamw_bnb_8bit`, through an option or its default) that
    // transformers' Trainer cannot make without bitsandbytes, which needs a CUDA GPU: the option takes adamw_torch,
    // the same algorithm in torch (paging and 8-bit states only save GPU memory).
    id: 'cpu-bnb-optimizer',
    scope: 'exception',
    // Its three wordings: transformers < 4.44 "… but bnb is not installed!", 4.44–4.57 "… but `bitsandbytes` is not
    // installed!", 5.x (trainer_optimizer.py) "You need to install `bitsandbytes` in order to use bitsandbytes optimizers".
    pattern:
      /Trainer tried to instantiate bnb optimizer but (?:bnb|`?bitsandbytes`?) is not installed|You need to install `?bitsandbytes`? in order to use bitsandbytes optimizers/,
    apply: (_m, ctx) => {
      // The optimizer names of bitsandbytes (transformers' OptimizerNames): paged, 8-bit, bnb.
      const bnb = String.raw`(?:paged_\w+|\w+_8bit|\w*bnb\w*)`;
      const at = ctx.args.findIndex((a, i) => a.startsWith('--') && new RegExp(`^${bnb}$`).test(ctx.args[i + 1] ?? ''));
      // Not given in the args: the script's own default (a dataclass field or add_argument whose default is one).
      const option =
        at >= 0
          ? ctx.args[at].slice(2)
          : (new RegExp(String.raw`^[ \t]+(\w+)\s*:[^=\n]*=\s*(?:field\([^)]*?default\s*=\s*)?["']${bnb}["']`, 'm').exec(ctx.script)?.[1] ??
            new RegExp(String.raw`add_argument\(\s*["']--([\w-]+)["'][^)]*default\s*=\s*["']${bnb}["']`).exec(ctx.script)?.[1]);
      if (!option || (ctx.options && !firstOption(ctx.options, [option]))) return undefined;
      return adaptArgs(
        'cpu-bnb-optimizer',
        setOption(ctx.args, option, 'adamw_torch'),
        `--${option} adamw_torch (a bitsandbytes optimizer needs bitsandbytes on a CUDA GPU; adamw_torch is the same algorithm)`,
      );
    },
  },
  {
    // A value the library no longer accepts (transformers: "adamw_hf is not a valid OptimizerNames, please select
    // one of ['adamw_torch', …]"): the option given that value (a script default passed through) takes the first.
    id: 'invalid-enum-value',
    scope: 'exception',
    pattern: /'?([\w.-]+)'? is not a valid (\w+)(?:[^\n]*?(?:select one of|choose from|one of|expected one of)\s*\[\s*'([^']+)')?/,
    apply: (m, ctx) => {
      const bad = m[1];
      const first = m[3];
      if (!first) return undefined;
      const at = ctx.args.findIndex((a, i) => a.startsWith('--') && ctx.args[i + 1] === bad);
      // Not given in the args: the script's own default; the option is the field whose default literal it is.
      const option =
        at >= 0
          ? ctx.args[at].slice(2)
          : (new RegExp(
              `^[ \\t]+(\\w+)\\s*:[^=\\n]*=\\s*(?:field\\([^)]*?default\\s*=\\s*)?["']${bad.replace(/[.]/g, '\\.')}["']`,
              'm',
            ).exec(ctx.script)?.[1] ??
            new RegExp(`add_argument\\(\\s*["']--([\\w-]+)["'][^)]*default\\s*=\\s*["']${bad.replace(/[.]/g, '\\.')}["']`).exec(
              ctx.script,
            )?.[1]);
      if (!option || (ctx.options && !firstOption(ctx.options, [option]))) return undefined;
      return adaptArgs(
        'invalid-enum-value',
        setOption(ctx.args, option, first),
        `--${option} ${first} (${bad} is not a valid ${m[2]} in this release)`,
      );
    },
  },
  {
    // A placeholder the derived args gave an option (`--language x`, the script says only "required") that the
    // library checks against the values it accepts and lists them (transformers' Whisper tokenizer: "Unsupported
    // language: x. Language should be one of: ['english', …]"): the option takes the first listed value. Only a
    // value the derivation chose is replaced, never one the script or the user wrote.
    id: 'placeholder-choice',
    scope: 'exception',
    pattern: /^\w+: ([^\n]*?)\b(?:should be one of|must be one of|expected one of|choose from|is not one of)\s*:?\s*\[\s*'([^']+)'/,
    apply: (m, ctx) => {
      const said = m[1];
      const names = ctx.args.flatMap((a, i) => (a.startsWith('--') && i + 1 < ctx.args.length ? [a.slice(2)] : []));
      const option = names.find((name) => {
        const value = optionValue(ctx.args, name);
        if (!value || value === m[2] || value !== valueForArgument(ctx.script, name.replace(/-/g, '_'))) return false;
        return new RegExp(`(?:^|[\\s:'"(=])${value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?=[\\s.,:;'")]|$)`).test(said);
      });
      return option
        ? adaptArgs(
            'placeholder-choice',
            setOption(ctx.args, option, m[2]),
            `--${option} ${m[2]} (${optionValue(ctx.args, option)}, a placeholder, is not one of the values the library accepts; the first it lists)`,
          )
        : undefined;
    },
  },
  {
    // The bounded run's `--log_with none` / `--report_to none` where this release's tracker option knows no
    // "none" (accelerate: "Unsupported logging capability: none. Choose between [...]"): the option is dropped
    // (its default, no tracker, is what "none" meant).
    id: 'tracker-none-unsupported',
    scope: 'exception',
    pattern: /Unsupported logging capability: (\w+)/,
    apply: (m, ctx) => {
      const name = ['log_with', 'report_to'].find((n) => optionValue(ctx.args, n) === m[1]);
      return name
        ? adaptArgs(
            'tracker-none-unsupported',
            removeOption(ctx.args, name),
            `removed --${name} ${m[1]} (not a tracker this release knows)`,
          )
        : undefined;
    },
  },
  {
    id: 'missing-dataset',
    pattern:
      /Need either a dataset name or a training(?:\/validation)? file|You must specify either a dataset name|dataset_name or train_file/,
    apply: (_m, ctx) => {
      const name = firstOption(ctx.options, ['dataset_name', 'dataset', 'dataset_id', 'dataset_path']);
      if (!name || optionIndex(ctx.args, name) >= 0) return undefined;
      const v = valueForArgument(ctx.script, 'dataset_name');
      // A placeholder (the script names no dataset) whose fixed schema lacks columns the script reads
      // (`examples["question"]`): the synthetic dataset at once, built with them, not one round per column.
      const wanted = ctx.hub && !scriptNames(ctx.script, v) ? columnsBeyondPlaceholder(ctx.script, name, v) : [];
      if (wanted.length)
        return adaptArgs(
          'missing-dataset',
          setOption(ctx.args, name, SYNTHETIC_DATASET_ID),
          `--${name} ${SYNTHETIC_DATASET_ID} (the script names no dataset and reads ${wanted.join(', ')}, which the placeholder ${v} lacks)`,
        );
      return adaptArgs('missing-dataset', setOption(ctx.args, name, v), `--${name} ${v}`);
    },
  },
  {
    // TrainingArguments(load_best_model_at_end=True) needs evaluation and saving in step: the same strategy,
    // and save_steps a multiple of eval_steps. Through the parser's options when it has them (a bounded run's
    // save_steps against the script's eval_steps: eval follows save); the script's own TrainingArguments(...)
    // in its code, which no option reaches, is invalid in every release with the check: refused, named.
    id: 'best-model-checkpoint-mismatch',
    pattern:
      /--load_best_model_at_end requires the (?:save and eval strategy to match[^\n]*\n[^\n]*Evaluation strategy: (?:\w+\.)?(\w+)\n[^\n]*Save strategy: (?:\w+\.)?(\w+)|saving steps to be a (?:round )?multiple of the evaluation steps, but found (\d+)[^\d\n]+(\d+))/,
    apply: (m, ctx) => {
      if (m[1] && m[2]) {
        const [evaluation, save] = [m[1].toLowerCase(), m[2].toLowerCase()];
        const answer =
          setFirst('best-model-checkpoint-mismatch', ctx, ['save_strategy'], evaluation) ??
          setFirst('best-model-checkpoint-mismatch', ctx, ['eval_strategy', 'evaluation_strategy'], save);
        return (
          answer ??
          refuse(
            'best-model-checkpoint-mismatch',
            `the script's TrainingArguments set load_best_model_at_end with evaluation strategy "${evaluation}" and save strategy "${save}" (in its code, where no option of its parser reaches), which transformers rejects in every release that checks it (all snapshots): the script cannot run as written`,
          )
        );
      }
      const [save, evaluation] = [m[3], m[4]];
      return (
        setFirst('best-model-checkpoint-mismatch', ctx, ['eval_steps'], save) ??
        setFirst('best-model-checkpoint-mismatch', ctx, ['save_steps'], evaluation) ??
        refuse(
          'best-model-checkpoint-mismatch',
          `the script's TrainingArguments set load_best_model_at_end with save_steps ${save}, not a multiple of eval_steps ${evaluation}, and no option of its parser sets either`,
        )
      );
    },
  },
  {
    // A consistency check between two options the bounded run made inconsistent (TRL: "generation_batch_size (2)
    // must be divisible by num_generations (8)"): the divisor option takes the dividend's value.
    id: 'divisible-options',
    pattern: /(\w+) \((\d+)\) must be (?:evenly )?divisible by (?:the )?(\w+) \((\d+)\)/,
    apply: (m, ctx) => {
      const name = firstOption(ctx.options, [m[3]]);
      if (!name || optionValue(ctx.args, name) === m[2]) return undefined;
      return adaptArgs('divisible-options', setOption(ctx.args, name, m[2]), `--${name} ${m[2]} (${m[1]} ${m[2]} must be divisible by it)`);
    },
  },
  {
    // The same kind of check with a product of options (TRL's PPOConfig: "`batch_size` must be a multiple of
    // `mini_batch_size * gradient_accumulation_steps`"): the bounded run shrank the dividend, so the divisor
    // options the parser has shrink with it (to 1); with none to shrink, the dividend takes the product.
    id: 'multiple-of-options',
    pattern:
      /`?(\w+)`? (?:must be a multiple of|must be (?:evenly )?divisible by|should be a multiple of) `?(\w+(?:\s*\*\s*\w+)*)`?(?:[^\n]*?(\d+) \/ (\d+))?/,
    apply: (m, ctx) => {
      let args = [...ctx.args];
      const changed: string[] = [];
      for (const d of m[2].split('*').map((s) => s.trim())) {
        const name = firstOption(ctx.options, [d]);
        if (!name || optionValue(args, name) === '1') continue;
        args = setOption(args, name, '1');
        changed.push(`--${name} 1`);
      }
      if (changed.length) return adaptArgs('multiple-of-options', args, `${changed.join(', ')} (${m[1]} must be a multiple of ${m[2]})`);
      const dividend = firstOption(ctx.options, [m[1]]);
      if (!dividend || !m[4] || optionValue(args, dividend) === m[4]) return undefined;
      return adaptArgs('multiple-of-options', setOption(args, dividend, m[4]), `--${dividend} ${m[4]} (a multiple of ${m[2]})`);
    },
  },
  {
    // A placeholder the derived args gave an option, used by the script as a key of its own dict
    // (`MODEL_CLASSES[args.model_type]`): one of the dict's keys (keyedChoice.ts).
    id: 'placeholder-key',
    scope: 'exception',
    pattern: /KeyError: '([^'\n]*)'/,
    apply: (m, ctx) => {
      const models = ['model_name_or_path', 'model_name', 'model_id', 'model', 'base_model', 'pretrained_model_name_or_path'].map(
        (n) => firstOption(ctx.options, [n]) ?? n,
      );
      const c = keyedChoice(ctx.script, ctx.args, m[1], models);
      if (!c) return undefined;
      let args = setOption(ctx.args, c.option, c.value);
      if (c.model) args = setOption(args, c.model.option, c.model.id);
      return adaptArgs(
        'placeholder-key',
        args,
        `--${c.option} ${c.value}${c.model ? `, --${c.model.option} ${c.model.id} (a model of that type the offline hub has)` : ''} (a key of the dict the script looks it up in)`,
      );
    },
  },
  {
    // An embedding lookup past the table: with the tiny models, a sequence longer than their position
    // embeddings (the script truncates to its own length option, not the model's): the length option shrinks.
    id: 'sequence-beyond-positions',
    scope: 'exception',
    pattern: /IndexError: index out of range in self/,
    apply: (m, ctx) => {
      const name = firstOption(ctx.options, SEQUENCE_LENGTH_OPTIONS);
      const now = name ? Number(optionValue(ctx.args, name)) : NaN;
      if (!name || now <= 64) return undefined;
      return adaptArgs(
        'sequence-beyond-positions',
        setOption(ctx.args, name, '64'),
        `--${name} 64 (longer sequences overrun the tiny model's position embeddings)`,
      );
    },
  },
  {
    // An empty training set (torch's sampler: num_samples=0) because the script filters its rows by length
    // against a length option (`.filter(lambda x: len(x["prompt"]) + len(x["chosen"]) <= args.max_length)`,
    // characters) that the short run set to 64: every synthetic row is longer. The option gets the most the
    // tiny models' positions take (256), or its default when smaller, which keeps the rows.
    id: 'length-filter-emptied',
    scope: 'exception',
    pattern: /num_samples should be a positive integer value, but got num_samples=0/,
    apply: (_m, ctx) => {
      for (const name of SEQUENCE_LENGTH_OPTIONS) {
        const now = Number(optionValue(ctx.args, name));
        if (!(now > 0 && now < 256)) continue;
        const filtered = new RegExp(`\\.filter\\(\\s*lambda[^\\n]*(?:\\n[^\\n]*){0,3}?\\blen\\([^\\n]*(?:\\n[^\\n]*){0,3}?\\.${name}\\b`);
        if (!filtered.test(ctx.script)) continue;
        const dflt = Number(ctx.defaults?.get(name));
        const value = String(dflt > now && dflt < 256 ? dflt : 256);
        return adaptArgs(
          'length-filter-emptied',
          setOption(ctx.args, name, value),
          `--${name} ${value} (the script keeps only rows shorter than --${name} in a .filter, and at ${now} none of the synthetic rows is)`,
        );
      }
      return undefined;
    },
  },
  {
    // An online RL trainer with no reward (TRL: "`reward_funcs` must be provided", "reward_model ... required"):
    // the parser's reward-model option gets the policy's own model id. The offline hub serves it, and loaded
    // with AutoModelForSequenceClassification it is a (randomly headed) reward model whose tokenizer matches.
    id: 'reward-model-option',
    scope: 'exception',
    pattern:
      /`?reward_(?:funcs|model)`?[^\n]*(?:must be provided|is required|are required|must be (?:set|specified|given))|(?:provide|pass|specify)[^\n]*\breward[_ ](?:model|funcs)/i,
    apply: (_m, ctx) => {
      const name = firstOption(ctx.options, [
        'reward_model_path',
        'reward_model_name_or_path',
        'reward_model',
        'reward_model_name',
        'reward_model_id',
      ]);
      if (!name || optionIndex(ctx.args, name) >= 0) return undefined;
      const policy = ['model_name_or_path', 'model_name', 'model_id', 'model', 'sft_model_path', 'policy_model_path']
        .map((n) => optionValue(ctx.args, n))
        .find((v) => v && v !== 'true');
      const value = policy ?? valueForArgument(ctx.script, 'model_name_or_path');
      return adaptArgs(
        'reward-model-option',
        setOption(ctx.args, name, value),
        `--${name} ${value} (the policy's model, loaded as a sequence-classification reward model)`,
      );
    },
  },
  {
    // A trainer's second model left unset (TRL's GKD: `teacher_model=training_args.teacher_model_name_or_path`, None,
    // "You passed teacher_model_init_kwargs …, but your teacher_model is already instantiated"): the error names the
    // role (`teacher_model`, `ref_model`), and the parser's unset option of that role the script reads gets the
    // policy's model id (same tokenizer; the offline hub serves it).
    id: 'companion-model-option',
    scope: 'exception',
    pattern: /^[\w.]*(?:Error|Exception)\b[^\n]*/,
    apply: (m, ctx) => {
      for (const role of new Set([...m[0].matchAll(/\b([a-z]+_model)\b/g)].map((x) => x[1]))) {
        const names = ['_name_or_path', '_path', '_id', '_name'].map((s) => role + s);
        const name = firstOption(ctx.options, names);
        if (!name || optionIndex(ctx.args, name) >= 0 || !new RegExp(`\\.${name.replace(/-/g, '_')}\\b`).test(ctx.script)) continue;
        const policy = MODEL_OPTIONS.map((n) => optionValue(ctx.args, n)).find((v) => v && v !== 'true');
        const value = policy ?? valueForArgument(ctx.script, 'model_name_or_path');
        return adaptArgs(
          'companion-model-option',
          setOption(ctx.args, name, value),
          `--${name} ${value} (the ${role} the error names, unset; the policy's model)`,
        );
      }
      return undefined;
    },
  },
  {
    // The script loads a PEFT adapter (`AutoPeftModelForCausalLM.from_pretrained(args.model_name_or_path)`,
    // often an earlier stage's output) where the args name a plain model: the option names a LoRA adapter the
    // offline hub makes with the snapshot's peft, of the model the script otherwise names (its tokenizer's).
    id: 'peft-adapter',
    scope: 'exception',
    pattern: /Can't find '?adapter_config\.json'? at '([^']+)'/,
    apply: (m, ctx) => {
      const bad = m[1];
      const at = ctx.args.findIndex((a, i) => a.startsWith('--') && ctx.args[i + 1] === bad);
      let option =
        at >= 0
          ? ctx.args[at].slice(2)
          : firstOption(ctx.options, [
              'model_name_or_path',
              'model_name',
              'model_id',
              'model',
              'base_model',
              'adapter_path',
              'peft_model_id',
            ]);
      if (!option) return undefined;
      // The base model's own option (the script loads the adapter from its repo when no adapter is given, e.g.
      // a LoftQ checkpoint's `loftq_init` subfolder): the parser's adapter option, unset, takes the adapter.
      const adapterOption = firstOption(ctx.options, ADAPTER_OPTIONS);
      if (MODEL_OPTIONS.includes(option.replace(/-/g, '_')) && adapterOption && optionIndex(ctx.args, adapterOption) < 0)
        option = adapterOption;
      const base = ctx.hub?.needs.models.find((x) => x.id !== bad && !x.adapter_of)?.id ?? (looksLikeModelId(bad) ? bad : 'gpt2');
      // A valid repo id (huggingface_hub refuses `--` and `..` in one): `/` of the base becomes `_`.
      const id = `forgeenv-adapters/lora-${base.replace(/[^\w.-]+/g, '_').replace(/-{2,}|\.{2,}/g, '_')}`;
      const extra = ctx.hubExtra ?? EMPTY_HUB_NEEDS;
      if (extra.models.some((x) => x.id === id)) return undefined;
      const hub: HubNeeds = {
        ...extra,
        models: [...extra.models, { id, adapter_of: base, from: `a PEFT adapter the script loads (${option})` }],
      };
      return {
        kind: 'adapt',
        adaptation: { rule: 'peft-adapter', kind: 'args', change: `--${option} ${id} (a LoRA adapter of ${base} the offline hub makes)` },
        args: setOption(ctx.args, option, id),
        hub,
      };
    },
  },
  // --- environment variables the script reads ---
  {
    id: 'missing-environment-variable',
    pattern: /KeyError: '([A-Z][A-Z0-9_]*)'/,
    apply(m, ctx) {
      const name = m[1];
      if (
        name in ctx.env ||
        !new RegExp(`environ(?:\\[|\\.get\\(|\\.__getitem__)\\s*["']${name}["']|getenv\\(\\s*["']${name}["']`).test(
          ctx.script + (m.input ?? ''),
        )
      )
        return undefined;
      if (/^(MASTER_ADDR|MASTER_PORT)$/.test(name))
        return refuse(
          'multi-node-launch',
          `the script expects a distributed launcher (${name} unset): multi-node training cannot run here`,
        );
      // Its siblings the script also reads without a default (`os.environ["SM_CHANNEL_TEST"]` beside
      // SM_CHANNEL_TRAIN) would fail the next runs one by one: set at once.
      const names = [name, ...requiredEnvSiblings(ctx.script, name).filter((n) => !(n in ctx.env))];
      const set = Object.fromEntries(names.map((n) => [n, envValueFor(n)]));
      return {
        kind: 'adapt',
        adaptation: {
          rule: 'missing-environment-variable',
          kind: 'env',
          change: Object.entries(set)
            .map(([k, v]) => `${k}=${v}`)
            .join(', '),
        },
        env: { ...ctx.env, ...set },
      };
    },
  },
  {
    // `use_auth_token=True` / `token=True` in the script's code: huggingface_hub wants a token before any request.
    // Runs are offline (nothing is sent), so a placeholder token in the run's environment satisfies the check.
    id: 'hub-token-required',
    scope: 'exception',
    pattern: /LocalTokenNotFoundError|Token is required \(`token=True`\)|use_auth_token=True[^\n]*no token/,
    // huggingface_hub before 0.18 reads HUGGING_FACE_HUB_TOKEN only: both are set.
    apply: (_m, ctx) =>
      ctx.env.HF_TOKEN && ctx.env.HUGGING_FACE_HUB_TOKEN
        ? undefined
        : {
            kind: 'adapt',
            adaptation: {
              rule: 'hub-token-required',
              kind: 'env',
              change:
                'HF_TOKEN=HUGGING_FACE_HUB_TOKEN=hf_forgeenv_offline (the script asks for a token; runs are offline, it is never sent)',
            },
            env: { ...ctx.env, HF_TOKEN: 'hf_forgeenv_offline', HUGGING_FACE_HUB_TOKEN: 'hf_forgeenv_offline' },
          },
  },
  // --- CPU: what only a GPU offers is turned off, through the script's own options ---
  {
    id: 'cpu-bf16-off',
    pattern: /bf16[^\n]*(?:requires|only|not supported|doesn't support|does not support|Ampere|GPU)|Your setup doesn't support bf16/i,
    apply: (_m, ctx) =>
      setFirst('cpu-bf16-off', ctx, ['bf16', 'bf16_full_eval'], 'false') ??
      addShim('cpu-bf16-off', ctx, 'no-mixed-precision') ??
      refuse(
        'cpu-bf16-off',
        'the script asks for bf16 in its code (not through an option) in a way the no-mixed-precision shim does not cover',
      ),
  },
  {
    id: 'cpu-fp16-off',
    // `\bfp16\b` not set False: a logged args dump (`fp16=False, fp16_opt_level='O1', …, device=device(type='cpu')`) is no fp16 error.
    pattern:
      /\bfp16\b(?!\s*[=:]\s*False)[^\n]*(?:requires|can only be used|only supported|GPU|CUDA|device)|Attempting to unscale FP16 gradients|"?(?:addmm|baddbmm)_impl_cpu_"? not implemented for 'Half'/i,
    apply: (_m, ctx) =>
      setFirst('cpu-fp16-off', ctx, ['fp16', 'fp16_full_eval', 'half_precision_backend'], 'false') ??
      addShim('cpu-fp16-off', ctx, 'no-mixed-precision') ??
      refuse(
        'cpu-fp16-off',
        'the script uses fp16 in its code (not through an option) in a way the no-mixed-precision shim does not cover',
      ),
  },
  {
    id: 'cpu-tf32-off',
    pattern: /tf32[^\n]*(?:requires|Ampere|only|GPU)/i,
    apply: (_m, ctx) =>
      setFirst('cpu-tf32-off', ctx, ['tf32'], 'false') ??
      addShim('cpu-tf32-off', ctx, 'no-mixed-precision') ??
      refuse(
        'cpu-tf32-off',
        'the script enables tf32 in its code in a way the no-mixed-precision shim does not cover (it needs an Ampere GPU)',
      ),
  },
  {
    id: 'no-flash-attention',
    pattern: /flash_attn|FlashAttention|flash attention|flash_attention_2/i,
    apply: (_m, ctx) =>
      setFirst('no-flash-attention', ctx, ['attn_implementation'], 'eager') ??
      setFirst(
        'no-flash-attention',
        ctx,
        ['use_flash_attention_2', 'use_flash_attn', 'use_flash_attention', 'flash_attention', 'flash_attn'],
        'false',
      ) ??
      refuse('no-flash-attention', 'the script requires flash-attention (a CUDA kernel) in its code'),
  },
  {
    // accelerate exports its DeepSpeed wrappers (`accelerate.utils.DummyOptim`, …) only when deepspeed is installed:
    // a script importing them is written for a DeepSpeed launch, and no snapshot installs DeepSpeed.
    id: 'deepspeed-import',
    scope: 'exception',
    pattern: /ImportError: cannot import name '((?:Dummy(?:Optim|Scheduler))|DeepSpeed\w*|HfDeepSpeedConfig)' from 'accelerate\.utils/,
    apply: (m) =>
      refuse(
        'deepspeed-import',
        `the script imports accelerate.utils.${m[1]}, which accelerate exports only when DeepSpeed is installed: it is written for a DeepSpeed launch, which cannot run here`,
      ),
  },
  {
    id: 'no-deepspeed',
    pattern: /deepspeed/i,
    apply: (_m, ctx) =>
      optionIndex(ctx.args, 'deepspeed') >= 0
        ? adaptArgs('no-deepspeed', removeOption(ctx.args, 'deepspeed'), 'removed --deepspeed (no DeepSpeed launch on CPU)')
        : refuse('no-deepspeed', 'the script needs a DeepSpeed launch, which cannot run here'),
  },
  {
    id: 'no-fsdp',
    pattern: /\bFSDP\b|FullyShardedDataParallel|fsdp_config/,
    apply: (_m, ctx) =>
      optionIndex(ctx.args, 'fsdp') >= 0
        ? adaptArgs('no-fsdp', removeOption(ctx.args, 'fsdp'), 'removed --fsdp (no FSDP launch on CPU)')
        : refuse('no-fsdp', 'the script needs an FSDP (multi-GPU) launch, which cannot run here'),
  },
  {
    id: 'no-quantized-loading',
    pattern: QUANTIZATION,
    apply: (m, ctx) =>
      // A release that no longer takes the keyword (transformers 5: `__init__() got an unexpected keyword argument
      // 'load_in_4bit'`) is the script's API drift, not a quantization to drop: no answer here, so the run is an
      // unrecognised library-API error and make-task moves to an older snapshot where the keyword exists.
      /unexpected keyword argument '(?:load_in_[48]bit|bnb_[\w]+)'/.test(lastErrorLine(m.input ?? m[0]))
        ? undefined
        : (setFirst(
            'no-quantized-loading',
            ctx,
            [
              'load_in_8bit',
              'load_in_4bit',
              'use_4bit',
              'use_8bit',
              'use_4bit_quantization',
              'use_8bit_quantization',
              'load_in_kbit',
              'use_bnb',
              'quantize',
            ],
            'false',
          ) ??
          addShim('no-quantized-loading', ctx, 'no-quantization') ??
          // With the shim, only an error that is itself about quantization is refused here (a warning about it in the tail is not).
          (QUANTIZATION.test(lastErrorLine(m.input ?? m[0]))
            ? refuse(
                'no-quantized-loading',
                '8-/4-bit loading needs bitsandbytes on a CUDA GPU, and the script quantizes in a way the no-quantization shim does not cover (e.g. a checkpoint saved quantized)',
              )
            : undefined)),
  },
  {
    id: 'multi-node-launch',
    pattern:
      /Default process group has not been initialized|init_process_group|ProcessGroupNCCL|NCCL error|\bnccl\b|environment variable (?:RANK|WORLD_SIZE|MASTER_ADDR)/i,
    apply: () => refuse('multi-node-launch', 'the script needs a distributed (multi-process or multi-node) launch, which cannot run here'),
  },
  {
    id: 'cpu-device',
    pattern: GPU_ONLY,
    apply: (_m, ctx) =>
      setFirst('cpu-device', ctx, ['use_cpu', 'no_cuda', 'cpu'], 'true') ??
      setFirst('cpu-device', ctx, ['device', 'device_map'], 'cpu') ??
      addShim('cpu-device', ctx, 'cuda-to-cpu') ??
      refuse(
        'cpu-device',
        'GPU-only: the script uses CUDA in its code in a way the cuda-to-cpu shim does not cover (no option selects the CPU)',
      ),
  },
  {
    id: 'device-map',
    pattern: /device_map/,
    apply: (_m, ctx) => setFirst('device-map', ctx, ['device_map'], 'cpu'),
  },
  {
    // After the CPU rules (their errors name flags too). The script's own check says an option must be given (`assert args.output_dir, "Need an
    // \`output_dir\` to store…"`, "Please specify --train_file"): an option of its parser named
    // in an error that asks for it gets a value by its name.
    id: 'option-named-by-error',
    scope: 'exception',
    pattern:
      /(?:\b[Nn]eed|\brequire[sd]?\b|\bmust (?:be )?(?:set|specif|provid|pass|give)|[Pp]lease (?:set|specify|provide|pass|give)|\bis not set\b|\bmissing\b|\bno\b[^\n]*\b(?:given|provided|specified)\b)[^\n]*/,
    apply(m, ctx) {
      if (!ctx.options) return undefined;
      const line = m.input ?? m[0];
      for (const w of line.matchAll(/(?:--|`)([A-Za-z][\w-]*[A-Za-z0-9])/g)) {
        const name = ctx.options.get(w[1].replace(/-/g, '_'));
        if (!name || !/[_-]/.test(name) || optionIndex(ctx.args, name) >= 0) continue;
        // A value the error itself names (`set \`remove_unused_columns=False\``) wins over one derived from the name.
        const told = new RegExp(`${w[1]}\`?\\s*(?:=|to)\\s*\`?(True|False|-?\\d+(?:\\.\\d+)?)\\b`).exec(line)?.[1];
        const value = told ?? valueForArgument(ctx.script, name.replace(/-/g, '_'));
        return adaptArgs('option-named-by-error', setOption(ctx.args, name, value), `--${name} ${value}`);
      }
      return undefined;
    },
  },
  {
    // A local variable the script assigns only under `if args.train_file is not None:` (`UnboundLocalError:
    // cannot access local variable 'extension'`): the script expected that option; it gets a value by its name.
    id: 'unset-input-option',
    scope: 'exception',
    // At module level the same is a NameError (`if args.base_model_name_or_path is not None: peft_model = …`).
    pattern: /UnboundLocalError: (?:cannot access local variable|local variable) '(\w+)'|NameError: name '(\w+)' is not defined/,
    apply(m, ctx) {
      const variable = m[1] ?? m[2];
      // A model option of the plain kind first (`base_model_name_or_path` before `residual_model_name_or_path`).
      const plain = (n: string) => MODEL_OPTIONS.some((o) => n === o || n === `base_${o}`);
      const guards = optionsGuarding(ctx.script, variable).sort((a, b) => Number(plain(b)) - Number(plain(a)));
      for (const name of guards) {
        const spelled = firstOption(ctx.options, [name]);
        if (!spelled || optionIndex(ctx.args, spelled) >= 0) continue;
        const value = valueForArgument(ctx.script, name);
        return adaptArgs(
          'unset-input-option',
          setOption(ctx.args, spelled, value),
          `--${spelled} ${value} (the script assigns ${variable} only when it is given)`,
        );
      }
      return undefined;
    },
  },
  {
    // An option left at its default None that the script uses as a value (`args.special_tokens.split(",")`):
    // the script expected it given; it gets a value by its name.
    id: 'none-option-used',
    scope: 'exception',
    pattern: /AttributeError: 'NoneType' object has no attribute '(\w+)'/,
    apply(m, ctx) {
      for (const u of ctx.script.matchAll(new RegExp(`\\b[A-Za-z_]\\w*\\.(\\w+)\\.${m[1]}\\b`, 'g'))) {
        const spelled = firstOption(ctx.options, [u[1]]);
        if (!spelled || optionIndex(ctx.args, spelled) >= 0) continue;
        const value = valueForArgument(ctx.script, u[1]);
        return adaptArgs(
          'none-option-used',
          setOption(ctx.args, spelled, value),
          `--${spelled} ${value} (its default None has no .${m[1]}, which the script uses)`,
        );
      }
      return undefined;
    },
  },
  {
    // A placeholder id (`path/to/model`, `<your-model>`) the script's default or the derived args carry.
    id: 'placeholder-model-id',
    pattern: /Repo id must be in the form 'repo_name' or 'namespace\/repo_name': '([^']+)'|Incorrect path_or_model_id: '([^']+)'/,
    apply: (m, ctx) => {
      const bad = m[1] ?? m[2];
      const name = firstOption(ctx.options, [
        'model_name_or_path',
        'model_name',
        'model_id',
        'model',
        'base_model',
        'pretrained_model_name_or_path',
      ]);
      if (!name || optionValue(ctx.args, name) === 'gpt2') return undefined;
      return adaptArgs('placeholder-model-id', setOption(ctx.args, name, 'gpt2'), `--${name} gpt2 (${bad} is not a model id)`);
    },
  },
  {
    // The tokenizer has no chat template, yet the script or its trainer applies one (TRL's conversational
    // format). A model id the derivation chose (the script names none) becomes a chat model; the script's
    // own model without a template is the real libraries' behaviour, refused as such.
    id: 'chat-template-missing',
    scope: 'exception',
    pattern: /tokenizer\.chat_template is not set|Cannot use chat template functions/,
    apply: (_m, ctx) => {
      const swap = placeholderModels(ctx.script, ctx.args);
      if (!swap.length) {
        return refuse(
          'chat-template-missing',
          `the script applies a chat template, but its model's tokenizer has none (as the real model's) and the script sets none: the real libraries fail the same way`,
        );
      }
      const args = swap.reduce((a, s) => setOption(a, s.option, CHAT_PLACEHOLDER_MODEL), ctx.args);
      return adaptArgs(
        'chat-template-missing',
        args,
        `${swap.map((s) => `--${s.option} ${CHAT_PLACEHOLDER_MODEL}`).join(', ')} (${swap.map((s) => s.value).join(', ')}, a placeholder the script does not name, has no chat template; the script applies one)`,
      );
    },
  },
  {
    // An embedding lookup past the vocabulary (torch's "index out of range in self") in a script that grows the
    // vocabulary of a model without a chat template (`if tokenizer.chat_template is None: setup_chat_format(model,
    // tokenizer)`, the TRL examples of 2024) while the model id is the derivation's placeholder: that branch resizes
    // one model and not its reference copy. The script's documented models carry a template; so does the chat
    // placeholder, which takes the branch they take. The script's own model is left to fail as the real one would.
    id: 'placeholder-model-chat-setup',
    scope: 'exception',
    pattern: /IndexError: index out of range in self/,
    apply: (_m, ctx) => {
      if (!/\bsetup_chat_format\s*\(|\.chat_template\s+is\s+None\b/.test(ctx.script)) return undefined;
      const swap = placeholderModels(ctx.script, ctx.args);
      if (!swap.length) return undefined;
      const args = swap.reduce((a, s) => setOption(a, s.option, CHAT_PLACEHOLDER_MODEL), ctx.args);
      return adaptArgs(
        'placeholder-model-chat-setup',
        args,
        `${swap.map((s) => `--${s.option} ${CHAT_PLACEHOLDER_MODEL}`).join(', ')} (${swap.map((s) => s.value).join(', ')}, a placeholder the script does not name, has no chat template, so the script's base-model branch grew its vocabulary; a chat model takes the branch its documented models take)`,
      );
    },
  },
  {
    // A KeyError of a column (one the script reads, or a key of TRL's dataset formats its trainer reads) on a
    // dataset id the derivation chose (`imdb`: the script names none) whose schema is fixed: a synthetic
    // dataset instead, with the columns derived from the script and its trainer.
    id: 'placeholder-dataset',
    scope: 'exception',
    pattern:
      /KeyError: '([A-Za-z_][\w ]*)'|Column '?\[?'?([\w ]+)'?\]?'? (?:not in the dataset|doesn't exist)|ColumnNotFoundError[^\n]*'([\w ]+)'|Unknown split "([\w.-]+)"|Column to remove \[([^\]\n]*)\] not in the dataset/,
    apply: (m, ctx) => {
      // A split the script asks for (`split="train+validation"`) that the placeholder lacks: the synthetic
      // dataset has every split the script names (hub/needs.ts).
      if (m[4]) {
        const p = ctx.hub && placeholderDataset(ctx.script, ctx.args);
        return p
          ? adaptArgs(
              'placeholder-dataset',
              setOption(ctx.args, p.option, p.replacement),
              `--${p.option} ${p.replacement} (${p.value}, a placeholder the script does not name, has no split "${m[4]}"; the synthetic dataset gets the splits the script names)`,
            )
          : undefined;
      }
      const ours = (c: string) => TRL_FORMAT_KEYS.has(c) || scriptNames(ctx.script, c);
      const col = m[1] ?? m[2] ?? m[3] ?? removedColumns(m[5]).find(ours) ?? '';
      if (!ctx.hub || !ours(col)) return undefined;
      const p = placeholderDataset(ctx.script, ctx.args);
      if (!p) return undefined;
      return adaptArgs(
        'placeholder-dataset',
        setOption(ctx.args, p.option, p.replacement),
        `--${p.option} ${p.replacement} (${p.value}, a placeholder the script does not name, has a fixed schema without column "${col}"; the synthetic dataset gets the columns the script and its trainer read)`,
      );
    },
  },
  {
    // The model option's value (derived: `gpt2`) is of another kind than the script's Auto class needs
    // (a VLM, image, speech script): a well-known id of that kind, which the hub builds tiny.
    id: 'model-of-wrong-kind',
    scope: 'exception',
    pattern: /Unrecognized configuration class [^\n]*? for this kind of AutoModel: (AutoModelFor\w+)/,
    apply: (m, ctx) => {
      const id = MODEL_FOR_AUTO_CLASS[m[1]];
      const name = firstOption(ctx.options, [
        'model_name_or_path',
        'model_name',
        'model_id',
        'model',
        'base_model',
        'pretrained_model_name_or_path',
      ]);
      if (!id || !name || optionValue(ctx.args, name) === id) return undefined;
      return adaptArgs('model-of-wrong-kind', setOption(ctx.args, name, id), `--${name} ${id} (${m[1]} needs a model of that kind)`);
    },
  },
  {
    // A sequence-classification model whose config has no pad token (GPT-2-like families define none, as their
    // real checkpoints) classifying a batch. A placeholder model (the script names none) becomes an encoder
    // of the script's Auto class whose config has one; the script's own model is the real behaviour, refused.
    id: 'pad-token-undefined',
    scope: 'exception',
    // The model's config (sequence classification of a batch) or its tokenizer (padding a batch, the
    // tokenizer's own wording) has no pad token.
    pattern: /Cannot handle batch sizes > 1 if no padding token is defined|Asking to pad but the tokenizer does not have a padding token/,
    apply: (m, ctx) => {
      const swap = placeholderModels(ctx.script, ctx.args);
      const to = modelForScriptAutoClass(ctx.script)?.id ?? MODEL_FOR_AUTO_CLASS.AutoModelForSequenceClassification;
      const tokenizer = m[0].startsWith('Asking');
      if (!swap.length)
        return refuse(
          'pad-token-undefined',
          tokenizer
            ? "the script's tokenizer has no pad token (as the real checkpoint's) and the script pads batches without setting one: the real libraries fail the same way"
            : "the script's model has no pad token in its config (as the real checkpoint) and the script classifies batches of several sequences without setting model.config.pad_token_id: the real libraries fail the same way",
        );
      if (swap.every((x) => x.value === to)) return undefined;
      const args = swap.reduce((a, x) => setOption(a, x.option, to), ctx.args);
      return adaptArgs(
        'pad-token-undefined',
        args,
        `${swap.map((x) => `--${x.option} ${to}`).join(', ')} (${swap.map((x) => x.value).join(', ')}, a placeholder the script does not name, has no pad token in its ${tokenizer ? 'tokenizer' : 'config'}; ${to}'s has one)`,
      );
    },
  },
  {
    // A placeholder model of a Conv1D family (GPT-2 stores its projections transposed) where the script's PEFT
    // method works on torch.nn.Linear weights (OLoRA, PiSSA, LoftQ initialisation multiply them): a causal LM
    // of Linear layers instead, as the model families such scripts are written for.
    id: 'placeholder-model-conv1d',
    scope: 'exception',
    pattern: /mat1 and mat2 shapes cannot be multiplied/,
    apply: (_m, ctx) => {
      if (!/^\s*(?:from|import)\s+peft\b/m.test(ctx.script)) return undefined;
      const swap = placeholderModels(ctx.script, ctx.args).filter(
        (x) => looksLikeModelId(x.value) && CONV1D_MODEL_TYPES.has(familyOf(x.value)?.model_type ?? ''),
      );
      if (!swap.length) return undefined;
      const args = swap.reduce((a, x) => setOption(a, x.option, LINEAR_CAUSAL_PLACEHOLDER_MODEL), ctx.args);
      return adaptArgs(
        'placeholder-model-conv1d',
        args,
        `${swap.map((x) => `--${x.option} ${LINEAR_CAUSAL_PLACEHOLDER_MODEL}`).join(', ')} (${swap.map((x) => x.value).join(', ')}, a placeholder the script does not name, has Conv1D layers; the script's PEFT method works on Linear layers)`,
      );
    },
  },
  {
    // PEFT's LoRA targets (`target_modules=["query_key_value", "dense_h_to_4h", …]`) name the family the script
    // was written for, and a model id make-task chose (a placeholder or a rule's substitute: the script names
    // none, or its own does not load) has other module names: a family whose modules include the targets
    // instead (hub/moduleNames.ts), of the same head. The script's own model id is the real behaviour, left alone.
    id: 'placeholder-model-lora-targets',
    scope: 'exception',
    pattern: /Target modules? [{[][^\n]*[}\]] not found in the base model/,
    apply: (m, ctx) => {
      const targets = targetModulesOfError(m[0]);
      if (!targets) return undefined;
      const swap = modelsChosenByMakeTask(ctx.script, ctx.args);
      const to = swap.length ? familyForTargets(targets, swap[0].value) : undefined;
      if (!to) return undefined;
      const args = swap.reduce((a, x) => setOption(a, x.option, to.id), ctx.args);
      return adaptArgs(
        'placeholder-model-lora-targets',
        args,
        `${swap.map((x) => `--${x.option} ${to.id}`).join(', ')} (${swap.map((x) => x.value).join(', ')}, a model the script does not name, has no module ${targets.join('/')}; the script's LoRA targets are ${to.model_type}'s modules: ${to.modules.join(', ')})`,
      );
    },
  },
  {
    // `KeyError: None`: the script looks an option it was not given up in a dict (`CONFIG_MAPPING[model_args.model_type]`,
    // the from-scratch path of a script whose model option is unset too). A model-type key means the script
    // wanted a model: its model option gets the well-known model of its Auto class; else the dict's first literal key.
    id: 'unset-key-option',
    scope: 'exception',
    pattern: /^KeyError: None$/,
    apply: (_m, ctx) => {
      if (!ctx.options) return undefined;
      for (const k of ctx.script.matchAll(/\b[A-Za-z_]\w*\[\s*(?:[A-Za-z_]\w*\.)+(\w+)\s*\]/g)) {
        const option = firstOption(ctx.options, [k[1]]);
        if (!option || optionIndex(ctx.args, option) >= 0) continue;
        if (MODEL_TYPE_OPTION.test(option.replace(/-/g, '_'))) {
          const model = firstOption(ctx.options, MODEL_OPTIONS);
          const id = modelForScriptAutoClass(ctx.script)?.id;
          if (model && id && optionIndex(ctx.args, model) < 0)
            return adaptArgs(
              'unset-key-option',
              setOption(ctx.args, model, id),
              `--${model} ${id} (neither --${model} nor --${option} given: the script looks the unset ${option} up; a model of the kind it loads)`,
            );
        }
        const key = dictsKeyedBy(ctx.script, k[1]).flatMap((d) => dictLiteralKeys(ctx.script, d))[0];
        if (key)
          return adaptArgs(
            'unset-key-option',
            setOption(ctx.args, option, key),
            `--${option} ${key} (a key of the dict the script looks it up in)`,
          );
      }
      return undefined;
    },
  },
  {
    // A torch.dtype object the script made from its dtype option (`getattr(torch, args.dtype)`) reached something
    // saved as JSON (a tokenizer's init kwargs, a config): the option's "auto", which the script passes on as the
    // string (its own branch `dtype in ["auto", None]`) and which loads the checkpoint's own dtype.
    id: 'dtype-not-serializable',
    scope: 'exception',
    pattern: /Object of type dtype is not JSON serializable/,
    apply: (_m, ctx) => {
      const name = firstOption(ctx.options, ['dtype', 'torch_dtype']);
      if (
        !name ||
        optionValue(ctx.args, name) === 'auto' ||
        !new RegExp(`\\.${name}\\s+(?:in|==)\\s*\\[?\\s*["']auto["']`).test(ctx.script)
      )
        return undefined;
      return adaptArgs(
        'dtype-not-serializable',
        setOption(ctx.args, name, 'auto'),
        `--${name} auto (the script turns other values into a torch.dtype that it then saves as JSON; "auto" it passes on as the string)`,
      );
    },
  },
  {
    // A path option the script was not given, used as a path (`os.path.dirname(args.train_file)`, or through a
    // variable assigned from it): "expected str, bytes or os.PathLike object, not NoneType". The file/dir/path
    // options named in the script's failing lines (or in the assignments of the names used there), unset, get
    // values by their names (a data file option: a file of its split, which the hub synthesizes).
    id: 'unset-path-option',
    pattern: /TypeError: expected str, bytes or os\.PathLike object, not NoneType/,
    apply: (m, ctx) => {
      if (!ctx.options) return undefined;
      const tail = m.input ?? '';
      const shown = [...tail.matchAll(/File "[^"]*", line \d+, in [^\n]*\n([^\n]*)/g)].map((x) => x[1].trim());
      const names = new Set<string>();
      for (const line of shown) {
        for (const a of line.matchAll(/\bargs\.(\w+)/g)) names.add(a[1]);
        for (const v of line.matchAll(/\b([a-z_]\w*)\b/g)) {
          const assigned = new RegExp(`^[ \\t]*${v[1]}\\s*=(?!=)([^\\n]*)`, 'm').exec(ctx.script)?.[1] ?? '';
          for (const a of assigned.matchAll(/\bargs\.(\w+)/g)) names.add(a[1]);
        }
      }
      let args = [...ctx.args];
      const added: string[] = [];
      for (const n of names) {
        const option = firstOption(ctx.options, [n]);
        // A hub id option passed where a path is read (`load_dataset(args.dataset_name)` with its None default) too.
        if (!option || !/(?:^|_)(?:file|path|dir|dataset_name|model_name|model_id)$/.test(n) || optionIndex(args, option) >= 0) continue;
        const value = valueForArgument(ctx.script, n);
        args = setOption(args, option, value);
        added.push(`--${option} ${value}`);
      }
      return added.length ? adaptArgs('unset-path-option', args, `${added.join(', ')} (unset, the script uses it as a path)`) : undefined;
    },
  },
  {
    // Examples of different lengths stacked without padding (a `default_data_collator` over unpadded features,
    // "Unable to create tensor, you should probably activate truncation and/or padding"): the script's own
    // padding option (`--pad_to_max_length`), which the bounded run's batch of 2 needs where a batch of 1 did not.
    id: 'padding-option',
    scope: 'exception',
    pattern: /Unable to create tensor, you should probably activate truncation and\/or padding/,
    apply: (_m, ctx) => setFirst('padding-option', ctx, ['pad_to_max_length', 'padding_to_max_length', 'pad_to_max_len'], 'true'),
  },
  // --- what cannot be provided (yet) ---
  {
    // evaluate.load / datasets<3 load_metric of a metric not found offline: the hub serves ForgeEnv's
    // own script of it (src/env/hub/metrics.ts) when it has one and the needs lack it (a name the
    // derivation could not resolve, `load_metric(metric)` in a loop); else a refusal that says why.
    id: 'metric-missing',
    scope: 'exception',
    pattern:
      /Couldn't find a (?:module|metric) script at [^\n]*|Tried to reach https:\/\/raw\.githubusercontent\.com\/huggingface\/datasets\/[^\n]*\/metrics\/[^\n]*/,
    apply: (m, ctx) => {
      const raw = missingMetric(m[0]);
      if (!raw) return undefined;
      const name = metricNameOf(raw);
      if (!name || !offlineMetrics().includes(name))
        return refuse(
          'metric-unavailable',
          `the script loads the metric "${raw}", which ForgeEnv cannot serve offline (it has scripts of ${offlineMetrics().join(', ')})`,
        );
      if (!ctx.hub) return refuse('metric-unavailable', `the script loads the metric "${name}", which only real mode's hub serves offline`);
      if (ctx.hub.needs.metrics?.includes(name))
        return refuse(
          'metric-unavailable',
          `the metric "${name}" was provided offline but the loader still did not find it (${m[0].slice(0, 200)})`,
        );
      return {
        kind: 'adapt',
        adaptation: { rule: 'metric-missing', kind: 'hub', change: `provide metric ${name} offline` },
        hub: withMetric(ctx.hubExtra ?? EMPTY_HUB_NEEDS, name),
      };
    },
  },
  {
    // The script reads data files from hub URLs (`hf://datasets/…`), which an offline run cannot, in a branch an
    // option of its parser turns off for local files (`if args.data_dir: data_files = {…local…} else: {…hf://…}`):
    // the option gets a value, so the local branch runs and its files are synthesized (the hub writes binary ones).
    id: 'hub-url-data-files',
    scope: 'exception',
    pattern: /OfflineModeIsEnabled|offline mode is enabled|hf:\/\/datasets\//,
    apply: (_m, ctx) => {
      if (!ctx.hub || !/["']hf:\/\//.test(ctx.script)) return undefined;
      for (const v of new Set([...ctx.script.matchAll(/\bdata_files\s*=\s*([A-Za-z_]\w*)\s*[,)]/g)].map((x) => x[1]))) {
        for (const name of optionsGuarding(ctx.script, v)) {
          const spelled = firstOption(ctx.options, [name]);
          if (!spelled || optionIndex(ctx.args, spelled) >= 0) continue;
          const value = valueForArgument(ctx.script, name);
          return adaptArgs(
            'hub-url-data-files',
            setOption(ctx.args, spelled, value),
            `--${spelled} ${value} (the script reads ${v} from hf:// URLs unless it is given; offline, its local files are synthesized)`,
          );
        }
      }
      return undefined;
    },
  },
  {
    // The derivation's placeholder model (`gpt2`: the script names none) loaded by a class of another family
    // (`WhisperProcessor.from_pretrained(args.model_name_or_path)`): a well-known id of that family instead,
    // which the hub builds tiny. The script's own model id failing is the real behaviour, left to other rules.
    id: 'placeholder-model-family',
    scope: 'exception',
    pattern: HUB_ERROR,
    apply: (m, ctx) => {
      const item = missingHubItem(m.input ?? m[0]);
      if (!ctx.hub || item?.kind !== 'model') return undefined;
      const placeholder = placeholderModels(ctx.script, ctx.args).find((p) => p.value === item.id);
      if (!placeholder) return undefined;
      const id = familyModelFor(ctx.script, placeholder.option, item.id);
      if (!id) return undefined;
      return adaptArgs(
        'placeholder-model-family',
        setOption(ctx.args, placeholder.option, id),
        `--${placeholder.option} ${id} (${item.id}, a placeholder the script does not name, is not of the family the script loads it with)`,
      );
    },
  },
  {
    // `load_from_disk(PATH)` of a folder an earlier step would have saved (a notebook's preprocessing, a
    // SageMaker channel), at a path the derivation could not resolve (an environment variable's value):
    // a synthetic saved dataset at that path, with the schema the script reads (hub/diskDatasets.ts).
    id: 'disk-dataset-missing',
    scope: 'exception',
    pattern: /FileNotFoundError: Directory (\S+) (?:not found|is neither a `Dataset` directory)/,
    apply: (m, ctx) => {
      const path = m[1].replace(/^\.\//, '').replace(/\/+$/, '');
      if (!ctx.hub || !readsFromDisk(ctx.script)) return undefined;
      if (!isRunRelativeFolder(path))
        return refuse(
          'disk-dataset-missing',
          `the script loads a saved dataset from ${path}, outside its run folder, where ForgeEnv cannot place one`,
        );
      if (ctx.hub.needs.datasets.some((d) => d.format === 'disk' && d.path === path)) {
        const r = ctx.hub.refusals.find((x) => x.kind === 'dataset' && x.id === path);
        return refuse(
          'disk-dataset-missing',
          `a saved dataset was asked for at ${path} but the run did not find it${r ? `: ${r.reason}` : ''}`,
        );
      }
      const extra = ctx.hubExtra ?? EMPTY_HUB_NEEDS;
      const need = diskDatasetNeed(ctx.script, path, 'load_from_disk of a path a run error named');
      return {
        kind: 'adapt',
        adaptation: {
          rule: 'disk-dataset-missing',
          kind: 'hub',
          change: `provide a saved dataset at ${path} (${Object.keys(need.columns ?? {}).join(', ')}${need.splits ? `; splits ${need.splits.join(', ')}` : ''})`,
        },
        hub: { ...extra, datasets: [...extra.datasets, need] },
      };
    },
  },
  {
    // An absolute output path outside the run folder (SageMaker's `/opt/ml/model`): an environment
    // variable's or an option's default is set to a run-relative folder; a literal in the code is refused, named.
    id: 'output-path-outside-run',
    scope: 'exception',
    pattern: UNWRITABLE_PATH_ERROR,
    apply: (m, ctx) => {
      const sources = outsidePathSources(ctx.script, m[1]);
      for (const s of sources) {
        if (s.kind === 'env' && ctx.env[s.name] === undefined) {
          const value = envValueFor(s.name).startsWith('out/') ? envValueFor(s.name) : `out/${s.name.toLowerCase()}`;
          return {
            kind: 'adapt',
            adaptation: {
              rule: 'output-path-outside-run',
              kind: 'env',
              change: `${s.name}=${value} (its default ${s.literal} is outside the run folder)`,
            },
            env: { ...ctx.env, [s.name]: value },
          };
        }
        if (s.kind === 'option' && optionIndex(ctx.args, s.name) < 0)
          return adaptArgs(
            'output-path-outside-run',
            setOption(ctx.args, s.name, `out/${s.name.replace(/-/g, '_')}`),
            `--${s.name} out/${s.name.replace(/-/g, '_')} (its default ${s.literal} is outside the run folder)`,
          );
      }
      const literals = [...new Set(sources.filter((s) => s.kind === 'literal').map((s) => s.literal))];
      if (!literals.length) return undefined;
      // A literal folder (SageMaker's container contract, `/opt/ml/model`): the task mounts it, so inside the
      // sandbox it is an empty writable folder kept in the run folder (nothing written on the host) and the
      // verifier finds the model there (executor `mounts`). Once mounted, a denied write is not this.
      const mount = mountFor(literals);
      if (mount && !ctx.mounts?.some((x) => mount === x || mount.startsWith(`${x}/`)))
        return {
          kind: 'adapt',
          adaptation: {
            rule: 'output-path-outside-run',
            kind: 'mount',
            change: `mount ${mount}: the script writes to ${literals.join(', ')} (a path in its code); inside the sandbox it is a folder of the run`,
          },
          mounts: [...(ctx.mounts ?? []), mount],
        };
      return refuse(
        'output-path-outside-run',
        `the script writes to ${literals.join(', ')}, an absolute path written in its code outside the run folder (no option or environment variable sets it), which the sandbox cannot write`,
      );
    },
  },
  {
    // A library asked the Hub whether a repo has a file (`huggingface_hub.file_exists`: PEFT's adapter
    // loading before its offline check) and offline mode refused the metadata request of a `/resolve/`
    // URL (a download offline never gets that far: it reads the cache first). The offline-hub-queries shim
    // answers from the local hub cache, as the Hub would for what it holds. Exception scope: the frame
    // naming file_exists is often beyond the diagnosed tail.
    id: 'offline-hub-query',
    scope: 'exception',
    pattern: /OfflineModeIsEnabled: Cannot reach https?:\/\/\S+\/resolve\/\S+/,
    apply: (_m, ctx) => addShim('offline-hub-query', ctx, 'offline-hub-queries'),
  },
  {
    // The script uploads to the Hub itself (`model.push_to_hub(...)`, `trainer.push_to_hub()`,
    // `create_repo`/`upload_folder`) and the offline, token-less run fails there: the no-hub-push shim
    // makes the uploads recorded no-ops (push_to_hub still runs as the release has it). Once the task
    // has it, the error is not the upload's: the rules below decide.
    id: 'hub-push',
    scope: 'exception',
    pattern: HUB_WRITE_ERROR,
    apply: (_m, ctx) => (HUB_WRITE_CALL.test(ctx.script) ? addShim('hub-push', ctx, 'no-hub-push') : undefined),
  },
  {
    // A model missing offline that the error does not name (transformers 5: "We couldn't connect to
    // 'https://huggingface.co' to load the files"), loaded from an option whose default only the parser knows
    // (a library config dataclass's `sft_model_path = "EleutherAI/pythia-160m"`, printed by --help): those defaults
    // are made explicit in the args, where the hub's derivation reads the ids it provides.
    id: 'hub-model-option-default',
    scope: 'exception',
    pattern: HUB_ERROR,
    apply: (m, ctx) => {
      if (!ctx.hub || !ctx.defaults || missingHubItem(m.input ?? m[0])) return undefined;
      const provided = new Set(ctx.hub.needs.models.map((x) => x.id));
      const unset = [...ctx.defaults].filter(
        ([name, value]) =>
          /model|checkpoint/.test(name) &&
          /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/.test(value) &&
          looksLikeModelId(value) &&
          !provided.has(value) &&
          optionIndex(ctx.args, name) < 0 &&
          (!ctx.options || firstOption(ctx.options, [name])),
      );
      if (!unset.length) return undefined;
      let args = ctx.args;
      for (const [name, value] of unset) args = setOption(args, firstOption(ctx.options, [name]) ?? name, value);
      return adaptArgs(
        'hub-model-option-default',
        args,
        `${unset.map(([n, v]) => `--${n} ${v}`).join(', ')} (the parser's defaults, made explicit so that the offline hub provides them; the error names no model)`,
      );
    },
  },
  {
    // A model or dataset missing offline: provided through the hub (src/env/hub) when the derivation
    // missed it; when the hub refused it, the refusal carries the hub's reason.
    id: 'hub-item-missing',
    scope: 'exception',
    pattern: HUB_ERROR,
    apply: (m, ctx) => {
      if (!ctx.hub) return undefined;
      const item = missingHubItem(m.input ?? m[0]);
      const refusal = item
        ? ctx.hub.refusals.find((r) => r.kind === item.kind && (r.id === item.id || r.id.startsWith(`${item.id}/`)))
        : ctx.hub.refusals[0];
      if (refusal)
        return refuse('hub-item-unavailable', `ForgeEnv's offline hub cannot provide ${refusal.kind} ${refusal.id}: ${refusal.reason}`);
      if (!item || needsHave(ctx.hub.needs, item)) return undefined;
      return {
        kind: 'adapt',
        adaptation: { rule: 'hub-item-missing', kind: 'hub', change: `provide ${item.kind} ${item.id} offline` },
        hub: withItem(ctx.hubExtra ?? EMPTY_HUB_NEEDS, item),
      };
    },
  },
  {
    id: 'hub-item-unavailable',
    scope: 'exception',
    pattern: HUB_ERROR,
    apply: (m, ctx) =>
      refuse(
        'hub-item-unavailable',
        ctx.hub
          ? `a model or dataset the script names is not in the offline hub though ForgeEnv provided ${describeNeeds(ctx.hub.needs)} (${lastErrorLine(m.input ?? m[0]).slice(0, 240)})`
          : `a model or dataset the script names is not in the offline hub (${lastErrorLine(m.input ?? m[0]).slice(0, 240)}); this run had no hub items (simulated mode or the hub seam off)`,
      ),
  },
  {
    // `KeyError: 'test'` on a DatasetDict (`raw_datasets["test"]`, the dict load_dataset returns without
    // split=) is a missing SPLIT, not a column: the hub's dataset gets the split. Tail scope: the
    // traceback's last source line names the subscripted value.
    id: 'dataset-split-missing',
    pattern: /KeyError: '([A-Za-z0-9_.-]+)'\s*$/,
    apply: (m, ctx) => {
      const split = m[1];
      const sub = splitSubscript(ctx.script, split, m.input);
      if (!sub) return undefined;
      if (sub.provenance === 'built')
        return refuse(
          'dataset-split-missing',
          `the script reads split "${split}" of ${sub.variable}, a DatasetDict it builds itself (DatasetDict(...) or train_test_split), which has no such split; nothing the offline hub provides changes it`,
        );
      const own = ctx.hub?.needs.datasets.filter((d) => d.format !== 'disk' && !d.splits?.includes(split)) ?? [];
      if (!own.length)
        return refuse(
          'dataset-split-missing',
          `the offline dataset ${sub.variable} is loaded from has no split "${split}", which the script reads${ctx.hub ? ' (a dataset of the base hub, which ForgeEnv serves as it is)' : ''}`,
        );
      return {
        kind: 'adapt',
        adaptation: {
          rule: 'dataset-split-missing',
          kind: 'hub',
          change: `split "${split}" added to ${own.map((d) => d.path).join(', ')} (the script reads ${sub.variable}["${split}"], a DatasetDict from load_dataset)`,
        },
        hub: withSplit(ctx.hubExtra ?? EMPTY_HUB_NEEDS, own, split),
      };
    },
  },
  {
    id: 'dataset-column-missing',
    scope: 'exception',
    pattern:
      /KeyError: '([A-Za-z_][\w ]*)'|Column '?\[?'?([\w ]+)'?\]?'? (?:not in the dataset|doesn't exist)|ColumnNotFoundError[^\n]*'([\w ]+)'|Column to remove \[([^\]\n]*)\] not in the dataset/,
    apply: (m, ctx) => {
      // Only a name the script itself uses as a key: a column of the data it loads.
      const quoted = (c: string) => scriptNames(ctx.script, c);
      // `remove_columns` names every missing column at once: each the script quotes is added in one round.
      const cols = m[4] !== undefined ? removedColumns(m[4]).filter(quoted) : [m[1] ?? m[2] ?? m[3] ?? ''].filter(quoted);
      const col = cols[0];
      if (!col) return undefined;
      // Datasets the hub builds get the column: synthetic ones (their schema is ours), and those of the
      // table of real schemas too, whose features are a floor: a column the script reads that the real
      // schema lacks means a variant (another config or revision) or a gap of the table, and the
      // adaptation records which. The base hub's datasets keep theirs.
      const own = ctx.hub?.needs.datasets.filter((d) => !(d.columns && col in d.columns)) ?? [];
      if (own.length) {
        const extra = cols.reduce((e, c) => withColumn(e, own, c), ctx.hubExtra ?? EMPTY_HUB_NEEDS);
        const real = own.filter((d) => KNOWN_DATASETS[d.path]).map((d) => d.path);
        const why = real.length
          ? ` (the real schema of ${real.join(', ')} lacks it: the script reads a variant, or the table is incomplete; the table's features are a floor)`
          : '';
        return {
          kind: 'adapt',
          adaptation: {
            rule: 'dataset-column-missing',
            kind: 'hub',
            change: `${cols.map((c) => `column "${c}" (${kindOf(c)})`).join(', ')} added to ${own.map((d) => d.path).join(', ')}${why}`,
          },
          hub: extra,
        };
      }
      return refuse(
        'dataset-column-missing',
        `the offline dataset has no column "${col}", which the script uses${ctx.hub ? ' (a dataset of the base hub, which ForgeEnv serves as it is)' : ''}`,
      );
    },
  },
  {
    // The script fetches a URL itself (requests, urllib: an example image, a data file), not through the
    // HF libraries whose files the offline hub serves: a sandboxed offline run cannot, and nothing to adapt.
    id: 'network-download',
    scope: 'exception',
    pattern: /(?:requests\.exceptions\.ConnectionError|urllib\.error\.URLError|urllib3\.exceptions\.\w+Error)[^\n]*/,
    apply: (m, ctx) => {
      const at = /host='([^']+)'[^\n]*?url: (\S+)/.exec(m[0]);
      const served = hubFileDownload(at ? `https://${at[1]}${at[2]}` : undefined, ctx);
      if (served) return served;
      return refuse(
        'network-download',
        `the script downloads ${at ? `https://${at[1]}${at[2]}` : 'a URL'} itself (with requests/urllib, or through a library it hands the URL to, e.g. a processor given an image URL), not a hub file the offline hub serves, which an offline sandboxed run cannot`,
      );
    },
  },
  {
    // A keyword only a repository's own model code takes (`AutoModel.from_pretrained("nomic-ai/…", trust_remote_code=True,
    // safe_serialization=True)`): no remote code runs offline, and the stand-in (the snapshot's own class of that
    // family) refuses it. Nothing to adapt without changing the script.
    id: 'custom-model-code',
    scope: 'exception',
    pattern: /TypeError: (\w+)\.__init__\(\) got an unexpected keyword argument '(\w+)'/,
    apply: (m, ctx) => {
      const call = remoteCodeLoadWith(ctx.script, m[2]);
      if (!call) return undefined;
      return refuse(
        'custom-model-code',
        `the script loads ${call} with trust_remote_code=True and passes ${m[2]}=, which only that repository's own model code takes; offline, no remote code runs and the stand-in ${m[1]} of the snapshot's transformers refuses it`,
      );
    },
  },
  {
    // The downstream error of unpacking a model's output as a tuple (`loss, start_logits, end_logits = outputs`):
    // transformers < 4.0 returned tuples; since 4.0 a ModelOutput iterates over its keys, so `loss` is the string
    // "loss" and fails where it is used (`loss.backward()`, `loss / n`). Every snapshot has transformers 4 or later,
    // and `return_dict=False` would change the script: refused, naming the line.
    id: 'model-output-unpacked',
    scope: 'exception',
    pattern:
      /AttributeError: 'str' object has no attribute '(\w+)'|TypeError: unsupported operand type\(s\) for [^:]+: (?:'str' and '\w+'|'\w+' and 'str')/,
    apply: (m, ctx) => {
      const at = modelOutputUnpacking(ctx.script, m[1]);
      if (!at) return undefined;
      return refuse(
        'model-output-unpacked',
        `the script unpacks a model's output as a tuple (\`${at.text}\`, line ${at.line}): transformers before 4.0 returned tuples, but since 4.0 a model returns a ModelOutput whose iteration yields its keys, so ${at.name} is a key's name (a string), not a tensor (${m[0].slice(0, 120)}); every snapshot's transformers is 4.x or later, and return_dict=False would be a change of the script`,
      );
    },
  },
  {
    // NLTK's data (`nltk.download("punkt")`) comes from the network, not the Hub: offline the download fails quietly
    // and the first use raises "Resource punkt not found". Nothing the offline hub serves; refused, named.
    id: 'nltk-data-missing',
    // (NLTK colours the name: `\x1b[93mpunkt\x1b[0m`; `[^\w\s]*\[\d+m` skips the escapes without naming ESC.)
    // The message is long: its "Resource … not found" line can be above the window, its `nltk.download('x')` hint is not.
    pattern:
      /Resource (?:[^\w\s]*\[\d+m)?([\w/.-]+?)(?:[^\w\s]*\[0m)? not found\.[\s\S]*?NLTK|>>> nltk\.download\(['"]([\w/.-]+)['"]\)[\s\S]*?nltk_data/,
    apply: (m) =>
      refuse(
        'nltk-data-missing',
        `the script uses NLTK's ${m[1] ?? m[2]} data, which nltk.download fetches from the network (not the Hub): an offline sandboxed run cannot`,
      ),
  },
  {
    // A fixed subset larger than the synthetic dataset (`dataset.select(range(50000))`): the hub caps a synthetic
    // split at MAX_SYNTHETIC_ROWS, so the script's own count cannot be served; refused with both numbers.
    id: 'dataset-subset-too-large',
    scope: 'exception',
    pattern: /IndexError: Index (\d+) out of range for dataset of size (\d+)/,
    apply: (m) =>
      Number(m[2]) === MAX_SYNTHETIC_ROWS && Number(m[1]) >= MAX_SYNTHETIC_ROWS
        ? refuse(
            'dataset-subset-too-large',
            `the script selects ${Number(m[1]) + 1}+ rows by index, more than the ${MAX_SYNTHETIC_ROWS} a synthetic dataset split holds offline`,
          )
        : undefined,
  },
  {
    id: 'module-not-installed',
    scope: 'exception',
    // Also a library's own check for an optional package (trl's reward functions: "Please install the `math_verify` package").
    // And datasets' audio decoding check ("To support decoding audio files, please install 'librosa' and 'soundfile'.").
    pattern:
      /ModuleNotFoundError: No module named '([\w.]+)'|ImportError: Please install (?:the )?`?([\w.-]+)`? (?:package|library)|ImportError: [^\n]*?please install '([\w.-]+)'/,
    apply: (m) =>
      refuse(
        'module-not-installed',
        m[1]
          ? `the script imports ${m[1]}, which is neither beside it nor installed in the snapshot's environment`
          : `the script uses ${m[2] ?? m[3]} (through a library that needs it), which is not installed in the snapshot's environment`,
      ),
  },
  {
    // A file the script reads from its own folder (`os.path.join(os.path.dirname(__file__), "inference.py")`: a
    // notebook's inference code copied into the model folder) that is not beside it: a file of its repository,
    // refused like a missing repo-local module (the editor's extra files, or the script's folder, can supply it).
    id: 'repo-local-file-missing',
    scope: 'exception',
    pattern: /FileNotFoundError: \[Errno 2\] No such file or directory: '([^'\n/][^'\n]*)'/,
    apply: (m, ctx) => {
      const name = m[1].split('/').pop() ?? m[1];
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const beside = new RegExp(`__file__[^\\n]*["']${escaped}["']|["']${escaped}["'][^\\n]*__file__`);
      if (!beside.test(ctx.script)) return undefined;
      return refuse(
        'repo-local-file-missing',
        `the script reads ${name} from its own folder (beside __file__), a file of its repository that is not beside it (make-task brings it when it is)`,
      );
    },
  },
  {
    // Near last: an error no rule above knows, while the model option holds the derivation's placeholder (`gpt2`)
    // and the script loads the model with an Auto class of another kind (`AutoModelForCTC`): the run failed on a
    // model the script would never be given (a character vocabulary handed to GPT-2's BPE tokenizer), so the
    // well-known model of that class (MODEL_FOR_AUTO_CLASS) goes in first. Library API errors are left to the snapshot.
    id: 'placeholder-model-kind',
    scope: 'exception',
    pattern: /^[\w.]*(?:Error|Exception)\b[^\n]*/,
    apply: (m, ctx) => {
      if (LIBRARY_API_ERROR.test(m[0])) return undefined;
      const wanted = modelForScriptAutoClass(ctx.script);
      if (!wanted || wanted.autoClass === 'AutoModelForCausalLM') return undefined;
      const kind = familyOf(wanted.id)?.model_type;
      const p = placeholderModels(ctx.script, ctx.args).find((x) => MODEL_OPTIONS.includes(x.option.replace(/-/g, '_')));
      if (!p || !kind || familyOf(p.value)?.model_type === kind) return undefined;
      return adaptArgs(
        'placeholder-model-kind',
        setOption(ctx.args, p.option, wanted.id),
        `--${p.option} ${wanted.id} (${p.value}, a placeholder the script does not name, is not of the kind ${wanted.autoClass} loads)`,
      );
    },
  },
  {
    // Last: an error no rule above knows, in a train-only run of a script whose parser offers --do_eval (the
    // Trainer examples' `if training_args.do_eval:`). Their authors run them with --do_train --do_eval, and code
    // may assume both (a vocabulary reduced over the train AND eval splits): the documented mode is tried once.
    id: 'train-and-eval-mode',
    scope: 'exception',
    pattern: /^[\w.]*(?:Error|Exception)\b[^\n]*/,
    apply: (m, ctx) => {
      // A library API the script calls that this release lacks: the snapshot, not the mode (makeTask's fallback).
      if (LIBRARY_API_ERROR.test(m[0])) return undefined;
      if (!ctx.options?.has('do_eval') || optionIndex(ctx.args, 'do_eval') >= 0 || optionIndex(ctx.args, 'do_train') < 0) return undefined;
      return adaptArgs(
        'train-and-eval-mode',
        [...ctx.args, '--do_eval'],
        '--do_eval (an error no rule knows in a train-only run; the script is written to run with --do_train --do_eval)',
      );
    },
  },
];

/** Ids rules put in a model option in place of an unusable one (none is a script's own choice unless it names it). */
const SUBSTITUTE_MODELS = new Set([...Object.values(MODEL_FOR_AUTO_CLASS), LINEAR_CAUSAL_PLACEHOLDER_MODEL, CHAT_PLACEHOLDER_MODEL]);

/** Model options whose id make-task chose (the derivation's placeholder or a rule's substitute), not a literal of the script. */
export function modelsChosenByMakeTask(script: string, args: readonly string[]): Array<{ option: string; value: string }> {
  const out = placeholderModels(script, args);
  for (const option of MODEL_OPTIONS) {
    const value = optionValue(args, option);
    if (value && SUBSTITUTE_MODELS.has(value) && !scriptNames(script, value) && !out.some((x) => x.option === option))
      out.push({ option, value });
  }
  return out;
}

/** The columns the script reads (as the hub derives them for a synthetic dataset) that `placeholder`'s fixed schema lacks. */
export function columnsBeyondPlaceholder(script: string, option: string, placeholder: string): string[] {
  const synthetic = deriveHubNeeds(script, [`--${option}`, SYNTHETIC_DATASET_ID]).datasets.find((d) => d.path === SYNTHETIC_DATASET_ID);
  const has = new Set(Object.keys(KNOWN_DATASETS[placeholder]?.columns ?? PLACEHOLDER_COLUMNS[placeholder] ?? {}));
  return Object.keys(synthetic?.columns ?? {}).filter((c) => !has.has(c));
}

/** The derivation's placeholder dataset (`imdb`, the base hub's copy of stanfordnlp/imdb) and its columns. */
const PLACEHOLDER_COLUMNS: Readonly<Record<string, Record<string, unknown>>> = { imdb: KNOWN_DATASETS['stanfordnlp/imdb'].columns };

/** An error of a library API the release lacks (a drift), which no run mode changes. */
const LIBRARY_API_ERROR =
  /has no attribute|cannot import name|unexpected keyword argument|got multiple values|missing \d+ required positional|^AttributeError: [A-Za-z_]\w*(?:\. Did you mean: '\w+'\?)?$/;

/** Class-name endings after a family's prefix (`WhisperProcessor`, `ViTForImageClassification`, `T5TokenizerFast`). */
const FAMILY_CLASS =
  /^([A-Z][A-Za-z0-9]*?)(?:For[A-Z]\w*|ImageProcessor(?:Fast)?|Processor|FeatureExtractor|TokenizerFast|Tokenizer|Model|Config)$/;

/**
 * A well-known model id of the family of the classes that load `--option` in the script (other than
 * the placeholder's own family): undefined when only Auto classes or the placeholder's family load it.
 */
export function familyModelFor(script: string, option: string, placeholder: string): string | undefined {
  const own = familyOf(placeholder)?.model_type;
  const re = new RegExp(`\\b([A-Z]\\w+)\\.from_pretrained\\(\\s*(?:[\\w.]+\\.)?${option.replace(/-/g, '_')}\\b`, 'g');
  for (const m of script.matchAll(re)) {
    const prefix = FAMILY_CLASS.exec(m[1])?.[1];
    if (!prefix || prefix === 'Auto' || prefix.startsWith('AutoPeft')) continue;
    const family = familyOf(prefix)?.model_type;
    if (!family || family === own) continue;
    const known = [...Object.values(MODEL_FOR_AUTO_CLASS), ...wellKnownModelIds()].find((id) => familyOf(id)?.model_type === family);
    return known ?? `forgeenv-models/tiny-${prefix.toLowerCase()}`;
  }
  return undefined;
}

/** The options whose test guards an assignment of `variable` (`if args.train_file is not None:` above `extension = …`), in order. */
export function optionsGuarding(script: string, variable: string): string[] {
  const lines = script.split('\n');
  const out: string[] = [];
  const indent = (l: string) => /^[ \t]*/.exec(l)![0].length;
  lines.forEach((line, i) => {
    if (!new RegExp(`^\\s*${variable}\\s*=[^=]`).test(line)) return;
    for (let j = i - 1, level = indent(line); j >= 0 && level > 0; j--) {
      if (!lines[j].trim() || indent(lines[j]) >= level) continue;
      level = indent(lines[j]);
      const g = /^\s*(?:el)?if\s+(?:not\s+)?[A-Za-z_][\w.]*\.(\w+)\b(?:\s+is\s+(?:not\s+)?None)?\s*:/.exec(lines[j]);
      if (g && !out.includes(g[1])) out.push(g[1]);
    }
  });
  return out;
}

/** The last line of a traceback or error output, for records. */
export function lastErrorLine(text: string): string {
  const lines = text
    .trim()
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
  const exc = [...lines].reverse().find((l) => /^[\w.]+(Error|Exception|Exit|Interrupt)\b|^error:|: error:/.test(l));
  return (exc ?? lines.at(-1) ?? '').slice(0, 500);
}

export interface Diagnosis {
  /** The matched error text (first line of the match). */
  error: string;
  outcome: RuleOutcome;
}

/** How many last lines of the output a diagnosis reads: the error that ended the run, not earlier warnings. */
export const DIAGNOSIS_LINES = 15;

/**
 * The first rule that recognises the end of `output` (its last DIAGNOSIS_LINES non-empty lines, carets aside:
 * the traceback's end or the parser's message) and has an answer; undefined when none does. Earlier
 * output is not read: a warning that mentions DeepSpeed is no reason to refuse.
 */
export function diagnose(output: string, ctx: RuleContext, rules: readonly Rule[] = RULES): Diagnosis | undefined {
  // Python 3.11's caret lines (`^^^^^`, `~~~^^^`) under each frame say nothing and would halve the window.
  const tail = output
    .split('\n')
    .filter((l) => l.trim() && !/^\s*[~^]+\s*$/.test(l))
    .slice(-DIAGNOSIS_LINES)
    .join('\n');
  const exception = lastErrorLine(tail);
  for (const rule of rules) {
    const m = rule.pattern.exec(rule.scope === 'exception' ? exception : tail);
    if (!m) continue;
    const outcome = rule.apply(m, ctx);
    if (outcome) return { error: m[0].split('\n')[0].trim().slice(0, 500), outcome };
  }
  return undefined;
}

/** The model a `from_pretrained(…, trust_remote_code=True, <keyword>=…)` call loads (its first argument's text), if the script has one. */
export function remoteCodeLoadWith(script: string, keyword: string): string | undefined {
  for (const m of script.matchAll(/\.from_pretrained\(((?:[^()]|\([^()]*\))*)\)/g)) {
    const args = m[1];
    if (!/\btrust_remote_code\s*=\s*True\b/.test(args) || !new RegExp(`\\b${keyword}\\s*=`).test(args)) continue;
    return args.split(',')[0].trim().slice(0, 120) || 'a model';
  }
  return undefined;
}

/**
 * A tuple unpacking of a model call's result in the script (`a, b, c = outputs` after `outputs = model(**inputs)`, or
 * `a, b = teacher(input_ids=…)`), one of whose names the script then uses as an object (`.attr` when given, else any
 * name): its line, text and the names.
 */
export function modelOutputUnpacking(
  script: string,
  attr?: string,
): { line: number; text: string; name: string; names: string[] } | undefined {
  const lines = script.split('\n');
  // A call of a module with the model's keyword inputs: `**inputs`, `input_ids=`, or a callee named like a model.
  const modelCall = /^(?:[\w.]*(?:model|teacher|student)\w*|\w+)\((?:\*\*\w+|[^)]*\binput_ids\s*=)/i;
  const calledAs = (rhs: string): boolean =>
    modelCall.test(rhs) && (/\*\*\w+|\binput_ids\s*=/.test(rhs) || /^[\w.]*(?:model|teacher|student)\w*\(/i.test(rhs));
  for (let i = 0; i < lines.length; i++) {
    const m = /^\s*(\w+(?:\s*,\s*\w+)+)\s*,?\s*=\s*(.+?)\s*(?:#.*)?$/.exec(lines[i]);
    if (!m) continue;
    const rhs = m[2];
    let fromModel = calledAs(rhs);
    if (!fromModel && /^\w+$/.test(rhs)) {
      // The name's nearest assignment above.
      for (let j = i - 1; j >= 0 && j >= i - 40; j--) {
        const a = new RegExp(`^\\s*${rhs}\\s*=\\s*(.+)$`).exec(lines[j]);
        if (a) {
          fromModel = calledAs(a[1].trim());
          break;
        }
      }
    }
    if (!fromModel) continue;
    const names = m[1].split(',').map((x) => x.trim());
    const rest = lines.slice(i + 1).join('\n');
    const name = names.find((n) => new RegExp(`\\b${n}\\.${attr ?? '\\w+'}\\b|\\b${n}\\s*[-+*/]`).test(rest));
    if (name) return { line: i + 1, text: lines[i].trim().slice(0, 160), name, names };
  }
  return undefined;
}

// What a training script needs from the Hugging Face hub: the model ids and dataset ids it names,
// and for each dataset the columns (with their kinds) the script reads. Read from the script's
// syntax tree (src/env/python/), its args and its config files, never by running it. The result
// decides which tiny models and synthetic datasets real mode builds (ensure.ts); make-task records
// it in the task (`hub`) so a reviewer sees what was provided and why (`from`).
import { z } from 'zod';
import { parsePython } from '../python/parse';
import { indexScript, type CallSite, type ScriptIndex } from '../python/scriptIndex';
import { readStringLiteral } from '../python/strings';
import { KNOWN_DATASETS, baseHubConfig, isBaseHubDataset } from './datasetTable';
import { isBaseHubModel } from './modelTable';
import { isMetricLoad, metricNameOf, MetricNameSchema } from './metrics';
import { diskDatasetNeed, isRunRelativeFolder } from './diskDatasets';
import { fileLayoutOf, FileLayoutSchema } from './fileLayouts';
import { NestedShapeSchema, type NestedShape } from './nestedShapes';

export const COLUMN_KINDS = [
  'string',
  'int',
  'float',
  'bool',
  'label',
  'strings',
  'tokens',
  'ints',
  // Per-word tags (NER, POS, chunks): in a hub dataset `Sequence(ClassLabel(names))`, in a data file the tag
  // strings; one per word of the row's `tokens` (tokenTags.ts).
  'tags',
  'floats',
  // Per-step booleans beside a list of steps (TRL's stepwise supervision: `completions` and `labels`).
  'bools',
  'messages',
  'image',
  'audio',
  'token_ids',
  'pixels',
  // A column whose structure `shapes` gives (nestedShapes.ts): lists of structs, as UltraFeedback's `completions`.
  'nested',
] as const;
export const ColumnKindSchema = z.enum(COLUMN_KINDS);
export type ColumnKind = z.infer<typeof ColumnKindSchema>;

// `disk`: a folder saved with `save_to_disk` that the script reads with `load_from_disk` (diskDatasets.ts).
export const DATA_FILE_FORMATS = ['json', 'jsonl', 'csv', 'text', 'parquet', 'disk'] as const;

// Ids and data-file paths reach file names in the hub cache and the run folder: relative, `/`-separated
// segments of plain characters, never `..` (a tasks.json from someone else is input like any other).
const HubIdSchema = z
  .string()
  .min(1)
  .max(200)
  .refine(
    (v) => v.split('/').every((seg) => /^[\w.+-]+$/.test(seg) && seg !== '..'),
    'a hub id or relative data path: segments of letters, digits, _ . + - separated by /, no ".."',
  );

/** The most rows a synthetic split gets (a script's `.select(range(N))` above it is served this many). */
export const MAX_SYNTHETIC_ROWS = 20_000;
const DEFAULT_SYNTHETIC_ROWS = 64;
/** The rows of a synthetic non-train split (make_hub_items.py). */
const MIN_SYNTHETIC_SPLIT_ROWS = 16;

export const ModelNeedSchema = z
  .object({
    id: HubIdSchema,
    /** A transformers model_type or a well-known id whose architecture to use (overrides the table). */
    architecture: z.string().min(1).max(200).optional(),
    /** A LoRA adapter of this base model id (made with the snapshot's peft) rather than a model. */
    adapter_of: HubIdSchema.optional(),
    /** Where the need was found (provenance), e.g. `from_pretrained literal line 12`. */
    from: z.string().max(300).optional(),
  })
  .strict();
export type ModelNeed = z.infer<typeof ModelNeedSchema>;

export const DatasetNeedSchema = z
  .object({
    /** A hub dataset id, or a local data file's relative path when `format` is set. */
    path: HubIdSchema,
    config: z.string().min(1).max(200).optional(),
    /** `load_dataset(path, data_dir="data/reward")`: a subfolder of the repo, which datasets caches as its own config id. */
    data_dir: HubIdSchema.optional(),
    /**
     * Other literal keywords of the load_dataset call (`use_auth_token=True`): those the snapshot's
     * load_dataset does not take become builder config kwargs, part of the cached config id.
     */
    config_kwargs: z.record(z.string().regex(/^[A-Za-z_]\w{0,60}$/), z.union([z.string().max(200), z.number(), z.boolean()])).optional(),
    splits: z
      .array(z.string().regex(/^[A-Za-z0-9_.-]+$/))
      .min(1)
      .max(8)
      .optional(),
    columns: z.record(z.string().min(1).max(200), ColumnKindSchema).optional(),
    /** The structure of `nested` columns (nestedShapes.ts). */
    shapes: z.record(z.string().min(1).max(200), NestedShapeSchema).optional(),
    /** Label names of `label` columns. */
    labels: z.record(z.string(), z.array(z.string()).min(1).max(1000)).optional(),
    /** Set for a local data file (`load_dataset("json", data_files=...)`, `--train_file x.csv`). */
    format: z.enum(DATA_FILE_FORMATS).optional(),
    /** A local json file's nested layout, when the script hands it to a well-known reader (fileLayouts.ts). */
    layout: FileLayoutSchema.optional(),
    /** Rows per split when the script takes more than the default 64 (`.select(range(10000))` fails on fewer). */
    rows: z.number().int().min(1).max(MAX_SYNTHETIC_ROWS).optional(),
    from: z.string().max(300).optional(),
  })
  .strict();
export type DatasetNeed = z.infer<typeof DatasetNeedSchema>;

/** Hub repo types whose files a `https://huggingface.co/[datasets/|spaces/]<repo>/resolve/<rev>/<path>` URL names. */
export const HUB_FILE_REPO_TYPES = ['model', 'dataset', 'space'] as const;

/**
 * A file of a hub repo the script fetches by its URL (`requests.get`, or a processor handed the URL):
 * the offline hub holds a synthetic file of the kind its extension names (hubFiles.ts), which the
 * offline-hub-files shim serves for that URL.
 */
export const HubFileNeedSchema = z
  .object({
    repo_type: z.enum(HUB_FILE_REPO_TYPES),
    repo: HubIdSchema,
    revision: z.string().regex(/^[\w.-]{1,100}$/),
    path: HubIdSchema,
    from: z.string().max(300).optional(),
  })
  .strict();
export type HubFileNeed = z.infer<typeof HubFileNeedSchema>;

export const HubNeedsSchema = z
  .object({
    models: z.array(ModelNeedSchema).max(64),
    datasets: z.array(DatasetNeedSchema).max(64),
    /** Metrics the script loads by Hub name (`evaluate.load`, `load_metric`), served offline (hub/metrics.ts). */
    metrics: z.array(MetricNameSchema).max(32).optional(),
    /** Files of hub repos the script fetches by URL (hubFiles.ts), served offline by the offline-hub-files shim. */
    files: z.array(HubFileNeedSchema).max(16).optional(),
  })
  .strict();
export type HubNeeds = z.infer<typeof HubNeedsSchema>;

const SPLIT_NAMES = new Set(['train', 'test', 'validation', 'valid', 'dev', 'eval', 'evaluation']);
const MODEL_KEY =
  /^(pretrained_)?(base_|teacher_|student_|ref_|reward_|sft_|policy_|value_)?(model|tokenizer|checkpoint)(_name)?(_or_path|_id|_path|_checkpoint)?$|^model_(name_or_path|id)$/;
const DATASET_KEY = /^(train_)?dataset(_name|_id|_path)?(_or_path)?$|^dataset_id_or_path$/;
const CONFIG_KEY = /^dataset_config(_name)?$/;
const FILE_KEY = /^(train|validation|valid|eval|test)_file$|^data_files?$|^(train|eval|test)_data(_path)?$/;
const COLUMN_KEY = /^(\w+)_column(_name)?$/;
const FILE_BUILDERS: Record<string, DatasetNeed['format']> = { json: 'json', csv: 'csv', text: 'text', parquet: 'parquet' };
const EXAMPLE_NAMES =
  /^(examples?|batch|samples?|rows?|items?|ex|e|x|elem|element|record|data_point|datapoint|features|feature|instance|conversation|d)$/;

/** TRL trainers and the columns their datasets must have (TRL docs, "Dataset formats and types"). */
const TRAINER_FORMATS: ReadonlyArray<[RegExp, Record<string, ColumnKind>]> = [
  [/\b(DPO|ORPO|CPO|IPO)Trainer\b/, { prompt: 'string', chosen: 'string', rejected: 'string' }],
  [/\bRewardTrainer\b/, { chosen: 'string', rejected: 'string' }],
  [/\b(KTO|BCO)Trainer\b/, { prompt: 'string', completion: 'string', label: 'bool' }],
  // Stepwise supervision: a prompt, its completion steps and one label per step.
  [/\bPRMTrainer\b/, { prompt: 'string', completions: 'strings', labels: 'bools' }],
  // Knowledge distillation on conversations (TRL docs: GKD's dataset has a "messages" column).
  [/\bGKDTrainer\b/, { messages: 'messages' }],
  [/\b(GRPO|OnlineDPO|RLOO|XPO|NashMD|PPO|PPOv2)Trainer\b/, { prompt: 'string' }],
];

type Origin = string;

interface Scope {
  idx: ScriptIndex;
  source: string;
  /** Field/option name -> default literal (argparse, dataclass fields). */
  defaults: Map<string, { value: string; from: Origin }>;
  /** Option name -> value given in args or config files (these win over defaults). */
  given: Map<string, { value: string; from: Origin }>;
}

/** The hub items `script` needs, run with `args`, with the task's `files` (config files are read). */
export function deriveHubNeeds(script: string, args: readonly string[] = [], files: Readonly<Record<string, string>> = {}): HubNeeds {
  const parsed = parsePython(script);
  const idx = indexScript(parsed);
  const scope: Scope = { idx, source: script, defaults: fieldDefaults(idx, script), given: givenValues(args, files) };
  const models = new Map<string, ModelNeed>();
  const datasets = new Map<string, DatasetNeed>();
  const addModel = (id: string, from: Origin): void => {
    if (!looksLikeModelId(id) || models.has(id)) return;
    models.set(id, { id, from });
  };
  const addDataset = (need: DatasetNeed): void => {
    const key = `${need.path}\0${need.config ?? ''}\0${need.data_dir ?? ''}`;
    const prev = datasets.get(key);
    if (prev) {
      prev.splits = union(prev.splits, need.splits);
      return;
    }
    datasets.set(key, need);
  };

  // `loading_method = load_dataset` (then `loading_method(args.dataset_name, ...)`): calls of the alias load datasets too.
  const loadAliases = new Set(
    idx.assignments
      .filter(
        (a) =>
          /^[A-Za-z_]\w*$/.test(a.target) && /^(?:datasets\.)?load_dataset$/.test(script.slice(a.valueNode.from, a.valueNode.to).trim()),
      )
      .map((a) => a.target),
  );
  const metrics = new Set<string>();
  const loadFromEvaluate = idx.imports.some(
    (i) => i.kind === 'from' && i.module === 'evaluate' && i.names.some((n) => n.name === 'load' && !n.alias),
  );
  for (const call of idx.calls) {
    const name = call.method?.name ?? call.callee?.split('.').pop() ?? '';
    if (isMetricLoad(call.callee, name, loadFromEvaluate) || call.callee === 'evaluate.combine') {
      // `evaluate.combine(["accuracy", "f1"])`: every literal of the list; a load: its path.
      const arg = positional(call, 0) ?? keyword(call, 'path') ?? keyword(call, 'evaluations');
      const text = arg ? script.slice(arg.valueFrom, arg.valueTo) : '';
      const values =
        call.callee === 'evaluate.combine'
          ? [...text.matchAll(/(["'])([\w/-]+)\1/g)].map((m) => m[2])
          : [arg && resolveValue(scope, arg.valueFrom, arg.valueTo)?.value];
      for (const v of values) {
        const metric = v ? metricNameOf(v) : undefined;
        if (metric) metrics.add(metric);
      }
      continue;
    }
    if (name === 'from_pretrained') {
      const arg = positional(call, 0) ?? keyword(call, 'pretrained_model_name_or_path');
      const v = arg && resolveValue(scope, arg.valueFrom, arg.valueTo);
      if (v) addModel(v.value, `from_pretrained ${v.from}`);
    } else if (name === 'pipeline' || /Trainer$/.test(name)) {
      const arg = keyword(call, 'model');
      const v = arg && resolveValue(scope, arg.valueFrom, arg.valueTo);
      if (v && v.value.includes('/')) addModel(v.value, `${name}(model=) ${v.from}`);
    } else if (name === 'load_dataset' || (call.callee !== null && loadAliases.has(call.callee))) {
      datasetFromCall(scope, call, addDataset);
    } else if (name === 'load_from_disk') {
      // A folder saved by an earlier step: a synthetic one at that path (diskDatasets.ts).
      const arg = positional(call, 0) ?? keyword(call, 'dataset_path');
      const v = arg && resolveValue(scope, arg.valueFrom, arg.valueTo);
      if (v && isRunRelativeFolder(v.value)) addDataset(diskDatasetNeed(script, v.value, `load_from_disk ${v.from}`));
    }
  }
  const diskPaths = new Set([...datasets.values()].filter((d) => d.format === 'disk').map((d) => d.path));
  // Values given on the command line or in config files under a model/dataset name.
  for (const [key, { value, from }] of scope.given) {
    if (diskPaths.has(value.replace(/^\.\/|\/+$/g, ''))) continue;
    if (MODEL_KEY.test(key)) addModel(value, from);
    else if (DATASET_KEY.test(key) && !isDataFile(value)) addDataset({ path: value, ...configFor(scope), from });
    else if (FILE_KEY.test(key) || (DATASET_KEY.test(key) && isDataFile(value))) {
      for (const f of value.split(',')) if (isDataFile(f)) addDataset({ path: f, format: formatOf(f), splits: ['train'], from });
    }
  }
  // Defaults of fields named like a model or dataset, when nothing overrides them.
  for (const [key, { value, from }] of scope.defaults) {
    if (scope.given.has(key)) continue;
    if (MODEL_KEY.test(key)) addModel(value, from);
    // `dataset_path` defaults are often load_from_disk folders: only a load_dataset call makes them hub ids.
    else if (DATASET_KEY.test(key) && !key.endsWith('_path') && !isDataFile(value) && looksLikeDatasetId(value))
      addDataset({ path: value, ...configFor(scope), from });
  }

  const shapes = new Map<string, NestedShape>();
  const columns = scriptColumns(scope, shapes);
  const rows = selectedRows(script);
  const layout = fileLayoutOf(script);
  for (const need of datasets.values()) {
    if (rows) need.rows = rows;
    if (layout && need.format === 'json') need.layout = layout;
    if (need.format === 'disk') continue; // its schema and splits come from how the script reads it
    const known = need.format ? undefined : KNOWN_DATASETS[need.path];
    if (known) {
      const cfg = need.config && known.configs?.[need.config];
      need.columns = { ...(cfg ? cfg.columns : known.columns) };
      const labels = cfg ? cfg.labels : known.labels;
      if (labels) need.labels = labels;
      if (!cfg && known.shapes) need.shapes = known.shapes;
      need.splits = union(need.splits ?? [], known.splits);
    } else {
      need.columns = { ...columns };
      // Nested columns the script walks (`ex["meta"]["source"]`): csv and text files hold only flat values.
      const flat = need.format === 'csv' || need.format === 'text';
      for (const [c, shape] of shapes)
        if (need.columns[c] === 'nested') {
          if (flat) need.columns[c] = 'string';
          else need.shapes = { ...need.shapes, [c]: shape };
        }
    }
    need.splits = need.splits?.length ? need.splits : ['train', 'test'];
    if (!need.splits.includes('train')) need.splits = ['train', ...need.splits];
  }
  // Names that cannot be a hub id or a relative data path (spaces, `..`) are not needs: the script's own error says so.
  const usable = (id: string): boolean => HubIdSchema.safeParse(id).success;
  return HubNeedsSchema.parse({
    models: [...models.values()].filter((m) => usable(m.id) && !isBaseHubModel(m.id)),
    // A base-hub dataset is served as it is, unless the script takes more rows than it has.
    datasets: [...datasets.values()]
      .filter((d) => usable(d.path))
      .filter((d) => d.format || d.rows || !isBaseHubDataset(d.path, d.config))
      .map((d) => (!d.format && d.rows ? { ...d, config: d.config ?? baseHubConfig(d.path) } : d))
      .map((d) => ({ ...d, splits: d.splits?.slice(0, 8) })),
    ...(metrics.size ? { metrics: [...metrics].slice(0, 32) } : {}),
  });
}

/**
 * The rows a script selects by index (`ds.select(range(10000))`, `range(0, N)`), when more than the
 * synthetic default: `select` fails on a shorter dataset, and which dataset it applies to is not
 * tracked, so every dataset gets them (capped).
 */
export function selectedRows(source: string): number | undefined {
  let most = 0;
  for (const m of source.matchAll(/\.select\(\s*range\(\s*(?:0\s*,\s*)?(\d[\d_]*|[A-Za-z_]\w*)\s*\)/g)) {
    // A name: the integer it is assigned or defaults to (`def get_dataloaders(..., max_training_samples=500)`).
    const n = /^\d/.test(m[1]) ? m[1] : intAssigned(source, m[1]);
    if (n) most = Math.max(most, Number(n.replace(/_/g, '')));
  }
  // A tail held out by count (`range(len(ds) - eval_samples, len(ds))`): fewer rows than the count make a
  // negative index (pyarrow's "can't convert negative value to unsigned int"); the rest still needs a default split.
  // Small counts (`range(len(xs) - 1)`, often not a dataset) fit every split as it is.
  for (const n of heldOutCounts(source)) if (n >= MIN_SYNTHETIC_SPLIT_ROWS) most = Math.max(most, n + DEFAULT_SYNTHETIC_ROWS);
  return most > DEFAULT_SYNTHETIC_ROWS ? Math.min(most, MAX_SYNTHETIC_ROWS) : undefined;
}

/** The integer literal a name is assigned or given as a parameter default (`n = 500`, `n: int = 500`, `f(n=500)` in a def). */
function intAssigned(source: string, name: string): string | undefined {
  return new RegExp(`(?:^[ \\t]*|\\bdef\\s+\\w+\\([^)]*?)\\b${name}\\s*(?::\\s*[\\w.]+)?\\s*=\\s*(\\d[\\d_]*)(?![\\w.])`, 'm').exec(
    source,
  )?.[1];
}

/** The counts subtracted from a length inside `range(...)`: an integer literal or a name the script assigns one. */
function heldOutCounts(source: string): number[] {
  const counts: number[] = [];
  for (const m of source.matchAll(/\brange\(\s*len\([^()]*\)\s*-\s*([A-Za-z_]\w*|\d[\d_]*)\b/g)) {
    const term = m[1];
    const literal = /^\d/.test(term) ? term : new RegExp(`^[ \\t]*${term}\\s*=\\s*(\\d[\\d_]*)\\s*(?:#.*)?$`, 'm').exec(source)?.[1];
    if (literal) counts.push(Number(literal.replace(/_/g, '')));
  }
  return counts;
}

// ---------------------------------------------------------------- values

function positional(call: CallSite, i: number) {
  return call.args.filter((a) => a.kind === 'positional')[i];
}
function keyword(call: CallSite, name: string) {
  return call.args.find((a) => a.kind === 'keyword' && a.name === name);
}

function literalAt(source: string, from: number, to: number): string | undefined {
  const lit = readStringLiteral(source, from, to);
  return lit?.plain ? lit.raw : undefined;
}

const lineOf = (source: string, offset: number): number => source.slice(0, offset).split('\n').length;

/** A string literal, or a name/attribute whose last part names a given value or a field default. */
function resolveValue(scope: Scope, from: number, to: number): { value: string; from: Origin } | undefined {
  const text = scope.source.slice(from, to).trim();
  // `args.tokenizer_name or args.model_name_or_path`: the first part that resolves.
  const or = text.split(/\s+or\s+/);
  if (or.length > 1 && or.length <= 4) {
    let at = from + scope.source.slice(from, to).indexOf(or[0]);
    for (const part of or) {
      const start = scope.source.indexOf(part, at);
      const v = start >= 0 ? resolveValue(scope, start, start + part.length) : undefined;
      if (v) return v;
      at = start + part.length;
    }
    return undefined;
  }
  const lit = literalAt(scope.source, from, to);
  if (lit !== undefined) return { value: lit, from: `literal line ${lineOf(scope.source, from)}` };
  const m = /^[A-Za-z_][\w.]*$/.exec(text);
  if (!m) return undefined;
  const key = text.split('.').pop()!;
  const hit = scope.given.get(key) ?? scope.defaults.get(key);
  if (hit) return hit;
  // A module-level `NAME = "literal"`.
  for (const a of scope.idx.assignments) {
    if (a.target !== text) continue;
    const v = literalAt(scope.source, a.valueNode.from, a.valueNode.to);
    if (v !== undefined) return { value: v, from: `${text} = literal line ${lineOf(scope.source, a.valueNode.from)}` };
  }
  return unpackedLiteral(scope.source, text);
}

/** `source_column, target_column = "question", "answer"`: the literal a tuple assignment gives `name`. */
export function unpackedLiteral(source: string, name: string): { value: string; from: Origin } | undefined {
  const re =
    /^[ \t]*\(?([A-Za-z_]\w*(?:[ \t]*,[ \t]*[A-Za-z_]\w*)+)[ \t]*,?[ \t]*\)?[ \t]*=[ \t]*\(?((?:[ \t]*(["'])[^"'\n]*\3[ \t]*,?)+)[ \t]*\)?[ \t]*$/gm;
  for (const m of source.matchAll(re)) {
    const targets = m[1].split(',').map((t) => t.trim());
    const values = [...m[2].matchAll(/(["'])([^"'\n]*)\1/g)].map((v) => v[2]);
    const at = targets.indexOf(name);
    if (at >= 0 && targets.length === values.length)
      return { value: values[at], from: `${m[1].trim()} = literals line ${lineOf(source, m.index ?? 0)}` };
  }
  return undefined;
}

function configFor(scope: Scope): { config?: string } {
  for (const [k, v] of [...scope.given, ...scope.defaults]) if (CONFIG_KEY.test(k) && v.value) return { config: v.value };
  return {};
}

function datasetFromCall(scope: Scope, call: CallSite, add: (n: DatasetNeed) => void): void {
  const pathArg = positional(call, 0) ?? keyword(call, 'path');
  const path = pathArg && resolveValue(scope, pathArg.valueFrom, pathArg.valueTo);
  if (!path) return;
  const cfgArg = positional(call, 1) ?? keyword(call, 'name');
  const config = cfgArg && resolveValue(scope, cfgArg.valueFrom, cfgArg.valueTo);
  const dirArg = keyword(call, 'data_dir');
  // `data_dir=data_dir` inside `def load(data_dir="data/rl")` called as `load(data_dir="data/evaluation")`:
  // every value its callers pass is a load of its own (datasets caches each under its own config id).
  const dataDirs = dirArg ? parameterValues(scope, call, dirArg.valueFrom, dirArg.valueTo) : [];
  const splitArg = keyword(call, 'split');
  let splits = splitArg ? splitNames(scope.source.slice(splitArg.valueFrom, splitArg.valueTo)) : undefined;
  // `split=data_args.train_split_name`: the option's value or default (`"train+validation"`).
  if (splitArg && !splits?.length) {
    // A local assigned in branches (`train_split = "train[:100]"` if debug else `"train+validation"`): every value.
    const name = scope.source.slice(splitArg.valueFrom, splitArg.valueTo).trim();
    const values = scope.idx.assignments
      .filter((a) => a.target === name)
      .map((a) => literalAt(scope.source, a.valueNode.from, a.valueNode.to))
      .filter((x): x is string => x !== undefined);
    const v = values.length ? undefined : resolveValue(scope, splitArg.valueFrom, splitArg.valueTo);
    splits = [...new Set([...values, ...(v ? [v.value] : [])].flatMap((x) => splitNames(JSON.stringify(x))))];
  }
  const format = FILE_BUILDERS[path.value];
  if (format) {
    const filesArg = keyword(call, 'data_files') ?? positional(call, 1);
    if (!filesArg) return;
    // `data_files=data_files`: the values the script assigns that name (each branch: `if args.data_dir:` local
    // paths, else hub URLs), read where they are written.
    const argText = scope.source.slice(filesArg.valueFrom, filesArg.valueTo).trim();
    const assigned = /^[A-Za-z_]\w*$/.test(argText)
      ? scope.idx.assignments
          .filter((a) => a.target === argText && !literalAt(scope.source, a.valueNode.from, a.valueNode.to))
          .map((a) => ({ from: a.valueNode.from, to: a.valueNode.to }))
      : [];
    for (const span of assigned.length ? assigned : [{ from: filesArg.valueFrom, to: filesArg.valueTo }]) {
      let text = scope.source.slice(span.from, span.to);
      // `os.path.join(base_path, "train.jsonl")`: the joined path, its parts resolved (a folder the script names).
      const joined: string[] = [];
      for (const j of text.matchAll(/\b(?:os\.)?path\.join\(([^()]*)\)/g)) {
        let at = span.from + j.index + j[0].indexOf('(') + 1;
        const parts = j[1].split(',').map((part) => {
          const start = scope.source.indexOf(part.trim(), at);
          at = start + part.trim().length;
          return start >= 0 ? resolveValue(scope, start, start + part.trim().length)?.value : undefined;
        });
        if (parts.length && parts.every((p) => p !== undefined)) joined.push(parts.join('/').replace(/\/{2,}/g, '/'));
      }
      if (joined.length) text = text.replace(/\b(?:os\.)?path\.join\(([^()]*)\)/g, '');
      const literals = [...joined, ...[...text.matchAll(/(["'])([^"'\n]+)\1/g)].map((m) => m[2])];
      const resolved = literals.length
        ? literals.map((value) => ({ value, from: `data_files literal line ${lineOf(scope.source, span.from)}` }))
        : [resolveValue(scope, span.from, span.to)].filter((v) => v !== undefined);
      for (const v of resolved)
        if (isDataFile(v.value))
          add({ path: v.value, format: formatOf(v.value) ?? format, splits: ['train'], from: `load_dataset("${path.value}") ${v.from}` });
    }
    return;
  }
  if (isDataFile(path.value)) {
    add({ path: path.value, format: formatOf(path.value), splits: ['train'], from: `load_dataset ${path.from}` });
    return;
  }
  if (!looksLikeDatasetId(path.value)) return;
  const kwargs = literalKeywords(scope, call);
  // No split=: a DatasetDict, whose splits are the keys the script reads of it (`raw_datasets["test"]`).
  if (!splitArg) splits = readSplits(scope, call);
  const dirs = dataDirs.map((d) => d.value.replace(/^\.\/|\/+$/g, '')).filter((d) => HubIdSchema.safeParse(d).success);
  for (const dir of dirs.length ? dirs : [undefined])
    add({
      path: path.value,
      ...(config && looksLikeDatasetId(config.value) ? { config: config.value } : {}),
      ...(dir ? { data_dir: dir } : {}),
      ...(kwargs ? { config_kwargs: kwargs } : {}),
      ...(splits?.length ? { splits } : {}),
      from: `load_dataset ${path.from}`,
    });
}

/**
 * The values an argument takes: its own (a literal, an option), or, when it is a parameter of the
 * function around the call, what each caller of that function passes for it (keyword or position),
 * plus the parameter's default when some caller leaves it out.
 */
function parameterValues(scope: Scope, call: CallSite, from: number, to: number): Array<{ value: string; from: Origin }> {
  const name = scope.source.slice(from, to).trim();
  const own = resolveValue(scope, from, to);
  const fn = /^[A-Za-z_]\w*$/.test(name)
    ? scope.idx.functions
        .filter((f) => f.name && f.from <= call.from && call.to <= f.to && f.params.includes(name))
        .sort((a, b) => b.from - a.from)[0]
    : undefined;
  if (!fn?.name) return own ? [own] : [];
  const at = fn.params.indexOf(name);
  const out: Array<{ value: string; from: Origin }> = [];
  let leftOut = false;
  for (const c of scope.idx.calls) {
    if (c.callee !== fn.name) continue;
    const a = keyword(c, name) ?? (c.args.some((x) => x.kind === 'star') ? undefined : positional(c, at));
    const v = a && resolveValue(scope, a.valueFrom, a.valueTo);
    if (v) out.push({ value: v.value, from: `${fn.name}(${name}=) ${v.from}` });
    else if (!a) leftOut = true;
  }
  // No caller seen, or one relying on the default: the parameter's literal default counts too.
  const header = scope.source.slice(fn.from, scope.source.indexOf(':\n', fn.from) + 1 || fn.to);
  const dflt = new RegExp(`[(,]\\s*${name}\\s*(?::[^=,)]*)?=\\s*(["'])([^"'\\n]*)\\1`).exec(header);
  const fallback = dflt ? { value: dflt[2], from: `default of ${fn.name}(${name}=) line ${lineOf(scope.source, fn.from)}` } : own;
  if ((leftOut || !out.length) && fallback) out.push(fallback);
  return out.filter((v, i) => out.findIndex((w) => w.value === v.value) === i);
}

/**
 * The string keys the script reads (not assigns) of the variable a `load_dataset(...)` call without split=
 * is assigned to: the DatasetDict's splits (`raw_datasets["validation"]`), after train and test. So a later
 * `load_dataset(..., split="train[:5%]")` of the same dataset does not leave it with train alone.
 */
function readSplits(scope: Scope, call: CallSite): string[] | undefined {
  const target = scope.idx.assignments.find((a) => a.valueNode.from === call.from && /^[A-Za-z_]\w*$/.test(a.target))?.target;
  if (!target) return undefined;
  // The default pair stays: a split read through a name (`raw[args.eval_split]`) is not seen here.
  const out: string[] = ['train', 'test'];
  for (const s of scope.idx.subscripts) {
    if (s.object !== target || !s.key?.plain || !/^[A-Za-z][\w-]*$/.test(s.key.raw)) continue;
    if (/^\s*=(?!=)/.test(scope.source.slice(s.closeBracket + 1, s.closeBracket + 8))) continue;
    if (!out.includes(s.key.raw)) out.push(s.key.raw);
  }
  return out;
}

/** load_dataset's own keywords in every era (the others may be builder config kwargs: make_hub_items.py decides per release). */
const LOAD_DATASET_OWN = new Set([
  'path',
  'name',
  'data_dir',
  'data_files',
  'split',
  'cache_dir',
  'features',
  'download_config',
  'download_mode',
  'verification_mode',
  'ignore_verifications',
  'keep_in_memory',
  'save_infos',
  'revision',
  'token',
  'streaming',
  'num_proc',
  'storage_options',
  'trust_remote_code',
  'task',
]);

/** The call's other keywords whose values are literals (`use_auth_token=True`, `lang="en"`). */
function literalKeywords(scope: Scope, call: CallSite): Record<string, string | number | boolean> | undefined {
  const out: Record<string, string | number | boolean> = {};
  for (const a of call.args) {
    if (a.kind !== 'keyword' || !a.name || LOAD_DATASET_OWN.has(a.name)) continue;
    const text = scope.source.slice(a.valueFrom, a.valueTo).trim();
    if (text === 'True' || text === 'False') out[a.name] = text === 'True';
    else if (/^-?\d+(\.\d+)?$/.test(text)) out[a.name] = Number(text);
    else {
      const lit = literalAt(scope.source, a.valueFrom, a.valueTo);
      if (lit !== undefined) out[a.name] = lit;
    }
  }
  return Object.keys(out).length ? out : undefined;
}

/** `"train[:5%]"`, `["train", "test"]`, `"train+validation"` -> split names. */
function splitNames(text: string): string[] {
  return [
    ...new Set(
      [...text.matchAll(/(["'])([A-Za-z_]+)(\[[^\]]*\])?(\+[^"']*)?\1/g)].flatMap((m) => [
        m[2],
        ...(m[4]
          ? m[4]
              .split('+')
              .filter(Boolean)
              .map((s) => s.replace(/\[.*$/, ''))
          : []),
      ]),
    ),
  ];
}

function union(a: string[] | undefined, b: string[] | undefined): string[] {
  return [...new Set([...(a ?? []), ...(b ?? [])])];
}

export function looksLikeModelId(v: string): boolean {
  if (!/^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(v) || v.length > 96) return false;
  if (/\.(json|jsonl|csv|txt|py|bin|pt|safetensors|yaml|yml)$/i.test(v)) return false;
  // Placeholders and output folders, not models.
  return !/^(none|null|true|false|out|output|outputs|results?|sagemaker|path|model|tmp|checkpoints?)$/i.test(v);
}

function looksLikeDatasetId(v: string): boolean {
  return /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(v) && !/^(none|null|true|false|path|data|dataset)$/i.test(v);
}

export function isDataFile(v: string): boolean {
  return /\.(json|jsonl|csv|tsv|txt|parquet)$/i.test(v) && !v.startsWith('/') && !v.split('/').includes('..');
}

export function formatOf(path: string): DatasetNeed['format'] {
  const ext = path.toLowerCase().split('.').pop();
  if (ext === 'jsonl') return 'jsonl';
  if (ext === 'json') return 'json';
  if (ext === 'csv' || ext === 'tsv') return 'csv';
  if (ext === 'parquet') return 'parquet';
  return 'text';
}

// ---------------------------------------------------------------- defaults and given values

/** argparse `add_argument("--x", default="v")` and dataclass `x: str = field(default="v")` / `= "v"`. */
function fieldDefaults(idx: ScriptIndex, source: string): Scope['defaults'] {
  const out: Scope['defaults'] = new Map();
  for (const call of idx.calls) {
    if (call.method?.name !== 'add_argument') continue;
    const names = call.args
      .filter((a) => a.kind === 'positional')
      .map((a) => literalAt(source, a.valueFrom, a.valueTo))
      .filter((n): n is string => !!n);
    const long = names.find((n) => n.startsWith('--')) ?? names[0];
    const dflt = keyword(call, 'default');
    const value = dflt && literalAt(source, dflt.valueFrom, dflt.valueTo);
    if (long && value)
      out.set(long.replace(/^-+/, '').replace(/-/g, '_'), { value, from: `argparse default of ${long} line ${lineOf(source, call.from)}` });
  }
  // `name: str = "x"` and `name: str = field(default="x", …)`, the field call possibly over several lines.
  const re = /^[ \t]+([A-Za-z_]\w*)\s*:\s*[^=\n]+=\s*(?:field\([^)]*?\bdefault\s*=\s*)?(["'])([^"'\n]+)\2/gm;
  for (const m of source.matchAll(re)) {
    if (!out.has(m[1])) out.set(m[1], { value: m[3], from: `dataclass default of ${m[1]} line ${lineOf(source, m.index ?? 0)}` });
  }
  return out;
}

/** `--name value` / `--name=value` in args, and top-level keys of JSON/YAML config files in `files`. */
function givenValues(args: readonly string[], files: Readonly<Record<string, string>>): Scope['given'] {
  const out: Scope['given'] = new Map();
  const configFiles = new Set<string>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (!a.startsWith('--')) {
      if (/\.(ya?ml|json)$/i.test(a) && files[a] !== undefined) configFiles.add(a);
      continue;
    }
    const eq = a.indexOf('=');
    const key = (eq > 0 ? a.slice(2, eq) : a.slice(2)).replace(/-/g, '_');
    const value = eq > 0 ? a.slice(eq + 1) : args[i + 1] !== undefined && !args[i + 1].startsWith('--') ? args[++i] : undefined;
    if (value === undefined) continue;
    if ((key === 'config' || /_config$|^config_file$/.test(key)) && files[value] !== undefined) configFiles.add(value);
    out.set(key, { value, from: `args --${key}` });
  }
  for (const f of configFiles)
    for (const [k, v] of Object.entries(readConfigFile(f, files[f]))) if (!out.has(k)) out.set(k, { value: v, from: `${f}: ${k}` });
  return out;
}

/** Top-level scalar entries of a JSON object or a YAML mapping (no YAML library: `key: value` lines). */
export function readConfigFile(name: string, text: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (/\.json$/i.test(name)) {
    try {
      const parsed = z.record(z.string(), z.unknown()).safeParse(JSON.parse(text));
      if (parsed.success)
        for (const [k, v] of Object.entries(parsed.data)) if (typeof v === 'string' || typeof v === 'number') out[k] = String(v);
    } catch {
      // not JSON: nothing given
    }
    return out;
  }
  for (const m of text.matchAll(/^([A-Za-z_][\w-]*)\s*:\s*(["']?)([^#\n"']+?)\2\s*(?:#.*)?$/gm)) out[m[1].replace(/-/g, '_')] = m[3].trim();
  return out;
}

// ---------------------------------------------------------------- columns

/** The columns the script reads from examples, with kinds guessed from their names and uses. */
function scriptColumns(scope: Scope, shapes: Map<string, NestedShape> = new Map()): Record<string, ColumnKind> {
  const { idx, source } = scope;
  const cols = new Map<string, ColumnKind>();
  const add = (name: string, kind?: ColumnKind): void => {
    if (!/^[A-Za-z_][\w -]{0,60}$/.test(name) || SPLIT_NAMES.has(name) || MODEL_OUTPUT_KEYS.has(name)) return;
    if (!cols.has(name) || (kind && cols.get(name) === 'string')) cols.set(name, kind ?? kindOf(name));
  };
  // Parameters of functions passed to map/filter/formatting_func, and lambdas' parameters.
  const exampleParams = new Set<string>();
  const fnNames = new Set<string>();
  for (const call of idx.calls) {
    const m = call.method?.name;
    if (m === 'map' || m === 'filter' || m === 'with_transform' || m === 'set_transform') {
      const a = positional(call, 0) ?? keyword(call, 'function');
      if (a) fnNames.add(source.slice(a.valueFrom, a.valueTo).trim());
    }
    const ff = keyword(call, 'formatting_func');
    if (ff) fnNames.add(source.slice(ff.valueFrom, ff.valueTo).trim());
  }
  for (const f of idx.functions) {
    if (f.name === undefined || fnNames.has(f.name)) for (const p of f.params.slice(0, 1)) exampleParams.add(p);
  }
  const datasetVars = new Set(idx.assignments.filter((a) => a.call && /load_dataset$/.test(a.call.callee ?? '')).map((a) => a.target));
  // Loop and comprehension variables over a dataset (`for ex in ds`, `[n["x"] for n in notes]`) are examples too.
  for (const m of source.matchAll(/\bfor\s+([A-Za-z_]\w*)\s+in\s+([A-Za-z_][\w.]*)(\[[^\]]*\])?/g)) {
    if (datasetVars.has(m[2].split('.')[0]) || /(^|_)(dataset|ds|data)s?$/.test(m[2])) exampleParams.add(m[1]);
  }
  for (const s of idx.subscripts) {
    if (!s.key && (exampleParams.has(s.object ?? '') || EXAMPLE_NAMES.test(s.object ?? ''))) {
      // `examples[text_column]` where `text_column = "sentence"`: the column the name holds.
      const inner = source.slice(s.openBracket + 1, s.closeBracket);
      const name = /^\s*([A-Za-z_][\w.]*)\s*$/.exec(inner);
      const v = name
        ? resolveValue(scope, s.openBracket + 1 + inner.indexOf(name[1]), s.openBracket + 1 + inner.indexOf(name[1]) + name[1].length)
        : undefined;
      if (v && /^[A-Za-z_][\w ]*$/.test(v.value)) add(v.value);
      continue;
    }
    if (!s.key?.plain) continue;
    const obj = s.object ?? '';
    const base = obj.split('.')[0] ?? '';
    const onExample = exampleParams.has(obj) || EXAMPLE_NAMES.test(obj);
    const objText = source.slice(s.objectFrom, s.objectTo);
    // `example["audio"]["array"]`: a field of a column's value (audio, image, nested dicts), not a column.
    const inner = /^([A-Za-z_]\w*)\[/.exec(objText)?.[1];
    if (inner && (exampleParams.has(inner) || EXAMPLE_NAMES.test(inner))) continue;
    // `train_split.features["label"]`: a column's feature (its class names), on any dataset.
    if (/\.features$/.test(objText)) {
      add(s.key.raw);
      continue;
    }
    const onDataset = datasetVars.has(base) || /(^|_)(dataset|ds|data)s?$/.test(obj) || /\]$/.test(objText);
    if (onExample || (onDataset && !SPLIT_NAMES.has(s.key.raw) && datasetVars.size > 0)) add(s.key.raw);
  }
  for (const call of idx.calls) {
    for (const a of call.args) {
      if (a.kind !== 'keyword') continue;
      const v = source.slice(a.valueFrom, a.valueTo);
      if (a.name === 'remove_columns' || a.name === 'input_columns') for (const m of v.matchAll(/(["'])([^"'\n]+)\1/g)) add(m[2]);
      else if (a.name === 'dataset_text_field') {
        const r = resolveValue(scope, a.valueFrom, a.valueTo);
        if (r) add(r.value, 'string');
      }
    }
    const m = call.method?.name;
    if (m === 'rename_column' || m === 'remove_columns' || m === 'select_columns' || m === 'class_encode_column') {
      const pos = call.args.filter((x) => x.kind === 'positional');
      // rename_column(old, new): only the old name is a column of the dataset as loaded.
      for (const a of m === 'rename_column' ? pos.slice(0, 1) : pos)
        for (const mm of source.slice(a.valueFrom, a.valueTo).matchAll(/(["'])([^"'\n]+)\1/g)) add(mm[2]);
    }
  }
  // A column the script hands to a chat template as the conversation (`apply_chat_template(row["chosen"])`)
  // holds messages (TRL's conversational format), whatever its name says; every other column stays a
  // string (the standard format, which every trainer of every TRL release takes with any tokenizer).
  for (const call of idx.calls) {
    if (call.method?.name !== 'apply_chat_template') continue;
    const a = positional(call, 0) ?? keyword(call, 'conversation');
    const m = a && /^([A-Za-z_]\w*)\[\s*(["'])([^"'\n]+)\2\s*\]$/.exec(source.slice(a.valueFrom, a.valueTo).trim());
    if (m && (exampleParams.has(m[1]) || EXAMPLE_NAMES.test(m[1]))) add(m[3], 'messages');
  }
  for (const m of source.matchAll(/(["'])(\w+)\1\s+(?:not\s+)?in\s+[\w.[\]"']*column_names/g)) add(m[2]);
  // Fields that name a column (`text_column="text"`, `--label_column_name label`).
  for (const [k, v] of [...scope.defaults, ...scope.given]) {
    const m = COLUMN_KEY.exec(k);
    if (m && /^[A-Za-z_]\w*$/.test(v.value)) add(v.value, m[1] === 'label' ? 'label' : undefined);
  }
  for (const [re, format] of TRAINER_FORMATS) {
    if (!re.test(source)) continue;
    for (const [c, k] of Object.entries(format)) add(c, k);
    break;
  }
  if (/\bSFTTrainer\b/.test(source) && ![...cols.keys()].some((c) => cols.get(c) === 'string' || cols.get(c) === 'messages')) {
    add(/messages|apply_chat_template/.test(source) ? 'messages' : 'text');
  }
  // Columns the script walks into (`ex["completions"][i]["response"]`): nested, with the structure the chain shows.
  for (const [c, shape] of nestedColumns(scope, exampleParams)) {
    if (cols.has(c) && cols.get(c) !== 'string') continue;
    const messages =
      'list' in shape && 'struct' in shape.list && Object.keys(shape.list.struct).every((k) => k === 'role' || k === 'content');
    cols.set(c, messages ? 'messages' : 'nested');
    if (!messages) shapes.set(c, shape);
  }
  // A column the script hands to a tokenizer is text, whatever its name says (`targets = examples["label"]`
  // then `tokenizer(targets)`: a seq2seq script's label words).
  for (const c of tokenizerInputColumns(scope, exampleParams)) if (cols.has(c)) cols.set(c, 'string');
  // Columns the script's own example function writes and never reads (`batch["input_length"] = len(a) / sr`) are
  // its outputs, not the dataset's: a synthetic column of that name would be removed with the originals
  // (`remove_columns=features`) and take the computed one with it.
  for (const c of writtenOnlyColumns(scope, exampleParams)) cols.delete(c);
  // The token-classification template (transformers' run_ner and its kin): words in `tokens`, and a tag column
  // whose name the script computes (`column_names[1]`, `f"{task}_tags"`) and reads as a sequence
  // (`features[label_column_name].feature`). It gets the template's `ner_tags`, right after the words.
  if (
    cols.get('tokens') === 'tokens' &&
    ![...cols.values()].some((k) => k === 'tags' || k === 'ints') &&
    /\bfeatures\[\s*[A-Za-z_][\w.]*\s*\]\.feature\b/.test(source)
  ) {
    const rest = [...cols].filter(([c]) => c !== 'tokens');
    cols.clear();
    for (const [c, k] of [['tokens', 'tokens'] as const, ['ner_tags', 'tags'] as const, ...rest]) cols.set(c, k);
  }
  if (cols.size === 0) {
    cols.set('text', 'string');
    cols.set('label', 'label');
  }
  return Object.fromEntries(cols);
}

/**
 * The structure of columns the script subscripts past their value: `ex["meta"]["lang"]` a struct,
 * `ex["completions"][i]["response"]` a list of structs (in a batched function the first index is the row's).
 * Only chains with a string key after the column count (`ex["text"][0]` is a character, not a structure).
 */
export function nestedColumns(scope: Scope, exampleParams: ReadonlySet<string>): Map<string, NestedShape> {
  const { idx, source } = scope;
  const batchedFns = new Set<string>();
  for (const call of idx.calls) {
    if (call.method?.name !== 'map' && call.method?.name !== 'filter') continue;
    const b = keyword(call, 'batched');
    const f = positional(call, 0) ?? keyword(call, 'function');
    if (b && f && source.slice(b.valueFrom, b.valueTo).trim() === 'True') batchedFns.add(source.slice(f.valueFrom, f.valueTo).trim());
  }
  const batchedParams = new Set(idx.functions.filter((f) => f.name && batchedFns.has(f.name)).flatMap((f) => f.params.slice(0, 1)));
  const datasetVars = new Set(idx.assignments.filter((a) => a.call && /load_dataset$/.test(a.call.callee ?? '')).map((a) => a.target));
  const out = new Map<string, NestedShape>();
  for (const s of idx.subscripts) {
    const obj = s.object ?? '';
    if (!s.key?.plain || !(exampleParams.has(obj) || EXAMPLE_NAMES.test(obj)) || source[s.objectTo] !== '[') continue;
    // `d["train"][0]["question"]`: a split of a dataset, then a row, not a column's structure.
    if (SPLIT_NAMES.has(s.key.raw) || MODEL_OUTPUT_KEYS.has(s.key.raw) || datasetVars.has(obj)) continue;
    const parts: Array<string | null> = [];
    const re = /^\s*\[\s*(?:(["'])([^"'\n]+)\1|[^[\]"']+)\s*\]/;
    let at = s.to;
    for (let m = re.exec(source.slice(at)); m && parts.length < 6; m = re.exec(source.slice(at))) {
      parts.push(m[2] ?? null);
      at += m[0].length;
    }
    if (batchedParams.has(obj) && parts[0] === null) parts.shift();
    if (!parts.some((p) => p !== null)) continue;
    let shape: NestedShape = { value: 'string' };
    for (const p of [...parts].reverse()) shape = p === null ? { list: shape } : { struct: { [p]: shape } };
    const prev = out.get(s.key.raw);
    out.set(s.key.raw, prev ? mergeShapes(prev, shape) : shape);
  }
  return out;
}

/** Two views of one column's structure, combined (fields of both structs; a list wins over a scalar). */
function mergeShapes(a: NestedShape, b: NestedShape): NestedShape {
  if ('struct' in a && 'struct' in b) {
    const struct = { ...a.struct };
    for (const [k, v] of Object.entries(b.struct)) struct[k] = struct[k] ? mergeShapes(struct[k], v) : v;
    return { struct };
  }
  if ('list' in a && 'list' in b) return { list: mergeShapes(a.list, b.list) };
  return 'value' in a ? b : a;
}

/**
 * Literal keys the script's example functions create (`batch["labels"] = …`): a key assigned on an example in a
 * function that has not read it before the assignment. A later function that reads it (`map(add_spans)` then
 * `map(tokenize)` reading `ex["spans"]`) reads the script's own column, not the dataset's; a function that reads
 * the key before assigning it (`ex["text"] = ex["text"].lower()`) keeps it a column of the dataset.
 */
export function writtenOnlyColumns(scope: Scope, exampleParams: ReadonlySet<string>): Set<string> {
  const onExample = scope.idx.subscripts.filter(
    (s) => s.key?.plain && (exampleParams.has(s.object ?? '') || EXAMPLE_NAMES.test(s.object ?? '')),
  );
  const assigned = (s: (typeof onExample)[number]) => /^\s*=(?!=)/.test(scope.source.slice(s.closeBracket + 1, s.closeBracket + 4));
  // The innermost function holding an offset (the whole script at top level).
  const scopeOf = (at: number) =>
    scope.idx.functions
      .filter((f) => f.from <= at && at < f.to)
      .reduce<{ from: number; to: number }>((a, f) => (f.to - f.from < a.to - a.from ? f : a), { from: 0, to: scope.source.length });
  const created = new Set<string>();
  for (const w of onExample.filter(assigned)) {
    const fn = scopeOf(w.from);
    // Before the assignment, or on its right-hand side (`ex["t"] = ex["t"].lower()`: to the end of its line).
    const lineEnd = scope.source.indexOf('\n', w.closeBracket) >>> 0;
    const readBefore = onExample.some(
      (r) => !assigned(r) && r.key!.raw === w.key!.raw && r.from >= fn.from && r.from < Math.min(lineEnd, fn.to),
    );
    if (!readBefore) created.add(w.key!.raw);
  }
  return created;
}

const TOKENIZER_CALLEE = /(?:^|\.)(?:tokenizer|tokenize|tok|processor)$/i;

/** Columns whose values reach a tokenizer call, directly (`tokenizer(ex["q"])`) or through a local (`t = ex["q"]`). */
export function tokenizerInputColumns(scope: Scope, exampleParams: ReadonlySet<string>): Set<string> {
  const { idx, source } = scope;
  const out = new Set<string>();
  const columnOf = (text: string): string | undefined => {
    const m = /^([A-Za-z_]\w*)\[\s*(?:(["'])([^"'\n]+)\2|([A-Za-z_][\w.]*))\s*\]$/.exec(text.trim());
    if (!m || !(exampleParams.has(m[1]) || EXAMPLE_NAMES.test(m[1]))) return undefined;
    if (m[3]) return m[3];
    const at = source.indexOf(m[4]);
    // `examples[text_column]`: the value the name holds.
    for (const a of idx.assignments) if (a.target === m[4]) return literalAt(source, a.valueNode.from, a.valueNode.to);
    return at >= 0 ? (scope.given.get(m[4].split('.').pop()!)?.value ?? scope.defaults.get(m[4].split('.').pop()!)?.value) : undefined;
  };
  const locals = new Map<string, string>();
  for (const a of idx.assignments) {
    const c = columnOf(source.slice(a.valueNode.from, a.valueNode.to));
    if (c && /^[A-Za-z_]\w*$/.test(a.target)) locals.set(a.target, c);
  }
  for (const call of idx.calls) {
    if (!call.callee || !TOKENIZER_CALLEE.test(call.callee)) continue;
    for (const a of call.args) {
      if (a.kind === 'keyword' && !['text', 'text_target', 'text_pair', 'text_pair_target'].includes(a.name ?? '')) continue;
      const text = source.slice(a.valueFrom, a.valueTo).trim();
      const c = locals.get(text) ?? columnOf(text);
      if (c) out.add(c);
    }
  }
  return out;
}

/** Keys of model outputs and tokenizer encodings, read off dicts that are not examples. */
const MODEL_OUTPUT_KEYS = new Set([
  'input_ids',
  'attention_mask',
  'token_type_ids',
  'logits',
  'loss',
  'pixel_values',
  'decoder_input_ids',
  'offset_mapping',
  'overflow_to_sample_mapping',
  'special_tokens_mask',
  'labels_mask',
]);

/** A column's kind from its name (the conventions of Hub datasets). */
export function kindOf(name: string): ColumnKind {
  const n = name.toLowerCase();
  if (/^(messages|conversations?|chat|dialog_turns)$/.test(n)) return 'messages';
  if (/^(image|img|images|pixel|picture|photo)s?$/.test(n) || /_image$/.test(n)) return 'image';
  if (/^(audio|speech|waveform)$/.test(n)) return 'audio';
  if (/^(tokens|words)$/.test(n)) return 'tokens';
  if (/(ner|pos|chunk)_tags$|^tags$/.test(n)) return 'tags';
  if (/^(label|labels|class|target|category_id)$/.test(n) || /_label$/.test(n)) return 'label';
  if (/^(score|reward|rating|similarity)$|_score$/.test(n)) return 'float';
  if (/^(idx|id_int|year|count)$/.test(n)) return 'int';
  return 'string';
}

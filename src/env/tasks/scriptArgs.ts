// Default command-line arguments for a task whose tasks.json entry gives none: what the script
// cannot start without, read from its syntax tree (@lezer/python, via src/env/python/).
//
// - HfArgumentParser / TrlParser scripts: the dataclasses passed to the parser. A local dataclass's
//   required fields are those without a default (`x: str`, `x: str = field(metadata=…)` without
//   `default`/`default_factory`), its local dataclass bases included. Library classes contribute
//   what they need: every TrainingArguments-like config (`TrainingArguments`, `SFTConfig`,
//   `DPOConfig`, …) `output_dir` (required in older transformers), trl's `ScriptArguments`
//   `dataset_name`, trl's `ModelConfig` `model_name_or_path` (its default None cannot be loaded).
// - argparse scripts: `add_argument` calls with `required=True`, positional arguments (unless
//   `nargs` is `?` or `*` or a default is given), and options without a default whose name says the
//   script cannot do without them (a model, a dataset, the output folder), e.g. `--model_name`.
// - Otherwise, a script that reads `sys.argv[N]` gets N arguments.
//
// Values, by name first: a model name (`model_name_or_path`, `model_id`, …) gets a model id the
// script itself uses (a `from_pretrained("…")` literal or a model field's default), else `gpt2`;
// `output_dir` gets `out`; a dataset name gets a dataset id the script loads, else `imdb`; then by
// type: str `x`, int `1`, float `0.1`, bool `false`, `Literal["a", …]` or `choices=[…]` the first.
// Options are written `--name value` (HfArgumentParser accepts `--name false` for a bool).
import type { SyntaxNode } from '@lezer/common';
import { parsePython } from '../python/parse';
import { indexScript, type CallSite, type ScriptIndex } from '../python/scriptIndex';
import { readStringLiteral } from '../python/strings';

export type ArgStyle = 'dataclass-parser' | 'argparse' | 'sys.argv' | 'none';

export interface RequiredArgument {
  /** The option without dashes (`output_dir`), or the positional argument's name. */
  name: string;
  value: string;
  /** Written as `--name value` (false: a positional value). */
  option: boolean;
  /** Where it comes from: a dataclass name, `argparse` or `sys.argv`. */
  source: string;
}

export interface DerivedArgs {
  style: ArgStyle;
  required: RequiredArgument[];
  args: string[];
}

const PARSERS = /(^|\.)(HfArgumentParser|TrlParser)$/;
const TRAINING_CONFIGS = new Set([
  'TrainingArguments',
  'Seq2SeqTrainingArguments',
  'SFTConfig',
  'DPOConfig',
  'ORPOConfig',
  'KTOConfig',
  'BCOConfig',
  'CPOConfig',
  'RewardConfig',
  'GRPOConfig',
  'OnlineDPOConfig',
  'PPOConfig',
  'RLOOConfig',
  'GKDConfig',
  'PRMConfig',
  'NashMDConfig',
  'XPOConfig',
  'IterativeSFTConfig',
]);
/** Library dataclasses and the fields a script cannot run without. */
const LIBRARY_NEEDS: Readonly<Record<string, ReadonlyArray<{ name: string; type: string }>>> = {
  ScriptArguments: [{ name: 'dataset_name', type: 'str' }],
  ModelConfig: [{ name: 'model_name_or_path', type: 'str' }],
};
const MODEL_NAME = /^(pretrained_)?(base_)?(model|tokenizer)(_name)?(_or_path|_id|_path)?$|^model_(name_or_path|id)$/;
const DATA_FILE_NAME = /^(train|validation|valid|eval|test)_(?:file|data_file|data_path)$/;
const DATASET_NAME = /^dataset(_name|_id|_path)?(_or_path)?$/;
/** `load_dataset` builders that are file formats, not dataset ids. */
const DATASET_BUILDERS = new Set([
  'json',
  'csv',
  'text',
  'parquet',
  'arrow',
  'imagefolder',
  'audiofolder',
  'webdataset',
  'pandas',
  'generator',
  'sql',
]);
const DEFAULT_MODEL = 'gpt2';
const DEFAULT_DATASET = 'imdb';

function children(node: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  for (let c = node.firstChild; c; c = c.nextSibling) out.push(c);
  return out;
}

/** The value of a plain string literal node, else undefined. */
function stringValue(source: string, node: SyntaxNode | undefined | null): string | undefined {
  if (!node || node.name !== 'String') return undefined;
  const lit = readStringLiteral(source, node.from, node.to);
  return lit?.plain ? lit.raw : undefined;
}

const lastName = (dotted: string) => dotted.split('.').pop() ?? dotted;

interface FieldInfo {
  name: string;
  type: string;
  required: boolean;
  /** A plain string default, when there is one (to find model and dataset ids). */
  stringDefault?: string;
}

interface ClassInfo {
  name: string;
  bases: string[];
  dataclass: boolean;
  fields: FieldInfo[];
}

function readClasses(source: string, root: SyntaxNode): Map<string, ClassInfo> {
  const classes = new Map<string, ClassInfo>();
  const visit = (node: SyntaxNode) => {
    for (const c of children(node)) {
      if (c.name === 'ClassDefinition') readClass(c);
      else if (c.name === 'DecoratedStatement' || c.name === 'Body' || c.name === 'IfStatement') visit(c);
    }
  };
  const readClass = (cls: SyntaxNode) => {
    const nameNode = cls.getChild('VariableName');
    if (!nameNode) return;
    const decorated = cls.parent?.name === 'DecoratedStatement' ? cls.parent : undefined;
    const dataclass =
      !!decorated && children(decorated).some((d) => d.name === 'Decorator' && /\bdataclass\b/.test(source.slice(d.from, d.to)));
    const baseList = cls.getChild('ArgList');
    const bases = (baseList ? children(baseList) : [])
      .filter((b) => b.name === 'VariableName' || b.name === 'MemberExpression')
      .map((b) => lastName(source.slice(b.from, b.to)));
    const fields: FieldInfo[] = [];
    const body = cls.getChild('Body');
    for (const st of body ? children(body) : []) {
      if (st.name !== 'AssignStatement') continue;
      const parts = children(st);
      const typeDef = parts.find((p) => p.name === 'TypeDef');
      if (parts[0]?.name !== 'VariableName' || parts[1]?.name !== 'TypeDef' || !typeDef) continue;
      const type = source.slice(typeDef.from, typeDef.to).replace(/^:\s*/, '').trim();
      if (/^ClassVar\b|(^|\.)ClassVar\[/.test(type)) continue;
      const opAt = parts.findIndex((p) => p.name === 'AssignOp');
      const value = opAt >= 0 ? parts[opAt + 1] : undefined;
      let required = !value;
      let stringDefault = stringValue(source, value);
      if (value?.name === 'CallExpression' && /(^|\.)field$/.test(source.slice(value.firstChild!.from, value.firstChild!.to))) {
        const args = children(value.getChild('ArgList') ?? value);
        const kw = (k: string) =>
          args.findIndex((a, i) => a.name === 'VariableName' && source.slice(a.from, a.to) === k && args[i + 1]?.name === 'AssignOp');
        const d = kw('default');
        required = d < 0 && kw('default_factory') < 0;
        stringDefault = d >= 0 ? stringValue(source, args[d + 2]) : undefined;
      }
      fields.push({ name: source.slice(parts[0].from, parts[0].to), type, required, stringDefault });
    }
    classes.set(source.slice(nameNode.from, nameNode.to), { name: source.slice(nameNode.from, nameNode.to), bases, dataclass, fields });
  };
  visit(root);
  return classes;
}

/** Fields of a local class including its local bases (bases first); undefined when not local. */
function localFields(
  classes: Map<string, ClassInfo>,
  name: string,
  seen = new Set<string>(),
): { fields: FieldInfo[]; libraryBases: string[] } | undefined {
  const cls = classes.get(name);
  if (!cls || seen.has(name)) return undefined;
  seen.add(name);
  const fields: FieldInfo[] = [];
  const libraryBases: string[] = [];
  for (const b of cls.bases) {
    const inherited = localFields(classes, b, seen);
    if (inherited) {
      fields.push(...inherited.fields);
      libraryBases.push(...inherited.libraryBases);
    } else libraryBases.push(b);
  }
  for (const f of cls.fields) {
    const at = fields.findIndex((x) => x.name === f.name);
    if (at >= 0) fields.splice(at, 1);
    fields.push(f);
  }
  return { fields, libraryBases };
}

/** Library dataclass -> the fields it needs. */
function libraryNeeds(name: string): Array<{ name: string; type: string }> {
  if (TRAINING_CONFIGS.has(name)) return [{ name: 'output_dir', type: 'str' }];
  return [...(LIBRARY_NEEDS[name] ?? [])];
}

/** The dataclass names passed to each HfArgumentParser/TrlParser of the script. */
function parserClasses(source: string, idx: ScriptIndex): string[] {
  const out: string[] = [];
  for (const call of idx.calls) {
    if (!call.callee || !PARSERS.test(call.callee)) continue;
    const first = call.args.find((a) => a.kind === 'positional') ?? call.args.find((a) => a.name === 'dataclass_types');
    if (!first) continue;
    let text = source.slice(first.valueFrom, first.valueTo);
    // `TrlParser(dataclass_types)` (TRL's own scripts): the tuple assigned to that name.
    if (/^[A-Za-z_]\w*$/.test(text.trim())) text = assignedTuple(source, text.trim()) ?? text;
    for (const m of text.matchAll(/[A-Za-z_][\w.]*/g)) out.push(lastName(m[0]));
  }
  return [...new Set(out)];
}

/** The text of a `(A, B)`/`[A, B]` assigned to `name` anywhere in the script, else undefined. */
function assignedTuple(source: string, name: string): string | undefined {
  const re = new RegExp(`^[ \\t]*${name}\\s*=\\s*([([][^()[\\]]*[)\\]])`, 'm');
  return re.exec(source)?.[1];
}

/** String ids the script itself uses for models and datasets. */
function scriptIds(source: string, idx: ScriptIndex, classes: Map<string, ClassInfo>): { model?: string; dataset?: string } {
  const literalArg = (call: CallSite, keyword?: string) => {
    const a = keyword ? call.args.find((x) => x.name === keyword) : call.args.find((x) => x.kind === 'positional');
    if (!a) return undefined;
    const lit = readStringLiteral(source, a.valueFrom, a.valueTo);
    return lit?.plain && lit.to === a.valueTo ? lit.raw : undefined;
  };
  const looksLikeId = (s: string | undefined) => !!s && /^[A-Za-z0-9][\w.-]*(\/[\w.-]+)?$/.test(s);
  let model: string | undefined;
  let dataset: string | undefined;
  for (const cls of classes.values()) {
    for (const f of cls.fields) {
      if (!model && MODEL_NAME.test(f.name) && looksLikeId(f.stringDefault)) model = f.stringDefault;
      if (!dataset && DATASET_NAME.test(f.name) && looksLikeId(f.stringDefault) && !DATASET_BUILDERS.has(f.stringDefault!))
        dataset = f.stringDefault;
    }
  }
  for (const call of idx.calls) {
    const callee = call.callee ?? '';
    if (!model && /(^|\.)from_pretrained$/.test(callee)) {
      const id = literalArg(call) ?? literalArg(call, 'pretrained_model_name_or_path');
      if (looksLikeId(id)) model = id;
    }
    if (!dataset && /(^|\.)load_dataset$/.test(callee)) {
      const id = literalArg(call) ?? literalArg(call, 'path');
      if (looksLikeId(id) && !DATASET_BUILDERS.has(id!)) dataset = id;
    }
  }
  return { model, dataset };
}

/** A value for an argument, by its name, then its type annotation or argparse `type=`. */
function valueFor(name: string, type: string, ids: { model?: string; dataset?: string }): string {
  if (name === 'output_dir') return 'out';
  if (MODEL_NAME.test(name)) return ids.model ?? DEFAULT_MODEL;
  if (DATASET_NAME.test(name)) return ids.dataset ?? DEFAULT_DATASET;
  // An option naming a column: the conventional column (`text`/`label`), which the hub's datasets carry.
  if (/^dataset_text_field$|(^|_)text_(?:column|field)(_name)?$/.test(name)) return 'text';
  if (/(^|_)label_(?:column|field)(_name)?$/.test(name)) return 'label';
  // A data file option: a file of that split the hub synthesizes (JSON lines: the columns the script reads).
  const file = DATA_FILE_NAME.exec(name);
  if (file) return `${file[1] === 'valid' || file[1] === 'eval' ? 'validation' : file[1]}.json`;
  let t = type.replace(/\s+/g, '');
  for (;;) {
    const inner =
      /^(?:typing\.)?(?:Optional|List|list|Sequence|Tuple|tuple|Set|set)\[(.*)\]$/.exec(t) ??
      /^(.*)\|None$/.exec(t) ??
      /^(?:typing\.)?Union\[(.*?),None\]$/.exec(t);
    if (!inner) break;
    t = inner[1].split(',')[0];
  }
  const literal = /^(?:typing\.)?Literal\[(['"])(.*?)\1/.exec(t);
  if (literal) return literal[2];
  if (/^(int|builtins\.int)$/.test(t)) return '1';
  if (/^(float|builtins\.float)$/.test(t)) return '0.1';
  if (/^(bool|builtins\.bool|str2bool|string_to_bool)$/.test(t)) return 'false';
  return 'x';
}

function fromDataclassParsers(
  source: string,
  idx: ScriptIndex,
  classes: Map<string, ClassInfo>,
  ids: { model?: string; dataset?: string },
): RequiredArgument[] {
  const out: RequiredArgument[] = [];
  const add = (name: string, type: string, from: string) => {
    if (!out.some((r) => r.name === name)) out.push({ name, value: valueFor(name, type, ids), option: true, source: from });
  };
  for (const cls of parserClasses(source, idx)) {
    const local = localFields(classes, cls);
    if (!local) {
      for (const need of libraryNeeds(cls)) add(need.name, need.type, cls);
      continue;
    }
    for (const base of local.libraryBases) {
      for (const need of libraryNeeds(base)) if (!local.fields.some((f) => f.name === need.name)) add(need.name, need.type, base);
    }
    for (const f of local.fields) if (f.required) add(f.name, f.type, cls);
  }
  return out;
}

function fromArgparse(source: string, idx: ScriptIndex, ids: { model?: string; dataset?: string }): RequiredArgument[] | undefined {
  const calls = idx.calls.filter((c) => c.method?.name === 'add_argument');
  if (calls.length === 0) return undefined;
  const out: RequiredArgument[] = [];
  for (const call of calls) {
    const flags = call.args
      .filter((a) => a.kind === 'positional')
      .map((a) => readStringLiteral(source, a.valueFrom, a.valueTo))
      .filter((l) => l?.plain)
      .map((l) => l!.raw);
    if (flags.length === 0) continue;
    const kw = (k: string) => {
      const a = call.args.find((x) => x.name === k);
      return a ? source.slice(a.valueFrom, a.valueTo).trim() : undefined;
    };
    const positional = !flags[0].startsWith('-');
    const flag = flags.find((f) => f.startsWith('--')) ?? flags[0];
    const name = flag.replace(/^-+/, '').replace(/-/g, '_');
    const action = kw('action');
    const nargs = kw('nargs');
    const hasDefault = kw('default') !== undefined;
    let required: boolean;
    if (positional) required = !hasDefault && !/^['"][?*]['"]$/.test(nargs ?? '');
    else
      required =
        kw('required') === 'True' ||
        (!hasDefault && !action && (MODEL_NAME.test(name) || DATASET_NAME.test(name) || name === 'output_dir'));
    if (!required || out.some((r) => r.name === name)) continue;
    const choices = kw('choices');
    const firstChoice = choices ? /^[[(]\s*(?:(['"])(.*?)\1|(-?[\d.]+))/.exec(choices) : null;
    const value = firstChoice ? (firstChoice[2] ?? firstChoice[3]) : valueFor(name, kw('type') ?? 'str', ids);
    out.push({ name: positional ? flags[0] : flag.replace(/^-+/, ''), value, option: !positional, source: 'argparse' });
  }
  return out;
}

function fromSysArgv(idx: ScriptIndex): RequiredArgument[] {
  let n = 0;
  for (const s of idx.subscripts) if (s.object === 'sys.argv' && s.integer !== undefined) n = Math.max(n, s.integer);
  return Array.from({ length: n }, (_, i) => ({ name: `argv[${i + 1}]`, value: 'x', option: false, source: 'sys.argv' }));
}

/** The arguments `script` needs to start (see the header), with where each comes from. */
export function deriveScriptArgs(script: string): DerivedArgs {
  const parsed = parsePython(script);
  const idx = indexScript(parsed);
  const classes = readClasses(script, parsed.tree.topNode);
  const ids = scriptIds(script, idx, classes);
  let style: ArgStyle = 'none';
  let required: RequiredArgument[];
  if (idx.calls.some((c) => c.callee && PARSERS.test(c.callee))) {
    style = 'dataclass-parser';
    required = fromDataclassParsers(script, idx, classes, ids);
  } else {
    const argparse = fromArgparse(script, idx, ids);
    if (argparse) {
      style = 'argparse';
      required = argparse;
    } else {
      required = fromSysArgv(idx);
      if (required.length) style = 'sys.argv';
    }
  }
  // Positional values first, in their order, then the options.
  const args = [
    ...required.filter((r) => !r.option).map((r) => r.value),
    ...required.filter((r) => r.option).flatMap((r) => [`--${r.name}`, r.value]),
  ];
  return { style, required, args };
}

/**
 * A value for one argument the script asks for by name (an error such as argparse's "the following
 * arguments are required: --task_name"): the same choice as the derivation makes, with the script's
 * own model and dataset ids.
 */
export function valueForArgument(script: string, name: string, type = 'str'): string {
  const parsed = parsePython(script);
  const ids = scriptIds(script, indexScript(parsed), readClasses(script, parsed.tree.topNode));
  return valueFor(name, type, ids);
}

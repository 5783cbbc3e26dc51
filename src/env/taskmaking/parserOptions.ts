// The options a script's own parser accepts, read from its `--help` (argparse, HfArgumentParser and
// TrlParser all print one and exit 0 before any training). Rules only set an option the parser has.

/** Normalised name (`_` for `-`) -> the spelling the parser accepts (`model-name` stays as written). */
export type ParserOptions = ReadonlyMap<string, string>;

const norm = (n: string) => n.replace(/-/g, '_');

/** The `--name` options of a help text. */
export function parseHelpOptions(help: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const m of help.matchAll(/(?:^|[\s,[])--([A-Za-z][\w.-]*[\w])/g))
    if (!out.has(norm(m[1])) || m[1].includes('_')) out.set(norm(m[1]), m[1]);
  return out;
}

/**
 * The options of a help text that take no value (argparse `store_true`/`store_false` flags), normalised: the
 * usage line shows them as `[--name]` where a valued option is `[--name NAME]` (HfArgumentParser's booleans,
 * `[--name [NAME]]`, take one).
 */
export function parseHelpFlags(help: string): Set<string> {
  const out = new Set<string>();
  for (const m of help.matchAll(/\[--([A-Za-z][\w.-]*[\w])\]/g)) out.add(norm(m[1]));
  return out;
}

/** The spelling of the first of `names` the parser has, else undefined. */
export function firstOption(options: ParserOptions | undefined, names: readonly string[]): string | undefined {
  if (!options) return undefined;
  for (const n of names) {
    const spelled = options.get(norm(n));
    if (spelled) return spelled;
  }
  return undefined;
}

/**
 * Each option's default as its help prints it (`(default: EleutherAI/pythia-160m)`: HfArgumentParser and
 * argparse's ArgumentDefaultsHelpFormatter), normalised name -> value; wrapped help lines are joined. A default
 * of a library's own config dataclass (trl's PPOConfig.sft_model_path) is seen nowhere else.
 */
export function parseHelpDefaults(help: string): Map<string, string> {
  const out = new Map<string, string>();
  // An option's entry starts at a line indented with its flags (`  --name NAME, --name-alias NAME`).
  const entries = help.split(/\n(?=\s{1,8}(?:-\w[\w-]*,\s*)?--[A-Za-z])/);
  for (const entry of entries) {
    const head = /^\s*(?:-\w[\w-]*,\s*)?--([A-Za-z][\w.-]*[\w])/.exec(entry);
    const value = /\(default:\s+([^()\s]+)\)/.exec(entry.replace(/\s+/g, ' '));
    if (head && value && !out.has(norm(head[1]))) out.set(norm(head[1]), value[1]);
  }
  return out;
}

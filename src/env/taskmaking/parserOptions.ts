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

// Edits of an argv (the args after train.py): set an option's value, drop an option with its
// values. `--name value` and `--name=value` are both understood; a flag's value is the following
// token unless that one is an option itself.

const isOption = (t: string) => /^--?[A-Za-z]/.test(t);

/** Index of `--name` (or `--name=…`) in args, else -1. */
export function optionIndex(args: readonly string[], name: string): number {
  return args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
}

/** The option's current value (`true` for a bare flag), else undefined. */
export function optionValue(args: readonly string[], name: string): string | undefined {
  const i = optionIndex(args, name);
  if (i < 0) return undefined;
  const a = args[i];
  if (a.includes('=')) return a.slice(a.indexOf('=') + 1);
  const next = args[i + 1];
  return next !== undefined && !isOption(next) ? next : 'true';
}

/** Args without `--name` and its values. */
export function removeOption(args: readonly string[], name: string): string[] {
  const out = [...args];
  const i = optionIndex(out, name);
  if (i < 0) return out;
  let n = 1;
  if (!out[i].includes('=')) while (i + n < out.length && !isOption(out[i + n])) n++;
  out.splice(i, n);
  return out;
}

/** Args with `--name value` (replacing any earlier value). */
export function setOption(args: readonly string[], name: string, value: string): string[] {
  const i = optionIndex(args, name);
  if (i < 0) return [...args, `--${name}`, value];
  const out = removeOption(args, name);
  out.splice(i, 0, `--${name}`, value);
  return out;
}

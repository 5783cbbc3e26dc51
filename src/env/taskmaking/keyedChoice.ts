// A placeholder value the derived args gave an option (`--model_type x`) that the script uses as a
// key of its own dict (`MODEL_CLASSES[args.model_type]` -> `KeyError: 'x'`): the dict's literal keys
// are the real choices. For a model-type key, the choice is one the offline hub has a model of, and
// the script's model option follows it (a `bert` key with a bert model, not gpt2's tokenizer files).
import { baseHubModelIds, resolveModel } from '../hub/modelTable';

/** The top-level string keys of the dict literal assigned to `name` (module level or in a function), in order. */
export function dictLiteralKeys(script: string, name: string): string[] {
  const start = new RegExp(`^[ \\t]*${name}\\s*(?::[^=\\n]+)?=\\s*\\{`, 'm').exec(script);
  if (!start) return [];
  const keys: string[] = [];
  let depth = 1;
  let expectKey = true;
  for (let i = start.index + start[0].length; i < script.length && depth > 0; i++) {
    const c = script[i];
    if (c === '"' || c === "'") {
      const end = script.indexOf(c, i + 1);
      if (end < 0) break;
      if (depth === 1 && expectKey && /^\s*:/.test(script.slice(end + 1, end + 40))) keys.push(script.slice(i + 1, end));
      i = end;
      expectKey = false;
    } else if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
    else if (c === ',' && depth === 1) expectKey = true;
    else if (c === '#') i = script.indexOf('\n', i) < 0 ? script.length : script.indexOf('\n', i) - 1;
  }
  return [...new Set(keys)];
}

/** The dicts the script subscripts with option `option` (`X[args.option]`, `X[self.args.option]`). */
export function dictsKeyedBy(script: string, option: string): string[] {
  return [
    ...new Set([...script.matchAll(new RegExp(`\\b([A-Za-z_]\\w*)\\[\\s*(?:[A-Za-z_]\\w*\\.)+${option}\\s*\\]`, 'g'))].map((m) => m[1])),
  ];
}

export const MODEL_TYPE_OPTION = /(^|_)(model_type|model_class|arch|architecture|model_family)$/;

export interface KeyedChoice {
  option: string;
  value: string;
  /** The model option and the base-hub model of the chosen type, when the choice is a model type. */
  model?: { option: string; id: string };
}

/**
 * The choice for an option whose value `bad` the script used as a missing key: the first literal key of
 * the dict it subscripts; a model-type option takes the first key the base hub has a model of.
 */
export function keyedChoice(
  script: string,
  args: readonly string[],
  bad: string,
  modelOptions: readonly string[],
): KeyedChoice | undefined {
  for (let i = 0; i < args.length - 1; i++) {
    if (!args[i].startsWith('--') || args[i + 1] !== bad) continue;
    const option = args[i].slice(2);
    const keys = dictsKeyedBy(script, option.replace(/-/g, '_')).flatMap((d) => dictLiteralKeys(script, d));
    if (!keys.length) continue;
    if (MODEL_TYPE_OPTION.test(option.replace(/-/g, '_'))) {
      const typed = baseHubModelIds().map((id) => ({ id, type: resolveModel(id).model_type }));
      const key = keys.find((k) => typed.some((t) => t.type === k));
      const modelOption = modelOptions.find((o) => o !== option && args.includes(`--${o}`));
      if (key)
        return {
          option,
          value: key,
          ...(modelOption ? { model: { option: modelOption, id: typed.find((t) => t.type === key)!.id } } : {}),
        };
    }
    return { option, value: keys[0] };
  }
  return undefined;
}

// Whether a `KeyError: 'test'` is a missing SPLIT (a DatasetDict subscript, `raw_datasets["test"]`)
// or a missing column (a row or a Dataset subscript): the subscripted value's provenance in the script.
// A dict's KeyError ends its traceback at the script's own line, which names the subscripted value.

/** How the script made the DatasetDict a subscript reads: the hub can add a split only to a dataset it loads. */
export type DictProvenance = 'load_dataset' | 'built';

/** The text of the call whose opening paren is at `open` (balanced parens; strings are not parsed: good enough for arguments). */
function callText(source: string, open: number): string {
  let depth = 0;
  for (let i = open; i < source.length; i++) {
    if (source[i] === '(') depth++;
    else if (source[i] === ')' && --depth === 0) return source.slice(open, i + 1);
  }
  return source.slice(open);
}

const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * How `variable` was assigned a DatasetDict in the script: `load_dataset(...)` without `split=`
 * (a dict of its splits), or one the script builds (`DatasetDict(...)`, `.train_test_split(...)`);
 * undefined when no assignment makes it one (a Dataset, a row, a plain dict).
 */
export function datasetDictProvenance(script: string, variable: string): DictProvenance | undefined {
  const assign = new RegExp(`^[ \\t]*${escape(variable)}[ \\t]*(?::[^=\\n]+)?=(?!=)[ \\t]*([^\\n]*)`, 'gm');
  let found: DictProvenance | undefined;
  for (const m of script.matchAll(assign)) {
    const rhsAt = m.index + m[0].length - m[1].length;
    const load = /^(?:[\w.]+\.)?load_dataset\s*\(/.exec(m[1]);
    if (load) {
      const call = callText(script, rhsAt + load[0].length - 1);
      // `load_dataset(...)["train"]` or with split= is one Dataset, not the dict.
      const after = script.slice(rhsAt + load[0].length - 1 + call.length).trimStart();
      if (!/\bsplit\s*=/.test(call) && !after.startsWith('[')) return 'load_dataset';
      continue;
    }
    if (/^(?:[\w.]+\.)?DatasetDict\s*\(|\.train_test_split\s*\(/.test(m[1])) found ??= 'built';
  }
  return found;
}

/**
 * The subscript `X["key"]` of the script's line the traceback ends on (the line shown just above the
 * KeyError), else any subscript of `key` in the script whose value is a DatasetDict: the variable
 * and how it was made; undefined when `key` is not read from a DatasetDict.
 */
export function splitSubscript(script: string, key: string, output: string): { variable: string; provenance: DictProvenance } | undefined {
  const sub = new RegExp(`([A-Za-z_][\\w.]*)\\[\\s*["']${escape(key)}["']\\s*\\]`, 'g');
  const lines = output.split('\n').filter((l) => l.trim() && !/^\s*[~^]+\s*$/.test(l));
  let at = lines.length - 1;
  while (at >= 0 && !lines[at].startsWith('KeyError:')) at--;
  const shown = at > 0 ? [...lines[at - 1].matchAll(sub)].map((m) => m[1]) : [];
  const candidates = shown.length ? shown : [...script.matchAll(sub)].map((m) => m[1]);
  for (const variable of new Set(candidates)) {
    const provenance = datasetDictProvenance(script, variable);
    if (provenance) return { variable, provenance };
  }
  return undefined;
}

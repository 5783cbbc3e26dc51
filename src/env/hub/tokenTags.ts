// Per-word tags (kind `tags`) as real NER datasets have them: one tag per word of the row's `tokens`,
// drawn from IOB names (conll2003's), in valid IOB order (an `I-X` only after `B-X`/`I-X`) because
// scripts turn them into spans. make_hub_items.py (`iob_tags`) draws them the same way for hub datasets.

/** conll2003's NER names (https://huggingface.co/datasets/eriktks/conll2003, `ner_tags`). */
export const IOB_NAMES = ['O', 'B-PER', 'I-PER', 'B-ORG', 'I-ORG', 'B-LOC', 'I-LOC', 'B-MISC', 'I-MISC'] as const;

/**
 * `n` tags from `names` (default IOB_NAMES): spans `B-X I-X…` for each X that has both names, other names
 * (`O`, or a custom set's plain names) as single tags. Deterministic for a given `r`.
 */
export function iobTags(n: number, r: () => number, names: readonly string[] = IOB_NAMES): string[] {
  const types = names.filter((t) => t.startsWith('B-') && names.includes(`I-${t.slice(2)}`)).map((t) => t.slice(2));
  const singles = names.filter((t) => !t.startsWith('I-') && !(t.startsWith('B-') && types.includes(t.slice(2))));
  const outside = names.includes('O') ? ['O'] : singles;
  const out: string[] = [];
  let open: string | undefined;
  for (let i = 0; i < n; i++) {
    const x = r();
    if (open !== undefined && x < 0.3) out.push(`I-${open}`);
    else if (types.length && (x < 0.55 || outside.length === 0)) {
      open = types[Math.floor(r() * types.length)];
      out.push(`B-${open}`);
    } else {
      open = undefined;
      out.push(outside.length ? outside[Math.floor(r() * outside.length)] : names[Math.floor(r() * names.length)]);
    }
  }
  return out;
}

/** The column whose words per-word columns align with (the first `tokens` column), if any. */
export function wordsColumn(columns: Readonly<Record<string, string>>): string | undefined {
  return Object.keys(columns).find((c) => columns[c] === 'tokens');
}

/** Whether a column of `kind` gets one value per word when the row has words: tags, and int lists beside words. */
export const perWord = (kind: string): boolean => kind === 'tags' || kind === 'ints';

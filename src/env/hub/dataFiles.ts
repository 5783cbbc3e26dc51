// Local data files a script reads (`load_dataset("json", data_files="train.jsonl")`, `--train_file
// x.csv`): their synthetic content, for a task's `files`. Same columns as a hub dataset need, same
// word lists everywhere, deterministic (a task's files are part of its identity).
import type { ColumnKind, DatasetNeed } from './needs';
import { synthesizeSquadFile } from './fileLayouts';
import { nestedValue } from './nestedShapes';
import { iobTags, perWord, wordsColumn } from './tokenTags';

export class DataFileError extends Error {
  override readonly name = 'DataFileError';
}

const WORDS = [
  'the',
  'film',
  'story',
  'city',
  'council',
  'market',
  'river',
  'school',
  'report',
  'team',
  'great',
  'dull',
  'announced',
  'opened',
  'research',
  'music',
  'with',
  'and',
  'a',
  'of',
];

function rng(seed: string): () => number {
  let h = 2166136261;
  for (const c of seed) h = Math.imul(h ^ c.charCodeAt(0), 16777619) >>> 0;
  return () => {
    h = (Math.imul(h ^ (h >>> 15), 2246822507) + 0x9e3779b9) >>> 0;
    return h / 2 ** 32;
  };
}

function sentence(r: () => number): string {
  const n = 5 + Math.floor(r() * 8);
  const w = Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
  return w[0].toUpperCase() + w.slice(1) + '.';
}

/** `length`: the row's word count, for a per-word column of a row with words (tokenTags.ts). */
function value(kind: ColumnKind, r: () => number, labels: string[] | undefined, length?: number): unknown {
  switch (kind) {
    case 'string':
      return sentence(r);
    case 'int':
      return Math.floor(r() * 5);
    case 'float':
      return Math.round(r() * 1e4) / 1e4;
    case 'bool':
      return r() < 0.5;
    case 'label':
      return Math.floor(r() * (labels?.length ?? 2));
    case 'strings':
    case 'tokens':
      return sentence(r).replace(/\.$/, '').split(' ');
    case 'ints':
      return Array.from({ length: length ?? 6 }, () => Math.floor(r() * 5));
    case 'tags':
      // A data file has no ClassLabel: real NER files carry the tag strings (`"B-PER"`, `"O"`).
      return iobTags(length ?? 6, r, labels);
    case 'floats':
      return Array.from({ length: 4 }, () => Math.round(r() * 1e4) / 1e4);
    case 'bools':
      return Array.from({ length: 3 }, () => r() < 0.5);
    case 'messages':
      return [
        { role: 'user', content: sentence(r) + '?' },
        { role: 'assistant', content: sentence(r) },
      ];
    default:
      throw new DataFileError(`a ${kind} column cannot be written into a text data file`);
  }
}

/** The text of a synthetic local data file for `need` (json: one array; jsonl; csv; text: one line per row). */
export function synthesizeDataFile(need: DatasetNeed, rows = 64): string {
  const r = rng(need.path);
  if (need.layout === 'squad' && need.format === 'json')
    return synthesizeSquadFile(
      () => sentence(r),
      (n) => Math.floor(r() * n),
    );
  const columns = need.columns && Object.keys(need.columns).length ? need.columns : { text: 'string' as const, label: 'label' as const };
  const words = wordsColumn(columns);
  const aligned = (k: ColumnKind) => words !== undefined && perWord(k);
  const records = Array.from({ length: rows }, () => {
    const row: Record<string, unknown> = {};
    for (const [c, k] of Object.entries(columns)) {
      if (aligned(k)) continue;
      const shape = need.shapes?.[c];
      row[c] = k === 'nested' && shape ? nestedValue(shape, r, () => sentence(r)) : value(k, r, need.labels?.[c]);
    }
    // Per-word columns after the words, one value per word (run_ner-style scripts index `labels[word_idx]`).
    if (words !== undefined)
      for (const [c, k] of Object.entries(columns))
        if (perWord(k)) row[c] = value(k, r, need.labels?.[c], (row[words] as unknown[]).length);
    return Object.fromEntries(Object.keys(columns).map((c) => [c, row[c]]));
  });
  switch (need.format) {
    case 'json':
      return JSON.stringify(records, null, 1) + '\n';
    case 'jsonl':
      return records.map((x) => JSON.stringify(x)).join('\n') + '\n';
    case 'csv': {
      const cols = Object.keys(columns);
      if (cols.some((c) => !['string', 'int', 'float', 'bool', 'label'].includes(columns[c])))
        throw new DataFileError(`${need.path}: a csv file holds only scalar columns (asked: ${JSON.stringify(columns)})`);
      const esc = (v: unknown) => (typeof v === 'string' ? `"${v.replace(/"/g, '""')}"` : String(v));
      return [cols.join(','), ...records.map((x) => cols.map((c) => esc(x[c])).join(','))].join('\n') + '\n';
    }
    case 'text':
      return records.map(() => sentence(r)).join('\n') + '\n';
    case 'parquet':
      throw new DataFileError(
        `${need.path}: parquet is binary; a task's files are text, so ForgeEnv cannot write it (use a json or csv file)`,
      );
    default:
      throw new DataFileError(`${need.path} is a hub dataset, not a local data file`);
  }
}

/** The files to add to a run for the data-file needs the task's own files do not provide. */
export function missingDataFiles(needs: readonly DatasetNeed[], files: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const n of needs) {
    // A parquet file is binary; a saved (`disk`) dataset is a folder the hub builds (diskDatasets.ts).
    if (!n.format || files[n.path] !== undefined || n.format === 'parquet' || n.format === 'disk') continue;
    out[n.path] = synthesizeDataFile(n, n.rows);
  }
  return out;
}

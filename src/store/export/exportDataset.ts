// Runs one export: select, shape, deduplicate, and write the JSONL plus its dataset card, both
// atomically (a failed or interrupted export leaves any previous files untouched).
import { existsSync, realpathSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../env/prompts';
import { AtomicFileWriter, writeFileAtomic } from '../atomicWrite';
import type { StoreProblem } from '../jsonlFile';
import { DATASET_FILES } from '../records';
import { CARD_MARKER, renderDatasetCard } from './card';
import { FORMATS, type ExportFormat, type PromptStyle } from './formats';
import { DEFAULT_FILTERS, selectDemonstrations, type SelectionFilters, type SelectionStats } from './selection';

export interface ExportOptions {
  format: ExportFormat;
  dir: string;
  out: string;
  filters?: Partial<SelectionFilters>;
  style?: PromptStyle;
  /** Injectable for reproducible cards (golden tests). */
  now?: Date;
  /** Default: REPAIR_AGENT_SYSTEM_PROMPT from src/env/prompts.ts. */
  systemPrompt?: string;
}

export interface ExportResult {
  out: string;
  card: string;
  rows: number;
  deduplicated: number;
  stats: SelectionStats;
  filters: SelectionFilters;
  rowsByPrimitive: Map<string, number>;
  problems: StoreProblem[];
  unmatchedPrimitives: string[];
}

/** A clear, user-facing refusal (bad folder, unsafe output path); nothing was written. */
export class ExportError extends Error {
  override name = 'ExportError';
}

function canonicalPath(p: string): string {
  // realpath of the nearest existing ancestor, so symlinked folders compare equal.
  let dir = resolve(p);
  const rest: string[] = [];
  while (!existsSync(dir) && dirname(dir) !== dir) {
    rest.unshift(basename(dir));
    dir = dirname(dir);
  }
  return join(realpathSync(dir), ...rest);
}

async function checkPaths(dir: string, out: string): Promise<string> {
  const st = await stat(dir).catch(() => undefined);
  if (!st) throw new ExportError(`Dataset folder ${dir} does not exist`);
  if (!st.isDirectory()) throw new ExportError(`${dir} is not a folder`);
  const outDir = canonicalPath(dirname(out));
  const dataDir = canonicalPath(dir);
  const timelines = join(dataDir, DATASET_FILES.timelinesDir);
  if (outDir === dataDir || outDir === timelines || outDir.startsWith(timelines + sep)) {
    throw new ExportError(`--out ${out} is inside the dataset folder itself; write exports to another folder (e.g. ${join(dir, 'exports', basename(out))}) so source files are never overwritten`);
  }
  if ((await stat(out).catch(() => undefined))?.isDirectory()) throw new ExportError(`--out ${out} is a folder; give a file name such as ${join(out, 'train.jsonl')}`);
  const card = join(dirname(out), 'README.md');
  const existing = await readFile(card, 'utf8').catch(() => undefined);
  if (existing !== undefined && !existing.includes(CARD_MARKER)) {
    throw new ExportError(`${card} exists and is not a ForgeEnv export card; choose another --out folder so it is not overwritten`);
  }
  return card;
}

export async function exportDataset(opts: ExportOptions): Promise<ExportResult> {
  const spec = FORMATS[opts.format];
  const filters: SelectionFilters = { ...DEFAULT_FILTERS, ...opts.filters };
  const style = opts.style ?? 'standard';
  const systemPrompt = opts.systemPrompt ?? REPAIR_AGENT_SYSTEM_PROMPT;
  const cardPath = await checkPaths(opts.dir, opts.out);

  const writer = await AtomicFileWriter.create(opts.out);
  const keys = new Set<string>();
  const rowsByPrimitive = new Map<string, number>();
  let rows = 0;
  let deduplicated = 0;
  let selection;
  try {
    selection = await selectDemonstrations(opts.dir, filters, async (rec) => {
      if (spec.dedupeKey) {
        const key = spec.dedupeKey(rec);
        if (keys.has(key)) {
          deduplicated++;
          return;
        }
        keys.add(key);
      }
      rows++;
      rowsByPrimitive.set(rec.primitive_type, (rowsByPrimitive.get(rec.primitive_type) ?? 0) + 1);
      await writer.write(JSON.stringify(spec.row(rec, systemPrompt, style)) + '\n');
    });
    await writer.commit();
  } catch (err) {
    await writer.abort();
    throw err;
  }
  const card = renderDatasetCard({
    format: opts.format,
    style,
    dataFile: basename(opts.out),
    source: opts.dir,
    date: opts.now ?? new Date(),
    filters,
    stats: selection.stats,
    deduplicated,
    rows,
    rowsByPrimitive,
    problems: selection.problems,
  });
  await writeFileAtomic(cardPath, card);
  return {
    out: opts.out,
    card: cardPath,
    rows,
    deduplicated,
    stats: selection.stats,
    filters,
    rowsByPrimitive,
    problems: selection.problems,
    unmatchedPrimitives: selection.unmatchedPrimitives,
  };
}

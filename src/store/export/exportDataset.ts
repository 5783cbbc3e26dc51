// Runs one export: select, shape, deduplicate, and write the JSONL plus its dataset card, both
// atomically (a failed or interrupted export leaves any previous files untouched).
import { existsSync, realpathSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { readFile, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../env/prompts';
import { AtomicFileWriter, writeFileAtomic } from '../atomicWrite';
import { readLines, type StoreProblem } from '../jsonlFile';
import { DATASET_FILES } from '../records';
import { CARD_MARKER, cardDataFile, renderDatasetCard } from './card';
import { FORMATS, type CompletionForm, type ExportFormat, type PromptStyle, type RowContext } from './formats';
import { DEFAULT_FILTERS, selectDemonstrations, SelectionFiltersSchema, type SelectionFilters, type SelectionStats } from './selection';
import { formatZodError } from '../../env/schemas';

export interface ExportOptions {
  format: ExportFormat;
  dir: string;
  out: string;
  /** Validated with SelectionFiltersSchema; unset fields take the defaults. */
  filters?: Partial<SelectionFilters>;
  style?: PromptStyle;
  /** trl-sft only; default `raw` (the stored diff). */
  completion?: CompletionForm;
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
  // One card per folder: a card is only ever replaced together with the data file it describes.
  const describes = existing === undefined ? undefined : cardDataFile(existing);
  if (describes !== undefined && describes !== basename(out)) {
    const own = join(dirname(out), basename(out).replace(/\.[^.]*$/, ''), basename(out));
    throw new ExportError(`${card} is the dataset card of ${describes}; exporting ${basename(out)} beside it would replace that card. Export into a folder of its own (e.g. ${own}), or re-export ${describes}.`);
  }
  return card;
}

function stagingPathFor(out: string): string {
  return join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.stage`);
}

export async function exportDataset(opts: ExportOptions): Promise<ExportResult> {
  const spec = FORMATS[opts.format];
  const parsedFilters = SelectionFiltersSchema.safeParse({ ...DEFAULT_FILTERS, ...opts.filters });
  if (!parsedFilters.success) throw new ExportError(`Invalid export filters: ${formatZodError(parsedFilters.error)}`);
  const filters = parsedFilters.data;
  const style = opts.style ?? 'standard';
  const completion = opts.completion ?? 'raw';
  if (completion !== 'raw' && opts.format !== 'trl-sft') throw new ExportError('--completion applies to trl-sft only');
  const ctx: RowContext = { systemPrompt: opts.systemPrompt ?? REPAIR_AGENT_SYSTEM_PROMPT, style, completion };
  const cardPath = await checkPaths(opts.dir, opts.out);

  // Pass 1 shapes every candidate row into a staging file (one line each, in candidate order) and
  // keeps only its dedupe key and primitive in memory; once supersession is known, pass 2 copies
  // the selected lines without parsing them again.
  const stagingPath = stagingPathFor(opts.out);
  const keys: string[] = [];
  const prims: string[] = [];
  const rowsByPrimitive = new Map<string, number>();
  let rows = 0;
  let deduplicated = 0;
  let selection;
  try {
    const staging = await AtomicFileWriter.create(stagingPath, { durable: false });
    try {
      selection = await selectDemonstrations(opts.dir, filters, async (rec) => {
        keys.push(spec.dedupeKey ? spec.dedupeKey(rec) : '');
        prims.push(rec.primitive_type);
        await staging.write(JSON.stringify(spec.row(rec, ctx)) + '\n');
      });
      await staging.commit();
    } catch (err) {
      await staging.abort();
      throw err;
    }
    const writer = await AtomicFileWriter.create(opts.out);
    try {
      const seenKeys = new Set<string>();
      let k = 0;
      for await (const raw of readLines(stagingPath)) {
        const index = k++;
        if ('tooLong' in raw) throw new Error(`staged row ${index + 1} is unexpectedly long`);
        if (!selection.isSelected(index)) continue;
        if (spec.dedupeKey) {
          if (seenKeys.has(keys[index]!)) {
            deduplicated++;
            continue;
          }
          seenKeys.add(keys[index]!);
        }
        rows++;
        rowsByPrimitive.set(prims[index]!, (rowsByPrimitive.get(prims[index]!) ?? 0) + 1);
        await writer.write(raw.text + '\n');
      }
      if (k !== keys.length) throw new Error(`staging file ${stagingPath} has ${k} rows, expected ${keys.length}`);
      await writer.commit();
    } catch (err) {
      await writer.abort();
      throw err;
    }
  } finally {
    await unlink(stagingPath).catch(() => undefined);
  }
  const card = renderDatasetCard({
    format: opts.format,
    style,
    completion,
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

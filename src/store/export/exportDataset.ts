// Runs one export: select, shape, deduplicate, and write the JSONL plus its dataset card. A full
// export writes both atomically (a failed or interrupted export leaves any previous files
// untouched). An incremental one (exportIndex.ts) appends rows to the file the last export wrote
// and fsyncs; if it is interrupted, the file no longer matches the index and the next export is full.
import { existsSync, realpathSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, stat, unlink, type FileHandle } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../env/episode/prompts';
import { acquireDirLock } from '../../env/dirLock';
import { AtomicFileWriter, writeFileAtomic } from '../atomicWrite';
import { key28 } from '../columns';
import { demonstrationEntry } from '../datasetStore';
import { addLatestReview, resolveRows, scanFirst, updateFile, type LatestReviews } from '../incremental';
import { parseJsonlLine, readLines, type StoreProblem } from '../jsonlFile';
import {
  DATASET_FILES,
  foreignSideRecord,
  REVIEW_SCHEMA,
  ReviewRecordSchema,
  type DemonstrationRecord,
  type ReviewRecord,
} from '../records';
import { CARD_MARKER, cardDataFile, renderDatasetCard } from './card';
import {
  clearExportIndex,
  emptyExportState,
  exportKey,
  exportLockPath,
  loadExportState,
  outputFingerprint,
  saveExportState,
  sameOutput,
  type ExportColumns,
  type ExportState,
} from './exportIndex';
import { FORMATS, type CompletionForm, type ExportFormat, type FormatSpec, type PromptStyle, type RowContext } from './formats';
import {
  baseCode,
  DEFAULT_FILTERS,
  PASS,
  selectLines,
  SelectionFiltersSchema,
  type Selection,
  type SelectionFilters,
  type SelectionStats,
} from './selection';
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
  /** Default: REPAIR_AGENT_SYSTEM_PROMPT from src/env/episode/prompts.ts. */
  systemPrompt?: string;
  /** false: a full export even if rows could be appended (the export index is rebuilt). Default true. */
  incremental?: boolean;
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
  /** `appended`: only rows of lines appended since the last export to this file were added to it. */
  mode: 'full' | 'appended';
  /** Source lines parsed by this export (after N appends to an indexed export: N). */
  parsedLines: number;
  /** trl-kto: rows labelled true (verified repairs) and false, over the whole file. */
  labels?: LabelCounts;
}

export interface LabelCounts {
  positive: number;
  negative: number;
}

/** The label counts of a written trl-kto file (all of it, appended rows included): TRL's KTO wants them roughly balanced or weighted. */
async function countLabels(file: string): Promise<LabelCounts> {
  const counts: LabelCounts = { positive: 0, negative: 0 };
  for await (const line of readLines(file)) {
    if (!('text' in line) || line.text.trim() === '') continue;
    const label = (JSON.parse(line.text) as { label?: unknown }).label;
    if (label === true) counts.positive++;
    else if (label === false) counts.negative++;
  }
  return counts;
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
    throw new ExportError(
      `--out ${out} is inside the dataset folder itself; write exports to another folder (e.g. ${join(dir, 'exports', basename(out))}) so source files are never overwritten`,
    );
  }
  if ((await stat(out).catch(() => undefined))?.isDirectory())
    throw new ExportError(`--out ${out} is a folder; give a file name such as ${join(out, 'train.jsonl')}`);
  const card = join(dirname(out), 'README.md');
  const existing = await readFile(card, 'utf8').catch(() => undefined);
  if (existing !== undefined && !existing.includes(CARD_MARKER)) {
    throw new ExportError(`${card} exists and is not a ForgeEnv export card; choose another --out folder so it is not overwritten`);
  }
  // One card per folder: a card is only ever replaced together with the data file it describes.
  const describes = existing === undefined ? undefined : cardDataFile(existing);
  if (describes !== undefined && describes !== basename(out)) {
    const own = join(dirname(out), basename(out).replace(/\.[^.]*$/, ''), basename(out));
    throw new ExportError(
      `${card} is the dataset card of ${describes}; exporting ${basename(out)} beside it would replace that card. Export into a folder of its own (e.g. ${own}), or re-export ${describes}.`,
    );
  }
  return card;
}

const reviewLine = (raw: string, line: number, terminated: boolean, file: string) =>
  parseJsonlLine(raw, line, terminated, ReviewRecordSchema, {
    what: 'review',
    foreign: foreignSideRecord('review', REVIEW_SCHEMA),
    displayPath: file,
  });

function stagingPathFor(out: string): string {
  return join(dirname(out), `.${basename(out)}.${process.pid}.${randomBytes(4).toString('hex')}.stage`);
}

/** Appends to the output in large writes, then fsyncs (the incremental path; a full export uses AtomicFileWriter). */
class AppendWriter {
  private pending: Buffer[] = [];
  private size = 0;
  private constructor(private readonly fh: FileHandle) {}
  static async open(file: string): Promise<AppendWriter> {
    return new AppendWriter(await open(file, 'a'));
  }
  async write(text: string): Promise<void> {
    const b = Buffer.from(text, 'utf8');
    this.pending.push(b);
    this.size += b.length;
    if (this.size >= 1 << 20) await this.flush();
  }
  private async flush(): Promise<void> {
    const buf = Buffer.concat(this.pending);
    this.pending = [];
    this.size = 0;
    for (let off = 0; off < buf.length;) off += (await this.fh.write(buf, off, buf.length - off)).bytesWritten;
  }
  async commit(): Promise<void> {
    try {
      await this.flush();
      await this.fh.sync();
    } finally {
      await this.fh.close();
    }
  }
  async abort(): Promise<void> {
    await this.fh.close().catch(() => undefined);
  }
}

interface RunResult {
  state: ExportState;
  selection: Selection;
  problems: StoreProblem[];
  /** False when a file ended in an unterminated line: its rows are written, but no index is kept. */
  complete: boolean;
  parsedLines: number;
}

/** Thrown inside runExport when appending cannot give what a full export would: the caller does a full one. */
class NeedFullExport extends Error {}

/**
 * One export from `state` on: `append` false reads everything into a fresh state and writes the
 * output atomically; `append` true reads only what was appended since `state` and appends the new
 * rows, and throws NeedFullExport (having written nothing) when any earlier row would change.
 */
async function runExport(
  opts: ExportOptions,
  spec: FormatSpec,
  ctx: RowContext,
  filters: SelectionFilters,
  state: ExportState,
  append: boolean,
): Promise<RunResult> {
  const reviewsFile = join(opts.dir, DATASET_FILES.reviews);
  const demosFile = join(opts.dir, DATASET_FILES.demonstrations);
  const fresh = emptyExportState(state.key);

  const changedReviews = new Set<string>();
  const addReview = (m: LatestReviews) => (r: ReviewRecord) => {
    addLatestReview(m, r.record_id, r.at, r.verdict);
    changedReviews.add(r.record_id);
  };
  const reviewsBefore = state.reviews;
  const reviews = await updateFile(reviewsFile, state.reviews, () => fresh.reviews, reviewLine, addReview, Infinity);
  if (reviews.state !== reviewsBefore) {
    if (append) throw new NeedFullExport();
    throw new Error(`cannot read ${reviewsFile}: ${reviews.tailProblems[0]?.error ?? 'read failed'}`);
  }
  for (const r of reviews.tail) addReview(state.reviews.data)(r);

  // New lines' rows go to a staging file (one per line that may be selected, in file order); only
  // their dedupe keys and positions stay in memory. Once supersession is known, the selected ones
  // are copied to the output without being shaped again.
  const wanted = new Set(filters.primitives);
  const intern = new Map(state.strings.map((s, i) => [s, i]));
  const d = state.demos.data;
  const from = d.ids.length;
  const stagedPos: number[] = [];
  const stagedKeys: string[] = [];
  const stagingPath = stagingPathFor(opts.out);
  const staging = await AtomicFileWriter.create(stagingPath, { durable: false });
  try {
    const add = (cols: ExportColumns) => (r: DemonstrationRecord) => {
      const pos = cols.ids.length;
      const id = r.info.record_id;
      const sup = r.info.supersedes ?? '';
      cols.ids.push(id);
      cols.idKey.push(key28(id));
      cols.supersedes.push(sup);
      cols.supersedesKey.push(sup ? key28(sup) : -1);
      const base = baseCode(r, filters, wanted);
      cols.base.push(base);
      let p = intern.get(r.primitive_type);
      if (p === undefined) {
        p = state.strings.push(r.primitive_type) - 1;
        intern.set(r.primitive_type, p);
      }
      cols.primitive.push(p);
      cols.selected.push(0);
      if (base !== PASS) return;
      stagedPos.push(pos);
      const row = JSON.stringify(spec.row(r, ctx));
      stagedKeys.push(spec.dedupeKey(r, row));
      return staging.write(row + '\n');
    };
    const demosBefore = state.demos;
    const demos = await updateFile(demosFile, state.demos, () => fresh.demos, demonstrationEntry, add, Infinity);
    if (demos.state !== demosBefore) {
      if (append) throw new NeedFullExport();
      throw new Error(`cannot read ${demosFile}: ${demos.tailProblems[0]?.error ?? 'read failed'}`);
    }
    for (const r of demos.tail) await add(d)(r);
    await staging.commit();

    const dangling = new Set(state.dangling);
    resolveRows(d, state.reviews.data, dangling, from, append ? changedReviews : 'all');
    state.dangling = [...dangling];
    const selection = selectLines(d, state.strings, filters);
    // Appending is exact only if every earlier line keeps its selection (then earlier rows and
    // their deduplication are unchanged too); new rows come after all earlier ones in file order.
    for (let i = 0; i < from; i++) if (selection.selected[i] !== d.selected.get(i)) throw new NeedFullExport();
    for (let i = from; i < d.ids.length; i++) d.selected.set(i, selection.selected[i]);

    // Keys of earlier rows that new rows repeat (one pass over the earlier keys' integer hashes).
    const newKeys = [...new Set(stagedKeys.filter((_, k) => selection.selected[stagedPos[k]]))];
    const earlierKeys = new Set<string>();
    scanFirst(
      state.rowKeyHash.values,
      state.rowKeys,
      0,
      state.rowKeys.length,
      newKeys.map((k) => [key28(k), k] as const),
    ).forEach((pos, q) => {
      if (pos >= 0) earlierKeys.add(newKeys[q]);
    });

    const writer = append ? await AppendWriter.open(opts.out) : await AtomicFileWriter.create(opts.out);
    try {
      const seenKeys = new Set<string>();
      let k = 0;
      for await (const raw of readLines(stagingPath)) {
        const index = k++;
        if ('tooLong' in raw) throw new Error(`staged row ${index + 1} is unexpectedly long`);
        const pos = stagedPos[index];
        if (!selection.selected[pos]) continue;
        const key = stagedKeys[index];
        if (earlierKeys.has(key) || seenKeys.has(key)) {
          state.deduplicated++;
          continue;
        }
        seenKeys.add(key);
        state.rowKeys.push(key);
        state.rowKeyHash.push(key28(key));
        state.rows++;
        const prim = state.strings[d.primitive.get(pos)];
        state.rowsByPrimitive[prim] = (state.rowsByPrimitive[prim] ?? 0) + 1;
        await writer.write(raw.text + '\n');
      }
      if (k !== stagedPos.length) throw new Error(`staging file ${stagingPath} has ${k} rows, expected ${stagedPos.length}`);
      await writer.commit();
    } catch (err) {
      await writer.abort();
      throw err;
    }
    state.output = (await outputFingerprint(opts.out)) ?? null;
    const problems = [...state.reviews.problems, ...reviews.tailProblems, ...state.demos.problems, ...demos.tailProblems].sort(
      (a, b) => a.file.localeCompare(b.file) || a.line - b.line,
    );
    const complete = reviews.tail.length + reviews.tailProblems.length + demos.tail.length + demos.tailProblems.length === 0;
    return { state, selection, problems, complete, parsedLines: reviews.parsed + demos.parsed };
  } finally {
    await staging.abort();
    await unlink(stagingPath).catch(() => undefined);
  }
}

async function lockOutput(realOut: string): Promise<(() => void) | undefined> {
  try {
    await mkdir(dirname(exportLockPath(realOut)), { recursive: true });
    return await acquireDirLock(exportLockPath(realOut), { abortError: () => new Error('aborted'), staleAfterMs: 30 * 60_000 });
  } catch {
    return undefined; // no usable cache: export in full, without an index
  }
}

/**
 * Exports a dataset folder. When the last export to the same file used the same options and the
 * file is as it left it, only the lines appended since are read and only new rows are appended,
 * if the result is byte for byte what a full export would write; otherwise (a revision or review
 * changing an earlier row, other options, an edited output) the export is written in full, atomically.
 */
export async function exportDataset(opts: ExportOptions): Promise<ExportResult> {
  const spec = FORMATS[opts.format];
  const parsedFilters = SelectionFiltersSchema.safeParse({ ...DEFAULT_FILTERS, ...spec.defaultFilters, ...opts.filters });
  if (!parsedFilters.success) throw new ExportError(`Invalid export filters: ${formatZodError(parsedFilters.error)}`);
  const filters = parsedFilters.data;
  const style = opts.style ?? 'standard';
  const completion = opts.completion ?? 'raw';
  if (completion !== 'raw' && !spec.completionForms) throw new ExportError('--completion applies to trl-sft and trl-kto only');
  const ctx: RowContext = { systemPrompt: opts.systemPrompt ?? REPAIR_AGENT_SYSTEM_PROMPT, style, completion };
  const cardPath = await checkPaths(opts.dir, opts.out);

  const realOut = canonicalPath(opts.out);
  // The row and dedupe functions' source is hashed too, so a build that shapes rows differently never appends to an older export.
  const key = exportKey({
    dir: opts.dir,
    realDir: canonicalPath(opts.dir),
    format: opts.format,
    ctx,
    filters,
    row: spec.row.toString(),
    dedupe: spec.dedupeKey.toString(),
  });
  const release = await lockOutput(realOut);
  try {
    let run: RunResult | undefined;
    let mode: ExportResult['mode'] = 'full';
    const prior = release && opts.incremental !== false ? await loadExportState(realOut, key) : undefined;
    if (prior && sameOutput(prior.output, await outputFingerprint(opts.out))) {
      try {
        run = await runExport(opts, spec, ctx, filters, prior, true);
        mode = 'appended';
      } catch (err) {
        if (!(err instanceof NeedFullExport)) throw err;
      }
    }
    run ??= await runExport(opts, spec, ctx, filters, emptyExportState(key), false);
    const { state, selection, problems } = run;
    const rowsByPrimitive = new Map(Object.entries(state.rowsByPrimitive));
    const labels = opts.format === 'trl-kto' ? await countLabels(opts.out) : undefined;
    const card = renderDatasetCard({
      format: opts.format,
      style,
      completion,
      dataFile: basename(opts.out),
      source: pathFromCard(opts.out, opts.dir),
      date: opts.now ?? new Date(),
      filters,
      stats: selection.stats,
      deduplicated: state.deduplicated,
      rows: state.rows,
      rowsByPrimitive,
      problems: problems.map((p) => ({ ...p, file: pathFromCard(opts.out, p.file) })),
      labels,
    });
    await writeFileAtomic(cardPath, card);
    if (release && run.complete) await saveExportState(realOut, state);
    else if (release) await clearExportIndex(realOut);
    return {
      out: opts.out,
      card: cardPath,
      rows: state.rows,
      deduplicated: state.deduplicated,
      stats: selection.stats,
      filters,
      rowsByPrimitive,
      problems,
      unmatchedPrimitives: selection.unmatchedPrimitives,
      mode,
      parsedLines: run.parsedLines,
      ...(labels ? { labels } : {}),
    };
  } finally {
    release?.();
  }
}

/**
 * A path as the dataset card prints it, never absolute (a published card names no machine's
 * folders): a relative path as given (what the user typed); an absolute one relative to the
 * card's folder (`../../dataset`) when both share a folder below the root, else its last part.
 */
export function pathFromCard(out: string, path: string): string {
  if (!isAbsolute(path)) return path.split(sep).join('/');
  const from = dirname(resolve(out));
  const rel = relative(from, path);
  const ups = rel.split(sep).filter((p) => p === '..').length;
  const depth = from.split(sep).filter(Boolean).length;
  // Climbing to the root is an absolute path in disguise (`../../home/alice/…`).
  if (isAbsolute(rel) || ups >= depth) return basename(path);
  return rel.split(sep).join('/') || '.';
}

// `forgeenv export --format FORMAT DIR --out FILE [filters]` (formats: EXPORT_FORMATS).
import { parseArgs } from 'node:util';
import { DatasetWriteError, formatProblem } from '../store/jsonlFile';
import { ExportError, exportDataset } from '../store/export/exportDataset';
import { labelRatioText } from '../store/export/card';
import {
  COMPLETION_FORMS,
  CLI_EXPORT_FORMATS,
  EXPORT_FORMATS,
  FORMATS,
  PROMPT_STYLES,
  type CompletionForm,
  type ExportFormat,
  type PromptStyle,
} from '../store/export/formats';
import { runDpoExport } from './exportDpo';
import {
  BreakageFilterSchema,
  DEFAULT_FILTERS,
  FILTER_CHOICES,
  ReviewFilterSchema,
  StatusFilterSchema,
  type BreakageFilter,
  type ReviewFilter,
  type StatusFilter,
} from '../store/export/selection';

const filterLines = (Object.keys(FILTER_CHOICES) as Array<keyof typeof FILTER_CHOICES>).map((k) => {
  const c = FILTER_CHOICES[k];
  const arg = `[${c.flag} ${Object.keys(c.values).join('|')}]`;
  return `         ${arg.padEnd(42)} default ${DEFAULT_FILTERS[k]}`;
});

// Built from the format and filter lists, so the usage never drifts from what is accepted.
export const EXPORT_USAGE = `Usage: forgeenv export --format ${CLI_EXPORT_FORMATS.join('|')} DIR --out FILE
${filterLines.join('\n')}
         ${'[--primitive NAME]...'.padEnd(42)} default all primitives
         ${'[--style standard|conversational]'.padEnd(42)} prompt shape for trl-sft/trl-grpo/trl-kto, default standard
         ${'[--completion raw|fenced]'.padEnd(42)} trl-sft/trl-kto: the diff as stored (default) or in a \`\`\`diff block
         ${'[--full]'.padEnd(42)} rewrite FILE in full even if rows could be appended
trl-kto takes failed attempts too (--status defaults to all): its label is the verified outcome.
trl-dpo pairs a passing and a failing attempt at the same broken script (human and model attempts,
superseded revisions, rejected reviews, the model suggestions of Suggest Repair); both sides are
re-executed in their recorded snapshot and must still pass and fail ([--python PATH] [--timeout S]
[--task-dir DIR]... as for rescore; --style and --completion apply; filters do not).
Writes FILE (JSONL) and a dataset card README.md beside it (refused if that folder's card describes
another file). Superseded revisions are never exported. Re-exporting to the same FILE with the same
options reads only the lines added since and appends their rows, when that gives exactly what a
full export would; otherwise FILE is rewritten in full.`;

export interface ExportCommandDeps {
  /** Card date (tests). */
  now?: Date;
  systemPrompt?: string;
}

/** Problems printed to the terminal (all of them are in the card). */
const MAX_PRINTED_PROBLEMS = 20;

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(value))
    throw new ExportError(`--${name} must be one of ${allowed.join(', ')} (got "${value}")`);
  return value as T;
}

/** `args` are the words after `export`. Exit codes: 0 ok, 1 export failed, 2 usage. */
export async function runExportCommand(args: string[], out: (s: string) => void, deps: ExportCommandDeps = {}): Promise<number> {
  let format: ExportFormat;
  let style: PromptStyle;
  let completion: CompletionForm;
  let dir: string;
  let outFile: string;
  let full: boolean;
  let status: StatusFilter;
  let review: ReviewFilter;
  let breakage: BreakageFilter;
  let primitives: string[];
  let dpo: Parameters<typeof runDpoExport>[0] | undefined;
  try {
    const { values, positionals } = parseArgs({
      args,
      allowPositionals: true,
      options: {
        format: { type: 'string' },
        out: { type: 'string' },
        status: { type: 'string' },
        review: { type: 'string' },
        breakage: { type: 'string' },
        primitive: { type: 'string', multiple: true },
        style: { type: 'string' },
        completion: { type: 'string' },
        full: { type: 'boolean' },
        python: { type: 'string' },
        timeout: { type: 'string' },
        'task-dir': { type: 'string', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
    });
    if (values.help) {
      out(EXPORT_USAGE);
      return 0;
    }
    if (!values.format) throw new ExportError('--format is required');
    if (!values.out) throw new ExportError('--out FILE is required');
    if (positionals.length !== 1) throw new ExportError(`expected one dataset folder, got ${positionals.length}`);
    if (values.format === 'trl-dpo') {
      if (values.status || values.review || values.breakage || values.primitive || values.full)
        throw new ExportError('trl-dpo takes no filters: every attempt is a candidate, and both sides are re-executed');
      dpo = {
        dir: positionals[0],
        out: values.out,
        style: oneOf('style', values.style, PROMPT_STYLES, 'standard'),
        completion: oneOf('completion', values.completion, COMPLETION_FORMS, 'raw'),
        python: values.python,
        timeout: values.timeout,
        taskDirs: values['task-dir'] ?? [],
        systemPrompt: deps.systemPrompt,
      };
    } else if (values.python || values.timeout || values['task-dir'])
      throw new ExportError('--python, --timeout and --task-dir apply to trl-dpo only');
    if (dpo) return await runDpoExport(dpo, out);
    format = oneOf('format', values.format, EXPORT_FORMATS, 'trl-sft');
    style = oneOf('style', values.style, PROMPT_STYLES, 'standard');
    if (!FORMATS[format].styled && values.style) throw new ExportError('--style applies to trl-sft and trl-grpo only');
    completion = oneOf('completion', values.completion, COMPLETION_FORMS, 'raw');
    if (!FORMATS[format].completionForms && values.completion) throw new ExportError('--completion applies to trl-sft and trl-kto only');
    status = oneOf('status', values.status, StatusFilterSchema.options, FORMATS[format].defaultFilters?.status ?? DEFAULT_FILTERS.status);
    review = oneOf('review', values.review, ReviewFilterSchema.options, DEFAULT_FILTERS.review);
    breakage = oneOf('breakage', values.breakage, BreakageFilterSchema.options, DEFAULT_FILTERS.breakage);
    primitives = values.primitive ?? [];
    dir = positionals[0]!;
    outFile = values.out;
    full = values.full === true;
  } catch (e) {
    out(`forgeenv export: ${(e as Error).message}\n${EXPORT_USAGE}`);
    return 2;
  }

  try {
    const r = await exportDataset({
      format,
      dir,
      out: outFile,
      style,
      completion,
      filters: { status, review, breakage, primitives },
      now: deps.now,
      systemPrompt: deps.systemPrompt,
      incremental: !full,
    });
    const s = r.stats;
    out(`Wrote ${r.rows} ${format} row(s) to ${r.out} (dataset card: ${r.card})`);
    if (r.mode === 'appended') out(`  appended: read only the ${r.parsedLines} source line(s) added since the last export to this file`);
    out(
      `  from ${s.valid_lines} valid demonstration line(s): ${s.superseded} superseded, ${s.repeated_record_id} repeated id, ${s.failed} not successful, ${s.unbroken} whose breakage did not fail, ${s.review} by review, ${s.primitive} by primitive, ${r.deduplicated} duplicate(s)`,
    );
    if (r.labels) out(`  labels: ${labelRatioText(r.labels)}`);
    for (const p of r.unmatchedPrimitives) out(`  warning: no current demonstration has primitive "${p}"`);
    if (r.problems.length) {
      out(`  ${r.problems.length} unusable source line(s) skipped:`);
      for (const p of r.problems.slice(0, MAX_PRINTED_PROBLEMS)) out(`    ${formatProblem(p)}`);
      if (r.problems.length > MAX_PRINTED_PROBLEMS) out(`    … ${r.problems.length - MAX_PRINTED_PROBLEMS} more (all listed in the card)`);
    }
    if (r.rows === 0) out('  warning: no rows matched; the file is empty');
    return 0;
  } catch (e) {
    if (e instanceof ExportError || e instanceof DatasetWriteError) out(`forgeenv export: ${e.message}`);
    else out(`forgeenv export: failed: ${(e as NodeJS.ErrnoException).message}`);
    return 1;
  }
}

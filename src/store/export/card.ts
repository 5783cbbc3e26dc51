// The dataset card (README.md) written beside an export: what the columns are, how rows were
// selected, and which source lines were unusable, so a published file explains itself.
import { formatProblem, type StoreProblem } from '../jsonlFile';
import { FORMATS, type CompletionForm, type ExportFormat, type PromptStyle } from './formats';
import type { SelectionFilters, SelectionStats } from './selection';

/** Marks a README.md as ours, so an export never overwrites someone else's README. */
export const CARD_MARKER = '<!-- forgeenv-export-card -->';
export const MAX_CARD_PROBLEMS = 200;

/** The data file a card of ours describes (its `configs` path), or undefined. */
export function cardDataFile(card: string): string | undefined {
  if (!card.includes(CARD_MARKER)) return undefined;
  const m = /^ {4}path: ("(?:[^"\\]|\\.)*")\s*$/m.exec(card);
  if (!m) return undefined;
  try {
    return JSON.parse(m[1]) as string;
  } catch {
    return undefined;
  }
}

export interface CardInput {
  format: ExportFormat;
  style: PromptStyle;
  completion: CompletionForm;
  dataFile: string;
  source: string;
  date: Date;
  filters: SelectionFilters;
  stats: SelectionStats;
  deduplicated: number;
  rows: number;
  rowsByPrimitive: ReadonlyMap<string, number>;
  problems: readonly StoreProblem[];
  /** trl-kto: rows labelled true and false. */
  labels?: { positive: number; negative: number };
}

/** `P positive : N negative (ratio P/N)`, the balance TRL's KTOTrainer asks about (desirable_weight / undesirable_weight). */
export function labelRatioText(l: { positive: number; negative: number }): string {
  const ratio = l.negative === 0 ? (l.positive === 0 ? 'no rows' : 'no negatives') : `ratio ${(l.positive / l.negative).toFixed(2)}`;
  return `${l.positive} positive (label true) : ${l.negative} negative (label false), ${ratio}`;
}

function mdCell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

/** Inline code for a list item: backticks inside would end the span early. */
function mdCode(s: string): string {
  return `\`${s.replace(/`/g, "'").replace(/\n/g, ' ')}\``;
}

const minus = (n: number) => (n > 0 ? `−${n}` : '0');

export function renderDatasetCard(c: CardInput): string {
  const spec = FORMATS[c.format];
  const yamlStr = (s: string) => JSON.stringify(s);
  const lines: string[] = [
    '---',
    `pretty_name: ${yamlStr(`ForgeEnv human repair demonstrations (${c.format})`)}`,
    'tags:',
    '- forgeenv',
    '- code-repair',
    '- human-demonstrations',
    'configs:',
    '- config_name: default',
    '  data_files:',
    '  - split: train',
    `    path: ${yamlStr(c.dataFile)}`,
    '---',
    CARD_MARKER,
    '',
    `# ForgeEnv demonstrations: ${c.format} export`,
    '',
    `\`${c.dataFile}\`: ${c.rows} row(s), exported ${c.date.toISOString()} by \`forgeenv export\` from \`${c.source}\`.`,
    '',
    spec.description(c.style),
    '',
    '## Columns',
    '',
    '| column | type | meaning |',
    '|---|---|---|',
    ...spec.columns(c.style, c.completion).map((col) => `| \`${col.name}\` | ${mdCell(col.type)} | ${mdCell(col.meaning)} |`),
    '',
    'Every row has the same keys and types; load it with `datasets.load_dataset("json", data_files=...)`.',
    '',
    '## Selection',
    '',
    `- status: \`${c.filters.status}\` ${c.filters.status === 'success' ? '(verified successes: the verifier passed the artifact, no held-out check flags the repair)' : '(successful and failed)'}`,
    `- review: \`${c.filters.review}\``,
    `- breakage: \`${c.filters.breakage}\` ${c.filters.breakage === 'failed' ? '(episodes whose broken script still ran are left out)' : '(episodes whose broken script still ran are included)'}`,
    `- primitives: ${c.filters.primitives.length ? c.filters.primitives.map((p) => `\`${p}\``).join(', ') : 'all'}`,
    ...(spec.styled ? [`- prompt style: \`${c.style}\``] : []),
    ...(spec.completionForms ? [`- completion: \`${c.completion}\``] : []),
    ...(c.labels ? [`- labels: ${labelRatioText(c.labels)}`] : []),
    '',
    '| step | records |',
    '|---|---:|',
    `| valid demonstration lines | ${c.stats.valid_lines} |`,
    `| superseded by a later revision | ${minus(c.stats.superseded)} |`,
    `| repeated record id | ${minus(c.stats.repeated_record_id)} |`,
    `| not successful | ${minus(c.stats.failed)} |`,
    `| breakage did not make the script fail | ${minus(c.stats.unbroken)} |`,
    `| excluded by review filter | ${minus(c.stats.review)} |`,
    `| excluded by primitive filter | ${minus(c.stats.primitive)} |`,
    `| duplicates: ${mdCell(spec.dedupeReason ?? 'none')} | ${minus(c.deduplicated)} |`,
    `| **rows written** | **${c.rows}** |`,
    '',
    '## Rows by primitive',
    '',
    '| primitive | rows |',
    '|---|---:|',
    ...[...c.rowsByPrimitive].sort((a, b) => a[0].localeCompare(b[0])).map(([p, n]) => `| \`${p}\` | ${n} |`),
    '',
    '## Unusable source lines',
    '',
  ];
  if (c.problems.length === 0) lines.push('None: every line of the source folder was valid.');
  else {
    lines.push(`${c.problems.length} line(s) were corrupt, truncated or of a foreign schema and are not in this export:`, '');
    for (const p of c.problems.slice(0, MAX_CARD_PROBLEMS)) lines.push(`- ${mdCode(formatProblem(p))}`);
    if (c.problems.length > MAX_CARD_PROBLEMS) lines.push(`- … and ${c.problems.length - MAX_CARD_PROBLEMS} more`);
  }
  lines.push('');
  return lines.join('\n');
}

// The dataset summary webview's page: counts, plots as inline SVG we draw ourselves (no chart
// library), and a data table behind every plot so the numbers are readable without the
// picture (screen readers, copy-paste). Colours come from VS Code's theme variables via
// classes in media/review/summary.css; the page runs under a strict CSP (no inline styles or
// handlers, one nonce'd script). No vscode import, so it is unit-testable.
import { z } from 'zod';
import { EXPORT_FORMATS } from '../../../store/export/formats';
import { formatDuration, type Bin, type DatasetSummary } from '../../../store/summary';
import { escapeHtml, pageHead, type WebviewPageResources } from '../../webviewHtml';

export { escapeHtml };

/** Messages the page may post; anything else is ignored. */
export const SummaryMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('refresh') }).strict(),
  z.object({ type: z.literal('export'), format: z.enum(EXPORT_FORMATS) }).strict(),
  z.object({ type: z.literal('startReview') }).strict(),
  z.object({ type: z.literal('ready') }).strict(),
]);
export type SummaryMessage = z.infer<typeof SummaryMessageSchema>;

export interface SummaryPageOptions extends WebviewPageResources {
  /** Label records in the folder (not part of summarizeDataset). */
  labels?: { total: number; byTag: Record<string, number> };
}


const pct = (x: number | null) => (x === null ? '–' : `${(x * 100).toFixed(1)}%`);
const num = (x: number | null, d = 2) => (x === null ? '–' : String(Math.round(x * 10 ** d) / 10 ** d));

interface Segment {
  name: string;
  /** CSS class giving the colour (see summary.css). */
  cls: string;
  value: number;
}
interface BarRow {
  label: string;
  segments: Segment[];
  /** Text right of the bar; default the total. */
  note?: string;
}

let figureCounter = 0;

/** Horizontal (optionally stacked) bars, one row per label. */
export function horizontalBarsSvg(title: string, rows: readonly BarRow[], unit = ''): string {
  const id = `fig${++figureCounter}`;
  const labelW = 180;
  const barW = 360;
  const rowH = 22;
  const width = labelW + barW + 90;
  const height = Math.max(1, rows.length) * rowH + 8;
  const max = Math.max(0, ...rows.map((r) => r.segments.reduce((a, s) => a + s.value, 0)));
  const parts: string[] = [];
  rows.forEach((r, i) => {
    const y = 4 + i * rowH;
    parts.push(`<text class="axis-label" x="${labelW - 6}" y="${y + rowH / 2 + 4}" text-anchor="end">${escapeHtml(truncate(r.label, 28))}</text>`);
    let x = labelW;
    for (const s of r.segments) {
      const w = max === 0 ? 0 : (s.value / max) * barW;
      if (w > 0) parts.push(`<rect class="${s.cls}" x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}"><title>${escapeHtml(`${r.label}: ${s.name} ${s.value}${unit}`)}</title></rect>`);
      x += w;
    }
    const total = r.segments.reduce((a, s) => a + s.value, 0);
    parts.push(`<text class="value-label" x="${(x + 6).toFixed(1)}" y="${y + rowH / 2 + 4}">${escapeHtml(r.note ?? `${total}${unit}`)}</text>`);
  });
  if (rows.length === 0) parts.push(`<text class="axis-label" x="8" y="16">no data</text>`);
  const desc = rows.map((r) => `${r.label}: ${r.note ?? r.segments.map((s) => `${s.name} ${s.value}${unit}`).join(', ')}`).join('; ');
  return svg(id, title, desc || 'no data', width, height, parts.join(''));
}

/** Vertical histogram bars with bin labels under them. */
export function histogramSvg(title: string, bins: ReadonlyArray<{ label: string; count: number }>): string {
  const id = `fig${++figureCounter}`;
  const barW = 40;
  const gap = 6;
  const plotH = 140;
  const width = Math.max(200, bins.length * (barW + gap) + 40);
  const height = plotH + 50;
  const max = Math.max(0, ...bins.map((b) => b.count));
  const parts: string[] = [`<line class="axis" x1="30" y1="${plotH + 10}" x2="${width - 4}" y2="${plotH + 10}"></line>`];
  bins.forEach((b, i) => {
    const x = 34 + i * (barW + gap);
    const h = max === 0 ? 0 : (b.count / max) * plotH;
    const y = plotH + 10 - h;
    if (h > 0) parts.push(`<rect class="bar-primary" x="${x}" y="${y.toFixed(1)}" width="${barW}" height="${h.toFixed(1)}"><title>${escapeHtml(`${b.label}: ${b.count}`)}</title></rect>`);
    parts.push(`<text class="value-label" x="${x + barW / 2}" y="${(y - 3).toFixed(1)}" text-anchor="middle">${b.count}</text>`);
    parts.push(`<text class="axis-label small" x="${x + barW / 2}" y="${plotH + 26}" text-anchor="middle">${escapeHtml(b.label)}</text>`);
  });
  const desc = bins.map((b) => `${b.label}: ${b.count}`).join('; ');
  return svg(id, title, desc || 'no data', width, height, parts.join(''));
}

function svg(id: string, title: string, desc: string, width: number, height: number, body: string): string {
  return (
    `<svg class="chart" role="img" aria-labelledby="${id}-t ${id}-d" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" xmlns="http://www.w3.org/2000/svg">` +
    `<title id="${id}-t">${escapeHtml(title)}</title><desc id="${id}-d">${escapeHtml(desc)}</desc>${body}</svg>`
  );
}

function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

function table(caption: string, header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const head = header.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows.length
    ? rows.map((r) => `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td>${escapeHtml(c)}</td>`)).join('')}</tr>`).join('')
    : `<tr><td colspan="${header.length}">none</td></tr>`;
  return `<table><caption>${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A plot with its data table right behind it (in a disclosure, open by default for screen readers is not needed: tables are in the DOM). */
function figure(key: string, title: string, plot: string, dataTable: string): string {
  return `<section class="figure" aria-labelledby="h-${key}"><h2 id="h-${key}">${escapeHtml(title)}</h2>${plot}<details class="data"><summary>Data table: ${escapeHtml(title)}</summary>${dataTable}</details></section>`;
}

export function rewardBinLabel(b: Bin): string {
  return `${num(b.from, 1)}–${b.to === null ? '' : num(b.to, 1)}`;
}

export function activeBinLabel(b: Bin): string {
  return b.to === null ? `≥${formatDuration(b.from)}` : `<${formatDuration(b.to)}`;
}

const statusSegments = (g: { success: number; failed: number; skipped: number }): Segment[] => [
  { name: 'success', cls: 'bar-success', value: g.success },
  { name: 'failed', cls: 'bar-failed', value: g.failed },
  { name: 'skipped', cls: 'bar-skipped', value: g.skipped },
];

/** The whole page. */
export function renderSummaryHtml(s: DatasetSummary, opts: SummaryPageOptions): string {
  figureCounter = 0;
  const c = s.counts;
  const csp = [
    "default-src 'none'",
    `img-src ${opts.cspSource}`,
    `style-src ${opts.cspSource}`,
    `font-src ${opts.cspSource}`,
    `script-src 'nonce-${opts.nonce}'`,
  ].join('; ');
  const prims = Object.entries(s.by_primitive);
  const tasks = Object.entries(s.by_task);
  const annotators = Object.entries(s.by_annotator);

  const kpis: Array<[string, string]> = [
    ['Submitted', String(c.submitted)],
    ['Success', String(c.success)],
    ['Failed', String(c.failed)],
    ['Skipped', String(c.skipped)],
    ['Success rate', pct(s.success_rate)],
    ['Superseded revisions', String(c.superseded)],
    ['Mean reward', num(s.reward.mean)],
    ['Median active time', formatDuration(s.active_ms.median)],
    ['Approved', String(s.reviews.approved)],
    ['Rejected', String(s.reviews.rejected)],
    ['Unreviewed', String(s.reviews.unreviewed)],
    ['Duplicate copies', String(s.duplicates.extra_copies)],
  ];
  if (opts.labels) kpis.push(['Labels', String(opts.labels.total)]);

  const sections = [
    figure(
      'status',
      'Demonstrations by status',
      horizontalBarsSvg('Demonstrations by status', [
        { label: 'success', segments: [{ name: 'success', cls: 'bar-success', value: c.success }] },
        { label: 'failed', segments: [{ name: 'failed', cls: 'bar-failed', value: c.failed }] },
        { label: 'skipped', segments: [{ name: 'skipped', cls: 'bar-skipped', value: c.skipped }] },
        { label: 'superseded', segments: [{ name: 'superseded', cls: 'bar-muted', value: c.superseded }] },
      ]),
      table('Demonstrations by status', ['status', 'count'], [
        ['success', String(c.success)],
        ['failed', String(c.failed)],
        ['skipped', String(c.skipped)],
        ['superseded', String(c.superseded)],
      ]),
    ),
    figure(
      'primitive',
      'Counts by primitive',
      horizontalBarsSvg(
        'Counts by primitive (success, failed, skipped)',
        prims.map(([k, g]) => ({ label: k, segments: statusSegments(g), note: `${g.submitted} submitted, ${pct(g.success_rate)}` })),
      ),
      table(
        'Counts by primitive',
        ['primitive', 'submitted', 'success', 'failed', 'skipped', 'success rate', 'mean reward', 'median active time'],
        prims.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped), pct(g.success_rate), num(g.reward_mean), formatDuration(g.active_ms_median)]),
      ),
    ),
    figure(
      'time',
      'Time per primitive (median active time)',
      horizontalBarsSvg(
        'Median active time per primitive, seconds',
        prims.map(([k, g]) => ({ label: k, segments: [{ name: 'median active', cls: 'bar-primary', value: Math.round((g.active_ms_median ?? 0) / 1000) }], note: formatDuration(g.active_ms_median) })),
        ' s',
      ),
      table('Time per primitive', ['primitive', 'median active time', 'demonstrations'], prims.map(([k, g]) => [k, formatDuration(g.active_ms_median), String(g.submitted)])),
    ),
    figure(
      'reward',
      'Reward histogram',
      histogramSvg('Visible reward of current demonstrations', s.reward.histogram.map((b) => ({ label: rewardBinLabel(b), count: b.count }))),
      table('Reward histogram', ['reward bin', 'demonstrations'], s.reward.histogram.map((b) => [rewardBinLabel(b), String(b.count)])),
    ),
    figure(
      'active',
      'Active time histogram',
      histogramSvg('Active time per demonstration', s.active_ms.histogram.map((b) => ({ label: activeBinLabel(b), count: b.count }))),
      table('Active time histogram', ['active time', 'demonstrations'], s.active_ms.histogram.map((b) => [activeBinLabel(b), String(b.count)])),
    ),
    figure(
      'reviews',
      'Review verdicts',
      horizontalBarsSvg('Review verdicts (latest per demonstration)', [
        { label: 'approved', segments: [{ name: 'approved', cls: 'bar-success', value: s.reviews.approved }] },
        { label: 'rejected', segments: [{ name: 'rejected', cls: 'bar-failed', value: s.reviews.rejected }] },
        { label: 'unreviewed', segments: [{ name: 'unreviewed', cls: 'bar-muted', value: s.reviews.unreviewed }] },
      ]),
      table('Review verdicts', ['verdict', 'demonstrations'], [
        ['approved', String(s.reviews.approved)],
        ['rejected', String(s.reviews.rejected)],
        ['unreviewed', String(s.reviews.unreviewed)],
      ]),
    ),
    figure(
      'annotator',
      'Counts by annotator',
      horizontalBarsSvg('Counts by annotator (success, failed, skipped)', annotators.map(([k, g]) => ({ label: k, segments: statusSegments(g), note: `${g.submitted} submitted, ${formatDuration(g.active_ms_total)} active` }))),
      table('Counts by annotator', ['annotator', 'submitted', 'success', 'failed', 'skipped', 'total active time'], annotators.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped), formatDuration(g.active_ms_total)])),
    ),
    figure(
      'task',
      'Counts by task',
      horizontalBarsSvg('Counts by task (success, failed, skipped)', tasks.map(([k, g]) => ({ label: k, segments: statusSegments(g) }))),
      table('Counts by task', ['task', 'submitted', 'success', 'failed', 'skipped'], tasks.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped)])),
    ),
  ];
  if (opts.labels && Object.keys(opts.labels.byTag).length) {
    const tags = Object.entries(opts.labels.byTag).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    sections.push(
      figure(
        'tags',
        'Label tags',
        horizontalBarsSvg('Label tags (latest label per target)', tags.map(([k, n]) => ({ label: k, segments: [{ name: 'labels', cls: 'bar-primary', value: n }] }))),
        table('Label tags', ['tag', 'labels'], tags.map(([k, n]) => [k, String(n)])),
      ),
    );
  }
  const problems = s.problems.total
    ? `<section aria-labelledby="h-problems"><h2 id="h-problems">Problems (${s.problems.total})</h2><ul class="problems">${s.problems.listed
        .map((p) => `<li><code>${escapeHtml(p.file)}:${p.line}</code> ${escapeHtml(p.kind)}: ${escapeHtml(p.error)}</li>`)
        .join('')}</ul></section>`
    : '';
  const formatOptions = EXPORT_FORMATS.map((f) => `<option value="${f}">${f}</option>`).join('');

  return `${pageHead(opts, csp, 'ForgeEnv dataset summary')}
<body>
<header>
<h1>Dataset summary</h1>
<p class="dir"><code>${escapeHtml(s.dir)}</code></p>
<div class="toolbar" role="toolbar" aria-label="Dataset actions">
<button type="button" id="refresh">Refresh</button>
<button type="button" id="review">Start review</button>
<label for="format">Export as</label>
<select id="format">${formatOptions}</select>
<button type="button" id="export">Export…</button>
</div>
</header>
<main>
<section aria-labelledby="h-kpi"><h2 id="h-kpi">Totals</h2>
<dl class="kpis">${kpis.map(([k, v]) => `<div class="kpi"><dt>${escapeHtml(k)}</dt><dd>${escapeHtml(v)}</dd></div>`).join('')}</dl>
</section>
${sections.join('\n')}
${problems}
</main>
<script nonce="${opts.nonce}" src="${escapeHtml(opts.scriptUri)}"></script>
</body>
</html>`;
}

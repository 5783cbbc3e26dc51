// The dataset summary webview's page: counts, plots as inline SVG we draw ourselves (no chart
// library), and a data table behind every plot so the numbers are readable without the
// picture (screen readers, copy-paste). Colours come from VS Code's theme variables via
// classes in media/review/summary.css; the page runs under a strict CSP (no inline styles or
// handlers, one nonce'd script). No vscode import, so it is unit-testable.
import { z } from 'zod';
import { EXPORT_FORMATS } from '../../../store/export/formats';
import { formatDuration, type Bin, type DatasetSummary } from '../../../store/summary';
import { escapeHtml, pageHead, type WebviewPageResources } from '../../webviewHtml';
import { horizontalBarsSvg, histogramSvg, table, figure, resetFigureIds, type Segment } from './summaryCharts';

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
  resetFigureIds();
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
      table(
        'Demonstrations by status',
        ['status', 'count'],
        [
          ['success', String(c.success)],
          ['failed', String(c.failed)],
          ['skipped', String(c.skipped)],
          ['superseded', String(c.superseded)],
        ],
      ),
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
        prims.map(([k, g]) => [
          k,
          String(g.submitted),
          String(g.success),
          String(g.failed),
          String(g.skipped),
          pct(g.success_rate),
          num(g.reward_mean),
          formatDuration(g.active_ms_median),
        ]),
      ),
    ),
    figure(
      'time',
      'Time per primitive (median active time)',
      horizontalBarsSvg(
        'Median active time per primitive, seconds',
        prims.map(([k, g]) => ({
          label: k,
          segments: [{ name: 'median active', cls: 'bar-primary', value: Math.round((g.active_ms_median ?? 0) / 1000) }],
          note: formatDuration(g.active_ms_median),
        })),
        ' s',
      ),
      table(
        'Time per primitive',
        ['primitive', 'median active time', 'demonstrations'],
        prims.map(([k, g]) => [k, formatDuration(g.active_ms_median), String(g.submitted)]),
      ),
    ),
    figure(
      'reward',
      'Reward histogram',
      histogramSvg(
        'Visible reward of current demonstrations',
        s.reward.histogram.map((b) => ({ label: rewardBinLabel(b), count: b.count })),
      ),
      table(
        'Reward histogram',
        ['reward bin', 'demonstrations'],
        s.reward.histogram.map((b) => [rewardBinLabel(b), String(b.count)]),
      ),
    ),
    figure(
      'active',
      'Active time histogram',
      histogramSvg(
        'Active time per demonstration',
        s.active_ms.histogram.map((b) => ({ label: activeBinLabel(b), count: b.count })),
      ),
      table(
        'Active time histogram',
        ['active time', 'demonstrations'],
        s.active_ms.histogram.map((b) => [activeBinLabel(b), String(b.count)]),
      ),
    ),
    figure(
      'reviews',
      'Review verdicts',
      horizontalBarsSvg('Review verdicts (latest per demonstration)', [
        { label: 'approved', segments: [{ name: 'approved', cls: 'bar-success', value: s.reviews.approved }] },
        { label: 'rejected', segments: [{ name: 'rejected', cls: 'bar-failed', value: s.reviews.rejected }] },
        { label: 'unreviewed', segments: [{ name: 'unreviewed', cls: 'bar-muted', value: s.reviews.unreviewed }] },
      ]),
      table(
        'Review verdicts',
        ['verdict', 'demonstrations'],
        [
          ['approved', String(s.reviews.approved)],
          ['rejected', String(s.reviews.rejected)],
          ['unreviewed', String(s.reviews.unreviewed)],
        ],
      ),
    ),
    figure(
      'annotator',
      'Counts by annotator',
      horizontalBarsSvg(
        'Counts by annotator (success, failed, skipped)',
        annotators.map(([k, g]) => ({
          label: k,
          segments: statusSegments(g),
          note: `${g.submitted} submitted, ${formatDuration(g.active_ms_total)} active`,
        })),
      ),
      table(
        'Counts by annotator',
        ['annotator', 'submitted', 'success', 'failed', 'skipped', 'total active time'],
        annotators.map(([k, g]) => [
          k,
          String(g.submitted),
          String(g.success),
          String(g.failed),
          String(g.skipped),
          formatDuration(g.active_ms_total),
        ]),
      ),
    ),
    figure(
      'task',
      'Counts by task',
      horizontalBarsSvg(
        'Counts by task (success, failed, skipped)',
        tasks.map(([k, g]) => ({ label: k, segments: statusSegments(g) })),
      ),
      table(
        'Counts by task',
        ['task', 'submitted', 'success', 'failed', 'skipped'],
        tasks.map(([k, g]) => [k, String(g.submitted), String(g.success), String(g.failed), String(g.skipped)]),
      ),
    ),
  ];
  if (opts.labels && Object.keys(opts.labels.byTag).length) {
    const tags = Object.entries(opts.labels.byTag).sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
    sections.push(
      figure(
        'tags',
        'Label tags',
        horizontalBarsSvg(
          'Label tags (latest label per target)',
          tags.map(([k, n]) => ({ label: k, segments: [{ name: 'labels', cls: 'bar-primary', value: n }] })),
        ),
        table(
          'Label tags',
          ['tag', 'labels'],
          tags.map(([k, n]) => [k, String(n)]),
        ),
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

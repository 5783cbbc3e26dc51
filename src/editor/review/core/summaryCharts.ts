// The summary page's plots: inline SVG we draw ourselves (no chart library), each with a data table
// behind it so the numbers are readable without the picture. No vscode import.
import { escapeHtml } from '../../webviewHtml';

export interface Segment {
  name: string;
  /** CSS class giving the colour (see summary.css). */
  cls: string;
  value: number;
}
export interface BarRow {
  label: string;
  segments: Segment[];
  /** Text right of the bar; default the total. */
  note?: string;
}

let figureCounter = 0;

/** Figure ids restart on every page, so a page renders the same each time. */
export function resetFigureIds(): void {
  figureCounter = 0;
}

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
    parts.push(
      `<text class="axis-label" x="${labelW - 6}" y="${y + rowH / 2 + 4}" text-anchor="end">${escapeHtml(truncate(r.label, 28))}</text>`,
    );
    let x = labelW;
    for (const s of r.segments) {
      const w = max === 0 ? 0 : (s.value / max) * barW;
      if (w > 0)
        parts.push(
          `<rect class="${s.cls}" x="${x.toFixed(1)}" y="${y + 3}" width="${w.toFixed(1)}" height="${rowH - 6}"><title>${escapeHtml(`${r.label}: ${s.name} ${s.value}${unit}`)}</title></rect>`,
        );
      x += w;
    }
    const total = r.segments.reduce((a, s) => a + s.value, 0);
    parts.push(
      `<text class="value-label" x="${(x + 6).toFixed(1)}" y="${y + rowH / 2 + 4}">${escapeHtml(r.note ?? `${total}${unit}`)}</text>`,
    );
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
    if (h > 0)
      parts.push(
        `<rect class="bar-primary" x="${x}" y="${y.toFixed(1)}" width="${barW}" height="${h.toFixed(1)}"><title>${escapeHtml(`${b.label}: ${b.count}`)}</title></rect>`,
      );
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

export function truncate(s: string, n: number): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

export function table(caption: string, header: readonly string[], rows: ReadonlyArray<readonly string[]>): string {
  const head = header.map((h) => `<th scope="col">${escapeHtml(h)}</th>`).join('');
  const body = rows.length
    ? rows
        .map(
          (r) => `<tr>${r.map((c, i) => (i === 0 ? `<th scope="row">${escapeHtml(c)}</th>` : `<td>${escapeHtml(c)}</td>`)).join('')}</tr>`,
        )
        .join('')
    : `<tr><td colspan="${header.length}">none</td></tr>`;
  return `<table><caption>${escapeHtml(caption)}</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table>`;
}

/** A plot with its data table right behind it (in a disclosure, open by default for screen readers is not needed: tables are in the DOM). */
export function figure(key: string, title: string, plot: string, dataTable: string): string {
  return `<section class="figure" aria-labelledby="h-${key}"><h2 id="h-${key}">${escapeHtml(title)}</h2>${plot}<details class="data"><summary>Data table: ${escapeHtml(title)}</summary>${dataTable}</details></section>`;
}

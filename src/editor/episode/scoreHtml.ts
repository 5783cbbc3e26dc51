// The score view's HTML and the messages its script may send back. The page has a strict CSP
// (`default-src 'none'`; styles from media/ only; one nonce'd script), uses the theme's CSS
// variables, and real table semantics (caption, th scope) so screen readers read it as data.
// Every message from the webview is parsed with WebviewMessageSchema before it is acted on.
// No vscode import: the caller passes the webview's URIs and CSP source as strings.
import { z } from 'zod';
import type { ScoreModel, ScoreRow } from './scoreModel';
import { escapeHtml, pageHead, type WebviewPageResources } from '../webviewHtml';

export const WebviewMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }).strict(),
  z.object({ type: z.literal('runAndScore') }).strict(),
  z.object({ type: z.literal('submit') }).strict(),
  z.object({ type: z.literal('skip') }).strict(),
  z.object({ type: z.literal('reviewChanges') }).strict(),
  z.object({ type: z.literal('showOutput') }).strict(),
]);
export type WebviewMessage = z.infer<typeof WebviewMessageSchema>;

export type ScorePageResources = WebviewPageResources;

const fmt = (n: number): string => (Object.is(n, -0) ? 0 : n).toFixed(2);

function meter(row: ScoreRow, penalty: boolean): string {
  // Penalties run from -max to 0; everything else from 0 to max.
  const frac = penalty ? Math.min(1, Math.abs(row.value) / (row.max || 1)) : Math.max(0, Math.min(1, row.value / (row.max || 1)));
  const pct = Math.round(frac * 100);
  const cls = penalty ? (row.value < 0 ? 'bad' : 'good') : frac >= 0.999 ? 'good' : frac > 0 ? 'partial' : 'bad';
  // Widths are set by media/score.js from data-fill: the CSP forbids inline style attributes.
  return `<span class="bar ${cls}" aria-hidden="true"><span class="fill" data-fill="${pct}"></span></span>`;
}

function table(id: string, caption: string, rows: ScoreRow[], visible: boolean): string {
  const body = rows
    .map((r) => {
      const penalty = visible && r.key === 'diff_size_penalty';
      const range = penalty ? `−${fmt(r.max)} … 0` : `${fmt(0)} … ${fmt(r.max)}`;
      return `<tr>
  <th scope="row"><span class="label">${escapeHtml(r.label)}</span>${r.help ? `<span class="help">${escapeHtml(r.help)}</span>` : ''}</th>
  <td class="num" aria-label="${escapeHtml(`${r.label}: ${fmt(r.value)} (range ${range})`)}">${fmt(r.value)}</td>
  <td class="range">${range}</td>
  <td class="meter">${meter(r, penalty)}</td>
</tr>`;
    })
    .join('\n');
  return `<table id="${id}" class="breakdown">
<caption>${escapeHtml(caption)}</caption>
<thead><tr><th scope="col">Component</th><th scope="col" class="num">Score</th><th scope="col">Range</th><th scope="col"><span class="sr-only">Bar</span></th></tr></thead>
<tbody>
${body}
</tbody>
</table>`;
}

function list(id: string, title: string, items: string[], cls: string): string {
  if (!items.length) return '';
  return `<section aria-labelledby="${id}-h" class="${cls}"><h2 id="${id}-h">${escapeHtml(title)}</h2><ul id="${id}">${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul></section>`;
}

function history(model: ScoreModel): string {
  if (model.history.length < 2) return '';
  const rows = model.history
    .slice(-10)
    .map(
      (h) =>
        `<tr><th scope="row">${h.n}</th><td class="num">${fmt(h.reward)}</td><td>${h.exit_code ?? '—'}</td><td>${h.success ? 'yes' : 'no'}</td><td class="num">${(h.wall_time_ms / 1000).toFixed(1)} s</td></tr>`,
    )
    .join('');
  return `<table id="history" class="history"><caption>Runs of this episode</caption>
<thead><tr><th scope="col">Run</th><th scope="col" class="num">Reward</th><th scope="col">Exit</th><th scope="col">Clean</th><th scope="col" class="num">Time</th></tr></thead>
<tbody>${rows}</tbody></table>`;
}

/** The inside of `<main>`: what changes from one update to the next. */
export function renderScoreBody(model: ScoreModel): string {
  const run = model.run;
  const busy = model.state === 'running';
  const ended = model.state === 'submitted' || model.state === 'skipped';
  let status: string;
  if (busy) status = `<p class="status running" role="status">Running train.py…</p>`;
  else if (!run && ended) status = `<p class="status" role="status">Episode ${model.state} without a score.</p>`;
  else if (!run)
    status = `<p class="status" role="status">Not scored yet. Edit <code>train.py</code>, then press <strong>Run &amp; Score</strong>.</p>`;
  else {
    const verdict = run.success ? 'runs cleanly' : run.exitCode === 0 ? 'exits 0 but fails held-out checks' : 'does not run cleanly yet';
    status = `<p class="status ${run.success ? 'ok' : 'fail'}" role="status">Run ${run.n}: the repaired script ${verdict}${ended ? ` — episode ${model.state}` : ''}.</p>`;
  }
  const summary = run
    ? `<div class="reward" aria-label="${escapeHtml(`Visible reward ${fmt(run.reward)} of ${fmt(run.maxReward)}`)}">
  <span class="reward-value" id="reward">${fmt(run.reward)}</span><span class="reward-max"> / ${fmt(run.maxReward)}</span>
  <span class="reward-meta">exit ${run.exitCode ?? '—'} · ${(run.wallTimeMs / 1000).toFixed(1)} s · ${escapeHtml(model.mode)}</span>
</div>`
    : '';
  const disabled = busy || ended ? ' disabled' : '';
  const details = run
    ? [
        run.applyError ? list('apply-error', 'The diff did not apply', [run.applyError], 'problems') : '',
        list('notes', 'Run', run.notes, 'problems'),
        table('visible', 'Visible reward (what the repair agent is trained on)', run.visible, true),
        table('held-out', 'Held-out checks (each 0 … 1, never shown to a model)', run.heldOut, false),
        list('findings', 'Findings', run.findings, 'findings'),
        list('warnings', 'Diff warnings', run.applyWarnings, 'findings'),
        history(model),
      ].join('\n')
    : '';
  return `<header>
  <h1>${escapeHtml(model.taskId)}</h1>
  <p class="meta">${escapeHtml(model.taskDescription)}</p>
  <p class="meta">Breakage: <code>${escapeHtml(model.primitive)}</code></p>
</header>
${status}
${summary}
<nav class="actions" aria-label="Episode actions">
  <button type="button" data-action="runAndScore"${disabled}>Run &amp; Score</button>
  <button type="button" data-action="reviewChanges"${ended ? ' disabled' : ''}>Review Changes</button>
  <button type="button" data-action="showOutput"${ended ? ' disabled' : ''}>Show Output</button>
  <button type="button" data-action="submit" class="primary"${disabled}>Submit</button>
  <button type="button" data-action="skip" class="secondary"${disabled}>Skip…</button>
</nav>
${details}`;
}

/**
 * The whole page, set once per panel. Later updates go to the page as
 * `{type: 'render', body, busy}` messages (media/score.js swaps the body in), so the webview's
 * frame is never reloaded mid-update and keyboard focus stays where it was.
 */
export function renderScoreHtml(model: ScoreModel, res: ScorePageResources): string {
  const csp = [
    `default-src 'none'`,
    `style-src ${res.cspSource}`,
    `script-src 'nonce-${res.nonce}'`,
    `img-src ${res.cspSource}`,
    `font-src ${res.cspSource}`,
  ].join('; ');
  return `${pageHead(res, csp, 'ForgeEnv Score')}
<body>
<main id="root" aria-busy="${model.state === 'running'}">
${renderScoreBody(model)}
</main>
<script nonce="${res.nonce}" src="${escapeHtml(res.scriptUri)}"></script>
</body>
</html>`;
}

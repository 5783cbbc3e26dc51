// Plain-text rendering of a fidelity report: tallies per library and kind, the overall figure,
// catalog errors, the most common disagreement patterns and the disagreements themselves.
import { describeOutcome } from './outcomes';
import type { FidelityReport, Tally } from './harness';

const pct = (n: number, d: number) => (d ? `${((100 * n) / d).toFixed(1)}%` : '—');

function table(title: string, rows: [string, Tally][]): string[] {
  const head = [title, 'entries', 'valid', 'invalid', 'unchecked', 'runs agree', 'entries agree'];
  const body = rows.map(([name, t]) => [
    name,
    String(t.entries),
    String(t.valid),
    String(t.invalid),
    String(t.unchecked),
    `${t.runs_agree}/${t.runs_compared} ${pct(t.runs_agree, t.runs_compared)}`,
    `${t.entries_agree}/${t.entries_compared} ${pct(t.entries_agree, t.entries_compared)}`,
  ]);
  const all = [head, ...body];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  const line = (r: string[]) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...body.map(line)];
}

export function renderFidelityReport(r: FidelityReport, opts: { maxDisagreements?: number } = {}): string {
  const out: string[] = [];
  const states = (xs: { id: string; state: string; detail?: string; runtime?: string }[]) =>
    xs.map((x) => `${x.id} ${x.state}${x.runtime ? ` ${x.runtime}` : ''}${x.detail ? ` (${x.detail.split('\n')[0]})` : ''}`).join(', ') ||
    'none';
  out.push(`real mode: ${states(r.real_snapshots)}`);
  out.push(`simulated mode: ${states(r.sim_snapshots)}`);
  out.push('');
  out.push(
    ...table(
      'library',
      Object.entries(r.by_library).sort(([a], [b]) => a.localeCompare(b)),
    ),
  );
  out.push('');
  out.push(
    ...table(
      'kind',
      Object.entries(r.by_kind).sort(([a], [b]) => a.localeCompare(b)),
    ),
  );
  out.push('');
  const o = r.overall;
  out.push(
    `overall: ${o.valid}/${o.entries} entries valid in real mode (${o.invalid} invalid, ${o.unchecked} unchecked); ` +
      `simulated agrees with real on ${o.runs_agree}/${o.runs_compared} runs (${pct(o.runs_agree, o.runs_compared)}), ` +
      `${o.entries_agree}/${o.entries_compared} entries fully (${pct(o.entries_agree, o.entries_compared)})`,
  );
  const invalid = r.entries.filter((e) => e.validity === 'invalid');
  if (invalid.length) {
    out.push('', `catalog errors (real mode does not show the drift): ${invalid.length}`);
    for (const e of invalid) out.push(`  ${e.id} [${e.before} → ${e.after}]: ${e.problems.join('; ')}`);
  }
  const unchecked = r.entries.filter((e) => e.validity === 'unchecked');
  if (unchecked.length) {
    out.push('', `unchecked entries (missing snapshots, venvs or a broken environment): ${unchecked.length}`);
    for (const e of unchecked) out.push(`  ${e.id} [${e.before ?? '—'} → ${e.after ?? '—'}]: ${e.problems.join('; ')}`);
  }
  if (r.patterns.length) {
    out.push('', 'most common disagreement patterns:');
    for (const p of r.patterns.slice(0, 10)) out.push(`  ${String(p.count).padStart(3)}  ${p.pattern}   e.g. ${p.examples.join(', ')}`);
  }
  const max = opts.maxDisagreements ?? 40;
  if (r.disagreements.length) {
    out.push('', `disagreements: ${r.disagreements.length}${r.disagreements.length > max ? ` (first ${max})` : ''}`);
    for (const d of r.disagreements.slice(0, max)) {
      out.push(`  ${d.id} @${d.snapshot} ${d.slot} [${d.mismatch}]`);
      out.push(`    real: ${describeOutcome(d.real)}`);
      out.push(`    sim:  ${describeOutcome(d.sim)}`);
    }
  }
  return out.join('\n');
}

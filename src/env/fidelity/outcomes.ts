// What a probe did (probe_runner.py's output), how two outcomes are compared, and the
// normalisation that makes a real traceback message comparable with a simulated one.
import { z } from 'zod';

export const ProbeWarningSchema = z.object({ category: z.string(), message: z.string() });

export const ProbeOutcomeSchema = z.object({
  id: z.string(),
  form: z.enum(['old', 'new']),
  status: z.enum(['ok', 'warned', 'raised']),
  exc_type: z.string().nullable(),
  message: z.string().nullable(),
  warnings: z.array(ProbeWarningSchema),
});
export type ProbeOutcome = z.infer<typeof ProbeOutcomeSchema>;

export const ProbeRunFileSchema = z.object({
  format: z.literal(1),
  python: z.string(),
  versions: z.record(z.string(), z.string().nullable()),
  results: z.array(ProbeOutcomeSchema),
});
export type ProbeRunFile = z.infer<typeof ProbeRunFileSchema>;

export type ProbeForm = ProbeOutcome['form'];

/**
 * Makes messages from different installs comparable: any path into an installed (or simulated)
 * package becomes `site-packages/<pkg>/...`, memory addresses become `0x…`, and the probe's
 * temporary directory is already `<tmp>` (probe_runner.py scrubs it).
 */
export function normaliseMessage(message: string): string {
  return message
    .replace(/(?:[A-Za-z]:)?[^\s'"(),]*?(?:site-packages|dist-packages|simlibs)[\\/]/g, 'site-packages/')
    .replace(/0x[0-9a-fA-F]+/g, '0x…')
    .replace(/\s+$/g, '');
}

/** Why two outcomes differ (first difference found), or undefined when they agree. */
export type Mismatch = 'status' | 'exc_type' | 'message' | 'warnings';

export function compareOutcomes(real: ProbeOutcome, sim: ProbeOutcome): Mismatch | undefined {
  if (real.status !== sim.status) return 'status';
  if (real.status === 'raised') {
    if (real.exc_type !== sim.exc_type) return 'exc_type';
    if (normaliseMessage(real.message ?? '') !== normaliseMessage(sim.message ?? '')) return 'message';
    return undefined;
  }
  if (real.status === 'warned') {
    const key = (o: ProbeOutcome) =>
      o.warnings
        .map((w) => `${w.category}: ${normaliseMessage(w.message)}`)
        .sort()
        .join('\n');
    if (key(real) !== key(sim)) return 'warnings';
  }
  return undefined;
}

/** One line describing an outcome, for tables and disagreement lists. */
export function describeOutcome(o: ProbeOutcome | undefined, width = 160): string {
  if (!o) return '(not run)';
  const cut = (s: string) => (s.length > width ? s.slice(0, width - 1) + '…' : s);
  if (o.status === 'raised') return cut(`raised ${o.exc_type}: ${normaliseMessage(o.message ?? '')}`);
  if (o.status === 'warned') {
    const w = o.warnings[0];
    return cut(`warned ${w.category}: ${normaliseMessage(w.message)}${o.warnings.length > 1 ? ` (+${o.warnings.length - 1})` : ''}`);
  }
  return 'ok';
}

/** A coarse shape of an outcome (status and exception type), for grouping disagreements. */
export function outcomeShape(o: ProbeOutcome): string {
  if (o.status === 'raised') return `raised ${o.exc_type}`;
  if (o.status === 'warned') return `warned ${[...new Set(o.warnings.map((w) => w.category))].sort().join('+')}`;
  return 'ok';
}

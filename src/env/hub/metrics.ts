// Metrics offline: `evaluate.load(name)` and datasets<3's `load_metric(name)` fetch a metric script
// from the Hub (or GitHub), which an offline run cannot. ForgeEnv ships its own scripts of the most
// used metrics (resources/localhub/metrics/<name>.py, numpy only; see its README) and the hub writes
// the ones a task needs where each loader's offline cache fallback finds them (make_hub_items.py).
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';

/** A metric's Hub name (`glue`, `matthews_correlation`): also a file name, so plain characters only. */
export const MetricNameSchema = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a metric name: lower-case letters, digits and _');

export const metricsDir = (): string => join(resourcesDir(), 'localhub', 'metrics');

let available: string[] | undefined;
/** The metrics ForgeEnv can serve offline (the scripts in resources/localhub/metrics), sorted. */
export function offlineMetrics(): readonly string[] {
  return (available ??= readdirSync(metricsDir())
    .filter((f) => f.endsWith('.py'))
    .map((f) => f.slice(0, -3))
    .sort());
}

/** A metric script's digest (its item is rebuilt when the script changes). */
export function metricDigest(name: string): string {
  return createHash('sha256')
    .update(readFileSync(join(metricsDir(), `${name}.py`)))
    .digest('hex')
    .slice(0, 16);
}

/**
 * The metric name a load call's path argument means: `"glue"`, `"evaluate-metric/glue"` -> `glue`;
 * a local script or folder (`./my_metric.py`, `metrics/x`) or another namespace -> undefined (not the Hub's).
 */
export function metricNameOf(path: string): string | undefined {
  const name = path.replace(/^evaluate-metric\//, '').replace(/-/g, '_');
  return MetricNameSchema.safeParse(name).success ? name : undefined;
}

/** Whether a call is a metric load: `evaluate.load(…)`, `load_metric(…)`, `datasets.load_metric(…)`, a bare `load(…)` imported from evaluate. */
export function isMetricLoad(callee: string | null, name: string, loadFromEvaluate: boolean): boolean {
  return name === 'load_metric' || callee === 'evaluate.load' || (loadFromEvaluate && callee === 'load');
}

// A metric missing offline, in each loader's words (evaluate, datasets<3 load_metric).
const MISSING_METRIC: readonly RegExp[] = [
  /Couldn't find a module script at [^\n]*?Module '([^']+)' doesn't exist/,
  /Couldn't find a metric script at [^\n]*?Metric '([^']+)' doesn't exist/,
  /Tried to reach https:\/\/raw\.githubusercontent\.com\/huggingface\/datasets\/[^/]+\/metrics\/([\w-]+)\//,
  /huggingface\.co\/spaces\/evaluate-metric\/([\w-]+)/,
];

/** The metric an error says cannot be found offline (its raw name), undefined when none. */
export function missingMetric(errorText: string): string | undefined {
  for (const p of MISSING_METRIC) {
    const m = p.exec(errorText);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

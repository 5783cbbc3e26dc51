// `forgeenv export --format trl-dpo DIR --out FILE`: preference pairs whose sides are re-executed
// at export (src/store/export/dpo.ts), so it takes the rescore command's environment options.
import { stat } from 'node:fs/promises';
import { exportDpo } from '../store/export/dpo';
import type { CompletionForm, PromptStyle } from '../store/export/formats';
import { EnvPool } from './rescore';

export interface DpoCommandArgs {
  dir: string;
  out: string;
  style: PromptStyle;
  completion: CompletionForm;
  python?: string;
  timeout?: string;
  taskDirs: string[];
  systemPrompt?: string;
}

export async function runDpoExport(
  a: DpoCommandArgs,
  out: (s: string) => void,
  err: (s: string) => void = (s) => void process.stderr.write(`${s}\n`),
): Promise<number> {
  if (!(await stat(a.dir).catch(() => undefined))?.isDirectory()) {
    out(`forgeenv export: Dataset folder ${a.dir} does not exist`);
    return 1;
  }
  const timeout = Number(a.timeout ?? '60');
  if (!Number.isFinite(timeout) || timeout <= 0) {
    out('forgeenv export: --timeout must be a positive number of seconds');
    return 2;
  }
  const pool = new EnvPool({ interpreter: a.python, timeoutMs: Math.round(timeout * 1000), taskDirs: a.taskDirs });
  try {
    const r = await exportDpo({
      dir: a.dir,
      out: a.out,
      style: a.style,
      completion: a.completion,
      systemPrompt: a.systemPrompt,
      envFor: pool.get,
      onProgress: err,
    });
    out(`Wrote ${r.rows} trl-dpo pair(s) to ${r.out}`);
    out(
      `  from ${r.candidates} attempt(s) at ${r.groups} broken script(s), ${r.pairable_groups} with a pass and a failure: ${r.reexecuted} re-executed, ${r.changed_at_export} changed outcome at export (left out), ${r.task_changed} task changed, ${r.errors} error(s), ${r.duplicate_attempts} repeated attempt(s), ${r.deduplicated} duplicate row(s)`,
    );
    const sources = Object.entries(r.by_source)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    if (sources) out(`  pairs (chosen>rejected): ${sources}`);
    if (r.rows === 0) out('  warning: no pairs: no broken script has both a passing and a failing attempt that still pass and fail');
    return 0;
  } catch (e) {
    out(`forgeenv export: ${(e as Error).message}`);
    return 1;
  } finally {
    await pool.dispose();
  }
}

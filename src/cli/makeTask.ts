// `forgeenv make-task SCRIPT …`: a training script becomes a verified task of a task folder
// (src/env/taskmaking/makeTask.ts). Progress goes to stderr; the result to stdout (JSON with --json).
// Exit codes: 0 task made (verified, or saved with a verdict that says why not), 1 refused (the
// reason is printed; nothing written) or not verified, 2 usage error, 3 internal error.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { makeTask, MakeTaskInputError, type MakeTaskResult } from '../env/taskmaking/makeTask';
import { ExecutionModeSchema } from '../env/schemas';

export const MAKE_TASK_USAGE = `Usage:
  forgeenv make-task SCRIPT [--task-dir DIR] [--task-id ID] [--snapshot auto|ID] [--mode real|simulated]
                     [--upgrade-to ID] [--timeout SECONDS] [--max-rounds N] [--python PATH] [--no-verify]
                     [--built-only] [--json]

  Makes SCRIPT a task of DIR (default: the current folder): <task_id>.py plus its tasks.json entry.
  --snapshot auto     (default) the snapshots where every transformers/datasets/trl/peft/accelerate import
                      exists (recorded API data), the one nearest the script's last commit preferred
  --mode real         (default) the snapshot's real releases, offline; simulated: the stand-ins
  --upgrade-to ID     natural drift: the script, unchanged, at the later snapshot ID where it fails for real
  --timeout SECONDS   per run (default 180); --max-rounds N run/diagnose/adapt rounds (default 8)
  --built-only        infer only among snapshots whose managed venv is already built (no install)
  --no-verify         skip the verification runs (original 3/3, two breakages)
Exit codes: 0 made, 1 refused or not verified (reason printed), 2 usage, 3 internal error.`;

function summary(r: MakeTaskResult): string[] {
  const lines = [
    `task ${r.taskId}: snapshot ${r.snapshot.id || '-'} (${r.snapshot.reason})`,
    `rounds ${r.rounds}; adaptations ${r.adaptations.length}`,
  ];
  for (const a of r.adaptations) lines.push(`  [${a.round}] ${a.rule}: ${a.change}${a.error && a.round > 0 ? `  <- ${a.error}` : ''}`);
  if (r.verdict) {
    const good = r.verdict.breakages.filter((b) => b.broke && b.names_api && b.oracle_verified).length;
    lines.push(
      `verdict: ${r.verdict.verified ? 'verified' : 'NOT verified'}; original ${r.verdict.original_runs.verified}/${r.verdict.original_runs.of}; breakages verified ${good}/${r.verdict.breakages.length}`,
    );
    if (r.verdict.reference_note) lines.push(`  the original's own verification failed, so no breakage ran: ${r.verdict.reference_note}`);
    for (const b of r.verdict.breakages)
      lines.push(
        `  ${b.primitive_type}: ${b.broke ? 'broke' : 'did not break'}${b.broke ? (b.names_api ? ', names the API' : ', error does not name the API') : ''}, oracle ${b.oracle_verified ? 'verified' : 'not verified'}${b.note ? ` (${b.note})` : ''}`,
      );
  }
  if (r.naturalDrift) lines.push(`natural drift ${r.naturalDrift.from_snapshot} -> ${r.naturalDrift.to_snapshot}: ${r.naturalDrift.error}`);
  if (r.refusal) lines.push(`refused (${r.refusal.rule}): ${r.refusal.reason}`);
  if (r.written) lines.push(`saved ${r.written.scriptPath} and ${r.written.metadataPath}`);
  lines.push(`${(r.timings.total_ms / 1000).toFixed(1)} s`);
  return lines;
}

export async function runMakeTaskCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: true,
      options: {
        'task-dir': { type: 'string', default: '.' },
        'task-id': { type: 'string' },
        snapshot: { type: 'string', default: 'auto' },
        mode: { type: 'string', default: 'real' },
        'upgrade-to': { type: 'string' },
        timeout: { type: 'string', default: '180' },
        'max-rounds': { type: 'string', default: '8' },
        python: { type: 'string' },
        'no-verify': { type: 'boolean', default: false },
        'built-only': { type: 'boolean', default: false },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    err(`forgeenv make-task: ${(e as Error).message}\n${MAKE_TASK_USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    out(MAKE_TASK_USAGE);
    return 0;
  }
  const usage = (m: string) => {
    err(`forgeenv make-task: ${m}\n${MAKE_TASK_USAGE}`);
    return 2;
  };
  if (parsed.positionals.length !== 1) return usage('give exactly one SCRIPT');
  const script = resolve(parsed.positionals[0]);
  if (!existsSync(script)) return usage(`${script} does not exist`);
  const mode = ExecutionModeSchema.safeParse(v.mode);
  if (!mode.success) return usage(`--mode must be real or simulated, not "${v.mode}"`);
  const timeout = Number(v.timeout);
  if (!Number.isFinite(timeout) || timeout <= 0) return usage('--timeout must be a positive number of seconds');
  const rounds = Number(v['max-rounds']);
  if (!Number.isInteger(rounds) || rounds < 1 || rounds > 32) return usage('--max-rounds must be an integer from 1 to 32');
  const controller = new AbortController();
  const onSignal = () => controller.abort();
  process.once('SIGINT', onSignal);
  try {
    const result = await makeTask(
      {
        scriptPath: script,
        taskDir: v['task-dir'],
        taskId: v['task-id'],
        snapshot: v.snapshot,
        mode: mode.data,
        upgradeTo: v['upgrade-to'],
        timeoutMs: Math.round(timeout * 1000),
        maxRounds: rounds,
        interpreter: v.python,
        noVerify: v['no-verify'],
        builtSnapshotsOnly: v['built-only'],
      },
      { onProgress: (m) => err(`[make-task] ${m}`), signal: controller.signal },
    );
    if (v.json) out(JSON.stringify(result, null, 2));
    else for (const l of summary(result)) out(l);
    if (result.refusal) return 1;
    return result.verdict && !result.verdict.verified ? 1 : 0;
  } catch (e) {
    if (e instanceof MakeTaskInputError) return usage(e.message);
    throw e;
  } finally {
    process.removeListener('SIGINT', onSignal);
  }
}

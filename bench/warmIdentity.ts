// Same outcome warm or cold (issue 18). Each episode (the breakage, its broken run and trace, the oracle
// repair's run, reward and breakdown) is started cold (FORGEENV_WARM=0) and warm (FORGEENV_WARM=force), in
// the bubblewrap sandbox, and the two compared. Numbers, not assertions:
//   npm run bench:warm-identity [-- --seeds 3 --task distilbert_sst2]
//     the built-in corpus, simulated: every task x every breakage primitive x seeds 1-3 (a primitive that
//     does not apply to a task must be refused alike both ways);
//   npm run bench:warm-identity -- --mode real --task-dir /tmp/idt [--seeds 1] [--task ID] [--timeout 180] [--control]
//     the tasks of task folders (make-task's; a folder of task folders is expanded), loaded as
//     `forgeenv.taskFolders` are, each episode run as the editor or `serve` runs it (the task's own
//     snapshot or derived environment and hub): every task x the breakages make-task verified on it.
// --control runs both sides cold: what differs then is a script's own nondeterminism, not the warm path's.
// Prints the pairs compared, how many are identical, refused alike, or differ (each difference named).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { startHumanEpisode } from '../src/env/episode/humanEpisode';
import { primitiveCatalog } from '../src/env/primitives/registry';
import { warmPool } from '../src/env/run/executor';
import { snapshotVersions } from '../src/env/snapshots/versions';
import { loadCorpus, readMetadata } from '../src/env/tasks/tasks';
import type { Task } from '../src/env/schemas';
import { differingFields, firstDifference, parseWarmIdentityArgs, verifiedBreakages, type Breakage } from './identity';

const opts = parseWarmIdentityArgs(process.argv.slice(2));
const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-identity-'));
// Why a warm side ran cold (a zygote that failed or printed while it prepared, a pool out of memory).
warmPool.setLog((line) => {
  if (!/: up to \d+ zygote|idle: retired/.test(line)) console.log(line);
});

type Warm = '0' | 'force';

/** One environment per task and per side, as `serve` keeps one per session: the reference is verified once per side. */
function environment(): ForgeEnvironment {
  return new ForgeEnvironment({
    mode: opts.mode,
    parentDir,
    timeoutMs: opts.timeoutMs,
    taskDirs: opts.taskDirs,
    sandbox: { mode: 'bubblewrap' },
  });
}

async function outcome(env: ForgeEnvironment, warm: Warm, taskId: string, b: Breakage, seed: number): Promise<Record<string, unknown>> {
  process.env.FORGEENV_WARM = warm;
  try {
    const start = await startHumanEpisode(env, { taskId, seed, primitive: b });
    const obs = start.observation;
    const evaluation = await env.evaluateRepair(env.oracleDiff());
    return {
      runtime: [obs.info.runtime, evaluation.execution?.runtime].join('/'),
      primitive: obs.info.breakage_primitive,
      trace: obs.error_trace,
      broken: [start.brokenExecution.exit_code, start.brokenExecution.stdout, start.brokenExecution.stderr],
      repair: [evaluation.execution?.exit_code, evaluation.execution?.stdout],
      reward: evaluation.reward,
      breakdown: evaluation.reward_breakdown,
    };
  } catch (e) {
    return { refused: (e as Error).message.replace(/\/tmp\/\S+/g, '<tmp>') };
  } finally {
    delete process.env.FORGEENV_WARM;
  }
}

/** The breakages each task's episodes replay: make-task's verified ones on task folders, else every breakage primitive. */
function plan(): { tasks: Task[]; breakagesOf: (t: Task) => Breakage[]; notes: string[] } {
  const { tasks: all, problems } = loadCorpus({ extraDirs: opts.taskDirs });
  const notes = problems.map((p) => `task folder: ${p}`);
  const fromFolders = opts.taskDirs.length > 0;
  const tasks = all.filter((t) => (fromFolders ? t.source !== 'builtin' : true) && (!opts.task || t.task_id === opts.task));
  if (!fromFolders) {
    const every = primitiveCatalog()
      .filter((p) => p.kind === 'breakage')
      .map((p) => ({ primitive_type: p.name }));
    return { tasks, breakagesOf: () => every, notes };
  }
  const byTask = new Map<string, Breakage[]>();
  for (const t of tasks) {
    const verdict = readMetadata(t.source).get(t.task_id)?.verdict;
    const { breakages, missing } = verifiedBreakages(verdict, t.script_content, t.library_versions ?? snapshotVersions());
    if (!verdict) notes.push(`${t.task_id}: no make-task verdict in its tasks.json: no verified breakage to replay`);
    for (const m of missing) notes.push(`${t.task_id}: verified breakage ${m} is no longer a candidate on the script; skipped`);
    byTask.set(t.task_id, breakages);
  }
  return { tasks, breakagesOf: (t) => byTask.get(t.task_id) ?? [], notes };
}

async function main(): Promise<void> {
  const { tasks, breakagesOf, notes } = plan();
  for (const n of notes) console.log(n);
  let pairs = 0;
  let identical = 0;
  let refusedAlike = 0;
  let warmRuns = 0;
  let coldRuns = 0;
  const differ: string[] = [];
  const t0 = Date.now();
  try {
    for (const task of tasks) {
      const envs = { '0': environment(), force: environment() };
      try {
        for (const b of breakagesOf(task))
          for (const seed of opts.seeds) {
            const name = `${task.task_id} x ${b.primitive_type}${b.drift_id ? ` (${b.drift_id})` : ''} seed ${seed}`;
            const cold = await outcome(envs['0'], '0', task.task_id, b, seed);
            // --control: the second side cold too, so what differs there is the script's own, not the warm path's.
            const warm = await outcome(envs.force, opts.control ? '0' : 'force', task.task_id, b, seed);
            pairs++;
            if (warm.runtime === 'warm/warm') warmRuns++;
            if (cold.runtime === 'cold/cold') coldRuns++;
            const fields = differingFields(cold, warm);
            if (fields.length) differ.push(`${name}: ${fields.map((f) => `${f} (${firstDifference(cold[f], warm[f])})`).join('; ')}`);
            else if ('refused' in cold) refusedAlike++;
            else identical++;
            if (opts.mode === 'real')
              console.log(
                `${name}: ${fields.length ? `differs in ${fields.join(', ')}` : 'same'}${!opts.control && warm.runtime !== 'warm/warm' && !('refused' in warm) ? ` (the warm side ran ${String(warm.runtime)})` : ''} (${Math.round((Date.now() - t0) / 1000)} s)`,
              );
          }
      } finally {
        await envs['0'].dispose();
        await envs.force.dispose();
      }
    }
  } finally {
    rmSync(parentDir, { recursive: true, force: true });
  }
  const breakageWord = opts.taskDirs.length ? 'verified breakages' : 'breakage primitives';
  if (opts.control) console.log("control: both sides cold (FORGEENV_WARM=0): a difference is the script's own");
  console.log(
    `${opts.mode}: ${tasks.length} tasks x their ${breakageWord} x seeds ${opts.seeds.length} = ${pairs} pairs (cold and warm each)`,
  );
  console.log(`identical episodes: ${identical}; refused alike (primitive not applicable): ${refusedAlike}; differ: ${differ.length}`);
  console.log(`warm episodes that ran both runs warm: ${warmRuns}, cold ones both cold: ${coldRuns}, of ${pairs - refusedAlike}`);
  for (const d of differ) console.log(`  differs: ${d}`);
  console.log(`wall ${Math.round((Date.now() - t0) / 1000)} s`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});

// Same outcome warm or cold (issue 18), over the whole simulated corpus: every corpus task x every breakage
// primitive x seeds 1-3, each episode (the breakage, its broken run and trace, the oracle repair's run and
// reward) started cold (FORGEENV_WARM=0) and warm (FORGEENV_WARM=force), in the bubblewrap sandbox. A primitive
// that does not apply to a task must be refused alike both ways. Numbers, not assertions:
//   npm run bench:warm-identity [-- --seeds 3 --task distilbert_sst2]
// prints the pairs compared, how many are identical, refused alike, or differ (each difference named).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { startHumanEpisode } from '../src/env/episode/humanEpisode';
import { primitiveCatalog } from '../src/env/primitives/registry';
import { loadCorpus } from '../src/env/tasks/tasks';

const { values } = parseArgs({ options: { seeds: { type: 'string', default: '3' }, task: { type: 'string' } } });
const seeds = Array.from({ length: Math.max(1, Number(values.seeds)) }, (_, i) => i + 1);
const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-identity-'));

async function outcome(warm: '0' | 'force', taskId: string, primitive: string, seed: number): Promise<unknown> {
  process.env.FORGEENV_WARM = warm;
  const env = new ForgeEnvironment({ mode: 'simulated', parentDir, sandbox: { mode: 'bubblewrap' } });
  try {
    const start = await startHumanEpisode(env, { taskId, seed, primitive: { primitive_type: primitive } });
    const obs = start.observation;
    const evaluation = await env.evaluateRepair(env.oracleDiff());
    const runtime = [obs.info.runtime, evaluation.execution?.runtime].join('/');
    return {
      runtime,
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
    await env.dispose();
    delete process.env.FORGEENV_WARM;
  }
}

const strip = (o: unknown): unknown =>
  JSON.parse(JSON.stringify(o, (k, v) => (k === 'wall_time_ms' || k === 'peak_memory_mb' || k === 'runtime' ? undefined : v)));

async function main(): Promise<void> {
  const tasks = loadCorpus()
    .tasks.map((t) => t.task_id)
    .filter((id) => !values.task || id === values.task);
  const primitives = primitiveCatalog()
    .filter((p) => p.kind === 'breakage')
    .map((p) => p.name);
  let identical = 0;
  let refusedAlike = 0;
  let warmRuns = 0;
  const differ: string[] = [];
  const t0 = Date.now();
  try {
    for (const task of tasks)
      for (const primitive of primitives)
        for (const seed of seeds) {
          const cold = (await outcome('0', task, primitive, seed)) as Record<string, unknown>;
          const warm = (await outcome('force', task, primitive, seed)) as Record<string, unknown>;
          if (warm.runtime === 'warm/warm') warmRuns++;
          const same = JSON.stringify(strip(cold)) === JSON.stringify(strip(warm));
          if (!same) differ.push(`${task} x ${primitive} seed ${seed}`);
          else if ('refused' in cold) refusedAlike++;
          else identical++;
        }
  } finally {
    rmSync(parentDir, { recursive: true, force: true });
  }
  const pairs = tasks.length * primitives.length * seeds.length;
  console.log(
    `tasks ${tasks.length} x breakage primitives ${primitives.length} x seeds ${seeds.length} = ${pairs} pairs (cold and warm each)`,
  );
  console.log(`identical episodes: ${identical}; refused alike (primitive not applicable): ${refusedAlike}; differ: ${differ.length}`);
  console.log(`warm episodes that ran both runs warm: ${warmRuns} of ${pairs - refusedAlike}`);
  for (const d of differ) console.log(`  differs: ${d}`);
  console.log(`wall ${Math.round((Date.now() - t0) / 1000)} s`);
}

main().catch((e: unknown) => {
  console.error(e);
  process.exitCode = 1;
});

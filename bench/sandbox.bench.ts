// The sandbox's cost (numbers, not assertions), both ways in one process so machine load hits both:
//   npm run bench:sandbox [-- --episodes 10]
// 0. Warm-up, not timed: every task once each way (fills the bytecode cache of each snapshot once).
// 1. Per run: the original scripts of N corpus tasks run through the executor in simulated mode,
//    alternating sandbox off / bubblewrap for each task (the order flips every task). Median and
//    mean of the executor's wall time, and the per-run overhead.
// 2. Per episode: N simulated episodes (reset + drift + broken run + oracle repair run) each way,
//    and the sandbox's share of an episode (target: at most 10%).
// 3. What one sandbox costs by itself: `bwrap … true` versus `true`, and `prlimit … true`.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { executeScript } from '../src/env/run/executor';
import { startHumanEpisode } from '../src/env/episode/humanEpisode';
import { bwrapArgs } from '../src/env/sandbox/bwrap';
import { findExecutable, probeSandbox } from '../src/env/sandbox/detect';
import type { SandboxMode } from '../src/env/sandbox/options';
import { snapshotVersions } from '../src/env/snapshots/versions';

const { values } = parseArgs({ options: { episodes: { type: 'string', default: '10' } } });
const N = Math.max(1, Number(values.episodes));
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f = (x: number) => x.toFixed(1).padStart(8);
const MODES: SandboxMode[] = ['off', 'bubblewrap'];

async function main(): Promise<void> {
  const probe = await probeSandbox();
  if (!probe.ok) {
    console.log(`skipped: ${probe.reason}`);
    return;
  }
  const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-bench-sandbox-'));
  try {
    const corpus = new ForgeEnvironment({ parentDir }).tasks.all;
    const tasks = Array.from({ length: N }, (_, i) => corpus[i % corpus.length]);
    // The versions an episode of the task runs with (ForgeEnvironment.reset).
    const versionsOf = (t: (typeof tasks)[number]) => t.library_versions ?? snapshotVersions();
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')} (the overhead grows with contention: every process hop waits for a CPU)`,
    );
    for (const t of corpus) {
      for (const mode of MODES)
        await executeScript({
          script: t.script_content,
          mode: 'simulated',
          libraryVersions: versionsOf(t),
          parentDir,
          validate: false,
          args: t.args,
          files: t.files,
          sandbox: { mode },
        });
    }

    console.log(`\n# 1. one run of a task's original script, simulated mode (${N} tasks, alternating; ms of the executor's wall time)`);
    const runs: Record<string, number[]> = { off: [], bubblewrap: [] };
    for (const [i, t] of tasks.entries()) {
      for (const mode of i % 2 ? [...MODES].reverse() : MODES) {
        const r = await executeScript({
          script: t.script_content,
          mode: 'simulated',
          libraryVersions: versionsOf(t),
          parentDir,
          validate: false,
          args: t.args,
          files: t.files,
          sandbox: { mode },
        });
        if (r.isolation !== (mode === 'off' ? 'process-group' : 'bubblewrap')) throw new Error(`${mode} ran with ${r.isolation}`);
        runs[mode].push(r.wall_time_ms);
      }
    }
    console.log(`${'isolation'.padEnd(14)}   median     mean`);
    for (const mode of MODES) console.log(`${mode.padEnd(14)} ${f(median(runs[mode]))} ${f(mean(runs[mode]))}`);
    const perRun = median(runs.bubblewrap.map((b, i) => b - runs.off[i]));
    console.log(
      `overhead per run (median of the paired differences): ${perRun.toFixed(1)} ms (${((perRun / median(runs.off)) * 100).toFixed(1)}% of a run)`,
    );

    console.log(`\n# 2. a whole simulated episode (reset + drift + broken run + oracle repair run), ${N} episodes each way, ms`);
    const episodes: Record<string, number[]> = { off: [], bubblewrap: [] };
    for (let i = 0; i < N; i++) {
      for (const mode of i % 2 ? [...MODES].reverse() : MODES) {
        const env = new ForgeEnvironment({ parentDir, sandbox: { mode } });
        const t0 = performance.now();
        await startHumanEpisode(env, { taskId: tasks[i].task_id, seed: i });
        await env.evaluateRepair(env.oracleDiff());
        episodes[mode].push(performance.now() - t0);
        await env.dispose();
      }
    }
    console.log(`${'isolation'.padEnd(14)}   median     mean`);
    for (const mode of MODES) console.log(`${mode.padEnd(14)} ${f(median(episodes[mode]))} ${f(mean(episodes[mode]))}`);
    const perEpisode = median(episodes.bubblewrap.map((b, i) => b - episodes.off[i]));
    console.log(
      `sandbox share of an episode (median paired difference / median episode without it): ${perEpisode.toFixed(1)} ms = ${((perEpisode / median(episodes.off)) * 100).toFixed(1)}% (target <= 10%)`,
    );
    console.log(
      `an episode runs 2 scripts: 2 x the per-run overhead = ${(2 * perRun).toFixed(1)} ms = ${(((2 * perRun) / median(episodes.off)) * 100).toFixed(1)}% of the median episode`,
    );
    console.log(
      `load average ${loadavg()
        .map((x) => x.toFixed(2))
        .join(' ')}`,
    );

    console.log('\n# 3. the bare cost of the wrappers (median of 20, ms)');
    const truePath = findExecutable('true') ?? '/bin/true';
    const time = (file: string, args: string[]) => {
      const xs: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t0 = performance.now();
        spawnSync(file, args, { stdio: 'ignore' });
        xs.push(performance.now() - t0);
      }
      return median(xs);
    };
    const bare = time(truePath, []);
    const sandbox = time(
      probe.tools.bwrap,
      bwrapArgs({ tools: probe.tools, runDir: parentDir, readOnly: [], allowNetwork: false, command: [truePath] }),
    );
    console.log(`true                 ${f(bare)}`);
    console.log(`bwrap … true         ${f(sandbox)}   (+${(sandbox - bare).toFixed(1)})`);
    if (probe.tools.prlimit) {
      const pl = time(probe.tools.prlimit, ['--nproc=512', '--fsize=1073741824', '--', truePath]);
      console.log(`prlimit … true       ${f(pl)}   (+${(pl - bare).toFixed(1)})`);
    }
  } finally {
    rmSync(parentDir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

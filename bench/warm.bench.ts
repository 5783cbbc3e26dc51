// The warm runtime against cold runs, in one run (numbers, not assertions):
//   npm run bench:warm [-- --runs 8 --episodes 6 --real-runs 3 --real-episodes 2 --snapshot 2026-11 --task distilbert_sst2 --serve-seconds 40 --skip-real]
//
// 1. Per run: one corpus script (the task's original, its args and files) run cold (FORGEENV_WARM=0)
//    and warm (a zygote from the pool, waited for: the cadence of a person or a trainer that is
//    not faster than the refill), simulated and real mode. p50/p95/p99.
// 2. Per episode (break + oracle repair, in process): cold vs warm. The verifier takes a copy of the
//    repair's run folder (executor `inputDir`), so it runs warm too. "Run & Score" is the repair's
//    run and its verification after the annotator's think time (the pool refilled meanwhile).
// 3. `serve` (simulated, in process, RemoteBackend sessions) episodes per second with 8 and 64
//    sessions, warm pool on and off.
// 2b. Where a warm episode's time goes, phase by phase (StepOptions `onPhase`): p50 per phase; and
//    the fixed cost of one warm run of an empty script (what is not the script's own work).
// 4. Memory: each ready zygote's RSS, the pool's total. A zygote serves one run (nothing is forked),
//    so the page cost of a run is its zygote's whole RSS: there is no sharing between runs.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { startServer } from '../src/env/openenv/server';
import { createRepairDiff } from '../src/env/diff/diff';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { executeScript, prewarmRuntime, warmPool, type RunOptions } from '../src/env/run/executor';
import { prepareRealRun } from '../src/env/run/realMode';
import { RemoteBackend } from '../src/env/openenv/remoteBackend';
import { getSnapshot } from '../src/env/snapshots/registry';
import { loadCorpus } from '../src/env/tasks/tasks';
import { infoText } from '../src/env/schemas';
import type { PhaseTime } from '../src/env/phaseTimes';

const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '8' },
    episodes: { type: 'string', default: '6' },
    'real-runs': { type: 'string', default: '3' },
    'real-episodes': { type: 'string', default: '2' },
    snapshot: { type: 'string', default: '2026-11' },
    task: { type: 'string', default: 'distilbert_sst2' },
    'serve-seconds': { type: 'string', default: '40' },
    'skip-real': { type: 'boolean', default: false },
    'skip-serve': { type: 'boolean', default: false },
    'serve-sessions': { type: 'string', default: '8,64' },
  },
});
const SNAPSHOT = values.snapshot;
const VERSIONS = { ...getSnapshot(SNAPSHOT).versions };
const TASK = values.task;
const BREAKAGE = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};
const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-bench-'));
const table: string[] = [];

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
}
const row = (name: string, xs: number[]) => {
  const line = `| ${name.padEnd(34)} | ${String(xs.length).padStart(3)} | ${pct(xs, 50).toFixed(0).padStart(7)} | ${pct(xs, 95).toFixed(0).padStart(7)} | ${pct(xs, 99).toFixed(0).padStart(7)} |`;
  table.push(line);
  console.log(line);
};
const setWarm = (v: '0' | undefined) => (v === undefined ? delete process.env.FORGEENV_WARM : (process.env.FORGEENV_WARM = v));

async function runOptions(mode: 'simulated' | 'real'): Promise<Omit<RunOptions, 'script'> & { script: string }> {
  const task = loadCorpus().tasks.find((t) => t.task_id === TASK);
  if (!task) throw new Error(`no task ${TASK}`);
  const real = mode === 'real' ? await prepareRealRun({ libraryVersions: VERSIONS }) : undefined;
  return {
    script: task.script_content,
    mode,
    libraryVersions: VERSIONS,
    ...(real
      ? { interpreter: real.interpreter, extraEnv: real.env, bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies }
      : {}),
    args: task.args,
    files: task.files,
    timeoutMs: 900_000,
    validate: false,
    parentDir,
  };
}

async function perRun(mode: 'simulated' | 'real', n: number): Promise<void> {
  const o = await runOptions(mode);
  const cold: number[] = [];
  const warm: number[] = [];
  const exits = new Set<string>();
  const w = await prewarmRuntime(o);
  if ('error' in w) throw new Error(`prewarm: ${w.error}`);
  for (let i = 0; i < n; i++) {
    setWarm('0');
    let t = performance.now();
    const c = await executeScript({ ...o });
    cold.push(performance.now() - t);
    setWarm(undefined);
    if (!(await warmPool.waitReady(w.key, 1, 600_000))) throw new Error(`no zygote ready: ${JSON.stringify(warmPool.stats())}`);
    // Memory of the ready zygotes, once both are up (before the last warm run).
    if (i === n - 1 && (await warmPool.waitReady(w.key, 2, 600_000))) memoryLine(mode, w.label);
    t = performance.now();
    const r = await executeScript({ ...o, warm: true });
    warm.push(performance.now() - t);
    if (r.runtime !== 'warm') throw new Error(`expected a warm run: ${r.stderr.slice(0, 400)}`);
    // Stdout with the numbers masked (timings, losses of a random init differ run to run, cold or warm).
    const shape = (t: string) => t.replace(/\d+(\.\d+)?(e-?\d+)?/g, 'N');
    exits.add(
      `${c.exit_code}/${r.exit_code}${c.stdout === r.stdout ? ', stdout equal' : shape(c.stdout) === shape(r.stdout) ? ', stdout equal but for numbers' : ', stdout differs'}`,
    );
  }
  row(`${mode} run, cold`, cold);
  row(`${mode} run, warm`, warm);
  // The fixed cost of a warm run: an empty script, phase by phase.
  const empty: PhaseTime[][] = [];
  const emptyTotal: number[] = [];
  for (let i = 0; i < n; i++) {
    if (!(await warmPool.waitReady(w.key, 1, 600_000))) throw new Error('no zygote ready');
    const phases: PhaseTime[] = [];
    const t = performance.now();
    const r = await executeScript({ ...o, script: 'pass\n', warm: true, onPhase: (p) => phases.push(p) });
    emptyTotal.push(performance.now() - t);
    if (r.runtime !== 'warm' || r.exit_code !== 0) throw new Error(`empty script: ${r.runtime} ${r.exit_code} ${r.stderr.slice(0, 300)}`);
    empty.push(phases);
  }
  row(`${mode} run of an empty script, warm`, emptyTotal);
  phaseTable(`${mode} warm run of an empty script`, empty);
  console.log(`  exit codes cold/warm: ${[...exits].join(', ')}`);
}

function memoryLine(mode: string, label: string): void {
  const k = warmPool.stats().keys.find((x) => x.label === label);
  if (!k) return;
  const line = `  ${mode} zygotes: ${k.parked} parked (${k.ready} ready), RSS ${k.rssMiB} MiB together, ${k.parked ? Math.round(k.rssMiB / k.parked) : 0} MiB each = the page cost of one warm run (no sharing)`;
  table.push(line);
  console.log(line);
}

async function perEpisode(mode: 'simulated' | 'real', n: number): Promise<void> {
  const cold: number[] = [];
  const warm: number[] = [];
  const warmRepair: number[] = [];
  const coldRepair: number[] = [];
  const rewards = new Set<string>();
  const warmPhases: PhaseTime[][] = [];
  for (const useWarm of [false, true]) {
    setWarm(useWarm ? undefined : '0');
    for (let i = 0; i < n; i++) {
      const env = new ForgeEnvironment({ mode, timeoutMs: 900_000, parentDir, warm: useWarm });
      try {
        await env.reset({ taskId: TASK, seed: 7 + i, library_versions: VERSIONS });
        // The interactive cadence: the pool of the episode's shape (its task's hub) is ready before it starts.
        const p = useWarm ? await env.prewarm() : undefined;
        if (p && 'error' in p) throw new Error(p.error);
        if (p) await warmPool.waitReady(p.key, 2, 600_000);
        const phases: PhaseTime[] = [];
        const onPhase = (p: PhaseTime) => phases.push(p);
        const t = performance.now();
        const obs = await env.step({ breakage: BREAKAGE }, { onPhase });
        if (obs.info.error) throw new Error(infoText(obs.info.error));
        let thinking = 0;
        if (p) {
          // The annotator reads the error and edits: the pool refills meanwhile (not counted).
          const t0 = performance.now();
          await warmPool.waitReady(p.key, 2, 600_000);
          thinking = performance.now() - t0;
        }
        const t1 = performance.now();
        const ev = await env.evaluateRepair(env.oracleDiff(), { onPhase });
        if (useWarm) warmPhases.push(phases);
        const total = performance.now() - t - thinking;
        (useWarm ? warm : cold).push(total);
        (useWarm ? warmRepair : coldRepair).push(performance.now() - t1);
        rewards.add(
          `${useWarm ? 'warm' : 'cold'} reward ${ev.reward.toFixed(3)} runtime ${String(obs.info.runtime)}/${String(ev.execution?.runtime)}`,
        );
      } finally {
        await env.dispose();
      }
    }
  }
  setWarm(undefined);
  row(`${mode} episode, cold`, cold);
  row(`${mode} episode, warm`, warm);
  row(`${mode} Run & Score (repair + verify), cold`, coldRepair);
  row(`${mode} Run & Score (repair + verify), warm`, warmRepair);
  console.log(`  ${[...rewards].join('; ')}`);
  phaseTable(`${mode} warm episode`, warmPhases);
}

/** p50 of each phase over the samples (one list of phases per episode or run), in the order they ran; the sum of p50s last. */
function phaseTable(what: string, samples: PhaseTime[][]): void {
  const by = new Map<string, number[]>();
  for (const phases of samples) {
    const sums = new Map<string, number>();
    for (const p of phases) sums.set(p.phase, (sums.get(p.phase) ?? 0) + p.ms);
    for (const [name, ms] of sums) by.set(name, [...(by.get(name) ?? []), ms]);
  }
  const lines = [`  phases of a ${what} (p50 ms over ${samples.length}):`];
  let total = 0;
  for (const [name, xs] of by) {
    const p50 = pct(xs, 50);
    total += p50;
    lines.push(`    ${name.padEnd(34)} ${p50.toFixed(1).padStart(8)}`);
  }
  lines.push(`    ${'sum of the p50s'.padEnd(34)} ${total.toFixed(1).padStart(8)}`);
  table.push(...lines);
  console.log(lines.join('\n'));
}

async function serveThroughput(sessions: number, warm: boolean, seconds: number): Promise<void> {
  setWarm(warm ? undefined : '0');
  const server = await startServer({
    port: 0,
    host: '127.0.0.1',
    maxSessions: sessions * 2,
    config: { mode: 'simulated', parentDir },
    warm: warm ? [SNAPSHOT] : [],
  });
  const url = `http://127.0.0.1:${server.port}`;
  let done = 0;
  let failed = 0;
  let firstError = '';
  const episode = async (seed: number) => {
    const remote = new RemoteBackend(url, 600_000);
    try {
      await remote.reset({ task_id: TASK, seed, library_versions: VERSIONS });
      const broken = await remote.step({ breakage: BREAKAGE });
      const state = await remote.episodeState();
      if (broken.current_phase !== 'repair' || !state) throw new Error('no repair phase');
      const r = await remote.step({ repair: { unified_diff: createRepairDiff(broken.script_content, state.original_script) } });
      if (!r.done) throw new Error('not done');
    } finally {
      await remote.dispose();
    }
  };
  // The steady state: one episode first computes the task's reference verification (cached after),
  // and the pool of the episodes' shape (`--warm` prewarms the snapshot's) is ready before the window.
  await episode(999_999);
  const before = warmPool
    .stats()
    .keys.reduce((s, k) => ({ claims: s.claims + k.claims, misses: s.misses + k.misses }), { claims: 0, misses: 0 });
  const until = performance.now() + seconds * 1000;
  const worker = async (id: number) => {
    for (let i = 0; performance.now() < until; i++) {
      try {
        await episode(id * 1000 + i);
        done++;
      } catch (e) {
        failed++;
        firstError ||= (e as Error).message;
      }
    }
  };
  const t = performance.now();
  await Promise.all(Array.from({ length: sessions }, (_, i) => worker(i)));
  const elapsed = (performance.now() - t) / 1000;
  const stats = warmPool.stats();
  const claims = stats.keys.reduce((s, k) => s + k.claims, 0) - before.claims;
  const misses = stats.keys.reduce((s, k) => s + k.misses, 0) - before.misses;
  await server.close();
  await warmPool.clear();
  // Episodes started within the window, all counted to the end (with 64 sessions on 2 run slots one takes longer than the window).
  const line = `  serve simulated, ${String(sessions).padStart(2)} sessions, warm ${warm ? 'on ' : 'off'}: ${(done / elapsed).toFixed(2)} episodes/s (${done} in ${elapsed.toFixed(0)} s, ${failed} failed${firstError ? ` (${firstError.slice(0, 120)})` : ''})${warm ? `; pool claims ${claims}, misses ${misses} (runs in the window)` : ''}`;
  table.push(line);
  console.log(line);
  setWarm(undefined);
}

async function main(): Promise<void> {
  const header = ['| what | n | p50 ms | p95 ms | p99 ms |', '| --- | --- | --- | --- | --- |'];
  console.log(header.join('\n'));
  table.push(...header);
  warmPool.setLog((l) => console.log(`  ${l}`));
  await perRun('simulated', Number(values.runs));
  await perEpisode('simulated', Number(values.episodes));
  await warmPool.clear();
  if (!values['skip-real']) {
    await perRun('real', Number(values['real-runs']));
    // The episodes' runs have their task's shape: the snapshot's zygotes would only hold memory.
    await warmPool.clear();
    await perEpisode('real', Number(values['real-episodes']));
    await warmPool.clear();
  }
  if (!values['skip-serve']) {
    const s = Number(values['serve-seconds']);
    for (const sessions of values['serve-sessions'].split(',').map(Number))
      for (const warm of [false, true]) await serveThroughput(sessions, warm, s);
  }
  console.log(`\n# warm bench, snapshot ${SNAPSHOT}, task ${TASK}\n${table.join('\n')}`);
  await warmPool.clear();
  rmSync(parentDir, { recursive: true, force: true });
}

main().catch(async (e: unknown) => {
  console.error(e);
  await warmPool.clear();
  process.exitCode = 1;
});

// Load test of `forgeenv serve`, bounded and on loopback only (numbers, not assertions):
//   npm run bench:serve [-- --scenario load|flood|both --sessions 64 --flood-sessions 8 --task distilbert_sst2 --max-runs N]
//
// Scenario `flood` (the output flood): `--flood-sessions` sessions play ordinary episodes twice, once
// alone (quiet) and once while one more session plays episodes whose repair prints a ~1 MiB token
// without spaces (`/x/x/x…`, the input that made path scrubbing quadratic and blocked the event loop
// for tens of seconds). It prints the others' episode p95 in both runs and their ratio (target:
// at most 2x), and the server's responsiveness (GET /health latency, sampled every 20 ms).
//
// Scenario `load`:
// Starts `forgeenv serve` (simulated mode) as a child process, then opens N concurrent WebSocket
// sessions through RemoteBackend; each plays reset -> break (RenameApiCall) -> repair (the oracle
// diff) and closes its session as soon as it is done, while the others are still running, which
// is exactly when the old dispose() killed every other session's run. Prints throughput, p50/p95
// latencies, the server's peak RSS, and how many runs were lost (no answer, an error, a dropped
// connection) or cross-killed (a run ended by someone else: no exit code, "cancelled"/"killed").
// Exits 1 if any run was lost or cross-killed (or, in the flood scenario, an ordinary episode failed).
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { infoText } from '../src/env/schemas';
import { createRepairDiff } from '../src/env/diff/diff';
import { RemoteBackend } from '../src/env/openenv/remoteBackend';

const { values } = parseArgs({
  options: {
    scenario: { type: 'string', default: 'both' },
    'flood-sessions': { type: 'string', default: '8' },
    sessions: { type: 'string', default: '64' },
    task: { type: 'string', default: 'distilbert_sst2' },
    'max-runs': { type: 'string', default: String(availableParallelism()) },
  },
});
const SESSIONS = Number(values.sessions);
const FLOOD_SESSIONS = Number(values['flood-sessions']);
/** The flooding repair's output: `/x` repeated, about 1 MiB, just under the default 1 MiB output cap. */
const FLOOD_CHARS = (1 << 20) - 16 * 1024;
const TASK = values.task;
const BREAK = { breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } } };

interface Outcome {
  ok: boolean;
  lost?: string;
  crossKilled?: string;
  episodeMs: number;
  resetMs: number;
  breakMs: number;
  repairMs: number;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
}

function killedNote(execution: unknown, trace: string | null): string | undefined {
  const e = execution as { exit_code?: number | null } | undefined;
  if (!e || e.exit_code === null || e.exit_code === undefined) return 'the run has no exit code (killed)';
  if (/cancelled|killed|shutting down/i.test(trace ?? '')) return `the run was ended: ${trace?.split('\n').pop()}`;
  return undefined;
}

async function episode(url: string, i: number): Promise<Outcome> {
  const remote = new RemoteBackend(url, 600_000);
  const t0 = performance.now();
  const out: Outcome = { ok: false, episodeMs: 0, resetMs: 0, breakMs: 0, repairMs: 0 };
  try {
    await remote.reset({ task_id: TASK, seed: i, episode_id: `bench-${i}` });
    const t1 = performance.now();
    const broken = await remote.step(BREAK);
    const t2 = performance.now();
    if (broken.current_phase !== 'repair')
      return { ...out, lost: `break answered phase ${broken.current_phase}: ${infoText(broken.info.error ?? '')}` };
    out.crossKilled = killedNote(broken.info.broken_execution, broken.error_trace);
    if (out.crossKilled) return out;
    const state = await remote.episodeState();
    if (!state) return { ...out, lost: 'no episode state' };
    const done = await remote.step({ repair: { unified_diff: createRepairDiff(broken.script_content, state.original_script) } });
    const t3 = performance.now();
    out.crossKilled = killedNote(done.info.repair_execution, done.error_trace);
    if (out.crossKilled) return out;
    if (!done.done || done.info.success !== true) return { ...out, lost: `repair not scored as a success: ${done.error_trace ?? ''}` };
    return { ok: true, episodeMs: t3 - t0, resetMs: t1 - t0, breakMs: t2 - t1, repairMs: t3 - t2 };
  } catch (e) {
    return { ...out, lost: (e as Error).message };
  } finally {
    // Close at once, while other sessions still run: this is what used to kill their runs.
    await remote.dispose();
  }
}

function peakRssMb(pid: number): number {
  const m = /VmHWM:\s+(\d+)\s*kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

interface Served {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

async function serve(maxSessions: number): Promise<Served> {
  const root = join(__dirname, '..');
  const child = spawn(
    process.execPath,
    [join(root, 'bin', 'forgeenv.js'), 'serve', '--port', '0', '--max-sessions', String(maxSessions), '--max-runs', values['max-runs']],
    {
      env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (c: Buffer) => {
      text += c.toString();
      const m = /on (http:\/\/[^ ]+) /.exec(text);
      if (m) resolve(m[1]);
    });
    child.once('exit', (code) => reject(new Error(`forgeenv serve exited (${code})`)));
  });
  return {
    url,
    child,
    async stop() {
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
    },
  };
}

const row = (name: string, xs: number[]) =>
  console.log(
    `${name.padEnd(24)} p50 ${pct(xs, 50).toFixed(0).padStart(6)} ms   p95 ${pct(xs, 95).toFixed(0).padStart(6)} ms   max ${Math.max(...xs)
      .toFixed(0)
      .padStart(6)} ms`,
  );

async function loadScenario(): Promise<boolean> {
  // One slot more than the sessions measured: the warm-up session's close may still be in flight
  // when they connect, and a 65th session would be refused with 1013 (counted as a lost run).
  const server = await serve(SESSIONS + 1);
  const { url, child } = server;
  const baselineMb = peakRssMb(child.pid!);
  console.log(
    `# forgeenv serve load test: ${SESSIONS} concurrent sessions, task ${TASK}, simulated mode, max ${values['max-runs']} runs at once, ${availableParallelism()} cores`,
  );
  // Warm-up: one episode alone (bytecode caches), not counted.
  await episode(url, 100_000);

  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => episode(url, i)));
  const wall = performance.now() - t0;
  const peakMb = peakRssMb(child.pid!);
  await server.stop();

  const ok = outcomes.filter((o) => o.ok);
  const lost = outcomes.filter((o) => o.lost);
  const crossKilled = outcomes.filter((o) => o.crossKilled);
  console.log(`episodes completed      ${ok.length}/${SESSIONS} in ${(wall / 1000).toFixed(1)} s`);
  console.log(
    `throughput              ${((ok.length / wall) * 1000).toFixed(2)} episodes/s (${(((ok.length * 2) / wall) * 1000).toFixed(2)} scored runs/s)`,
  );
  if (ok.length) {
    row(
      'episode latency',
      ok.map((o) => o.episodeMs),
    );
    row(
      '  reset',
      ok.map((o) => o.resetMs),
    );
    row(
      '  break (1 run)',
      ok.map((o) => o.breakMs),
    );
    row(
      '  repair (1 run)',
      ok.map((o) => o.repairMs),
    );
  }
  console.log(
    `server peak RSS         ${peakMb.toFixed(0)} MB (idle after start: ${baselineMb.toFixed(0)} MB; script processes not included)`,
  );
  console.log(`lost runs               ${lost.length}`);
  console.log(`cross-killed runs       ${crossKilled.length}`);
  for (const o of [...lost, ...crossKilled].slice(0, 5)) console.log(`  e.g. ${o.lost ?? o.crossKilled}`);
  return lost.length === 0 && crossKilled.length === 0;
}

/** One episode whose repair is the oracle plus a print of FLOOD_CHARS characters without a space. */
interface FloodOutcome {
  ok: boolean;
  /** The flooding repair run: exit code, whether its output hit the cap, and its wall time on the server. */
  exitCode?: number | null;
  truncated?: boolean;
  runMs?: number;
  note?: string;
}

async function floodEpisode(url: string, i: number): Promise<FloodOutcome> {
  const remote = new RemoteBackend(url, 600_000);
  try {
    await remote.reset({ task_id: TASK, seed: 50_000 + i });
    const broken = await remote.step(BREAK);
    const state = await remote.episodeState();
    if (broken.current_phase !== 'repair' || !state) return { ok: false, note: 'the break did not reach the repair phase' };
    const flooding = `${state.original_script.replace(/\n*$/, '\n')}print("/x" * ${FLOOD_CHARS / 2})  # flood ${i}\n`;
    const done = await remote.step({ repair: { unified_diff: createRepairDiff(broken.script_content, flooding) } });
    const exec = done.info.repair_execution as { exit_code?: number | null; output_truncated?: boolean; wall_time_ms?: number } | undefined;
    return {
      ok: exec?.exit_code === 0,
      exitCode: exec?.exit_code,
      truncated: exec?.output_truncated,
      runMs: exec?.wall_time_ms,
      note: exec?.exit_code === 0 ? undefined : `the flooding run ended with ${String(exec?.exit_code)}`,
    };
  } catch (e) {
    return { ok: false, note: (e as Error).message };
  } finally {
    await remote.dispose();
  }
}

/** GET /health every 20 ms until stopped: how long the server's event loop keeps a trivial request waiting. */
function probeHealth(url: string): { stop(): Promise<number[]> } {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t0 = performance.now();
      await fetch(`${url}/health`).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      );
      latencies.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return latencies;
    },
  };
}

async function floodScenario(): Promise<boolean> {
  const server = await serve(FLOOD_SESSIONS + 2);
  const { url } = server;
  console.log(
    `# output flood: ${FLOOD_SESSIONS} sessions of ordinary episodes (task ${TASK}), quiet and beside one session whose repairs print ${(FLOOD_CHARS / 1024).toFixed(0)} KiB of "/x" without a space; max ${values['max-runs']} runs at once, ${availableParallelism()} cores`,
  );
  await episode(url, 200_000); // warm-up, not counted
  const flood = await floodEpisode(url, -1); // warm-up of the flood path (worker start), not counted
  if (!flood.ok) console.log(`flood warm-up failed: ${flood.note}`);

  const round = async (name: string, base: number) => {
    const health = probeHealth(url);
    const outcomes = await Promise.all(Array.from({ length: FLOOD_SESSIONS }, (_, i) => episode(url, base + i)));
    return { name, outcomes, health: await health.stop() };
  };
  const quiet = await round('quiet', 300_000);
  let flooding = true;
  const floods: FloodOutcome[] = [];
  const flooder = (async () => {
    for (let i = 0; flooding; i++) floods.push(await floodEpisode(url, i));
  })();
  const loud = await round('flood', 400_000);
  flooding = false;
  await flooder;
  await server.stop();

  let fine = true;
  const p95s: number[] = [];
  for (const r of [quiet, loud]) {
    const ok = r.outcomes.filter((o) => o.ok);
    const bad = r.outcomes.filter((o) => !o.ok);
    fine &&= bad.length === 0;
    console.log(
      `${r.name} run: ${ok.length}/${FLOOD_SESSIONS} episodes completed${bad.length ? ` (e.g. ${bad[0].lost ?? bad[0].crossKilled})` : ''}`,
    );
    if (ok.length)
      row(
        `  episode latency`,
        ok.map((o) => o.episodeMs),
      );
    row(`  GET /health`, r.health);
    p95s.push(
      ok.length
        ? pct(
            ok.map((o) => o.episodeMs),
            95,
          )
        : NaN,
    );
  }
  const floodsOk = floods.filter((f) => f.ok);
  console.log(
    `flooding episodes       ${floodsOk.length}/${floods.length} printed their ${(FLOOD_CHARS / 1024).toFixed(0)} KiB and exited 0 during the flood run` +
      ` (output cap hit: ${floods.filter((f) => f.truncated).length}; flooding run p50 ${
        floodsOk.length
          ? pct(
              floodsOk.map((f) => f.runMs ?? NaN),
              50,
            ).toFixed(0)
          : 'n/a'
      } ms)` +
      (floods.length > floodsOk.length ? `; e.g. ${floods.find((f) => !f.ok)?.note}` : ''),
  );
  const ratio = p95s[1] / p95s[0];
  console.log(`episode p95 ratio       ${ratio.toFixed(2)}x (flood / quiet; target <= 2x)`);
  return fine && floodsOk.length > 0;
}

async function main(): Promise<void> {
  const scenario = values.scenario;
  if (scenario !== 'load' && scenario !== 'flood' && scenario !== 'both')
    throw new Error(`--scenario must be load, flood or both, not ${scenario}`);
  let ok = true;
  if (scenario !== 'flood') ok = (await loadScenario()) && ok;
  if (scenario !== 'load') ok = (await floodScenario()) && ok;
  process.exitCode = ok ? 0 : 1;
}

void main();

// Load test of `forgeenv serve`, bounded and on loopback only (numbers, not assertions):
//   npm run bench:serve [-- --sessions 64 --task distilbert_sst2 --max-runs N]
// Starts `forgeenv serve` (simulated mode) as a child process, then opens N concurrent WebSocket
// sessions through RemoteBackend; each plays reset -> break (RenameApiCall) -> repair (the oracle
// diff) and closes its session as soon as it is done, while the others are still running, which
// is exactly when the old dispose() killed every other session's run. Prints throughput, p50/p95
// latencies, the server's peak RSS, and how many runs were lost (no answer, an error, a dropped
// connection) or cross-killed (a run ended by someone else: no exit code, "cancelled"/"killed").
// Exits 1 if any run was lost or cross-killed.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { createRepairDiff } from '../src/env/diff';
import { RemoteBackend } from '../src/env/remoteBackend';

const { values } = parseArgs({
  options: {
    sessions: { type: 'string', default: '64' },
    task: { type: 'string', default: 'distilbert_sst2' },
    'max-runs': { type: 'string', default: String(availableParallelism()) },
  },
});
const SESSIONS = Number(values.sessions);
const TASK = values.task!;
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
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : NaN;
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
    if (broken.current_phase !== 'repair') return { ...out, lost: `break answered phase ${broken.current_phase}: ${String(broken.info.error ?? '')}` };
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

async function main(): Promise<void> {
  const root = join(__dirname, '..');
  const child = spawn(process.execPath, [join(root, 'bin', 'forgeenv.js'), 'serve', '--port', '0', '--max-sessions', String(SESSIONS), '--max-runs', values['max-runs']!], {
    env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout!.on('data', (c: Buffer) => {
      text += c.toString();
      const m = /on (http:\/\/[^ ]+) /.exec(text);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`forgeenv serve exited (${code})`)));
  });
  const baselineMb = peakRssMb(child.pid!);
  console.log(`# forgeenv serve load test: ${SESSIONS} concurrent sessions, task ${TASK}, simulated mode, max ${values['max-runs']} runs at once, ${availableParallelism()} cores`);
  // Warm-up: one episode alone (bytecode caches), not counted.
  await episode(url, 100_000);

  const t0 = performance.now();
  const outcomes = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => episode(url, i)));
  const wall = performance.now() - t0;
  const peakMb = peakRssMb(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));

  const ok = outcomes.filter((o) => o.ok);
  const lost = outcomes.filter((o) => o.lost);
  const crossKilled = outcomes.filter((o) => o.crossKilled);
  const row = (name: string, xs: number[]) => console.log(`${name.padEnd(22)} p50 ${pct(xs, 50).toFixed(0).padStart(6)} ms   p95 ${pct(xs, 95).toFixed(0).padStart(6)} ms   max ${Math.max(...xs).toFixed(0).padStart(6)} ms`);
  console.log(`episodes completed      ${ok.length}/${SESSIONS} in ${(wall / 1000).toFixed(1)} s`);
  console.log(`throughput              ${((ok.length / wall) * 1000).toFixed(2)} episodes/s (${((ok.length * 2) / wall * 1000).toFixed(2)} scored runs/s)`);
  if (ok.length) {
    row('episode latency', ok.map((o) => o.episodeMs));
    row('  reset', ok.map((o) => o.resetMs));
    row('  break (1 run)', ok.map((o) => o.breakMs));
    row('  repair (1 run)', ok.map((o) => o.repairMs));
  }
  console.log(`server peak RSS         ${peakMb.toFixed(0)} MB (idle after start: ${baselineMb.toFixed(0)} MB; script processes not included)`);
  console.log(`lost runs               ${lost.length}`);
  console.log(`cross-killed runs       ${crossKilled.length}`);
  for (const o of [...lost, ...crossKilled].slice(0, 5)) console.log(`  e.g. ${o.lost ?? o.crossKilled}`);
  process.exitCode = lost.length || crossKilled.length ? 1 : 0;
}

void main();

// Benchmarks (numbers, not assertions): run with `npm run bench`.
// 1. primitive application per script vs Python's own ast.parse + ast.unparse of the same script;
// 2. episode start (reset + drift + broken run) vs a bare `python3 broken.py`;
// 3. scoring a repair (apply diff + run + rewards) vs a bare run of the repaired script.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { startHumanEpisode } from '../src/env/episode/humanEpisode';
import { simlibsDir } from '../src/env/paths';
import { applicablePrimitives, applySpec } from '../src/env/primitives/registry';

const REPS = Number(process.env.BENCH_REPS ?? 5);
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const ms = (x: number) => x.toFixed(2).padStart(8);

function bareRun(script: string, versions: Record<string, string>): number {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-bench-'));
  writeFileSync(join(dir, 'train.py'), script);
  const t0 = performance.now();
  spawnSync('python3', ['-u', 'train.py'], {
    cwd: dir,
    // The same interpreter settings as the executor's simulated mode (shared bytecode cache included),
    // so the difference is our overhead only.
    env: {
      ...process.env,
      PYTHONPATH: simlibsDir(),
      FORGEENV_LIBRARY_VERSIONS: JSON.stringify(versions),
      PYTHONHASHSEED: '0',
      PYTHONNOUSERSITE: '1',
      PYTHONUNBUFFERED: '1',
      PYTHONPYCACHEPREFIX: join(tmpdir(), `forgeenv-pycache-${process.getuid?.() ?? 'user'}`),
    },
  });
  const t = performance.now() - t0;
  rmSync(dir, { recursive: true, force: true });
  return t;
}

async function main(): Promise<void> {
  const env = new ForgeEnvironment();
  const tasks = env.tasks.all;

  console.log(`# 1. primitive application (median of ${REPS}, ms) vs Python ast.parse+ast.unparse (in-process, median of ${REPS}, ms)`);
  const py = spawnSync(
    'python3',
    [
      '-c',
      `
import ast, json, sys, time
out = {}
for path in sys.argv[1:]:
    src = open(path).read()
    ts = []
    for _ in range(${REPS}):
        t0 = time.perf_counter(); ast.unparse(ast.parse(src)); ts.append((time.perf_counter() - t0) * 1000)
    out[path] = sorted(ts)[len(ts) // 2]
print(json.dumps(out))
`,
      ...tasks.map((t) => (t.source === 'builtin' ? join(__dirname, '../resources/tasks', `${t.task_id}.py`) : t.source)),
    ],
    { encoding: 'utf8' },
  );
  const pyTimes = JSON.parse(py.stdout || '{}') as Record<string, number>;
  console.log(`${'task'.padEnd(24)} lines  prims  candidates(ms)  apply+inverse(ms)  python ast(ms)`);
  for (const t of tasks) {
    const tc: number[] = [];
    const ta: number[] = [];
    let count = 0;
    for (let i = 0; i < REPS; i++) {
      let t0 = performance.now();
      const app = applicablePrimitives(t.script_content, t.library_versions);
      tc.push(performance.now() - t0);
      count = app.length;
      t0 = performance.now();
      for (const { primitive, candidates } of app) {
        const r = applySpec(t.script_content, { primitive_type: primitive.name, params: candidates[0].params });
        applySpec(r.script, r.inverse);
      }
      ta.push((performance.now() - t0) / Math.max(1, count));
    }
    const pyKey = Object.keys(pyTimes).find((k) => k.endsWith(`/${t.task_id}.py`));
    console.log(
      `${t.task_id.padEnd(24)} ${String(t.script_content.split('\n').length).padStart(5)}  ${String(count).padStart(5)}  ${ms(median(tc))}        ${ms(median(ta))} /prim   ${pyKey ? ms(pyTimes[pyKey]) : '     n/a'}`,
    );
  }

  console.log(`\n# 2. episode start (reset + drift + broken run) vs bare python3 broken.py (median of ${REPS}, ms)`);
  console.log(`${'task'.padEnd(24)} episode  bare-run  overhead`);
  const scoreRows: string[] = [];
  for (const t of tasks) {
    const te: number[] = [];
    const tb: number[] = [];
    const ts: number[] = [];
    const tr: number[] = [];
    for (let i = 0; i < REPS; i++) {
      let t0 = performance.now();
      const start = await startHumanEpisode(env, { taskId: t.task_id, seed: i });
      te.push(performance.now() - t0);
      tb.push(bareRun(start.brokenScript, start.libraryVersions));
      const diff = env.oracleDiff();
      t0 = performance.now();
      await env.evaluateRepair(diff);
      ts.push(performance.now() - t0);
      tr.push(bareRun(start.originalScript, start.libraryVersions));
    }
    console.log(`${t.task_id.padEnd(24)} ${ms(median(te))} ${ms(median(tb))} ${ms(median(te) - median(tb))}`);
    scoreRows.push(`${t.task_id.padEnd(24)} ${ms(median(ts))} ${ms(median(tr))} ${ms(median(ts) - median(tr))}`);
  }
  console.log(`\n# 3. scoring a repair (apply + run + rewards) vs bare run of the repaired script (median of ${REPS}, ms)`);
  console.log(`${'task'.padEnd(24)} scoring  bare-run  overhead`);
  for (const r of scoreRows) console.log(r);
  await env.dispose();
}

void main();

// Real-world scripts made into tasks by the project itself, checked in real mode (numbers, not
// assertions). Each script of ../shared/realworld/scripts (read from there, never copied into the
// project) goes into a fresh task folder with no tasks.json: its args are what the task loader
// derives, nothing is hand-tuned. Per script, on one snapshot (default 2026-11, a managed venv):
//   breakage   the drift generator's proposal applied (or why not);
//   oracle     the inverse repair scored by the environment: the original's reference run, the
//              verifier on both artifacts, success or the first finding;
//   fake       `raise SystemExit(0)` above the broken script, scored the same way (must never succeed).
//   node --import tsx bench/realworldTasks.ts [--snapshot 2026-11] [--jobs 2] [--only 05,21] [--timeout 180]
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createRepairDiff } from '../src/env/diff/diff';
import { BaselineDriftGenerator } from '../src/env/drift/generator';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { snapshotVersions } from '../src/env/snapshots/versions';
import { infoText } from '../src/env/schemas';

const { values } = parseArgs({
  options: {
    snapshot: { type: 'string', default: '2026-11' },
    jobs: { type: 'string', default: '2' },
    only: { type: 'string' },
    timeout: { type: 'string', default: '180' },
  },
});
const SCRIPTS = resolve(__dirname, '..', '..', 'shared', 'realworld', 'scripts');

interface Row {
  id: string;
  breakage: string;
  oracle: string;
  fake: string;
  seconds: number;
}

async function main(): Promise<void> {
  if (!existsSync(SCRIPTS)) return void console.log(`skipped: ${SCRIPTS} is absent`);
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-realworld-tasks-'));
  const keys = values.only?.split(',').filter(Boolean);
  for (const f of readdirSync(SCRIPTS)
    .filter((n) => n.endsWith('.py'))
    .sort()) {
    if (!keys || keys.some((k) => f.startsWith(k))) copyFileSync(join(SCRIPTS, f), join(dir, `t${f}`));
  }
  const versions = snapshotVersions(values.snapshot);
  const timeoutMs = Number(values.timeout) * 1000;
  const envs = Array.from(
    { length: Math.max(1, Number(values.jobs)) },
    () => new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs }),
  );
  const ids = envs[0].tasks.all.filter((t) => t.source !== 'builtin').map((t) => t.task_id);
  const rows: Row[] = [];
  const t0 = performance.now();
  await Promise.all(
    envs.map(async (env) => {
      for (let id = ids.shift(); id; id = ids.shift()) {
        const started = performance.now();
        const row: Row = { id, breakage: '', oracle: '', fake: '', seconds: 0 };
        try {
          const obs = await env.reset({ task_id: id, seed: 3, library_versions: versions });
          const spec = new BaselineDriftGenerator(3).propose(obs.target_category, obs.script_content, obs.library_versions);
          const broken = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params ?? {} } });
          if (broken.info.error) throw new Error(`breakage refused: ${infoText(broken.info.error)}`);
          row.breakage = `${spec.primitive_type}${broken.info.broke ? '' : ' (did not break)'}`;
          const oracle = await env.evaluateRepair(env.oracleDiff());
          const lastError = oracle.error_trace.trim().split('\n').pop() ?? '';
          row.oracle = oracle.success
            ? `success (${oracle.verification?.check})`
            : oracle.execution?.exit_code !== 0
              ? `original fails: ${lastError}`
              : `not verified: ${oracle.verification?.findings[0] ?? oracle.findings[0] ?? ''}`;
          const fake = await env.evaluateRepair(createRepairDiff(broken.script_content, `raise SystemExit(0)\n${broken.script_content}`));
          row.fake = fake.success ? 'SUCCEEDED' : `no (reward ${fake.reward})`;
        } catch (e) {
          row.oracle ||= `error: ${(e as Error).message.split('\n')[0]}`;
        }
        row.seconds = (performance.now() - started) / 1000;
        rows.push(row);
        console.log(
          `${row.id.padEnd(46)} ${row.seconds.toFixed(0).padStart(4)}s  ${row.breakage.padEnd(30)} oracle ${row.oracle.slice(0, 150)} | fake ${row.fake}`,
        );
      }
    }),
  );
  await Promise.all(envs.map((e) => e.dispose()));
  rmSync(dir, { recursive: true, force: true });
  const ok = rows.filter((r) => r.oracle.startsWith('success')).length;
  const fakes = rows.filter((r) => r.fake);
  const ran = rows.filter((r) => r.oracle.startsWith('success') || r.oracle.startsWith('not verified')).length;
  console.log(
    `\n${ran}/${rows.length} originals run clean in real mode; ${ok}/${rows.length} oracle repairs verified; fakes succeeded: ${fakes.filter((r) => r.fake === 'SUCCEEDED').length}/${fakes.length}; wall ${((performance.now() - t0) / 1000).toFixed(0)} s`,
  );
}

void main();

// What the verifier costs (numbers, not assertions): npm run bench:verifier [-- --real] [-- --tasks a,b]
// For each task, in one process so machine load hits every column alike:
//   run       the repaired script alone through the executor (what Run & Score cost before the verifier);
//   first     Run & Score of the oracle repair, including the once-per-process reference (the unbroken
//             original run and verified);
//   scored    Run & Score of a second repair (reference cached): the run plus the verifier;
//   verifier  scored − run, the verifier's own cost per Run & Score.
// --real adds real mode (the snapshot venv; minutes: imports of torch and transformers).
import { parseArgs } from 'node:util';
import { createRepairDiff } from '../src/env/diff/diff';
import { BaselineDriftGenerator } from '../src/env/drift/generator';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { executeScript } from '../src/env/run/executor';
import { prepareRealRun } from '../src/env/run/realMode';
import type { ExecutionMode } from '../src/env/schemas';
import { infoText } from '../src/env/schemas';

const { values } = parseArgs({ options: { real: { type: 'boolean', default: false }, tasks: { type: 'string' } } });
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const col = (x: number | string) => (typeof x === 'number' ? `${Math.round(x)}` : x).padStart(9);

async function bench(mode: ExecutionMode, taskIds: string[] | undefined): Promise<void> {
  const env = new ForgeEnvironment({ mode, timeoutMs: 900_000 });
  const ids = taskIds ?? env.tasks.all.filter((t) => t.source === 'builtin').map((t) => t.task_id);
  console.log(`\n${mode} mode (ms)\n${'task'.padEnd(24)}${col('run')}${col('first')}${col('scored')}${col('verifier')}  check`);
  const verifierMs: number[] = [];
  const runMs: number[] = [];
  for (const id of ids) {
    const obs = await env.reset({ task_id: id, seed: 5 });
    const spec = new BaselineDriftGenerator(5).propose(obs.target_category, obs.script_content, obs.library_versions);
    const broken = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params ?? {} } });
    if (broken.info.error) {
      console.log(`${id.padEnd(24)} breakage refused: ${infoText(broken.info.error)}`);
      continue;
    }
    const original = env.tasks.getById(id)!.script_content;
    let t = performance.now();
    const first = await env.evaluateRepair(env.oracleDiff());
    const firstMs = performance.now() - t;
    const again = `${original}# scored again\n`;
    t = performance.now();
    const second = await env.evaluateRepair(createRepairDiff(broken.script_content, again));
    const scoredMs = performance.now() - t;
    const real = mode === 'real' ? await prepareRealRun({ libraryVersions: obs.library_versions }) : undefined;
    t = performance.now();
    await executeScript({
      script: again,
      mode,
      libraryVersions: obs.library_versions,
      validate: false,
      timeoutMs: 900_000,
      ...(real
        ? { interpreter: real.interpreter, extraEnv: real.env, bytecodeCache: real.bytecodeCache, privateCopies: real.privateCopies }
        : {}),
    });
    const run = performance.now() - t;
    runMs.push(run);
    verifierMs.push(scoredMs - run);
    const ok = first.success && second.success ? (first.verification?.check ?? '') : `NOT VERIFIED: ${first.findings[0] ?? ''}`;
    console.log(`${id.padEnd(24)}${col(run)}${col(firstMs)}${col(scoredMs)}${col(scoredMs - run)}  ${ok}`);
  }
  if (verifierMs.length) console.log(`${'median'.padEnd(24)}${col(median(runMs))}${col('')}${col('')}${col(median(verifierMs))}`);
  await env.dispose();
}

async function main(): Promise<void> {
  const tasks = values.tasks?.split(',').filter(Boolean);
  await bench('simulated', tasks);
  if (values.real) await bench('real', tasks ?? ['gpt2_textgen', 'distilbert_sst2']);
}

void main();

// Real mode's costs, measured in one run:
//   node --import tsx bench/realMode.bench.ts [--snapshot 2026-11] [--task distilbert_sst2] [--build-venv]
// 1. the snapshot venv: built now with --build-venv (into a temporary cache, uv's download cache
//    warm or not), else the build time its ready marker recorded;
// 2. the local hub: built from scratch with the venv's python into a throwaway key, then deleted;
// 3. one episode (break + oracle repair) of the same task in simulated and in real mode.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { ForgeEnvironment } from '../src/env/episode/environment';
import { ensureLocalHub, localHubDir } from '../src/env/hub/localHub';
import { prepareRealRun } from '../src/env/run/realMode';
import { getSnapshot } from '../src/env/snapshots/registry';
import { ensureSnapshotVenv, isSnapshotVenvReady, readReadyMarker, snapshotPython } from '../src/env/snapshots/venv';
import { infoText } from '../src/env/schemas';

const { values } = parseArgs({
  options: {
    snapshot: { type: 'string', default: '2026-11' },
    task: { type: 'string', default: 'distilbert_sst2' },
    'build-venv': { type: 'boolean', default: false },
  },
});
const SNAPSHOT = values.snapshot;
const TASK = values.task;
const VERSIONS = { ...getSnapshot(SNAPSHOT).versions };
const BREAKAGE = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t = performance.now();
  const r = await fn();
  return [r, performance.now() - t];
}

async function episode(mode: 'simulated' | 'real'): Promise<{ broken: number; oracle: number; reward: number; success: boolean }> {
  const env = new ForgeEnvironment({ mode, timeoutMs: 900_000 });
  try {
    await env.reset({ taskId: TASK, seed: 7, library_versions: VERSIONS });
    const [obs, broken] = await timed(() => env.step({ breakage: BREAKAGE }));
    if (obs.info.error) throw new Error(infoText(obs.info.error));
    const [ev, oracle] = await timed(() => env.evaluateRepair(env.oracleDiff()));
    return { broken, oracle, reward: ev.reward, success: ev.success };
  } finally {
    await env.dispose();
  }
}

async function main(): Promise<void> {
  console.log(`real mode bench: snapshot ${SNAPSHOT}, task ${TASK}`);
  if (values['build-venv']) {
    const saved = process.env.FORGEENV_CACHE_DIR;
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-bench-venv-'));
    process.env.FORGEENV_CACHE_DIR = dir;
    try {
      const [, ms] = await timed(() => ensureSnapshotVenv(SNAPSHOT, { onProgress: (m) => console.log(`  ${m}`) }));
      console.log(`venv build (now, uv cache as it is): ${secs(ms)}`);
    } finally {
      if (saved === undefined) delete process.env.FORGEENV_CACHE_DIR;
      else process.env.FORGEENV_CACHE_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (!isSnapshotVenvReady(SNAPSHOT)) {
    console.log(`venv ${SNAPSHOT}: not built; building it (progress below)`);
    const [, ms] = await timed(() => ensureSnapshotVenv(SNAPSHOT, { onProgress: (m) => console.log(`  ${m}`) }));
    console.log(`venv build: ${secs(ms)}`);
  } else {
    const m = readReadyMarker(SNAPSHOT);
    console.log(`venv build (recorded by its ready marker, ${m?.installer}, ${m?.created_at}): ${m?.seconds} s`);
  }

  const key = `bench-${process.pid}`;
  try {
    const [, hubMs] = await timed(() => ensureLocalHub(key, snapshotPython(SNAPSHOT)));
    console.log(`local hub build (8 models + tokenizers, 10 datasets, 3 metrics): ${secs(hubMs)}`);
  } finally {
    rmSync(localHubDir(key), { recursive: true, force: true });
  }
  // The episodes use the snapshot's own (cached) hub.
  const [, prepMs] = await timed(() => prepareRealRun({ libraryVersions: VERSIONS }));
  console.log(`real-mode preparation when venv and hub are cached: ${secs(prepMs)}`);

  const sim = await episode('simulated');
  const real = await episode('real');
  console.log(`episode ${TASK} (break + oracle repair)`);
  console.log(
    `  simulated: broken run ${secs(sim.broken)}, repaired run ${secs(sim.oracle)}, reward ${sim.reward}, success ${sim.success}`,
  );
  console.log(
    `  real:      broken run ${secs(real.broken)}, repaired run ${secs(real.oracle)}, reward ${real.reward}, success ${real.success}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

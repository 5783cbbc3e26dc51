// The warm runtime (src/env/warm/, docs/sandbox.md "Warm runtime"): a run in a zygote started ahead
// must be the cold run, only sooner. Real runs in the bubblewrap sandbox (skipped with the reason
// where it cannot work): a leak canary through the pool, probes of the interpreter's behaviour warm
// vs cold (exit code, stdout, stderr byte for byte), and every corpus task's episode warm vs cold.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { startHumanEpisode } from '../../src/env/episode/humanEpisode';
import { startServer } from '../../src/env/openenv/server';
import { runServeCommand } from '../../src/cli/serve';
import { executeScript, prewarmRuntime, warmPool, type RunOptions } from '../../src/env/run/executor';
import { probeSandbox } from '../../src/env/sandbox/detect';
import { loadCorpus } from '../../src/env/tasks/tasks';
import { snapshotVersions } from '../../src/env/snapshots/versions';
import { PROBES } from './warmProbes';

const parentDir = mkdtempSync(join(tmpdir(), 'forgeenv-warm-test-'));
let sandboxReason: string | undefined;
const savedWarm = process.env.FORGEENV_WARM;

before(async () => {
  const probe = await probeSandbox();
  if (!probe.ok) sandboxReason = `bubblewrap is unavailable: ${probe.reason}`;
});
after(async () => {
  await warmPool.clear();
  if (savedWarm === undefined) delete process.env.FORGEENV_WARM;
  else process.env.FORGEENV_WARM = savedWarm;
  rmSync(parentDir, { recursive: true, force: true });
});

function needsSandbox(t: TestContext): boolean {
  if (!sandboxReason) return true;
  if (process.env.FORGEENV_REQUIRE_SANDBOX === '1') assert.fail(`FORGEENV_REQUIRE_SANDBOX=1 but ${sandboxReason}`);
  t.skip(sandboxReason);
  return false;
}

const BASE: Omit<RunOptions, 'script'> = {
  mode: 'simulated',
  libraryVersions: snapshotVersions(),
  parentDir,
  timeoutMs: 60_000,
  validate: false,
  sandbox: { mode: 'bubblewrap' },
};

/** Runs `script` with FORGEENV_WARM set to `warm` for the duration. */
async function runWith(warm: '0' | 'force' | '', script: string, over: Partial<RunOptions> = {}) {
  process.env.FORGEENV_WARM = warm;
  try {
    return await executeScript({ ...BASE, script, ...over });
  } finally {
    delete process.env.FORGEENV_WARM;
  }
}

const POISON = String.raw`import json, os, random, sys, threading, time, types
import transformers
open("poison.txt", "w").write("A")
os.makedirs(os.path.join(os.environ["HOME"], ".cache", "poison"), exist_ok=True)
for d in ("/tmp", "/dev/shm"):
    open(os.path.join(d, "poison"), "w").write("A")
os.environ["FORGEENV_POISON"] = "A"
transformers.FORGEENV_POISON = "A"
json.dumps = lambda *a, **k: "POISONED"
sys.modules["forgeenv_poison"] = types.ModuleType("forgeenv_poison")
random.seed(1234)
def linger():
    while True:
        try:
            open("/tmp/lingering", "w").write(str(time.time()))
        except OSError:
            pass
        time.sleep(0.01)
threading.Thread(target=linger, daemon=True).start()
print("POISONED", os.getpid(), flush=True)
`;

const CANARY = String.raw`import json, os, random, sys, threading
import transformers
found = []
def check(what, bad):
    if bad:
        found.append(what)
check("run folder file", os.path.exists("poison.txt"))
check("home cache", os.path.exists(os.path.join(os.environ["HOME"], ".cache", "poison")))
check("/tmp file", os.path.exists("/tmp/poison") or os.path.exists("/tmp/lingering"))
check("/dev/shm file", os.path.exists("/dev/shm/poison"))
check("environment", "FORGEENV_POISON" in os.environ)
check("library attribute", hasattr(transformers, "FORGEENV_POISON"))
check("stdlib attribute", json.dumps({"a": 1}) != '{"a": 1}')
check("sys.modules", "forgeenv_poison" in sys.modules)
random.seed(1234)
seeded = random.random()
check("threads", len(threading.enumerate()) != 1)
pids = [p for p in os.listdir("/proc") if p.isdigit()]
print(json.dumps({"found": found, "pids": len(pids), "seeded": seeded}))
`;

describe('warm runtime', () => {
  test('leak canary: a warm run that changes everything it can reach leaves nothing for the next warm run', async (t) => {
    if (!needsSandbox(t)) return;
    delete process.env.FORGEENV_WARM;
    const w = await prewarmRuntime(BASE);
    assert.ok(!('error' in w), 'error' in w ? w.error : '');
    assert.ok(await warmPool.waitReady(w.key, 2, 180_000), JSON.stringify(warmPool.stats()));
    const a = await executeScript({ ...BASE, script: POISON, warm: true });
    assert.equal(a.runtime, 'warm', a.stderr);
    assert.match(a.stdout, /POISONED/, a.stderr);
    const b = await executeScript({ ...BASE, script: CANARY, warm: true });
    assert.equal(b.runtime, 'warm', b.stderr);
    assert.equal(b.exit_code, 0, b.stderr);
    const seen = JSON.parse(b.stdout.trim().split('\n').pop()!) as { found: string[]; pids: number };
    assert.deepEqual(seen.found, [], 'nothing of run A reached run B');
    assert.ok(seen.pids <= 4, `only the run's own processes are visible (${seen.pids})`);
    // The pool refills behind the claims, and its zygotes are visible.
    const stats = warmPool.stats().keys.find((k) => k.label === w.label);
    assert.ok(stats && stats.claims >= 2, JSON.stringify(stats));
    await warmPool.clear();
  });

  for (const [name, script] of Object.entries(PROBES)) {
    test(`same outcome warm and cold: ${name}`, async (t) => {
      if (!needsSandbox(t)) return;
      const cold = await runWith('0', script, { args: ['--flag', 'two words'] });
      const warm = await runWith('force', script, { args: ['--flag', 'two words'] });
      assert.equal(cold.runtime, 'cold');
      assert.equal(warm.runtime, 'warm', warm.stderr);
      assert.deepEqual(
        { exit: warm.exit_code, stdout: warm.stdout, stderr: warm.stderr },
        { exit: cold.exit_code, stdout: cold.stdout, stderr: cold.stderr },
      );
    });
  }

  test('same files warm and cold: a file the script never closed is flushed at shutdown', async (t) => {
    if (!needsSandbox(t)) return;
    const script =
      'import transformers\nf = open("unclosed.txt", "w")\nf.write("data " * 1000)\ntransformers.FORGEENV_FILE = open("kept.txt", "w")\ntransformers.FORGEENV_FILE.write("kept")\n';
    const read = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8');
    const cold = await runWith('0', script, { keepRunDir: true });
    const warm = await runWith('force', script, { keepRunDir: true });
    try {
      assert.equal(warm.runtime, 'warm', warm.stderr);
      assert.equal(read(cold.run_dir, 'unclosed.txt'), 'data '.repeat(1000));
      assert.equal(read(warm.run_dir, 'unclosed.txt'), read(cold.run_dir, 'unclosed.txt'));
      assert.equal(read(warm.run_dir, 'kept.txt'), read(cold.run_dir, 'kept.txt'));
    } finally {
      for (const d of [cold.run_dir, warm.run_dir]) if (d) rmSync(d, { recursive: true, force: true });
    }
  });

  test("same outcome warm and cold: every corpus task, broken run, trace and the oracle repair's reward", async (t) => {
    if (!needsSandbox(t)) return;
    const tasks = loadCorpus().tasks.map((x) => x.task_id);
    assert.ok(tasks.length >= 5, `corpus tasks: ${tasks.length}`);
    const outcome = async (warm: '0' | 'force', taskId: string) => {
      process.env.FORGEENV_WARM = warm;
      const env = new ForgeEnvironment({ mode: 'simulated', parentDir, sandbox: { mode: 'bubblewrap' } });
      try {
        const start = await startHumanEpisode(env, { taskId, seed: 7 });
        const obs = start.observation;
        const evaluation = await env.evaluateRepair(env.oracleDiff());
        return {
          runtime: [obs.info.runtime, evaluation.execution?.runtime],
          outcome: {
            primitive: obs.info.breakage_primitive,
            trace: obs.error_trace,
            brokenExit: start.brokenExecution.exit_code,
            brokenStdout: start.brokenExecution.stdout,
            brokenStderr: start.brokenExecution.stderr,
            exit: evaluation.execution?.exit_code,
            stdout: evaluation.execution?.stdout,
            reward: evaluation.reward,
            breakdown: evaluation.reward_breakdown,
          },
        };
      } finally {
        await env.dispose();
        delete process.env.FORGEENV_WARM;
      }
    };
    for (const id of tasks) {
      const cold = await outcome('0', id);
      const warm = await outcome('force', id);
      assert.deepEqual(cold.runtime, ['cold', 'cold'], id);
      assert.deepEqual(warm.runtime, ['warm', 'warm'], id);
      const strip = (o: typeof cold.outcome) =>
        JSON.parse(JSON.stringify(o, (k, v) => (k === 'wall_time_ms' || k === 'peak_memory_mb' ? undefined : v)));
      assert.deepEqual(strip(warm.outcome), strip(cold.outcome), id);
    }
  });

  test('a preparation step that prints is left to the script: it prints where a cold run does', async (t) => {
    if (!needsSandbox(t)) return;
    // A venv whose `trl` prints on import (the zygote imports trl ahead; the other libraries are absent, so skipped).
    const venv = join(parentDir, 'loud-venv');
    const made = spawnSync('python3', ['-m', 'venv', '--without-pip', venv]);
    assert.equal(made.status, 0, made.stderr?.toString());
    const site = spawnSync(join(venv, 'bin', 'python'), ['-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])']);
    writeFileSync(join(site.stdout.toString().trim(), 'trl.py'), 'import sys\nprint("trl: loud at import", file=sys.stderr)\n');
    const logged: string[] = [];
    warmPool.setLog((line) => logged.push(line));
    try {
      const loud = { mode: 'real' as const, interpreter: join(venv, 'bin', 'python'), libraryVersions: {} };
      const first = await runWith('force', 'print("run")\n', loud);
      assert.equal(first.runtime, 'cold', 'the zygote that printed serves no run');
      assert.ok(
        logged.some((l) => /trl prints while it loads/.test(l)),
        logged.join('\n'),
      );
      const quiet = await runWith('force', 'print("run")\n', loud);
      assert.equal(quiet.runtime, 'warm', `${quiet.stderr}\n${logged.join('\n')}`);
      assert.equal(quiet.stderr, '');
      const script = 'import trl\nprint("run")\n';
      const cold = await runWith('0', script, loud);
      const warm = await runWith('force', script, loud);
      assert.equal(warm.runtime, 'warm', warm.stderr);
      assert.equal(cold.stderr, 'trl: loud at import\n');
      assert.deepEqual([warm.exit_code, warm.stdout, warm.stderr], [cold.exit_code, cold.stdout, cold.stderr]);
    } finally {
      warmPool.setLog(undefined);
    }
  });

  test('FORGEENV_WARM=0 forces the cold path even with a ready zygote', async (t) => {
    if (!needsSandbox(t)) return;
    const w = await prewarmRuntime(BASE);
    assert.ok(!('error' in w));
    assert.ok(await warmPool.waitReady(w.key, 1, 180_000));
    const r = await runWith('0', 'print(1)\n', { warm: true });
    assert.equal(r.runtime, 'cold');
    assert.equal(r.stdout, '1\n');
    await warmPool.clear();
  });

  test('serve --warm: an unknown snapshot is a usage error; the pool starts with the server and shows in /health', async (t) => {
    const errs: string[] = [];
    assert.equal(
      await runServeCommand(
        ['--warm', '2026-11,1999-01'],
        () => undefined,
        (l) => errs.push(l),
      ),
      2,
    );
    assert.match(errs.join('\n'), /unknown snapshot 1999-01/);
    if (!needsSandbox(t)) return;
    const server = await startServer({ port: 0, host: '127.0.0.1', config: { mode: 'simulated', parentDir }, warm: ['2026-11'] });
    try {
      let health: { status: string; warm?: { keys: { label: string; ready: number }[] } } = { status: '' };
      for (let i = 0; i < 1200; i++) {
        health = (await (await fetch(`http://127.0.0.1:${server.port}/health`)).json()) as typeof health;
        if ((health.warm?.keys[0]?.ready ?? 0) >= 1) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.equal(health.status, 'healthy');
      assert.equal(health.warm?.keys[0]?.label, 'simulated 2026-11');
      assert.ok((health.warm?.keys[0]?.ready ?? 0) >= 1, JSON.stringify(health));
      assert.ok(!JSON.stringify(health).includes('PATH'), 'the environment of the runs is not in /health');
    } finally {
      await server.close();
    }
  });
});

// `real` execution mode end to end: corpus episodes run by the REAL libraries of a snapshot venv
// against the offline local hub, and the error messages for bad input. The episode tests skip (with
// the reason) when the snapshot venv is not built; build it with ensureSnapshotVenv('2026-11').
// Slow: each run imports torch + transformers (tens of seconds on a busy machine).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { EnvironmentError, ForgeEnvironment } from '../../src/env/episode/environment';
import { isLocalHubReady, localHubDir } from '../../src/env/hub/localHub';
import { prepareRealRun, probeLibraries, RealModeError, realModeEnv, snapshotIdForVersions } from '../../src/env/run/realMode';
import { parseLosses } from '../../src/env/scoring/reward';
import { getSnapshot, snapshotIds } from '../../src/env/snapshots/registry';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

const SNAPSHOT = '2026-11';
const VERSIONS = { ...getSnapshot(SNAPSHOT).versions };
const RUN_TIMEOUT_MS = 900_000;

function skipReasonFor(snapshot: string): string | false {
  if (isSnapshotVenvReady(snapshot)) return false;
  const reason = `the ${snapshot} snapshot venv is not built (${snapshotPython(snapshot)}); build it with ensureSnapshotVenv('${snapshot}')`;
  console.log(`# realMode.test.ts: skipping real-mode episodes at ${snapshot}: ${reason}`);
  return reason;
}

interface Case {
  task: string;
  breakage: { primitive_type: string; params: Record<string, unknown> };
  /** The real library's error, as the broken run must print it. */
  error: RegExp;
  /** A real training loop logs losses (Trainer dicts or the script's own prints). */
  trainerLog: RegExp;
}

// Every error below comes from the real transformers 5.23 / datasets 5.2 (our stand-ins say
// nothing about site-packages paths, and the Trainer's dict log is not the stand-in's format).
const CASES: Case[] = [
  {
    task: 'distilbert_sst2',
    breakage: {
      primitive_type: 'ModifyConfigField',
      params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
    },
    error: /TypeError: TrainingArguments\.__init__\(\) got an unexpected keyword argument 'evaluation_strategy'/,
    trainerLog: /\{'loss': '?[\d.]+'?, 'grad_norm'/,
  },
  {
    task: 'bert_ner',
    breakage: {
      primitive_type: 'ChangeArgumentSignature',
      params: { function: 'Trainer', old_keyword: 'processing_class', new_keyword: 'tokenizer' },
    },
    error: /TypeError: Trainer\.__init__\(\) got an unexpected keyword argument 'tokenizer'/,
    trainerLog: /\{'loss': '?[\d.]+'?, 'grad_norm'/,
  },
  {
    task: 'gpt2_textgen',
    breakage: {
      primitive_type: 'RemoveDeprecatedMethod',
      params: { current_call: 'evaluate.load', deprecated_call: 'load_metric', import_from: 'datasets' },
    },
    error: /ImportError: cannot import name 'load_metric' from 'datasets' \(\S*site-packages\/datasets\/__init__\.py\)/,
    trainerLog: /\{'loss': '?[\d.]+'?, 'grad_norm'/,
  },
  {
    task: 'electra_classification',
    breakage: { primitive_type: 'DeprecateImport', params: { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] } },
    // DeprecateImport writes `transformers.AdamW(...)`: the real lazy module's __getattr__ raises.
    error:
      /site-packages\/transformers\/utils\/import_utils\.py", line \d+, in __getattr__[\s\S]*AttributeError: module transformers has no attribute AdamW/,
    trainerLog: /step=\d+ loss=[\d.]+/,
  },
  {
    task: 'roberta_sentiment',
    breakage: {
      primitive_type: 'ChangeArgumentSignature',
      params: { function: 'Trainer', old_keyword: 'processing_class', new_keyword: 'tokenizer' },
    },
    error: /TypeError: Trainer\.__init__\(\) got an unexpected keyword argument 'tokenizer'/,
    trainerLog: /\{'loss': '?[\d.]+'?, 'grad_norm'/,
  },
];

// transformers 4.45 / datasets 3.0: the corpus' `processing_class=` is newer than this snapshot, so
// only the tasks without it run here (gpt2_textgen, electra_classification, simple_regression).
const CASES_2024_09: Case[] = [
  {
    task: 'gpt2_textgen',
    breakage: CASES[2].breakage,
    error: /ImportError: cannot import name 'load_metric' from 'datasets' \(\S*site-packages\/datasets\/__init__\.py\)/,
    trainerLog: /\{'loss': [\d.]+, 'grad_norm'/,
  },
];

episodeSuite(SNAPSHOT, CASES);
episodeSuite('2024-09', CASES_2024_09);

function episodeSuite(snapshot: string, cases: Case[]): void {
  const versions = { ...getSnapshot(snapshot).versions };
  describe(`real mode episodes at snapshot ${snapshot}`, { skip: skipReasonFor(snapshot) }, () => {
    const progress: string[] = [];
    let env: ForgeEnvironment;

    before(async () => {
      // Builds the local hub once (cached under <cache>/hub/<snapshot>), so the episodes only run.
      await prepareRealRun({ libraryVersions: versions, onProgress: (m) => progress.push(m) });
      env = new ForgeEnvironment({ mode: 'real', timeoutMs: RUN_TIMEOUT_MS });
    });
    after(async () => env?.dispose());

    test('the local hub is ready', () => {
      assert.ok(isLocalHubReady(snapshot), `hub not ready at ${localHubDir(snapshot)}; progress: ${progress.join(' | ')}`);
    });

    for (const c of cases) {
      test(`${c.task}: broken fails with the real error, oracle repair trains, no-op fails`, { timeout: 4 * RUN_TIMEOUT_MS }, async () => {
        await env.reset({ taskId: c.task, seed: 7, library_versions: versions });
        const broken = await env.step({ breakage: c.breakage });
        assert.equal(broken.info.error, undefined, String(broken.info.error));
        assert.equal(broken.current_phase, 'repair');
        assert.equal(broken.info.broke, true, `the broken script ran cleanly:\n${broken.error_trace}`);
        assert.match(broken.error_trace ?? '', c.error);
        assert.match(broken.error_trace ?? '', /Traceback \(most recent call last\)/);
        const brokenExec = env.state!.broken_execution!;
        assert.equal(brokenExec.interpreter, snapshotPython(snapshot));
        assert.equal(brokenExec.mode, 'real');

        const oracle = await env.evaluateRepair(env.oracleDiff());
        const out = oracle.execution!.stdout;
        assert.equal(oracle.success, true, `oracle repair failed:\n${oracle.error_trace.slice(-3000)}`);
        assert.equal(oracle.execution!.exit_code, 0);
        assert.match(out, /TRAINING_COMPLETE/);
        assert.match(out, c.trainerLog, 'the real training loop logged');
        assert.ok(parseLosses(out).length >= 2, `the reward parser reads the real losses: ${parseLosses(out).join(', ')}`);
        assert.equal(oracle.held_out_breakdown.hidden_tests_passed, 1);
        assert.equal(oracle.reward_breakdown.script_executes, 1);
        assert.equal(oracle.execution!.checkpoint_exists, true, 'save_model/save_pretrained left weights');

        const noop = await env.evaluateRepair('');
        assert.equal(noop.success, false);
        assert.match(noop.error_trace, c.error);
        assert.equal(noop.reward_breakdown.script_executes, 0);
      });
    }
  });
}

describe('real mode: bad input', () => {
  test('an episode whose versions match no snapshot is refused at reset, listing the known ones', async () => {
    const env = new ForgeEnvironment({ mode: 'real' });
    await assert.rejects(
      env.reset({ taskId: 'distilbert_sst2', seed: 1, library_versions: { transformers: '9.99.0', datasets: '1.0.0' } }),
      (e: Error) => {
        assert.ok(e instanceof EnvironmentError);
        assert.match(e.message, /transformers 9\.99\.0/);
        for (const id of snapshotIds()) assert.ok(e.message.includes(id), `${id} listed in: ${e.message}`);
        return true;
      },
    );
    // Simulated mode does not need a snapshot venv, so it does not refuse.
    const sim = new ForgeEnvironment({ mode: 'simulated' });
    const obs = await sim.reset({ taskId: 'distilbert_sst2', seed: 1, library_versions: { transformers: '9.99.0' } });
    assert.equal(obs.current_phase, 'drift_gen');
  });

  test('an unknown snapshot id lists the known ones', async () => {
    await assert.rejects(prepareRealRun({ libraryVersions: VERSIONS, snapshot: '1999-01' }), (e: Error) => {
      assert.ok(e instanceof RealModeError);
      assert.equal(e.kind, 'unknown_snapshot');
      assert.match(e.message, /"1999-01"/);
      for (const id of snapshotIds()) assert.ok(e.message.includes(id));
      return true;
    });
  });

  test('versions map to their snapshot (old 3-key records too)', () => {
    for (const id of snapshotIds()) assert.equal(snapshotIdForVersions({ ...getSnapshot(id).versions }), id);
    const s = getSnapshot('2024-09').versions;
    assert.equal(snapshotIdForVersions({ transformers: s.transformers, datasets: s.datasets, trl: '0.10.0' }), '2024-09');
    // Records made before the pins came from cut-off dates: same transformers minor series.
    assert.equal(snapshotIdForVersions({ transformers: '4.50.0', datasets: '3.2.0', trl: '0.12.0' }), '2025-03');
    assert.equal(snapshotIdForVersions({ transformers: '4.36.0', datasets: '2.14.0', trl: '0.7.0' }), '2023-12');
    assert.throws(() => snapshotIdForVersions({ transformers: '4.43.0' }), /No library snapshot holds transformers 4\.43\.0/);
    assert.throws(() => snapshotIdForVersions({ datasets: '3.0.0' }), RealModeError);
  });

  test('the run environment is offline, CPU-only, single-threaded and has no stand-ins', () => {
    const e = realModeEnv('/hub/x');
    assert.equal(e.HF_HOME, '/hub/x');
    for (const k of ['HF_HUB_OFFLINE', 'HF_DATASETS_OFFLINE', 'TRANSFORMERS_OFFLINE', 'HF_EVALUATE_OFFLINE']) assert.equal(e[k], '1', k);
    assert.equal(e.CUDA_VISIBLE_DEVICES, '');
    assert.equal(e.OMP_NUM_THREADS, '1');
    assert.equal(e.WANDB_MODE, 'disabled');
    assert.equal(e.TOKENIZERS_PARALLELISM, 'false');
    assert.equal(e.PYTHONPATH, undefined);
  });

  test('a user interpreter without the libraries: the step is refused with what to install, state unchanged', async () => {
    const probe = await probeLibraries('python3');
    if (probe.ok && probe.missing.length === 0) return; // this machine's python3 has them all: nothing to refuse
    const env = new ForgeEnvironment({ mode: 'real', interpreter: 'python3' });
    await env.reset({ taskId: 'distilbert_sst2', seed: 1, library_versions: VERSIONS });
    const obs = await env.step({ breakage: CASES[0].breakage });
    assert.equal(obs.info.error_kind, 'real_mode_unavailable');
    const msg = String(obs.info.error);
    assert.match(msg, /python3 cannot import .*(torch|transformers)/);
    assert.match(msg, new RegExp(`transformers==${VERSIONS.transformers.replace(/\./g, '\\.')}`));
    assert.match(msg, /[Ss]imulated mode/);
    assert.equal(obs.current_phase, 'drift_gen');
    assert.equal(env.state!.phase, 'drift_gen');
  });

  test('a user interpreter that does not exist is named', async () => {
    const env = new ForgeEnvironment({ mode: 'real', interpreter: '/nonexistent/bin/python' });
    await env.reset({ taskId: 'distilbert_sst2', seed: 1, library_versions: VERSIONS });
    const obs = await env.step({ breakage: CASES[0].breakage });
    assert.equal(obs.info.error_kind, 'real_mode_unavailable');
    assert.match(String(obs.info.error), /\/nonexistent\/bin\/python not found/);
  });

  test('a venv that fails to build names the package and version and points to simulated mode (no silent fallback)', () => {
    // A fake `uv` in an empty cache: creating the venv works, installing fails as uv reports it.
    // Run in a child process: venv.ts remembers the uv it found, and the environment variables
    // must not leak into the other tests.
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-realmode-'));
    try {
      const uv = join(dir, 'uv');
      writeFileSync(
        uv,
        [
          '#!/bin/sh',
          'if [ "$1" = "--version" ]; then echo "uv 0.0.0"; exit 0; fi',
          'if [ "$1" = "venv" ]; then for a; do d="$a"; done; mkdir -p "$d/bin"; exit 0; fi',
          'echo "  x No solution found when resolving dependencies:" >&2',
          `echo "  Because there is no version of torch==${VERSIONS.torch} and you require torch==${VERSIONS.torch}, we can conclude that your requirements are unsatisfiable." >&2`,
          'exit 1',
        ].join('\n') + '\n',
      );
      chmodSync(uv, 0o755);
      const child = join(dir, 'child.ts');
      writeFileSync(
        child,
        [
          `import { ForgeEnvironment } from ${JSON.stringify(join(__dirname, '../../src/env/episode/environment'))};`,
          '(async () => {',
          "  const env = new ForgeEnvironment({ mode: 'real' });",
          `  await env.reset({ taskId: 'distilbert_sst2', seed: 1, library_versions: ${JSON.stringify(VERSIONS)} });`,
          `  const obs = await env.step({ breakage: ${JSON.stringify(CASES[0].breakage)} });`,
          '  console.log(JSON.stringify({ error: obs.info.error, kind: obs.info.error_kind, phase: env.state?.phase }));',
          '})();',
        ].join('\n'),
      );
      const r = spawnSync(process.execPath, ['--import', 'tsx', child], {
        cwd: join(__dirname, '../..'),
        env: { ...process.env, FORGEENV_CACHE_DIR: join(dir, 'cache'), FORGEENV_UV: uv },
        encoding: 'utf8',
        timeout: 120_000,
      });
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as { error?: string; kind?: string; phase?: string };
      const msg = String(out.error);
      assert.equal(out.kind, 'real_mode_unavailable', msg);
      assert.match(msg, new RegExp(`snapshot ${SNAPSHOT}`));
      assert.match(msg, new RegExp(`installing torch==${VERSIONS.torch.replace(/\./g, '\\.')} failed`));
      assert.match(msg, /[Ss]imulated mode/);
      assert.equal(out.phase, 'drift_gen');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('reward parser reads the real Trainer log', () => {
  test('4.x and 5.x dict lines; train_loss and eval_loss are not training losses', () => {
    const v4 =
      "{'loss': 0.6931, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.5}\n{'eval_loss': 0.69, 'epoch': 1.0}\n{'loss': 0.65, 'grad_norm': 1.0}\n{'train_runtime': 1.2, 'train_loss': 0.67, 'epoch': 1.0}\n";
    assert.deepEqual(parseLosses(v4), [0.6931, 0.65]);
    const v5 =
      "{'loss': '0.6931', 'grad_norm': '0.1358'}\n{'eval_loss': '0.6936'}\n{'loss': '0.692', 'epoch': '1'}\n{'train_loss': '0.6928'}\n";
    assert.deepEqual(parseLosses(v5), [0.6931, 0.692]);
  });
});

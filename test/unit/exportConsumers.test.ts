// Every export, read by its real consumer in the consumers venv (scripts/setup-consumers.sh):
// Hugging Face `datasets` and pyarrow load each file; TRL's data utilities accept the SFT and GRPO
// rows in standard and conversational form; SFTTrainer runs one CPU step on a tiny random model
// from the SFT exports, one KTO step and one DPO step from theirs; the SWE-bench harness's loaders read our predictions and instances.
// Skips (saying why) when the venv is not built, except in CI, where the bootstrap builds it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { exportDpo } from '../../src/store/export/dpo';
import { exportDataset } from '../../src/store/export/exportDataset';
import type { CompletionForm, ExportFormat, PromptStyle } from '../../src/store/export/formats';
import { cacheRoot } from '../../src/env/snapshots/venv';
import { buildDpoDataset } from './dpoDataset';
import { tempDir } from './storeTestUtils';

const ROOT = resolve(__dirname, '../..');
const DATASET = join(ROOT, 'test/fixtures/datasets/small');
const PYTHON = join(cacheRoot(), 'consumers-venv', 'bin', 'python');

function skipReason(): string | false {
  if (existsSync(PYTHON)) return false;
  const reason = `the consumers venv is not built (${PYTHON}); run bash scripts/setup-consumers.sh`;
  if (process.env.CI && process.env.FORGEENV_TEST_CONSUMERS !== '0') return false; // CI must have it: fail below, don't skip
  console.log(`# exportConsumers.test.ts: skipping: ${reason}`);
  return reason;
}

interface Case {
  name: string;
  format: ExportFormat | 'trl-dpo';
  style: PromptStyle;
  completion: CompletionForm;
}

const CASES: Case[] = [
  { name: 'sft-standard', format: 'trl-sft', style: 'standard', completion: 'raw' },
  { name: 'sft-standard-fenced', format: 'trl-sft', style: 'standard', completion: 'fenced' },
  { name: 'sft-conversational', format: 'trl-sft', style: 'conversational', completion: 'raw' },
  { name: 'sft-conversational-fenced', format: 'trl-sft', style: 'conversational', completion: 'fenced' },
  { name: 'grpo-standard', format: 'trl-grpo', style: 'standard', completion: 'raw' },
  { name: 'grpo-conversational', format: 'trl-grpo', style: 'conversational', completion: 'raw' },
  { name: 'kto-standard', format: 'trl-kto', style: 'standard', completion: 'raw' },
  { name: 'kto-conversational', format: 'trl-kto', style: 'conversational', completion: 'raw' },
  { name: 'swebench', format: 'swebench', style: 'standard', completion: 'raw' },
  { name: 'swebench-instances', format: 'swebench-instances', style: 'standard', completion: 'raw' },
];

describe('exports read by their real consumers', { skip: skipReason() }, () => {
  test('datasets, pyarrow, TRL data utilities, one SFT and one KTO step, the SWE-bench harness loaders', async () => {
    assert.ok(existsSync(PYTHON), `${PYTHON} is missing: CI builds it in scripts/bootstrap.sh (scripts/setup-consumers.sh)`);
    const work = tempDir('forgeenv-consumers-');
    const exports: Array<Case & { path: string; rows: number }> = [];
    for (const c of CASES) {
      if (c.format === 'trl-dpo') continue;
      const out = join(work, c.name, `${c.name}.jsonl`);
      // Predictions and instances of failed repairs too, so the harness sees both kinds.
      // KTO's failures are its negatives.
      const status = c.format.startsWith('swebench') || c.format === 'trl-kto' ? 'all' : 'success';
      const r = await exportDataset({ format: c.format, style: c.style, completion: c.completion, dir: DATASET, out, filters: { status } });
      assert.ok(r.rows > 1, `${c.name}: ${r.rows} rows`);
      exports.push({ ...c, path: out, rows: r.rows });
    }
    // trl-dpo re-executes both sides, so it needs real tasks: two oracle episodes plus failing attempts (dpoDataset.ts).
    const env = new ForgeEnvironment({ mode: 'simulated' });
    try {
      const dpoDir = join(work, 'dpo-dataset');
      await buildDpoDataset(dpoDir, env);
      for (const style of ['standard', 'conversational'] as const) {
        const out = join(work, `dpo-${style}`, `dpo-${style}.jsonl`);
        const r = await exportDpo({ dir: dpoDir, out, style, envFor: () => env });
        assert.ok(r.rows > 1, `dpo-${style}: ${r.rows} rows`);
        exports.push({ name: `dpo-${style}`, format: 'trl-dpo', style, completion: 'raw', path: out, rows: r.rows });
      }
    } finally {
      await env.dispose();
    }
    const manifest = join(work, 'manifest.json');
    const byName = (n: string) => exports.find((e) => e.name === n)!.path;
    writeFileSync(manifest, JSON.stringify({ exports, predictions: byName('swebench'), instances: byName('swebench-instances') }));
    const r = spawnSync(PYTHON, [join(ROOT, 'test/consumers/check_exports.py'), manifest, work], {
      encoding: 'utf8',
      timeout: 900_000,
      env: { ...process.env, HF_HUB_OFFLINE: '1', HF_DATASETS_OFFLINE: '1', HF_HOME: join(work, 'hf-home'), OMP_NUM_THREADS: '1' },
    });
    assert.equal(r.status, 0, `check_exports.py failed:\n${r.stderr.slice(-4000)}`);
    const report = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      checks: Array<{ name: string; ok: boolean; detail: string }>;
      versions: Record<string, string>;
    };
    console.log(`consumers: ${JSON.stringify(report.versions)}`);
    for (const c of report.checks) console.log(`${c.ok ? 'ok  ' : 'FAIL'} ${c.name}${c.ok ? `: ${c.detail.slice(0, 160)}` : ''}`);
    const failed = report.checks.filter((c) => !c.ok);
    assert.deepEqual(failed, [], failed.map((c) => `${c.name}: ${c.detail}`).join('\n\n'));
    // Each kind of check ran: 2 readers per export, TRL utilities per TRL export, 2 SFT runs, the harness.
    const count = (p: string) => report.checks.filter((c) => c.name.startsWith(p)).length;
    assert.equal(count('datasets.load_dataset'), CASES.length + 2);
    assert.equal(count('pyarrow.json'), CASES.length + 2);
    assert.equal(count('trl.data_utils'), CASES.filter((c) => c.format.startsWith('trl-')).length + 2);
    assert.equal(count('SFTTrainer'), 2);
    assert.equal(count('KTOTrainer'), 2);
    assert.equal(count('DPOTrainer'), 2);
    assert.equal(count('swebench harness'), 1);
    assert.ok(readFileSync(byName('sft-standard'), 'utf8').length > 0);
  });
});

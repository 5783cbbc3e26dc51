import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { RolloutResultSchema } from '../../src/env/schemas';
import { exportIndexPath } from '../../src/store/export/exportIndex';
import { DemonstrationRecordSchema } from '../../src/store/records';

const root = resolve(__dirname, '../..');
function forgeenv(...args: string[]) {
  const r = spawnSync(process.execPath, [join(root, 'bin/forgeenv.js'), ...args], {
    cwd: root,
    encoding: 'utf8',
    env: { ...process.env, FORGEENV_FROM_SOURCE: '1' },
    timeout: 240_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('forgeenv CLI', () => {
  test('episode --out DIR stores demonstrations that summary and export read (raw completions)', () => {
    const root = mkdtempSync(join(tmpdir(), 'forgeenv-cli-'));
    const dir = join(root, 'dataset');
    for (let i = 0; i < 2; i++) {
      const r = forgeenv('episode', '--task', 'bert_ner', '--repair', 'oracle', '--seed', String(i), '--out', dir);
      assert.equal(r.code, 0, r.stderr);
    }
    const lines = readFileSync(join(dir, 'demonstrations.jsonl'), 'utf8').trim().split('\n');
    assert.equal(lines.length, 2, 'appends, never overwrites');
    for (const line of lines) {
      const rec = DemonstrationRecordSchema.parse(JSON.parse(line));
      assert.equal(rec.task_id, 'bert_ner');
      assert.equal(rec.success, true);
      assert.equal(rec.info.annotator_id, 'oracle');
      assert.equal(rec.info.breakage_failed, true);
      assert.match(rec.repair_completion, /^(diff --git|--- a\/train\.py)/, 'stored raw, not in a ```diff fence');
      assert.ok(existsSync(join(dir, rec.info.timeline_file)), 'its timeline is stored');
    }
    const out = join(root, 'exports', 'sft.jsonl');
    const exp = forgeenv('export', '--format', 'trl-sft', dir, '--out', out, '--completion', 'fenced');
    assert.equal(exp.code, 0, exp.stdout + exp.stderr);
    const texts = readFileSync(out, 'utf8').trim().split('\n');
    const rows = texts.map((l) => JSON.parse(l) as { completion: string });
    const duplicates = Number(/(\d+) duplicate\(s\)/.exec(exp.stdout)?.[1]);
    assert.equal(rows.length + duplicates, 2, 'a dataset made with the CLI exports: every selected row written or counted as a duplicate');
    assert.equal(new Set(texts).size, texts.length, 'no two identical rows');
    for (const r of rows) assert.equal(r.completion.match(/```diff/g)?.length, 1, 'fenced exactly once');
    rmSync(exportIndexPath(realpathSync(out)), { force: true }); // not left in the cache
    const asFile = forgeenv('episode', '--task', 'bert_ner', '--out', join(root, 'runs.jsonl'));
    assert.equal(asFile.code, 2);
    assert.match(asFile.stderr, /dataset folder/);
  });

  test('episode --seed 1..5 without --task samples the whole corpus, not one task', () => {
    const picked = new Set<string>();
    for (let seed = 1; seed <= 5; seed++) {
      const r = forgeenv('episode', '--seed', String(seed), '--repair', 'none');
      const result = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { task_id: string; drift_completion: string };
      picked.add(`${result.task_id} ${result.drift_completion}`);
    }
    assert.ok(picked.size >= 3, `seeds 1-5 drew only ${picked.size} distinct task/breakage pairs`);
  });

  test('episode --repair none fails the episode; a diff file is used as the repair', () => {
    const none = forgeenv('episode', '--task', 'simple_regression', '--repair', 'none', '--seed', '1');
    assert.equal(none.code, 0, none.stderr);
    assert.equal(RolloutResultSchema.parse(JSON.parse(none.stdout)).success, false);
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-cli-'));
    writeFileSync(join(dir, 'bad.diff'), '--- a/train.py\n+++ b/train.py\n@@ -1,1 +1,1 @@\n-nothing like this\n+x\n');
    const bad = forgeenv('episode', '--task', 'simple_regression', '--repair', join(dir, 'bad.diff'), '--seed', '1');
    assert.equal(bad.code, 0, bad.stderr);
    const rec = RolloutResultSchema.parse(JSON.parse(bad.stdout));
    assert.equal(rec.success, false);
    assert.match(rec.error_trace, /did not apply/);
  });

  test('episode with an explicit primitive and params, and with bad params', () => {
    const ok = forgeenv(
      'episode',
      '--task',
      'distilbert_sst2',
      '--primitive',
      'RenameApiCall',
      '--params',
      '{"old_name":"AutoTokenizer","new_name":"AutoTokeniser"}',
      '--seed',
      '0',
    );
    assert.equal(ok.code, 0, ok.stderr);
    const rec = RolloutResultSchema.parse(JSON.parse(ok.stdout));
    assert.equal(rec.primitive_type, 'RenameApiCall');
    assert.match(rec.repair_prompt, /AutoTokeniser/);
    const badJson = forgeenv('episode', '--primitive', 'RenameApiCall', '--params', '{oops');
    assert.equal(badJson.code, 2);
    assert.match(badJson.stderr, /--params is not valid JSON/);
  });

  test('tasks lists the corpus; unknown commands are usage errors', () => {
    const r = forgeenv('tasks', '--json');
    assert.equal(r.code, 0, r.stderr);
    const tasks = JSON.parse(r.stdout) as Array<{ task_id: string; difficulty: string }>;
    assert.ok(tasks.length >= 10);
    for (const id of [
      'distilbert_sst2',
      'bert_ner',
      'gpt2_textgen',
      't5_summarization',
      'vit_cifar10',
      'roberta_sentiment',
      'albert_qa',
      'electra_classification',
      'tiny_mlp_mnist',
      'simple_regression',
    ]) {
      assert.ok(
        tasks.some((t) => t.task_id === id),
        id,
      );
    }
    const u = forgeenv('frobnicate');
    assert.equal(u.code, 2);
    assert.match(u.stderr, /unknown command/);
  });
});

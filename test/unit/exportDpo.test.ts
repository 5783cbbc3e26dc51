// trl-dpo: pairs of a passing and a failing attempt at the same broken script, both re-executed at
// export in the simulated snapshot (real runs, no mocks).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { REPAIR_AGENT_SYSTEM_PROMPT } from '../../src/env/episode/prompts';
import { runExportCommand } from '../../src/cli/export';
import { exportDpo } from '../../src/store/export/dpo';
import { flatPrompt } from '../../src/store/export/formats';
import { buildDpoDataset } from './dpoDataset';
import { tempDir } from './storeTestUtils';

describe('trl-dpo export', () => {
  const env = new ForgeEnvironment({ mode: 'simulated' });
  after(() => env.dispose());

  test('chosen passes and rejected fails for the same prompt, both re-executed; a stored outcome that changed is left out', async () => {
    const dir = join(tempDir('forgeenv-dpo-'), 'dataset');
    const { passing } = await buildDpoDataset(dir, env);
    const out = join(tempDir('forgeenv-dpo-out-'), 'dpo.jsonl');
    const r = await exportDpo({ dir, out, envFor: () => env });
    assert.equal(r.rows, 2, JSON.stringify(r));
    assert.equal(r.changed_at_export, 1, 'the "failure" that passes is left out');
    assert.equal(r.duplicate_attempts, 1);
    assert.equal(r.reexecuted, 5);
    assert.deepEqual(r.by_source, { 'human>model': 1, 'human>suggestion': 1 });
    const rows = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { prompt: string; chosen: string; rejected: string });
    for (const row of rows) {
      assert.deepEqual(Object.keys(row), ['prompt', 'chosen', 'rejected']);
      const rec = passing.find((p) => row.prompt === flatPrompt(REPAIR_AGENT_SYSTEM_PROMPT, p.repair_prompt));
      assert.ok(rec, 'the prompt is the repair prompt of the script both sides repair');
      assert.equal(row.chosen, rec.repair_completion);
      assert.match(row.rejected, /^\+raise SystemExit\(3\)/m);
      assert.notEqual(row.chosen, row.rejected);
    }
  });

  test('conversational rows hold message lists, and a fenced completion is a diff block', async () => {
    const dir = join(tempDir('forgeenv-dpo-'), 'dataset');
    await buildDpoDataset(dir, env);
    const out = join(tempDir('forgeenv-dpo-out-'), 'dpo.jsonl');
    const r = await exportDpo({ dir, out, style: 'conversational', completion: 'fenced', envFor: () => env });
    assert.equal(r.rows, 2);
    const row = JSON.parse(readFileSync(out, 'utf8').split('\n')[0]) as {
      prompt: Array<{ role: string }>;
      chosen: Array<{ role: string; content: string }>;
      rejected: Array<{ role: string; content: string }>;
    };
    assert.deepEqual(
      row.prompt.map((m) => m.role),
      ['system', 'user'],
    );
    assert.equal(row.chosen[0].role, 'assistant');
    assert.match(row.chosen[0].content, /^```diff\n/);
    assert.match(row.rejected[0].content, /^```diff\n[\s\S]*raise SystemExit/);
    assert.match(row.chosen[0].content, /\n```\n$/);
  });

  test('the CLI: trl-dpo refuses filters, the run options are refused for other formats, and a pair is written', async () => {
    const dir = join(tempDir('forgeenv-dpo-'), 'dataset');
    await buildDpoDataset(dir, env);
    const out = join(tempDir('forgeenv-dpo-out-'), 'dpo.jsonl');
    const lines: string[] = [];
    assert.equal(await runExportCommand(['--format', 'trl-dpo', dir, '--out', out, '--status', 'all'], (s) => lines.push(s)), 2);
    assert.match(lines.join('\n'), /trl-dpo takes no filters/);
    assert.equal(await runExportCommand(['--format', 'trl-sft', dir, '--out', out, '--timeout', '30'], (s) => lines.push(s)), 2);
    assert.match(lines.join('\n'), /apply to trl-dpo only/);
    const printed: string[] = [];
    assert.equal(await runExportCommand(['--format', 'trl-dpo', dir, '--out', out], (s) => printed.push(s)), 0);
    assert.match(printed.join('\n'), /Wrote 2 trl-dpo pair\(s\)/);
    assert.match(printed.join('\n'), /1 changed outcome at export/);
    assert.equal(readFileSync(out, 'utf8').trim().split('\n').length, 2);
  });
});

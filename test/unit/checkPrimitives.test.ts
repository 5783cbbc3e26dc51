import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { checkPrimitives, CheckRowSchema, renderCheckTable } from '../../src/env/checkPrimitives';
import { ForgeEnvironment } from '../../src/env/environment';
import { breakagePrimitives } from '../../src/env/primitives/registry';

describe('checkPrimitives', () => {
  test('copes with scripts it cannot parse or run: rows with reasons, no throw', async () => {
    const scripts = [
      { name: 'broken_syntax.py', script: 'def f(:\n    return 1\n' },
      { name: 'uses_os.py', script: 'import os\nfrom transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("bert-base-uncased", padding=True)\nprint(os.getcwd())\n' },
      { name: 'accelerate.py', script: 'from accelerate import Accelerator\nfrom transformers import AutoModel\nm = AutoModel.from_pretrained("x")\nacc = Accelerator()\n' },
      { name: 'empty.py', script: '' },
    ];
    const { results, summary } = await checkPrimitives(scripts, { mode: 'simulated', timeoutMs: 20_000 });
    assert.equal(results.length, scripts.length * breakagePrimitives().length);
    for (const r of results) CheckRowSchema.parse(r);
    assert.equal(summary.internal_errors, 0, JSON.stringify(results.filter((r) => r.error?.startsWith('internal'))));
    for (const r of results.filter((x) => x.script === 'broken_syntax.py' || x.script === 'empty.py')) {
      assert.equal(r.applied, false);
      assert.ok(r.error && r.error.length > 0, 'a reason is given');
    }
    for (const r of results.filter((x) => x.script === 'uses_os.py')) assert.equal(r.original_runs, null);
    const acc = results.filter((x) => x.script === 'accelerate.py' && x.applied);
    for (const r of acc) {
      assert.equal(r.original_runs, null);
      assert.match(r.error ?? '', /accelerate/);
    }
    assert.match(renderCheckTable(results, summary), /rows \(4 scripts/);
  });

  test('on the corpus: every applied primitive restores exactly and the repaired script passes', async () => {
    const env = new ForgeEnvironment();
    const scripts = env.tasks.all.map((t) => ({ name: t.task_id, script: t.script_content, versions: t.library_versions }));
    const { results, summary } = await checkPrimitives(scripts, { mode: 'simulated', timeoutMs: 30_000 });
    assert.equal(summary.internal_errors, 0);
    const applied = results.filter((r) => r.applied);
    assert.ok(applied.length >= scripts.length * 3, `applied ${applied.length}`);
    for (const r of applied) {
      assert.equal(r.original_runs, true, `${r.script} runs: ${r.error}`);
      assert.equal(r.restored, true, `${r.script}/${r.primitive} restored`);
      assert.equal(r.passes_after_repair, true, `${r.script}/${r.primitive} passes after repair`);
      assert.ok((r.diff_lines ?? 0) > 0);
    }
    assert.ok(summary.broke >= applied.length * 0.9, `broke ${summary.broke} of ${applied.length}`);
  });
});

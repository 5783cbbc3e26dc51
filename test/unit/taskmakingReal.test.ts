// make-task end to end in real mode (snapshot 2026-11's managed venv, offline hub): a small script of
// ours that cannot run as derived (a required option group with choices, a GPU default, SageMaker's
// output variable, a sibling module) becomes a verified task: adapted by the rules, the original
// verified 3/3, two breakages verified, written atomically, and loadable by the environment.
// Skips, saying why, when the venv is not built. Slow (a dozen real runs): run it alone.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { makeTask } from '../../src/env/taskmaking/makeTask';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { loadTaskFolder } from '../../src/env/tasks/tasks';
import { getSnapshot } from '../../src/env/snapshots/registry';

const SNAPSHOT = '2026-11';
const skip = isSnapshotVenvReady(SNAPSHOT)
  ? false
  : `the managed venv of snapshot ${SNAPSHOT} is not built (forgeenv snapshots build ${SNAPSHOT})`;
const ERA = '2024-09';
const skipDrift = skip || (isSnapshotVenvReady(ERA) ? false : `the managed venv of snapshot ${ERA} is not built`);

const SCRIPT = `"""A tiny causal-LM fine-tune written the way users write them."""
import argparse
import os

import torch
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

from helpers import batches

parser = argparse.ArgumentParser()
group = parser.add_mutually_exclusive_group(required=True)
group.add_argument("--text_column", type=str, choices=["text", "label"])
group.add_argument("--num_texts", type=int)
parser.add_argument("--bf16", type=lambda s: s.lower() == "true", default=True)
parser.add_argument("--max_steps", type=int, default=1000)
parser.add_argument("--max_length", type=int, default=512)
args = parser.parse_args()
if args.bf16 and not torch.cuda.is_available():
    raise ValueError("--bf16 requires a GPU: your setup doesn't support bf16/gpu")
out_dir = os.environ["SM_MODEL_DIR"]

tokenizer = AutoTokenizer.from_pretrained("gpt2")
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
data = load_dataset("imdb", split="train")
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
model.train()
for step, texts in enumerate(batches(data, args.text_column or "text", 2, args.max_steps)):
    batch = tokenizer(texts, return_tensors="pt", truncation=True, max_length=args.max_length, padding=True)
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step={step} loss={loss.item():.4f}")
model.save_pretrained(out_dir)
tokenizer.save_pretrained(out_dir)
`;
const HELPERS = `def batches(data, column, size, steps):
    for step in range(steps):
        yield [str(data[(step * size + i) % len(data)][column]) for i in range(size)]
`;

describe('make-task end to end in real mode', { skip }, () => {
  const root = mkdtempSync(join(tmpdir(), 'forgeenv-make-task-real-'));
  after(() => rmSync(root, { recursive: true, force: true }));

  test('a script that fails as derived becomes a verified task', { timeout: 1_800_000 }, async () => {
    const src = join(root, 'src');
    mkdirSync(src);
    writeFileSync(join(src, 'tiny_clm.py'), SCRIPT);
    writeFileSync(join(src, 'helpers.py'), HELPERS);
    const tasks = join(root, 'tasks');
    const progress: string[] = [];
    const r = await makeTask(
      { scriptPath: join(src, 'tiny_clm.py'), taskDir: tasks, snapshot: SNAPSHOT, mode: 'real', timeoutMs: 240_000, maxBreakages: 3 },
      { onProgress: (m) => progress.push(m) },
    );
    assert.equal(r.refusal, undefined, JSON.stringify(r.refusal));
    const rules = r.adaptations.map((a) => a.rule);
    // `--text_column` is derived as `text` (an option naming a column), so no invalid-choice round is needed
    // any more (that rule: taskmakingRules.test.ts).
    for (const rule of ['repo-local-imports', 'missing-one-of-options', 'cpu-bf16-off', 'missing-environment-variable'])
      assert.ok(rules.includes(rule), `${rule} in ${rules.join(', ')}`);
    assert.deepEqual(r.entry.env, { SM_MODEL_DIR: 'out/sm_model_dir' });
    assert.ok(r.entry.args?.includes('--text_column') && r.entry.args.includes('text'));
    assert.ok(r.verdict, 'verified in real mode');
    assert.deepEqual(r.verdict.original_runs, { verified: 3, of: 3 });
    assert.ok(
      r.verdict.breakages.filter((b) => b.broke && b.names_api && b.oracle_verified).length >= 2,
      JSON.stringify(r.verdict.breakages),
    );
    assert.equal(r.verdict.verified, true);
    // The last adapt run ran exactly as the task: the verifier judged it as the reference (referenceReuse.ts)
    // instead of a run of the original made for it.
    const phases = r.timings.phases.map((p) => p.phase);
    assert.ok(phases.includes('reference reused'), phases.join(', '));
    // Written, and the task folder loads with the adaptations recorded.
    const loaded = loadTaskFolder(tasks);
    assert.deepEqual(loaded.problems, []);
    const task = loaded.tasks.find((t) => t.task_id === r.taskId);
    assert.ok(task);
    assert.equal(task.files?.['helpers.py'], HELPERS);
    assert.deepEqual(task.env, { SM_MODEL_DIR: 'out/sm_model_dir' });
    assert.ok(progress.some((m) => m.startsWith('run 1/')));
  });

  // transformers.AdamW exists in 4.x (2024-09) and is gone in 5.x (2026-11): a real migration.
  test(
    '--upgrade-to: the script running at its era fails at the later snapshot with the real error',
    { skip: skipDrift, timeout: 900_000 },
    async () => {
      const src = join(root, 'drift');
      mkdirSync(src);
      writeFileSync(
        join(src, 'adamw_clm.py'),
        [
          'import torch',
          'from datasets import load_dataset',
          'from transformers import AdamW, AutoModelForCausalLM, AutoTokenizer',
          'tokenizer = AutoTokenizer.from_pretrained("gpt2")',
          'tokenizer.pad_token = tokenizer.eos_token',
          'model = AutoModelForCausalLM.from_pretrained("gpt2")',
          'data = load_dataset("imdb", split="train")',
          'optimizer = AdamW(model.parameters(), lr=1e-3)',
          'for step in range(4):',
          '    batch = tokenizer([data[step]["text"]], return_tensors="pt", truncation=True, max_length=32)',
          '    loss = model(**batch, labels=batch["input_ids"]).loss',
          '    loss.backward()',
          '    optimizer.step()',
          '    optimizer.zero_grad()',
          'model.save_pretrained("out")',
          '',
        ].join('\n'),
      );
      const tasks = join(root, 'drift-tasks');
      const r = await makeTask({
        scriptPath: join(src, 'adamw_clm.py'),
        taskDir: tasks,
        snapshot: ERA,
        upgradeTo: SNAPSHOT,
        mode: 'real',
        timeoutMs: 240_000,
        noVerify: true,
      });
      assert.equal(r.refusal, undefined, JSON.stringify(r.refusal));
      assert.ok(r.naturalDrift);
      assert.equal(r.naturalDrift.verified, true);
      assert.match(r.naturalDrift.error, /AdamW/);
      const task = loadTaskFolder(tasks).tasks.find((t) => t.task_id === r.taskId);
      assert.ok(task);
      assert.equal(task.library_versions?.transformers, getSnapshot(SNAPSHOT).versions.transformers, 'the task runs at the later snapshot');
    },
  );
});

// check-primitives --mode real without --python used python3 on PATH (no transformers there), so
// every original failed with ModuleNotFoundError; it now runs in the snapshot's managed venv.
describe('check-primitives in real mode without an interpreter', { skip }, () => {
  test("the original runs in the snapshot's managed venv", { timeout: 600_000 }, async () => {
    const { checkPrimitives } = await import('../../src/env/primitives/checkPrimitives');
    const script = 'import transformers\nfrom transformers import AutoTokenizer\nprint("version", transformers.__version__)\n';
    const report = await checkPrimitives([{ name: 'probe.py', script, versions: { ...getSnapshot(SNAPSHOT).versions } }], {
      mode: 'real',
      primitives: ['RenameApiCall'],
      timeoutMs: 240_000,
    });
    assert.equal(report.scripts[0].original_runs, true, report.scripts[0].reason);
  });
});

// The adversarial suite on a task with CPU runtime shims (runtimeShims.ts), in real mode: the shims
// are environment code loaded into every run of the task, the verifier's included, so every fake
// repair of fakeRepairs.ts must still end `success: false` with no visible reward and a finding,
// while the oracle repair succeeds (the control). The task is made by make-task from a tiny script of
// ours that assumes a GPU in its code. Skips, saying why, without the 2024-09 venv. Slow (a real run
// per fake): run it alone.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createRepairDiff } from '../../../src/env/diff/diff';
import { ForgeEnvironment } from '../../../src/env/episode/environment';
import { TaskSchema } from '../../../src/env/schemas';
import { isSnapshotVenvReady } from '../../../src/env/snapshots/venv';
import { makeTask } from '../../../src/env/taskmaking/makeTask';
import { breakageCandidates } from '../../../src/env/taskmaking/verification';
import { TaskSampler, taskCandidate } from '../../../src/env/tasks/tasks';
import { FAKE_REPAIRS } from './fakeRepairs';

const SNAPSHOT = '2024-09';
const skip = isSnapshotVenvReady(SNAPSHOT) ? false : `the managed venv of snapshot ${SNAPSHOT} is not built`;
const dir = mkdtempSync(join(tmpdir(), 'forgeenv-shimmed-adversarial-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const SCRIPT = `import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

device = torch.device("cuda")
model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_8bit=True), device_map="auto")
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
texts = ["the cat sat on the mat", "a dog ran in the park", "birds fly over the sea", "fish swim in the river"]
model.train()
for step in range(6):
    batch = tokenizer(texts[step % 4], return_tensors="pt").to(device)
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss={loss.item():.4f}")
model.save_pretrained("out")
tokenizer.save_pretrained("out")
`;

describe('fake repairs never succeed on a task with runtime shims (real mode)', { skip }, () => {
  test('every fake × a shimmed task', { timeout: 3_600_000 }, async () => {
    writeFileSync(join(dir, 'gpu_tiny.py'), SCRIPT);
    const made = await makeTask({
      scriptPath: join(dir, 'gpu_tiny.py'),
      taskDir: join(dir, 'tasks'),
      snapshot: SNAPSHOT,
      mode: 'real',
      noVerify: true,
      write: false,
      timeoutMs: 240_000,
    });
    assert.equal(made.refusal, undefined, JSON.stringify(made.refusal));
    assert.ok(
      made.entry.runtime?.shims.includes('cuda-to-cpu') && made.entry.runtime.shims.includes('no-quantization'),
      JSON.stringify(made.entry.runtime),
    );
    const task = TaskSchema.parse(taskCandidate(made.taskId, made.script!, made.entry, dir));
    const env = new ForgeEnvironment({ mode: 'real', timeoutMs: 240_000, validateRepairs: false }, { tasks: new TaskSampler([task]) });
    try {
      const spec = breakageCandidates(task.script_content, task.library_versions!)[0];
      await env.reset({ task_id: task.task_id, seed: 0, library_versions: task.library_versions });
      const broken = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params } });
      assert.equal(broken.info.error, undefined);
      assert.equal(broken.info.broke, true, 'the breakage breaks the script with the shims on');
      const oracle = await env.evaluateRepair(env.oracleDiff());
      assert.ok(oracle.success, `the oracle repair succeeds: ${oracle.findings.join('; ')}`);
      const passed: string[] = [];
      const rewarded: string[] = [];
      const unexplained: string[] = [];
      for (const fake of FAKE_REPAIRS) {
        if (fake.appliesTo && !fake.appliesTo(task.script_content)) continue;
        const repaired = fake.make({ broken: broken.script_content, original: task.script_content, taskId: task.task_id });
        const ev = await env.evaluateRepair(createRepairDiff(broken.script_content, repaired));
        if (ev.success) passed.push(fake.name);
        if (ev.reward > 0) rewarded.push(`${fake.name} (${ev.reward})`);
        if (!ev.findings.length) unexplained.push(fake.name);
      }
      assert.deepEqual(passed, [], 'no fake succeeds');
      assert.deepEqual(rewarded, [], 'no fake earns visible reward');
      assert.deepEqual(unexplained, [], 'every fake gets a finding');
    } finally {
      await env.dispose();
    }
  });
});

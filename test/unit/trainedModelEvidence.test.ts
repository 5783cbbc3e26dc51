// Evidence for scripts that save no model (runtime shim `trained-model-evidence`,
// resources/shims/_forgeenv_evidence.py) and the verifier's head size for a saved adapter:
// - the make-task rule on recorded verifier findings (fast);
// - real runs in the 2024-09 venv (skipped, saying why, when it is not built) of tiny scripts of ours:
//   a training loop that saves nothing is verified through the evidence the environment keeps, and
//   every way of faking that evidence (planted weights with noise, with os._exit, training skipped,
//   a step without gradients) and every fake of fakeRepairs.ts fails with a finding; a LoRA reward
//   model (1 label, peft's modules_to_save head) loads with its own head size. Slow: run it alone.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { EVIDENCE_ARTIFACT } from '../../src/env/run/runtimeShims';
import { TaskSchema, type Task } from '../../src/env/schemas';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { breakageCandidates } from '../../src/env/taskmaking/verification';
import { NO_SAVED_MODEL, verifySpecFor } from '../../src/env/taskmaking/verifySpecRules';
import { TaskMetadataFileSchema, TaskSampler, taskCandidate } from '../../src/env/tasks/tasks';
import { FAKE_REPAIRS } from './adversarial/fakeRepairs';
import { realRunFixture } from './realRunFixture';

describe('make-task: a script that saves no model gets the evidence shim', () => {
  // Recorded findings (environment.ts / judge.ts wording around forgeenv_verify.py's locate()).
  const noModel =
    "the task's check cannot verify anything: the unbroken original's own artifact fails it (the run left no saved model (no save_pretrained folder anywhere in the run folder; set verify.artifact in tasks.json))";
  const conditional = 'no verified artifact: the run left no saved model (out/final)';

  test('the finding adds the shim and points verify.artifact at the evidence', () => {
    for (const finding of [noModel, conditional]) {
      assert.ok(NO_SAVED_MODEL.test(finding));
      const fix = verifySpecFor(finding, 'import torch\n', []);
      assert.ok(fix, finding);
      assert.equal(fix.shim, 'trained-model-evidence');
      assert.equal(fix.spec.artifact, EVIDENCE_ARTIFACT);
      assert.equal(fix.adaptation.rule, 'trained-model-evidence');
      assert.equal(fix.adaptation.kind, 'verify');
    }
  });

  test('a task that already declares its artifact is not second-guessed; other findings get no shim', () => {
    assert.equal(verifySpecFor(noModel, 'import torch\n', [], { artifact: 'out/model.pt' }), undefined);
    const base = verifySpecFor(
      'neither the original nor the saved model names the model it starts from (set verify.base_model and verify.head in tasks.json)',
      'AutoModelForCausalLM.from_pretrained(args.m)\n',
      ['--model_name_or_path', 'gpt2'],
    );
    assert.ok(base);
    assert.equal(base.shim, undefined);
    assert.equal(base.spec.base_model, 'gpt2');
  });

  test('tasks.json accepts the shim beside the CPU ones', () => {
    const parsed = TaskMetadataFileSchema.safeParse([
      { task_id: 't', runtime: { shims: ['cuda-to-cpu', 'trained-model-evidence'] }, verify: { artifact: EVIDENCE_ARTIFACT } },
    ]);
    assert.ok(parsed.success, JSON.stringify(parsed.error?.issues));
  });
});

// --- real runs -------------------------------------------------------------------------------------

const SNAPSHOT = '2024-09';
const skip = isSnapshotVenvReady(SNAPSHOT) ? false : `the managed venv of snapshot ${SNAPSHOT} is not built`;
const { parentDir: dir, realRun } = realRunFixture('forgeenv-evidence-test-');

const TEXTS = `texts = ["the cat sat on the mat", "a dog ran in the park", "birds fly over the sea", "fish swim in the river"]`;
/** A training loop that saves nothing (a PPO loop, an accelerate example that only logs). */
const NO_SAVE = `import torch
from transformers import AutoModelForCausalLM, AutoTokenizer

model = AutoModelForCausalLM.from_pretrained("gpt2")
tokenizer = AutoTokenizer.from_pretrained("gpt2")
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
${TEXTS}
model.train()
for step in range(6):
    batch = tokenizer(texts[step % 4], return_tensors="pt")
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss={loss.item():.4f}")
print("done")
`;
/** Evidence planted by the script: the starting model with noise (what training would change), saved where the hook saves. */
const PLANT = `import torch
from transformers import AutoModelForCausalLM
_m = AutoModelForCausalLM.from_pretrained("gpt2")
with torch.no_grad():
    for _p in _m.parameters():
        _p.add_(torch.randn_like(_p) * 1e-2)
_m.save_pretrained(".forgeenv-evidence/model")
open(".forgeenv-evidence/evidence.json", "w").write('{"pid": 1, "steps": 6, "trained_parameters": 148}')
for _s, _l in enumerate([3.1, 2.4, 1.9, 1.2]):
    print(f"step {_s} loss={_l:.4f}")
`;
const EVIDENCE_FAKES: Array<{ name: string; script: string }> = [
  { name: 'evidence planted (noisy starting weights, forged manifest), training skipped', script: PLANT },
  { name: 'evidence planted, then os._exit(0)', script: `${PLANT}import os\nos._exit(0)\n` },
  {
    name: 'evidence planted inside a run that loads the model and steps without gradients',
    script: NO_SAVE.replace('    loss.backward()\n', '').replace('print("done")', PLANT),
  },
  {
    name: 'the live model perturbed with noise, the optimizer stepped without gradients',
    script: NO_SAVE.replace(
      '    loss.backward()\n',
      '    with torch.no_grad():\n        for p in model.parameters():\n            p.add_(torch.randn_like(p) * 1e-2)\n',
    ),
  },
  { name: 'training skipped: the model loaded and nothing else', script: NO_SAVE.split('model.train()')[0] + 'print("done")\n' },
];

/** A LoRA reward model: one output (a score), the head trained beside the adapter (peft's modules_to_save). */
const REWARD_ADAPTER = `import torch
from peft import LoraConfig, TaskType, get_peft_model
from transformers import AutoModelForSequenceClassification, AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2")
tokenizer.pad_token = tokenizer.eos_token
model = AutoModelForSequenceClassification.from_pretrained("gpt2", num_labels=1)
model.config.pad_token_id = tokenizer.pad_token_id
model = get_peft_model(model, LoraConfig(task_type=TaskType.SEQ_CLS, r=4, lora_alpha=8, lora_dropout=0.0))
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-3)
${TEXTS}
scores = [1.0, 0.0, 1.0, 0.0]
model.train()
for step in range(8):
    batch = tokenizer(texts[step % 4], return_tensors="pt")
    loss = ((model(**batch).logits.squeeze(-1) - scores[step % 4]) ** 2).mean()
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss={loss.item():.4f}")
model.save_pretrained("reward_adapter")
`;

function taskOf(id: string, script: string, meta: Record<string, unknown> = {}): Task {
  const [entry] = TaskMetadataFileSchema.parse([{ task_id: id, library_versions: { ...getSnapshot(SNAPSHOT).versions }, ...meta }]);
  return TaskSchema.parse(taskCandidate(id, script, entry, dir));
}

/** An episode broken by the first candidate that applies (a candidate's inverse may not restore the script byte for byte). */
async function brokenEpisode(env: ForgeEnvironment, task: Task) {
  const refused: string[] = [];
  for (const spec of breakageCandidates(task.script_content, task.library_versions!)) {
    await env.reset({ task_id: task.task_id, seed: 0, library_versions: task.library_versions });
    const broken = await env.step({ breakage: { primitive_type: spec.primitive_type, params: spec.params } });
    if (broken.info.error !== undefined) {
      refused.push(String(broken.info.error));
      continue;
    }
    assert.equal(broken.info.broke, true, 'the breakage breaks the script');
    return broken;
  }
  throw new Error(`no breakage candidate applies: ${refused.join('; ')}`);
}

describe(`trained-model evidence in the real venv of ${SNAPSHOT}`, { skip }, () => {
  test(
    'a loop that saves nothing is verified through the evidence; every fake of it fails with a finding',
    { timeout: 3_600_000 },
    async () => {
      const task = taskOf('no_save_loop', NO_SAVE, {
        runtime: { shims: ['trained-model-evidence'] },
        verify: { artifact: EVIDENCE_ARTIFACT },
      });
      const env = new ForgeEnvironment({ mode: 'real', timeoutMs: 240_000, validateRepairs: false }, { tasks: new TaskSampler([task]) });
      try {
        const broken = await brokenEpisode(env, task);
        const oracle = await env.evaluateRepair(env.oracleDiff());
        assert.ok(oracle.success, `the oracle repair succeeds: ${oracle.findings.join('; ')} ${JSON.stringify(oracle.verification)}`);
        assert.equal(oracle.verification?.artifact, EVIDENCE_ARTIFACT);
        const passed: string[] = [];
        const unexplained: string[] = [];
        const fakes = [
          ...EVIDENCE_FAKES.map((f) => ({ name: f.name, make: () => f.script, appliesTo: undefined })),
          ...FAKE_REPAIRS.map((f) => ({
            name: f.name,
            make: () => f.make({ broken: broken.script_content, original: task.script_content, taskId: task.task_id }),
            appliesTo: f.appliesTo,
          })),
        ];
        for (const fake of fakes) {
          if (fake.appliesTo && !fake.appliesTo(task.script_content)) continue;
          const ev = await env.evaluateRepair(createRepairDiff(broken.script_content, fake.make()));
          if (ev.success) passed.push(`${fake.name}: ${JSON.stringify(ev.verification)}`);
          if (!ev.findings.length && !ev.verification?.findings.length) unexplained.push(fake.name);
        }
        assert.deepEqual(passed, [], 'no fake succeeds');
        assert.deepEqual(unexplained, [], 'every fake gets a finding');
      } finally {
        await env.dispose();
      }
    },
  );

  test('without the shim the same task has no artifact (the control)', { timeout: 900_000 }, async () => {
    const task = taskOf('no_save_bare', NO_SAVE, { verify: { artifact: EVIDENCE_ARTIFACT } });
    const env = new ForgeEnvironment({ mode: 'real', timeoutMs: 240_000, validateRepairs: false }, { tasks: new TaskSampler([task]) });
    try {
      await brokenEpisode(env, task);
      const oracle = await env.evaluateRepair(env.oracleDiff());
      assert.equal(oracle.success, false);
      assert.match(oracle.verification?.findings.join(' ') ?? '', /left no \.forgeenv-evidence\/model/);
    } finally {
      await env.dispose();
    }
  });

  test('a warm run (a zygote of the shimmed shape) keeps the evidence too', { timeout: 600_000 }, async () => {
    process.env.FORGEENV_WARM = 'force';
    const r = await realRun(SNAPSHOT, NO_SAVE, { shims: ['trained-model-evidence'], warm: true, keepRunDir: true });
    try {
      assert.equal(r.runtime, 'warm', r.stderr.slice(-2000));
      assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
      assert.ok(existsSync(join(r.run_dir, EVIDENCE_ARTIFACT, 'config.json')), r.stderr.slice(-2000));
      const manifest = JSON.parse(readFileSync(join(r.run_dir, '.forgeenv-evidence', 'evidence.json'), 'utf8')) as {
        steps: number;
        model: string;
      };
      assert.equal(manifest.steps, 6);
      assert.equal(manifest.model, 'GPT2LMHeadModel');
    } finally {
      if (r.run_dir) rmSync(r.run_dir, { recursive: true, force: true });
      process.env.FORGEENV_WARM = '0';
    }
  });

  test(
    "the hook touches none of the run's own objects, cold or warm (their __getattribute__ may print)",
    { timeout: 600_000 },
    async () => {
      // torch's deprecated `reduce_op` warns from its __getattribute__: looking an object's class up
      // through it printed that warning in cold runs only (a warm run's import-time heap is frozen out of
      // the hook's sight), a difference warm vs cold and output the script never made.
      const watched = `import sys
class Watched:
    def __getattribute__(self, name):
        sys.stderr.write("touched: %s\\n" % name)
        return object.__getattribute__(self, name)
watched = Watched()
`;
      for (const warm of [false, true]) {
        process.env.FORGEENV_WARM = warm ? 'force' : '0';
        try {
          const r = await realRun(SNAPSHOT, watched + NO_SAVE, { shims: ['trained-model-evidence'], warm });
          assert.equal(r.runtime, warm ? 'warm' : 'cold');
          assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
          assert.match(r.stdout, /done/);
          assert.doesNotMatch(r.stderr, /touched/, `warm=${warm}`);
        } finally {
          process.env.FORGEENV_WARM = '0';
        }
      }
    },
  );

  test("a 1-label LoRA reward model loads with its own head size (not the config's default of 2)", { timeout: 900_000 }, async () => {
    const task = taskOf('reward_adapter', REWARD_ADAPTER);
    const env = new ForgeEnvironment({ mode: 'real', timeoutMs: 240_000, validateRepairs: false }, { tasks: new TaskSampler([task]) });
    try {
      await brokenEpisode(env, task);
      const oracle = await env.evaluateRepair(env.oracleDiff());
      assert.equal(oracle.verification?.loaded, true, JSON.stringify(oracle.verification));
      assert.equal(oracle.verification?.loaded_with, 'PeftModel');
      assert.ok(oracle.success, `${oracle.findings.join('; ')} ${JSON.stringify(oracle.verification)}`);
    } finally {
      await env.dispose();
    }
  });
});

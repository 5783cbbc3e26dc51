// The CPU runtime shims (src/env/run/runtimeShims.ts, resources/shims): the rules that record them on
// recorded error texts, the task schema, and real runs in the snapshot venvs (2023-12, 2024-09, 2026-11;
// skipped, saying why, when a venv is not built) of tiny scripts of ours that assume a CUDA GPU in
// their code: with the shims they run on the CPU, cold and warm; without them they fail (control);
// a keyword a release removed still fails with the shims (drift is not masked); a library's probe
// for bitsandbytes still says it is not installed. Then make-task on such a script ends verified
// with the shims recorded in tasks.json. The real-run tests are slow: run this file alone.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { RuntimeShim } from '../../src/env/run/runtimeShims';
import { prepareRealRun } from '../../src/env/run/realMode';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { realRunFixture } from './realRunFixture';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { diagnose, type RuleContext } from '../../src/env/taskmaking/rules';
import { makeTask } from '../../src/env/taskmaking/makeTask';
import { TaskSchema } from '../../src/env/schemas';
import { loadTaskFolder, taskCandidate, TaskMetadataFileSchema } from '../../src/env/tasks/tasks';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 9, in <module>\n    main()\n${last}\n`;
const noParser = (over: Partial<RuleContext> = {}): RuleContext => ({
  script: 'import torch\n',
  args: [],
  env: {},
  options: undefined,
  ...over,
});

describe('CPU rules: a GPU assumption in the code becomes a recorded runtime shim', () => {
  test('no NVIDIA driver (CUDA build) -> cuda-to-cpu; a second shim is added to the first', () => {
    const d = diagnose(
      traceback(
        'RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx',
      ),
      noParser(),
    );
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'cpu-device');
    assert.equal(d.outcome.adaptation.kind, 'runtime');
    assert.match(d.outcome.adaptation.change, /^runtime shim cuda-to-cpu: /);
    const bnb = diagnose(
      traceback("ModuleNotFoundError: No module named 'bitsandbytes'"),
      noParser({ runtime: { shims: ['cuda-to-cpu'] } }),
    );
    assert.ok(bnb && bnb.outcome.kind === 'adapt', 'bitsandbytes missing is a quantization matter, not a module to refuse');
    assert.deepEqual(bnb.outcome.runtime, { shims: ['cuda-to-cpu', 'no-quantization'] });
  });

  test("BitsAndBytesConfig's version probe of a missing bitsandbytes -> no-quantization", () => {
    const d = diagnose(traceback('importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes'), noParser());
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.runtime, { shims: ['no-quantization'] });
  });

  test('fp16 in the code (no --fp16 option) -> no-mixed-precision; an --fp16 option is still preferred', () => {
    const err = traceback(
      'ValueError: FP16 Mixed precision training with AMP or APEX (`--fp16`) and FP16 half precision evaluation (`--fp16_full_eval`) can only be used on CUDA or MLU devices or NPU devices or certain XPU devices (with IPEX).',
    );
    const d = diagnose(err, noParser());
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.runtime, { shims: ['no-mixed-precision'] });
    const withOption = diagnose(err, noParser({ options: new Map([['fp16', 'fp16']]), args: ['--fp16', 'true'] }));
    assert.ok(withOption && withOption.outcome.kind === 'adapt');
    assert.equal(withOption.outcome.runtime, undefined);
    assert.deepEqual(withOption.outcome.args, ['--fp16', 'false']);
  });

  test('with the shim on, a warning about 8-bit loading above another error is no reason to refuse', () => {
    const out =
      'The `load_in_4bit` and `load_in_8bit` arguments are deprecated and will be removed in the future versions.\n' +
      traceback("KeyError: 'labels'");
    const d = diagnose(out, noParser({ runtime: { shims: ['no-quantization'] } }));
    assert.ok(
      !d || (d.outcome.kind === 'refuse' ? d.outcome.rule : d.outcome.adaptation.rule) !== 'no-quantized-loading',
      JSON.stringify(d),
    );
  });
});

describe('tasks.json runtime', () => {
  test('known shims are accepted and reach the task; unknown and repeated ones are refused', () => {
    const ok = TaskMetadataFileSchema.safeParse([{ task_id: 't', runtime: { shims: ['cuda-to-cpu', 'no-quantization'] } }]);
    assert.ok(ok.success);
    const task = TaskSchema.parse(taskCandidate('t', 'print(1)\n', ok.data[0], 'dir'));
    assert.deepEqual(task.runtime, { shims: ['cuda-to-cpu', 'no-quantization'] });
    assert.equal(TaskMetadataFileSchema.safeParse([{ task_id: 't', runtime: { shims: ['gpu-magic'] } }]).success, false);
    assert.equal(TaskMetadataFileSchema.safeParse([{ task_id: 't', runtime: { shims: ['cuda-to-cpu', 'cuda-to-cpu'] } }]).success, false);
    assert.equal(TaskMetadataFileSchema.safeParse([{ task_id: 't', runtime: { shims: ['cuda-to-cpu'], path: '/tmp' } }]).success, false);
  });
});

// --- real runs -------------------------------------------------------------------------------------

const GPU_SCRIPT = `import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig, TrainingArguments
from transformers.utils import is_bitsandbytes_available
import bitsandbytes as bnb

device = torch.device("cuda")
print("capability", torch.cuda.get_device_capability(), "memory", torch.cuda.mem_get_info()[1] > 0)
torch.cuda.set_device(0)
x = torch.ones(2).to(device)
y = torch.ones(2).cuda()
print("tensors", x.device, y.device)
model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=torch.bfloat16), device_map={"": 0})
model.cuda()
print("model", model.device, model.dtype, "quantization_config" in model.config.to_dict())
optimizer = bnb.optim.PagedAdamW8bit(model.parameters(), lr=1e-3)
batch = AutoTokenizer.from_pretrained("gpt2")("hello world", return_tensors="pt").to("cuda:0")
loss = model(**batch, labels=batch["input_ids"]).loss
loss.backward()
optimizer.step()
print("optimizer", type(optimizer).__mro__[1].__name__, "library sees bitsandbytes", is_bitsandbytes_available())
print("fp16", TrainingArguments(output_dir="o", fp16=True, report_to=[]).fp16)
`;
const ALL: RuntimeShim[] = ['cuda-to-cpu', 'no-quantization', 'no-mixed-precision'];
const { realRun } = realRunFixture('forgeenv-shims-test-');

// 2023-12: transformers 4.36, before transformers.quantizers (quantization read from from_pretrained's keywords).
for (const snapshot of ['2023-12', '2024-09', '2026-11']) {
  const skip = isSnapshotVenvReady(snapshot)
    ? false
    : `the managed venv of snapshot ${snapshot} is not built (forgeenv snapshots build ${snapshot})`;
  describe(`runtime shims in the real venv of ${snapshot}`, { skip }, () => {
    test(
      'with the shims the GPU script runs on the CPU, unquantized in float32; without them it fails; FORGEENV_SHIMS from a task env does nothing',
      { timeout: 600_000 },
      async () => {
        process.env.FORGEENV_WARM = '0';
        const r = await realRun(snapshot, GPU_SCRIPT, { shims: ALL });
        assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
        assert.match(r.stdout, /capability \(0, 0\) memory True/);
        assert.match(r.stdout, /tensors cpu cpu/);
        assert.match(r.stdout, /model cpu torch\.float32 False/);
        assert.match(r.stdout, /optimizer AdamW library sees bitsandbytes False/);
        assert.match(r.stdout, /fp16 False/);
        // The control: the same script without the shims, and a task env that names them, fails on the GPU assumption.
        const bare = await realRun(snapshot, GPU_SCRIPT, {
          extraEnv: {
            ...(await prepareRealRun({ libraryVersions: { ...getSnapshot(snapshot).versions }, snapshot })).env,
            FORGEENV_SHIMS: ALL.join(','),
          },
        });
        assert.notEqual(bare.exit_code, 0);
        assert.match(bare.stderr, /NVIDIA driver|not compiled with CUDA|bitsandbytes/);
      },
    );

    test('the shims mask no library error: a removed keyword or API still fails as it would', { timeout: 600_000 }, async () => {
      process.env.FORGEENV_WARM = '0';
      const renamed = `import torch\nfrom transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("gpt2", device_map="auto")\nm.cuda()\nfrom transformers import NoSuchTrainerX\n`;
      const r = await realRun(snapshot, renamed, { shims: ALL });
      assert.notEqual(r.exit_code, 0);
      assert.match(r.stderr, /ImportError: cannot import name 'NoSuchTrainerX'/);
      const kw = await realRun(
        snapshot,
        `from transformers import AutoModelForCausalLM\nm = AutoModelForCausalLM.from_pretrained("gpt2", load_in_8bit=True, device_map="auto")\nprint("loaded", m.dtype)\n`,
        { shims: ALL },
      );
      if (snapshot === '2026-11') {
        // transformers 5 removed from_pretrained(load_in_8bit=...): its own error, shims or not.
        assert.notEqual(kw.exit_code, 0);
        assert.match(kw.stderr, /unexpected keyword argument 'load_in_8bit'/);
      } else {
        // Releases that take the keyword load unquantized.
        assert.equal(kw.exit_code, 0, kw.stderr.slice(-2000));
        assert.match(kw.stdout, /loaded torch\.float32/);
      }
    });

    test('warm runs get the shims too (a zygote of the shimmed shape)', { timeout: 600_000 }, async () => {
      process.env.FORGEENV_WARM = 'force';
      const r = await realRun(snapshot, GPU_SCRIPT, { shims: ALL, warm: true });
      assert.equal(r.runtime, 'warm', r.stderr.slice(-2000));
      assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
      assert.match(r.stdout, /tensors cpu cpu/);
      assert.match(r.stdout, /model cpu torch\.float32 False/);
    });
  });
}

const MAKE_SNAPSHOT = '2024-09';
const skipMake = isSnapshotVenvReady(MAKE_SNAPSHOT) ? false : `the managed venv of snapshot ${MAKE_SNAPSHOT} is not built`;
describe('make-task on a script that assumes a GPU', { skip: skipMake }, () => {
  test('ends verified, with the shims recorded (adaptations and runtime) in tasks.json', { timeout: 1_500_000 }, async () => {
    delete process.env.FORGEENV_WARM;
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-shims-make-'));
    try {
      const src = join(dir, 'src');
      mkdirSync(src);
      writeFileSync(
        join(src, 'qlora_tiny.py'),
        `import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, BitsAndBytesConfig

device = torch.device("cuda")
major, _ = torch.cuda.get_device_capability()
model = AutoModelForCausalLM.from_pretrained("gpt2", quantization_config=BitsAndBytesConfig(load_in_4bit=True), device_map={"": 0})
tokenizer = AutoTokenizer.from_pretrained("gpt2")
model.to(device)
optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4)
texts = ["the cat sat on the mat", "a dog ran in the park", "birds fly over the sea", "fish swim in the river"]
model.train()
for step in range(6):
    batch = tokenizer(texts[step % 4], return_tensors="pt").to("cuda")
    loss = model(**batch, labels=batch["input_ids"]).loss
    loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    print(f"step {step} loss={loss.item():.4f}")
model.save_pretrained("out")
tokenizer.save_pretrained("out")
`,
      );
      const tasks = join(dir, 'tasks');
      const r = await makeTask({
        scriptPath: join(src, 'qlora_tiny.py'),
        taskDir: tasks,
        snapshot: MAKE_SNAPSHOT,
        mode: 'real',
        timeoutMs: 240_000,
      });
      assert.equal(r.refusal, undefined, JSON.stringify(r.refusal));
      assert.ok(r.verdict?.verified, JSON.stringify(r.verdict));
      const saved = TaskMetadataFileSchema.parse(JSON.parse(readFileSync(join(tasks, 'tasks.json'), 'utf8')))[0];
      assert.deepEqual(saved.runtime, { shims: ['cuda-to-cpu', 'no-quantization'] });
      const recorded = saved.adaptations!.filter((a) => a.kind === 'runtime');
      assert.deepEqual(
        recorded.map((a) => a.rule),
        ['cpu-device', 'no-quantized-loading'],
      );
      // Each with the exception it answered and what the shim replaces.
      assert.match(recorded[0].error, /Error: .*(NVIDIA driver|CUDA)/);
      assert.match(recorded[1].error, /Error: .*(bitsandbytes|quantization)/i);
      assert.match(recorded[1].change, /^runtime shim no-quantization: .*float32/);
      assert.deepEqual(loadTaskFolder(tasks).tasks[0]?.runtime, saved.runtime, 'the environment loads the shims with the task');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

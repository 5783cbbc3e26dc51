// Real-world scripts (../shared/realworld/scripts, read in place, never copied) run unmodified in
// simulated mode with the arguments of test/fixtures/realworld-tasks.json, plus focused probes of the
// stand-ins added for them (HfArgumentParser, TrlParser, accelerate, fallback packages).
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import { lastErrorLine, loadRealworldTasks, lossesDecrease, runRealworldTask, stepLosses } from '../../bench/realworld';
import { executeScript } from '../../src/env/run/executor';
import { getSnapshot } from '../../src/env/snapshots/registry';

const root = resolve(__dirname, '..', '..');
const corpus = join(root, '..', 'shared', 'realworld', 'scripts');
const haveCorpus = existsSync(corpus);

// One per style: TrlParser + YAML SFT (trl 1.x, vision-language), HfArgumentParser DPO (trl 0.7), accelerate custom loop,
// argparse Trainer script (OLoRA), notebook-style PEFT int8 seq2seq, HfArgumentParser masked LM (2021 code, 2025 snapshot).
// BCO through KTOTrainer (trl 0.9, 2024-06). (26, the speech CTC script, needs transformers >= 4.46 with
// datasets < 3.0: no real snapshot has both.)
const REPRESENTATIVE = [
  '10_trl_sft_vlm.py',
  '03_trl_stackllama2_dpo.py',
  '06_trl_bco_2024.py',
  '17_acc_complete_nlp_example_2022.py',
  '16_peft_olora_clm.py',
  '20_phil_peft_flan_t5_int8_summarization.py',
  '27_trp_run_mlm_wwm.py',
];

for (const name of REPRESENTATIVE) {
  test(
    `real-world ${name} runs unmodified in simulated mode with decreasing losses`,
    { skip: haveCorpus ? false : `${corpus} is absent` },
    async () => {
      const task = loadRealworldTasks().find((t) => t.file === name);
      assert.ok(task, `${name} has a fixture entry`);
      const o = await runRealworldTask(task, corpus);
      assert.equal(o.exitCode, 0, `exit 0, got ${o.exitCode}: ${lastErrorLine(o.result.stderr)}`);
      assert.ok(o.losses.length >= 2, `at least two step=N loss=X lines, got ${o.losses.length}`);
      assert.ok(o.lossesDecrease, `losses decrease: ${o.losses.join(', ')}`);
    },
  );
}

test('stepLosses/lossesDecrease read the step lines', () => {
  assert.deepEqual(stepLosses('step=1 loss=0.9\nfoo\nstep=2 loss=0.5 learning_rate=1e-3\n'), [0.9, 0.5]);
  assert.equal(lossesDecrease([0.9, 0.5]), true);
  assert.equal(lossesDecrease([0.5, 0.9]), false);
  assert.equal(lossesDecrease([0.5]), false);
  assert.equal(lastErrorLine('Traceback...\n  File "x"\nKeyError: \'a\'\n[forgeenv] note\n'), "KeyError: 'a'");
});

async function runSim(script: string, snapshot = '2025-03', args: string[] = [], files: Record<string, string> = {}) {
  return executeScript({
    script,
    mode: 'simulated',
    libraryVersions: getSnapshot(snapshot).versions,
    validate: false,
    args,
    files,
    timeoutMs: 60_000,
  });
}

test('HfArgumentParser: dataclass fields, bool flags, required fields, unknown arguments', async () => {
  const script = `
from dataclasses import dataclass, field
from typing import Optional
from transformers import HfArgumentParser, TrainingArguments

@dataclass
class A:
    name: str = field(metadata={"help": "required"})
    flag: bool = True
    maybe: Optional[bool] = field(default=False)
    n: int = 3

a, t = HfArgumentParser((A, TrainingArguments)).parse_args_into_dataclasses()
print("ARGS", a.name, a.flag, a.maybe, a.n, t.output_dir, t.per_device_train_batch_size)
try:
    HfArgumentParser(A).parse_args_into_dataclasses(args=["--name", "x", "--bogus", "1"])
except ValueError as e:
    print("UNUSED", e)
`;
  const r = await runSim(script, '2025-03', [
    '--name',
    'xyz',
    '--no_flag',
    '--maybe',
    '--n',
    '5',
    '--output_dir',
    'o',
    '--per_device_train_batch_size',
    '2',
  ]);
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /ARGS xyz False True 5 o 2/);
  assert.match(r.stdout, /UNUSED Some specified arguments are not used by the HfArgumentParser: \['--bogus', '1'\]/);
  const missing = await runSim(script, '2025-03', []);
  assert.notEqual(missing.exit_code, 0);
  assert.match(missing.stderr, /the following arguments are required: --name/);
});

test('TrlParser reads --config YAML; command-line values win; trl names follow their release', async () => {
  const script = `
from trl import ModelConfig, SFTConfig, TrlParser
m, t = TrlParser((ModelConfig, SFTConfig)).parse_args_and_config()
print("CFG", m.model_name_or_path, t.learning_rate, t.max_steps)
`;
  const r = await runSim(script, '2025-03', ['--config', 'c.yaml', '--max_steps', '7'], {
    'c.yaml': 'model_name_or_path: Qwen/Qwen2-0.5B\nlearning_rate: 0.001\nmax_steps: 3\noutput_dir: out\n',
  });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /CFG Qwen\/Qwen2-0\.5B 0\.001 7/);
  const old = await runSim('from trl import KTOTrainer\n', '2023-12');
  assert.match(old.stderr, /ImportError: cannot import name 'KTOTrainer' from 'trl'/);
  const grpo = await runSim('from trl import GRPOConfig, GRPOTrainer\nprint("ok")\n', '2026-11');
  assert.equal(grpo.exit_code, 0, grpo.stderr);
});

test('accelerate: prepare/backward/accumulate/save_state on one CPU process', async () => {
  const script = `
import os, torch
from accelerate import Accelerator, DistributedType
from accelerate.utils import set_seed
set_seed(0)
acc = Accelerator(gradient_accumulation_steps=2)
model = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
model, opt = acc.prepare(model, opt)
x = torch.ones(2, 4)
for i in range(4):
    with acc.accumulate(model):
        loss = (model(x) - 3.0).pow(2).mean()
        acc.backward(loss)
        opt.step()
        opt.zero_grad()
print("DT", acc.distributed_type == DistributedType.NO, acc.num_processes, acc.is_main_process, acc.device)
acc.save_state("ckpt")
print("FILES", sorted(os.listdir("ckpt")))
`;
  const r = await runSim(script);
  assert.equal(r.exit_code, 0, r.stderr);
  assert.equal(stepLosses(r.stdout).length, 4);
  assert.match(r.stdout, /DT True 1 True cpu/);
  assert.match(r.stdout, /FILES \[.*'model\.safetensors'.*'optimizer\.bin'.*\]/);
  assert.ok(r.checkpoint_exists);
  const fp16 = await runSim('from accelerate import Accelerator\nAccelerator(mixed_precision="fp16")\n');
  assert.match(fp16.stderr, /ValueError: fp16 mixed precision requires a GPU \(not 'cpu'\)\./);
});

test('fallback stand-ins (numpy, tqdm) load after site-packages; CPU-only cuda queries fail like real torch', async () => {
  const script = `
import sys, numpy as np
from tqdm.auto import tqdm
print("NP", np.argmax(np.array([[1, 5, 2], [7, 0, 1]]), axis=-1).tolist(), round(np.percentile([1, 2, 3, 4], 50), 2))
print("TQ", sum(1 for _ in tqdm(range(3))))
print("ORDER", sys.path.index([p for p in sys.path if p.endswith("simlibs-fallback")][0]) == len(sys.path) - 1)
import torch
try:
    torch.cuda.get_device_capability()
except AssertionError as e:
    print("CUDA", e)
`;
  const r = await runSim(script);
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /NP \[1, 0\] 2\.5/);
  assert.match(r.stdout, /TQ 3/);
  assert.match(r.stdout, /ORDER True/);
  assert.match(r.stdout, /CUDA Torch not compiled with CUDA enabled/);
});

test('any owner/name model and dataset id maps to a tiny deterministic stand-in; bare unknown names still fail', async () => {
  const script = `
from transformers import AutoModelForCausalLM, AutoTokenizer
from datasets import load_dataset
m = AutoModelForCausalLM.from_pretrained("mistralai/Mistral-7B-v0.1")
print("MODEL", type(m).__name__)
print("DS", load_dataset("trl-lib/kto-mix-14k")["train"].column_names)
try:
    load_dataset("imdbb")
except Exception as e:
    print("MISSING", type(e).__name__)
`;
  const r = await runSim(script);
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /MODEL LlamaForCausalLM/);
  assert.match(r.stdout, /DS \['prompt', 'completion', 'label'\]/);
  assert.match(r.stdout, /MISSING DatasetNotFoundError/);
});

test('simulated hardware: bf16 accepted on CPU, fp16 refused before torch 2.3, a simulated CUDA device on request', async () => {
  const script = `
import torch
from transformers import TrainingArguments
TrainingArguments(output_dir="o", bf16=True)
print("BF16 ok")
try:
    TrainingArguments(output_dir="o", fp16=True)
    print("FP16 ok")
except ValueError as e:
    print("FP16", e)
print("CUDA", torch.cuda.is_available(), torch.cuda.device_count())
`;
  const cpu = await runSim(script, '2023-06');
  assert.equal(cpu.exit_code, 0, cpu.stderr);
  assert.match(cpu.stdout, /BF16 ok/);
  assert.match(cpu.stdout, /FP16 fp16 mixed precision requires a GPU/);
  assert.match(cpu.stdout, /CUDA False 0/);
  const gpu = await executeScript({
    script,
    mode: 'simulated',
    libraryVersions: getSnapshot('2023-06').versions,
    validate: false,
    extraEnv: { FORGEENV_SIM_CUDA: '1' },
  });
  assert.match(gpu.stdout, /FP16 ok/);
  assert.match(gpu.stdout, /CUDA True 1/);
});

test('custom loops report their losses on stderr; Parameter.data answers .to(); split "a+b" concatenates', async () => {
  const script = `
import torch
from datasets import load_dataset
model = torch.nn.Linear(4, 1)
for p in model.parameters():
    p.data = p.data.to(torch.float32)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
x = torch.ones(3, 4)
for _ in range(3):
    loss = (model(x) - 2.0).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
print("ROWS", len(load_dataset("glue", "mrpc", split="train+validation")), len(load_dataset("glue", "mrpc", split="train")))
`;
  const r = await runSim(script, '2024-04');
  assert.equal(r.exit_code, 0, r.stderr);
  const losses = stepLosses(r.stderr);
  assert.equal(losses.length, 3);
  assert.ok(lossesDecrease(losses), losses.join(', '));
  assert.equal(stepLosses(r.stdout).length, 0, "stdout stays the script's own");
  const m = /ROWS (\d+) (\d+)/.exec(r.stdout);
  assert.ok(m && Number(m[1]) > Number(m[2]), r.stdout);
});

test('peft: prompt tuning and AdaLoRA train through adapters; AutoPeftModelForCausalLM reloads a saved adapter', async () => {
  const script = `
from peft import AdaLoraConfig, AutoPeftModelForCausalLM, PromptTuningConfig, get_peft_model
from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification
m = get_peft_model(AutoModelForSequenceClassification.from_pretrained("roberta-base"), PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=8))
print("PT", m.peft_config["default"].peft_type, sum(p.numel() for p in m.parameters() if p.requires_grad) > 0)
a = get_peft_model(AutoModelForCausalLM.from_pretrained("gpt2"), AdaLoraConfig(init_r=4, target_r=2, target_modules=["c_attn"], task_type="CAUSAL_LM"))
a.update_and_allocate(0)
a.save_pretrained("adapter")
r = AutoPeftModelForCausalLM.from_pretrained("adapter")
print("RELOAD", type(r).__name__)
`;
  const r = await runSim(script, '2023-12');
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /PT PROMPT_TUNING True/);
  assert.match(r.stdout, /RELOAD PeftModelForCausalLM/);
});

test('push_to_hub fails without network unless FORGEENV_SIM_HUB_DIR names a local stand-in', async () => {
  const script = `
from transformers import AutoModelForCausalLM
AutoModelForCausalLM.from_pretrained("gpt2").push_to_hub("me/tiny")
print("PUSHED")
`;
  const off = await runSim(script);
  assert.match(off.stderr, /OSError: forgeenv-sim: there is no network; push_to_hub is not available/);
  const on = await executeScript({
    script,
    mode: 'simulated',
    libraryVersions: getSnapshot('2025-03').versions,
    validate: false,
    extraEnv: { FORGEENV_SIM_HUB_DIR: 'hub' },
  });
  assert.equal(on.exit_code, 0, on.stderr);
  assert.ok(
    on.checkpoints.some((c) => c.path === 'hub/me/tiny/model.safetensors'),
    JSON.stringify(on.checkpoints),
  );
});

test('wav2vec2 CTC tokenizer built from a vocab.json decodes CTC output', async () => {
  const script = `
import json, os
from transformers import AutoTokenizer
os.makedirs("tok", exist_ok=True)
json.dump({"<pad>": 0, "a": 1, "b": 2, "|": 3, "<unk>": 4}, open("tok/vocab.json", "w"))
t = AutoTokenizer.from_pretrained("tok", tokenizer_type="wav2vec2", unk_token="<unk>", pad_token="<pad>", word_delimiter_token="|")
ids = t("ab ba").input_ids
print("IDS", ids, type(t).__name__)
print("DEC", t.decode([1, 1, 0, 2, 3, 2, 1]), t.decode(ids, group_tokens=False))
`;
  const r = await runSim(script, '2024-04');
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /IDS \[1, 2, 3, 2, 1\] Wav2Vec2CTCTokenizer/);
  assert.match(r.stdout, /DEC ab ba ab ba/);
});

test('executeScript passes args and writes extra files (relative paths only)', async () => {
  const script = 'import sys\nprint("ARGV", sys.argv[1:])\nprint("FILE", open("cfg/a.yaml").read().strip())\n';
  const r = await runSim(script, '2025-03', ['--x', '1'], { 'cfg/a.yaml': 'k: v\n' });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.match(r.stdout, /ARGV \['--x', '1'\]/);
  assert.match(r.stdout, /FILE k: v/);
  const bad = await runSim(script, '2025-03', [], { '../escape.txt': 'no' });
  assert.equal(bad.exit_code, null);
  assert.match(bad.stderr, /invalid run options/);
});

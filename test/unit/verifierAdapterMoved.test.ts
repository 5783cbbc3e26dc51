// The weights-moved check on adapters beyond LoRA (issue 20): prompt tuning and adapters that save a
// head (peft's modules_to_save) hold no lora_B, so the check once measured nothing and no such task
// could verify. Real peft in real snapshot venvs (skipped when not built): an adapter saved untrained
// moves nothing; one trained a few steps moves its deterministically started tensors.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { resourcesDir } from '../../src/env/paths';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { venvProgramJson } from './venvProgram';

const work = mkdtempSync(join(tmpdir(), 'forgeenv-adapter-moved-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A base checkpoint without a head (like the local hub's tiny models), an adapter per kind saved
// untrained and trained, each measured by the verifier's own moved_share.
const PROGRAM = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch, transformers
import forgeenv_verify as v
from peft import get_peft_model, PeftModel, PromptTuningConfig, LoraConfig

work = sys.argv[2]
base = os.path.join(work, "base")
cfg = transformers.BertConfig(vocab_size=64, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=16, max_position_embeddings=64)
torch.manual_seed(0)
transformers.BertModel(cfg).save_pretrained(base)
loader = transformers.AutoModelForSequenceClassification
kinds = {"prompt_tuning": lambda: PromptTuningConfig(task_type="SEQ_CLS", num_virtual_tokens=4),
         "lora": lambda: LoraConfig(task_type="SEQ_CLS", r=2, lora_alpha=4, lora_dropout=0.0, target_modules=["query", "value"])}
out = {}
for name, make in kinds.items():
    for steps in (0, 3):
        torch.manual_seed(123 + steps)
        model = get_peft_model(loader.from_pretrained(base), make())
        opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
        for _ in range(steps):
            model(input_ids=torch.randint(0, 64, (4, 8)), labels=torch.tensor([0, 1, 0, 1])).loss.backward()
            opt.step()
            opt.zero_grad()
        art = os.path.join(work, "%s-%d" % (name, steps))
        model.save_pretrained(art)
        torch.manual_seed(7)
        loaded = PeftModel.from_pretrained(loader.from_pretrained(base), art)
        out["%s/%s" % (name, "trained" if steps else "untrained")] = v.moved_share(loaded, None, set(), True, lambda: v.adapter_start(loader, base, {}, art))
print("MOVED " + json.dumps(out))
`;

for (const snapshot of ['2023-06', '2026-11']) {
  const skip = isSnapshotVenvReady(snapshot) ? false : `the ${snapshot} snapshot venv is not built`;
  describe(`adapter weights moved in the ${snapshot} venv`, { skip }, () => {
    test('an untrained adapter moves nothing; a trained prompt-tuning or LoRA adapter moves what starts deterministically', () => {
      const dir = mkdtempSync(join(work, `${snapshot}-`));
      const moved = venvProgramJson(snapshot, PROGRAM, [join(resourcesDir(), 'verifier'), dir], 'MOVED') as Record<string, number>;
      assert.equal(moved['prompt_tuning/untrained'], 0);
      assert.equal(moved['lora/untrained'], 0);
      // The prompt embedding starts random (no artifact can show it moved); the head's zero bias does not.
      assert.ok(moved['prompt_tuning/trained'] > 0, JSON.stringify(moved));
      assert.ok(moved['lora/trained'] > 0, JSON.stringify(moved));
    });
  });
}

// An image classifier whose data files only the script's arguments name (parquet under --data_dir)
// is evaluated on fixed probe images, as a text model is on the probe sentences.
const PROBE_IMAGES = `
import json, sys
sys.path.insert(0, sys.argv[1])
import forgeenv_verify as v
from transformers import ViTImageProcessor
make = v.probe_images(ViTImageProcessor(size={"height": 32, "width": 32}), 3)
first = [(tuple(b["pixel_values"].shape), b["labels"].tolist()) for b in make()]
second = [float(b["pixel_values"].sum()) for b in make()]
again = [float(b["pixel_values"].sum()) for b in make()]
print("PROBE " + json.dumps({"batches": first, "same": second == again}))
`;

describe(
  'probe images in the 2026-11 venv',
  { skip: isSnapshotVenvReady('2026-11') ? false : 'the 2026-11 snapshot venv is not built' },
  () => {
    test('fixed pictures the model processor accepts, labels by position within the head size, the same on every pass', () => {
      const probe = venvProgramJson('2026-11', PROBE_IMAGES, [join(resourcesDir(), 'verifier')], 'PROBE', { timeout: 120_000 }) as {
        batches: [number[], number[]][];
        same: boolean;
      };
      assert.equal(probe.batches.length, 2);
      assert.deepEqual(probe.batches[0][0], [4, 3, 32, 32]);
      assert.deepEqual(probe.batches[0][1], [0, 1, 2, 0]);
      assert.equal(probe.same, true);
    });
  },
);

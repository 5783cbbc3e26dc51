// Trained-model evidence (runtime shim `trained-model-evidence`) for a script that trains inside a
// function and saves nothing: by interpreter exit the function has returned and dropped its model, so
// the shim keeps the owners of the trained parameters alive from the step that trained them. Real runs
// of a tiny script of ours in the oldest snapshot's venv (torch 2.0), skipped, saying why, without it.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { EVIDENCE_ARTIFACT } from '../../src/env/run/runtimeShims';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { realRunFixture } from './realRunFixture';

const SNAPSHOT = '2023-06';
const skip = isSnapshotVenvReady(SNAPSHOT) ? false : `the managed venv of snapshot ${SNAPSHOT} is not built`;
const { realRun } = realRunFixture('forgeenv-evidence-local-');

/** A LoRA seq2seq loop local to main(), as the PEFT examples write them; it saves nothing. */
const LOCAL_MODEL = `import torch
from peft import LoraConfig, TaskType, get_peft_model
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

def main():
    tokenizer = AutoTokenizer.from_pretrained("t5-small")
    model = get_peft_model(AutoModelForSeq2SeqLM.from_pretrained("t5-small"),
                           LoraConfig(task_type=TaskType.SEQ_2_SEQ_LM, r=4, lora_alpha=8, lora_dropout=0.0))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    pairs = [("the cat sat", "positive"), ("a dog ran", "negative")] * 2
    model.train()
    for step, (x, y) in enumerate(pairs):
        batch = tokenizer(x, return_tensors="pt")
        loss = model(**batch, labels=tokenizer(y, return_tensors="pt").input_ids).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        print(f"step {step} loss={loss.item():.4f}")

main()
`;

describe(`trained-model evidence of a model local to a function (${SNAPSHOT})`, { skip }, () => {
  test('the model main() trained is saved at exit, though main() has dropped it', { timeout: 600_000 }, async () => {
    const r = await realRun(SNAPSHOT, LOCAL_MODEL, { shims: ['trained-model-evidence'], keepRunDir: true });
    try {
      assert.equal(r.exit_code, 0, r.stderr.slice(-3000));
      assert.doesNotMatch(r.stderr, /no transformers or peft model holds the trained parameters/);
      assert.ok(existsSync(join(r.run_dir, EVIDENCE_ARTIFACT, 'adapter_config.json')), r.stderr.slice(-2000));
      const manifest = JSON.parse(readFileSync(join(r.run_dir, '.forgeenv-evidence', 'evidence.json'), 'utf8')) as {
        steps: number;
        model: string;
      };
      assert.equal(manifest.steps, 4);
      assert.match(manifest.model, /^PeftModel/);
    } finally {
      if (r.run_dir) rmSync(r.run_dir, { recursive: true, force: true });
    }
  });
});

// One real-mode episode on a task the corpus does not have: a script that fine-tunes
// `Qwen/Qwen2-0.5B` on a dataset no table knows (`acme/helpdesk-chats`) plus a local JSONL file the
// task does not ship. The environment derives the needs, builds the items with the 2026-11 venv
// (cached in the real cache: the second episode costs nothing), and the original, the broken
// script, the oracle repair and the verifier all see them. Skipped, saying why, without the venv.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { isLocalHubReady } from '../../src/env/hub/localHub';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

const SNAPSHOT = '2026-11';
const skip = !isSnapshotVenvReady(SNAPSHOT)
  ? `the ${SNAPSHOT} venv is not built (${snapshotPython(SNAPSHOT)})`
  : !isLocalHubReady(SNAPSHOT)
    ? `the ${SNAPSHOT} base hub is not built`
    : false;

const SCRIPT = `import json
import torch
from torch.optim import AdamW
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer

MODEL = "Qwen/Qwen2-0.5B"
tok = AutoTokenizer.from_pretrained(MODEL)
model = AutoModelForCausalLM.from_pretrained(MODEL)
ds = load_dataset("acme/helpdesk-chats", split="train")
notes = load_dataset("json", data_files="notes.jsonl", split="train")


def fmt(example):
    return {"text": example["question"] + " " + example["answer"]}


ds = ds.map(fmt, remove_columns=["ticket_id"])
texts = ds["text"][:16] + [n["summary"] for n in notes][:8]
opt = AdamW(model.parameters(), lr=5e-3)
torch.manual_seed(0)
model.train()
for step in range(12):
    batch = tok(texts[(step * 4) % len(texts):(step * 4) % len(texts) + 4], return_tensors="pt", padding=True)
    out = model(**batch, labels=batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100))
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step={step} loss={out.loss.item():.4f}")
model.save_pretrained("out")
tok.save_pretrained("out")
print("TRAINING_COMPLETE")
`;

describe(`real mode: an episode on a task with hub items (${SNAPSHOT})`, { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-hubtask-'));
  writeFileSync(join(dir, 'qwen_helpdesk.py'), SCRIPT);
  const progress: string[] = [];
  const env = new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs: 900_000 }, { onProgress: (m) => progress.push(m) });
  after(async () => {
    await env.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the original, broken and repaired runs load the tiny Qwen2 and the inferred dataset offline', { timeout: 3_600_000 }, async () => {
    const versions = { ...getSnapshot(SNAPSHOT).versions };
    await env.reset({ taskId: 'qwen_helpdesk', seed: 3, library_versions: versions });
    const broken = await env.step({
      breakage: { primitive_type: 'DeprecateImport', params: { old_module: 'torch.optim', new_module: 'transformers', names: ['AdamW'] } },
    });
    assert.equal(broken.info.error, undefined, `${String(broken.info.error)}\n${progress.join('\n')}`);
    assert.equal(broken.info.broke, true, `the broken script ran cleanly:\n${broken.error_trace}`);
    // The real error of the drift, not a missing model or dataset.
    assert.match(broken.error_trace ?? '', /ImportError: cannot import name 'AdamW' from 'transformers'/);
    assert.doesNotMatch(broken.error_trace ?? '', /OSError|couldn't be found|LocalEntryNotFoundError|FileNotFoundError/);

    const oracle = await env.evaluateRepair(env.oracleDiff());
    const out = oracle.execution!.stdout;
    assert.equal(oracle.execution!.exit_code, 0, `oracle run failed:\n${oracle.error_trace.slice(-3000)}\n${progress.join('\n')}`);
    assert.match(out, /step=11 loss=[\d.]+/);
    assert.match(out, /TRAINING_COMPLETE/);
    assert.equal(
      oracle.success,
      true,
      `not verified: ${JSON.stringify({ findings: oracle.findings, verification: oracle.verification }).slice(0, 2000)}`,
    );
  });
});

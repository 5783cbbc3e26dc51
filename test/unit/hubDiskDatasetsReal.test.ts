// Saved datasets, parquet files and builder-config keywords built for real by a snapshot venv's own
// `datasets` (make_hub_items.py), then read back offline the way a script reads them: through the run
// folder's links (load_from_disk, load_dataset("parquet")) and load_dataset(path, data_dir=, use_auth_token=).
// Items go to a temporary cache folder; the venv and base hub are the existing ones (skipped when not built).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, test } from 'node:test';
import { diskDatasetLinks } from '../../src/env/hub/diskDatasets';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { realModeEnv } from '../../src/env/run/realMode';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

const { cacheDir, skipReason, buildItems } = realHubFixture('forgeenv-diskds-');

const SNAPSHOT = '2024-09';

// A script the project has never seen: a tokenized LM folder, parquet image files, a data_dir subset.
const SCRIPT = `
import argparse, os
from datasets import load_dataset, load_from_disk
from transformers import AutoModelForCausalLM, Trainer, default_data_collator
p = argparse.ArgumentParser()
p.add_argument("--data_path", default="prepared/lm")
p.add_argument("--images", default="imgs")
args = p.parse_args()
lm = load_from_disk(args.data_path)
files = {"train": os.path.join(args.images, "train.parquet")}
pics = load_dataset("parquet", data_files=files)
names = pics["train"].features["label"].names
img = pics["train"][0]["image"]
sub = load_dataset("acme/pairs", data_dir="data/finetune", split="train", use_auth_token=True)
q = sub[0]["question"]
model = AutoModelForCausalLM.from_pretrained("gpt2")
Trainer(model=model, train_dataset=lm, data_collator=default_data_collator)
`;

describe(`saved datasets and parquet files in the ${SNAPSHOT} venv`, { skip: skipReason(SNAPSHOT) }, () => {
  test('built by the snapshot, linked into a run folder, read back offline as the script reads them', { timeout: 900_000 }, async () => {
    const needs = deriveHubNeeds(SCRIPT);
    const r = await buildItems(SNAPSHOT, {
      needs,
    });
    assert.deepEqual(r.refusals, []);
    const run = join(cacheDir, 'run');
    for (const [rel, target] of Object.entries(diskDatasetLinks(needs.datasets, r.hubDir))) {
      mkdirSync(dirname(join(run, rel)), { recursive: true });
      symlinkSync(target, join(run, rel));
    }
    const code = [
      'import datasets, json',
      'lm = datasets.load_from_disk("prepared/lm")',
      'pics = datasets.load_dataset("parquet", data_files={"train": "imgs/train.parquet"})["train"]',
      'sub = datasets.load_dataset("acme/pairs", data_dir="data/finetune", split="train", use_auth_token=True)',
      'print(json.dumps({"lm": lm.column_names, "n": len(lm), "len": len(lm[0]["input_ids"]), "same": lm[0]["labels"] == lm[0]["input_ids"], "pics": {k: type(v).__name__ for k, v in pics.features.items()}, "sub": sub.column_names}))',
    ].join('\n');
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir) };
    const out = spawnSync(snapshotPython(SNAPSHOT), ['-c', code], { env, cwd: run, encoding: 'utf8', timeout: 300_000 });
    assert.equal(out.status, 0, out.stderr.slice(-3000));
    const got = JSON.parse(out.stdout.trim().split('\n').pop()!);
    assert.deepEqual(got.lm, ['input_ids', 'attention_mask', 'labels']);
    assert.equal(got.n, 64);
    assert.equal(got.len, 32);
    assert.equal(got.same, true, "a causal LM's labels are its input ids");
    assert.equal(got.pics.label, 'ClassLabel');
    assert.equal(got.pics.image, 'Image');
    assert.ok(got.sub.includes('question'));
  });
});

const WHISPER_SNAPSHOT = '2023-12';
const whisperSkip = skipReason(WHISPER_SNAPSHOT);

describe(`slow tokenizer files in the ${WHISPER_SNAPSHOT} venv`, { skip: whisperSkip }, () => {
  test(
    'WhisperProcessor (which loads the slow WhisperTokenizer there) loads the tiny Whisper item offline',
    { timeout: 900_000 },
    async () => {
      const r = await buildItems(WHISPER_SNAPSHOT, {
        needs: { models: [{ id: 'openai/whisper-tiny' }], datasets: [] },
      });
      assert.deepEqual(r.refusals, []);
      const code = [
        'from transformers import WhisperProcessor',
        'p = WhisperProcessor.from_pretrained("openai/whisper-tiny", language="hindi", task="transcribe")',
        'ids = p.tokenizer("the film").input_ids',
        'print(type(p.tokenizer).__name__, len(ids) > 0)',
      ].join('\n');
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir) };
      const out = spawnSync(snapshotPython(WHISPER_SNAPSHOT), ['-c', code], { env, cwd: cacheDir, encoding: 'utf8', timeout: 300_000 });
      assert.equal(out.status, 0, out.stderr.slice(-3000));
      assert.equal(out.stdout.trim().split('\n').pop(), 'WhisperTokenizer True');
    },
  );
});

describe(`encoder-decoder start token in the ${WHISPER_SNAPSHOT} venv`, { skip: whisperSkip }, () => {
  test("a tiny T5's config names its decoder start token (its pad), as t5-base's checkpoint does", { timeout: 900_000 }, async () => {
    const r = await buildItems(WHISPER_SNAPSHOT, {
      needs: { models: [{ id: 'google/flan-t5-large' }], datasets: [] },
    });
    assert.deepEqual(r.refusals, []);
    const code =
      'from transformers import AutoConfig\nc = AutoConfig.from_pretrained("google/flan-t5-large")\nprint(c.decoder_start_token_id is not None and c.decoder_start_token_id == c.pad_token_id)';
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir) };
    const out = spawnSync(snapshotPython(WHISPER_SNAPSHOT), ['-c', code], { env, cwd: cacheDir, encoding: 'utf8', timeout: 300_000 });
    assert.equal(out.status, 0, out.stderr.slice(-3000));
    assert.equal(out.stdout.trim().split('\n').pop(), 'True');
  });
});

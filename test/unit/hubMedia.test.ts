// Models beyond text in the hub's table (src/env/hub/modelTable.ts): remote-code embedders served as
// the standard architecture their code extends, and the multimodal families' processors.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ensureHubItems } from '../../src/env/hub/ensure';
import { isLocalHubReady, localHubDir } from '../../src/env/hub/localHub';
import { resolveModel } from '../../src/env/hub/modelTable';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { realModeEnv } from '../../src/env/run/realMode';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, MODEL_FOR_AUTO_CLASS } from '../../src/env/taskmaking/rules';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

describe('remote-code embedding models', () => {
  test('nomic-embed-text (trust_remote_code) is a BERT encoder with the uncased tokenizer, by table and by pattern', () => {
    for (const id of ['nomic-ai/nomic-embed-text-v1.5', 'nomic-ai/nomic-embed-text-v2-moe', 'someone/nomic-bert-2048-finetuned']) {
      const r = resolveModel(id);
      assert.equal(r.model_type, 'bert', id);
      assert.equal(r.tokenizer, 'bert-uncased', id);
    }
    assert.equal(resolveModel('nomic-ai/nomic-embed-text-v1.5').resolvedBy, 'table');
  });
});

// ---------------------------------------------------------------- real libraries

const cacheDir = mkdtempSync(join(tmpdir(), 'forgeenv-media-'));
after(() => rmSync(cacheDir, { recursive: true, force: true }));
const SNAPSHOT = '2026-11';
const skip = !isSnapshotVenvReady(SNAPSHOT)
  ? `the ${SNAPSHOT} venv is not built`
  : !isLocalHubReady(SNAPSHOT)
    ? `the ${SNAPSHOT} base hub is not built`
    : false;

// Reads the items back the way VLM training scripts do: AutoProcessor, the chat template over content
// lists, processor(text, images), a forward pass with labels and a backward pass.
const READER = String.raw`
import json, numpy as np, torch, transformers as tr
from PIL import Image
img = Image.fromarray((np.random.RandomState(0).rand(40, 48, 3) * 255).astype("uint8"))
msgs = [{"role": "user", "content": [{"type": "image"}, {"type": "text", "text": "What is this?"}]}, {"role": "assistant", "content": [{"type": "text", "text": "A cat."}]}]
out = {}
for mid in ["HuggingFaceTB/SmolVLM-256M-Instruct", "llava-hf/llava-1.5-7b-hf", "HuggingFaceM4/idefics-9b"]:
    proc = tr.AutoProcessor.from_pretrained(mid)
    if "idefics-9b" in mid:
        model = tr.IdeficsForVisionText2Text.from_pretrained(mid)
        inputs = proc(text=[["User:", img, "Describe this.<end_of_utterance>\nAssistant: a cat"]], return_tensors="pt")
    else:
        model = tr.AutoModelForImageTextToText.from_pretrained(mid)
        text = proc.apply_chat_template(msgs)
        inputs = proc(text=[text], images=[[img]] if "Smol" in mid else [img], return_tensors="pt")
    loss = model(**inputs, labels=inputs["input_ids"]).loss
    loss.backward()
    out[mid] = {"processor": type(proc).__name__, "loss": float(loss), "image_tokens": int((inputs["input_ids"] == proc.tokenizer.convert_tokens_to_ids("<image>")).sum())}
print(json.dumps(out))
`;

describe(`multimodal processors in the ${SNAPSHOT} venv`, { skip }, () => {
  test('SmolVLM (Idefics3), LLaVA and IDEFICS get their family processor; a chat with an image trains', { timeout: 900_000 }, async () => {
    const needs = {
      models: [{ id: 'HuggingFaceTB/SmolVLM-256M-Instruct' }, { id: 'llava-hf/llava-1.5-7b-hf' }, { id: 'HuggingFaceM4/idefics-9b' }],
      datasets: [],
    };
    const r = await ensureHubItems({
      hubKey: SNAPSHOT,
      python: snapshotPython(SNAPSHOT),
      baseHubDir: localHubDir(SNAPSHOT),
      cacheDir,
      needs,
      strict: true,
    });
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir), TRANSFORMERS_VERBOSITY: 'error' };
    const p = spawnSync(snapshotPython(SNAPSHOT), ['-c', READER], { env, encoding: 'utf8', timeout: 600_000 });
    assert.equal(p.status, 0, p.stderr.slice(-3000));
    const out = JSON.parse(p.stdout.trim().split('\n').pop()!) as Record<string, { processor: string; loss: number; image_tokens: number }>;
    assert.equal(out['HuggingFaceTB/SmolVLM-256M-Instruct']?.processor, 'Idefics3Processor');
    assert.equal(out['llava-hf/llava-1.5-7b-hf']?.processor, 'LlavaProcessor');
    assert.equal(out['HuggingFaceM4/idefics-9b']?.processor, 'IdeficsProcessor');
    for (const [id, v] of Object.entries(out)) {
      assert.ok(Number.isFinite(v.loss) && v.loss > 0, `${id}: loss ${v.loss}`);
      assert.ok(v.image_tokens > 0, `${id}: the prompt carries image tokens`);
    }
  });
});

describe('the model-of-wrong-kind rule', () => {
  const traceback = (last: string) => `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 90, in main\n${last}\n`;
  const ERROR =
    "ValueError: Unrecognized configuration class <class 'transformers.models.gpt2.configuration_gpt2.GPT2Config'> for this kind of AutoModel: AutoModelForImageTextToText.\nModel type should be one of Idefics3Config, LlavaConfig.";
  test("the script's model option gets a well-known model of the Auto class's kind, once", () => {
    const options = parseHelpOptions('usage: x.py [--model_name_or_path MODEL_NAME_OR_PATH] [--output_dir OUTPUT_DIR]');
    const d = diagnose(traceback(ERROR), { script: '', args: ['--model_name_or_path', 'gpt2'], env: {}, options });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'model-of-wrong-kind');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'HuggingFaceTB/SmolVLM-256M-Instruct');
    assert.equal(resolveModel('HuggingFaceTB/SmolVLM-256M-Instruct').head, 'vision2seq');
    const again = diagnose(traceback(ERROR), { script: '', args: d.outcome.args!, env: {}, options });
    assert.ok(again && again.outcome.kind === 'refuse', 'no loop: the same error after the change is a refusal');
  });
  test('every model the rule proposes is one the hub can build (table or pattern)', () => {
    for (const id of Object.values(MODEL_FOR_AUTO_CLASS)) assert.doesNotThrow(() => resolveModel(id), id);
  });
});

describe(`synthetic audio columns in the ${SNAPSHOT} venv`, { skip }, () => {
  test(
    'an audio column is an Audio feature of 16 kHz mono WAVs; the note says which decoder the interpreter lacks',
    { timeout: 600_000 },
    async () => {
      const needs = deriveHubNeeds(
        'from datasets import load_dataset\nds = load_dataset("acme/voice-notes", split="train")\nds = ds.map(lambda b: {"n": len(b["audio"]["array"]), "t": b["sentence"]})\n',
      );
      assert.deepEqual(needs.datasets[0]?.columns, { audio: 'audio', sentence: 'string' });
      const r = await ensureHubItems({
        hubKey: SNAPSHOT,
        python: snapshotPython(SNAPSHOT),
        baseHubDir: localHubDir(SNAPSHOT),
        cacheDir,
        needs,
        strict: true,
      });
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir) };
      const code =
        'import datasets, io, json, wave\nd = datasets.load_dataset("acme/voice-notes", split="train")\nf = d.features["audio"]\nraw = d.cast_column("audio", datasets.Audio(decode=False))[0]["audio"]["bytes"]\nw = wave.open(io.BytesIO(raw))\nprint(json.dumps({"feature": type(f).__name__, "rate": w.getframerate(), "channels": w.getnchannels(), "frames": w.getnframes()}))';
      const p = spawnSync(snapshotPython(SNAPSHOT), ['-c', code], { env, encoding: 'utf8', timeout: 300_000 });
      assert.equal(p.status, 0, p.stderr.slice(-2000));
      assert.deepEqual(JSON.parse(p.stdout.trim().split('\n').pop()!), { feature: 'Audio', rate: 16000, channels: 1, frames: 8000 });
      const note = r.provided.find((x) => x.kind === 'dataset')?.detail ?? '';
      const hasDecoder =
        spawnSync(snapshotPython(SNAPSHOT), [
          '-c',
          'import importlib.util, sys; sys.exit(0 if importlib.util.find_spec("torchcodec") else 1)',
        ]).status === 0;
      assert.equal(/no torchcodec/.test(note), !hasDecoder, note);
    },
  );
});

describe('the network-download refusal', () => {
  test('a URL the script fetches itself (requests, urllib) is refused naming it', () => {
    const err =
      "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443): Max retries exceeded with url: /files/cat.png (Caused by NameResolutionError(\"Failed to resolve 'example.org'\"))";
    const d = diagnose(`Traceback (most recent call last):\n  File "/tmp/run/train.py", line 31, in <module>\n${err}\n`, {
      script: '',
      args: [],
      env: {},
      options: undefined,
    });
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'network-download');
    assert.match(d.outcome.reason, /https:\/\/example\.org\/files\/cat\.png/);
    const u = diagnose(
      'Traceback (most recent call last):\nurllib.error.URLError: <urlopen error [Errno -3] Temporary failure in name resolution>\n',
      { script: '', args: [], env: {}, options: undefined },
    );
    assert.ok(u && u.outcome.kind === 'refuse' && u.outcome.rule === 'network-download');
  });
});

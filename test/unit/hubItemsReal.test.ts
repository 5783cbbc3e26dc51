// Hub items built for real by the snapshot venvs' own libraries (make_hub_items.py), then read back
// offline the way training scripts read them: AutoModelForCausalLM / AutoTokenizer / load_dataset,
// a chat template applied, a forward pass with a loss. Items go to a temporary cache folder; the
// venvs and base hubs are the existing ones (skipped, saying why, when they are not built).
// Slow: one generator run per snapshot (~30 s) and one reader per check.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { HubItemsError } from '../../src/env/hub/ensure';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

const { cacheDir, skipReason, buildItems, readBack } = realHubFixture('forgeenv-hubitems-');

// A script the project has never seen: its dataset is in no table, so its columns come from the script.
const SCRIPT = `
from datasets import load_dataset
from transformers import AutoModelForCausalLM, AutoTokenizer
tok = AutoTokenizer.from_pretrained("Qwen/Qwen2-0.5B")
model = AutoModelForCausalLM.from_pretrained("Qwen/Qwen2-0.5B")
ds = load_dataset("acme/helpdesk-chats", split="train")
def fmt(example):
    return {"text": example["question"] + " " + example["answer"], "n": example["turns"]}
ds = ds.map(fmt, remove_columns=["ticket_id"])
`;

describe('hub items in the 2026-11 venv', { skip: skipReason('2026-11') }, () => {
  const snapshot = '2026-11';

  test(
    'tiny models of Qwen2, Llama-2, Llama-3-Instruct and Flan-T5 load with the Auto classes; the chat template applies',
    { timeout: 900_000 },
    async () => {
      const needs = deriveHubNeeds(SCRIPT);
      needs.models.push({ id: 'meta-llama/Llama-2-7b-hf' }, { id: 'google/flan-t5-base' }, { id: 'meta-llama/Meta-Llama-3-8B-Instruct' });
      const r = await buildItems(snapshot, { needs, strict: true });
      assert.deepEqual(r.refusals, []);
      assert.equal(r.built, 5);
      const out = readBack(
        snapshot,
        r.hubDir,
        `
import json, transformers as tr, datasets
res = {}
for mid in ["Qwen/Qwen2-0.5B", "meta-llama/Llama-2-7b-hf", "meta-llama/Meta-Llama-3-8B-Instruct"]:
    m = tr.AutoModelForCausalLM.from_pretrained(mid)
    t = tr.AutoTokenizer.from_pretrained(mid)
    enc = t(["a city council report"], return_tensors="pt")
    loss = m(**enc, labels=enc["input_ids"]).loss.item()
    res[mid] = {"cls": type(m).__name__, "layers": m.config.num_hidden_layers, "loss": loss, "bos": t.bos_token, "eos": t.eos_token}
chat = [{"role": "user", "content": "hi"}]
res["qwen_chat"] = tr.AutoTokenizer.from_pretrained("Qwen/Qwen2-0.5B").apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
res["llama3_chat"] = tr.AutoTokenizer.from_pretrained("meta-llama/Meta-Llama-3-8B-Instruct").apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
s2s = tr.AutoModelForSeq2SeqLM.from_pretrained("google/flan-t5-base")
res["t5"] = [type(s2s).__name__, type(tr.AutoTokenizer.from_pretrained("google/flan-t5-base")).__name__]
d = datasets.load_dataset("acme/helpdesk-chats")
res["ds"] = {k: [v.num_rows, sorted(v.column_names)] for k, v in d.items()}
res["gpt2"] = type(tr.AutoModelForCausalLM.from_pretrained("gpt2")).__name__
print(json.dumps(res))
`,
      );
      const res = JSON.parse(out.trim().split('\n').pop()!) as Record<string, any>;
      assert.equal(res['Qwen/Qwen2-0.5B'].cls, 'Qwen2ForCausalLM');
      assert.equal(res['meta-llama/Llama-2-7b-hf'].cls, 'LlamaForCausalLM');
      assert.equal(res['meta-llama/Llama-2-7b-hf'].bos, '<s>');
      assert.equal(res['meta-llama/Meta-Llama-3-8B-Instruct'].eos, '<|eot_id|>');
      for (const k of ['Qwen/Qwen2-0.5B', 'meta-llama/Llama-2-7b-hf']) {
        assert.equal(res[k].layers, 2);
        assert.ok(Number.isFinite(res[k].loss) && res[k].loss > 0);
      }
      assert.equal(
        res.qwen_chat,
        '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n',
      );
      assert.equal(
        res.llama3_chat,
        '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n',
      );
      assert.equal(res.t5[0], 'T5ForConditionalGeneration');
      assert.match(res.t5[1], /^T5Tokenizer/);
      assert.deepEqual(res.ds.train, [64, ['answer', 'question', 'ticket_id', 'turns']]);
      assert.equal(typeof res.gpt2, 'string', 'the base hub is still there');

      // Cached: a second call builds nothing and returns the same composed hub.
      const again = await buildItems(snapshot, { needs, strict: true });
      assert.deepEqual([again.built, again.cached, again.hubDir], [0, 5, r.hubDir]);
    },
  );

  test('one dataset id with two schemas: two items, two hubs, no clash', { timeout: 600_000 }, async () => {
    const a = await buildItems(snapshot, { needs: { models: [], datasets: [{ path: 'acme/shared', columns: { prompt: 'string' } }] } });
    const b = await buildItems(snapshot, {
      needs: { models: [], datasets: [{ path: 'acme/shared', columns: { chosen: 'string', rejected: 'string' } }] },
    });
    assert.notEqual(a.hubDir, b.hubDir);
    const cols = (hub: string) =>
      readBack(snapshot, hub, 'import datasets; print(sorted(datasets.load_dataset("acme/shared")["train"].column_names))')
        .trim()
        .split('\n')
        .pop();
    assert.equal(cols(a.hubDir), "['prompt']");
    assert.equal(cols(b.hubDir), "['chosen', 'rejected']");
    assert.equal(readdirSync(join(cacheDir, 'hub-items', snapshot)).filter((d) => d.startsWith('dataset-acme--shared')).length, 2);
  });

  test("a tiny model's tokenizer says no more tokens than the model has positions", { timeout: 600_000 }, async () => {
    const r = await buildItems(snapshot, {
      needs: {
        models: [
          { id: 'acme/tiny-llama-positions', architecture: 'llama' },
          { id: 'acme/tiny-roberta-positions', architecture: 'roberta' },
        ],
        datasets: [],
      },
    });
    assert.deepEqual(r.refusals, []);
    const out = readBack(
      snapshot,
      r.hubDir,
      'from transformers import AutoConfig, AutoTokenizer\nfor i in ["acme/tiny-llama-positions", "acme/tiny-roberta-positions"]:\n    print(AutoTokenizer.from_pretrained(i).model_max_length, AutoConfig.from_pretrained(i).max_position_embeddings)',
    );
    const [llama, roberta] = out
      .trim()
      .split('\n')
      .slice(-2)
      .map((l) => l.split(' ').map(Number));
    assert.equal(llama[0], llama[1]);
    assert.equal(roberta[0], roberta[1] - 2);
  });

  test('a LoRA adapter item loads with AutoPeftModelForCausalLM over the base hub model it names', { timeout: 600_000 }, async () => {
    const r = await buildItems(snapshot, { needs: { models: [{ id: 'acme/lora-gpt2', adapter_of: 'gpt2' }], datasets: [] } });
    assert.deepEqual(r.refusals, []);
    const out = readBack(
      snapshot,
      r.hubDir,
      'import torch\nfrom peft import AutoPeftModelForCausalLM\nm = AutoPeftModelForCausalLM.from_pretrained("acme/lora-gpt2")\nx = torch.tensor([[1, 2, 3]])\nprint(type(m).__name__, float(m(input_ids=x, labels=x).loss) > 0)',
    );
    assert.match(out.trim().split('\n').pop()!, /^PeftModelForCausalLM True$/);
  });

  test(
    'a dataset loaded with data_dir= is found offline under that data_dir (two subfolders, two items)',
    { timeout: 600_000 },
    async () => {
      const r = await buildItems(snapshot, {
        needs: {
          models: [],
          datasets: [
            { path: 'acme/pairs', data_dir: 'data/train', columns: { question: 'string' } },
            { path: 'acme/pairs', data_dir: 'data/eval', columns: { answer: 'string' } },
          ],
        },
      });
      assert.deepEqual(r.refusals, []);
      const cols = (dir: string) =>
        readBack(
          snapshot,
          r.hubDir,
          `import datasets; print(datasets.load_dataset("acme/pairs", data_dir="${dir}", split="train").column_names)`,
        )
          .trim()
          .split('\n')
          .pop();
      assert.equal(cols('data/train'), "['question']");
      assert.equal(cols('data/eval'), "['answer']");
    },
  );

  test('refusals carry their reason (an audio dataset is provided); strict needs throw a typed error', { timeout: 600_000 }, async () => {
    const r = await buildItems(snapshot, {
      needs: {
        models: [{ id: 'acme/secret-7b' }, { id: 'acme/model', architecture: 'no_such_model_type' }, { id: 'google/vit-base-patch16-224' }],
        datasets: [{ path: 'acme/speech', columns: { audio: 'audio', text: 'string' } }],
      },
    });
    const reasons = Object.fromEntries(r.refusals.map((x) => [x.id, x.reason]));
    assert.match(reasons['acme/secret-7b'], /forgeenv\.real\.modelArchitectures/);
    const tf = getSnapshot('2026-11').versions.transformers;
    assert.ok(reasons['acme/model'].includes(`transformers ${tf} does not know model type 'no_such_model_type'`), reasons['acme/model']);
    // Audio columns are synthesized (16 kHz WAVs, an Audio feature): provided, not refused.
    assert.equal(reasons['acme/speech'], undefined, JSON.stringify(r.refusals));
    assert.ok(
      r.provided.some((p) => p.id === 'acme/speech'),
      JSON.stringify(r.provided),
    );
    // The ViT builds; the missing Pillow is said up front, not left for the script to find.
    const vit = r.provided.find((p) => p.id === 'google/vit-base-patch16-224');
    assert.ok(vit, JSON.stringify(r));
    const hasPillow = spawnSync(snapshotPython(snapshot), ['-c', 'import PIL'], { encoding: 'utf8' }).status === 0;
    if (!hasPillow) assert.match(vit.detail, /no Pillow/);
    await assert.rejects(
      buildItems(snapshot, { needs: { models: [{ id: 'acme/secret-7b' }], datasets: [] }, strict: true }),
      (e: unknown) => e instanceof HubItemsError && e.kind === 'unknown_model',
    );
  });
});

describe('hub items in the 2024-09 venv', { skip: skipReason('2024-09') }, () => {
  test("the era's own libraries write and read a Llama-3 model and a dataset", { timeout: 900_000 }, async () => {
    const snapshot = '2024-09';
    const r = await buildItems(snapshot, {
      strict: true,
      needs: {
        models: [{ id: 'meta-llama/Llama-3.2-1B-Instruct' }],
        datasets: [{ path: 'acme/prefs', columns: { prompt: 'string', chosen: 'string', rejected: 'string' } }],
      },
    });
    const item = readdirSync(join(cacheDir, 'hub-items', snapshot)).find((d) => d.startsWith('model-'))!;
    const snapDir = join(cacheDir, 'hub-items', snapshot, item, 'hub', 'models--meta-llama--Llama-3.2-1B-Instruct', 'snapshots');
    assert.ok(existsSync(snapDir));
    const out = readBack(
      snapshot,
      r.hubDir,
      `
import json, transformers as tr, datasets
m = tr.AutoModelForCausalLM.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")
t = tr.AutoTokenizer.from_pretrained("meta-llama/Llama-3.2-1B-Instruct")
print(json.dumps({"v": tr.__version__, "written_by": m.config.transformers_version, "cls": type(m).__name__,
  "chat": t.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False),
  "cols": sorted(datasets.load_dataset("acme/prefs")["train"].column_names)}))
`,
    );
    const res = JSON.parse(out.trim().split('\n').pop()!) as Record<string, any>;
    const tf = getSnapshot('2024-09').versions.transformers;
    assert.equal(res.v, tf);
    assert.equal(res.written_by, tf, "config.json written by the era's transformers");
    assert.equal(res.cls, 'LlamaForCausalLM');
    assert.match(res.chat, /^<\|begin_of_text\|><\|start_header_id\|>user<\|end_header_id\|>\n\nhi<\|eot_id\|>/);
    assert.deepEqual(res.cols, ['chosen', 'prompt', 'rejected']);
  });
});

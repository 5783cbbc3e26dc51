// Chat templates and conversational columns built for real by the oldest built snapshot's own libraries
// (make_hub_items.py in the 2024-09 venv: transformers 4.45, trl 0.11.1), read back offline as a
// script reads them: the chat placeholder model and a Zephyr-template model apply a conversation with
// a system turn; a column the script hands to apply_chat_template is a list of messages that the real
// tokenizer formats; trl 0.11.1's own data_utils says whether the row is conversational.
// Slow: one generator run and one reader (skipped, saying why, when the venv or base hub is not built).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { CHAT_PLACEHOLDER_MODEL } from '../../src/env/hub/modelTable';
import { deriveHubNeeds } from '../../src/env/hub/needs';
import { realModeEnv } from '../../src/env/run/realMode';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

const SNAPSHOT = '2024-09';
const { cacheDir, skipReason, buildItems } = realHubFixture('forgeenv-hubchat-');

// A preference script the project has never seen, which applies the chat template to its columns itself.
const SCRIPT = `
from datasets import load_dataset
from trl import ORPOTrainer
ds = load_dataset("acme/paired-chats", split="train")
def process(row):
    row["chosen"] = tokenizer.apply_chat_template(row["chosen"], tokenize=False)
    row["rejected"] = tokenizer.apply_chat_template(row["rejected"], tokenize=False)
    return row
ds = ds.map(process)
`;

describe(`chat templates and conversational columns in the ${SNAPSHOT} venv`, { skip: skipReason(SNAPSHOT) }, () => {
  test(
    'the chat placeholder and a Zephyr-template model format a system turn; a templated column holds messages',
    { timeout: 900_000 },
    async () => {
      const needs = deriveHubNeeds(SCRIPT);
      needs.models.push({ id: CHAT_PLACEHOLDER_MODEL }, { id: 'TinyLlama/TinyLlama-1.1B-Chat-v1.0' });
      const r = await buildItems(SNAPSHOT, {
        needs,
        strict: true,
      });
      assert.deepEqual(r.refusals, []);
      const code = `
import json, transformers as tr, datasets
from trl.data_utils import is_conversational
chat = [{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}]
res = {}
for mid in ["${CHAT_PLACEHOLDER_MODEL}", "TinyLlama/TinyLlama-1.1B-Chat-v1.0"]:
    t = tr.AutoTokenizer.from_pretrained(mid)
    res[mid] = t.apply_chat_template(chat, tokenize=False, add_generation_prompt=True)
row = datasets.load_dataset("acme/paired-chats", split="train")[0]
res["chosen_roles"] = [m["role"] for m in row["chosen"]]
res["conversational"] = is_conversational({"chosen": row["chosen"], "rejected": row["rejected"]})
res["prompt_type"] = type(row["prompt"]).__name__
res["formatted"] = tr.AutoTokenizer.from_pretrained("${CHAT_PLACEHOLDER_MODEL}").apply_chat_template(row["chosen"], tokenize=False)
print(json.dumps(res))
`;
      const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(r.hubDir), TRANSFORMERS_VERBOSITY: 'error' };
      const p = spawnSync(snapshotPython(SNAPSHOT), ['-c', code], { env, encoding: 'utf8', timeout: 300_000 });
      assert.equal(p.status, 0, `reader failed:\n${p.stderr.slice(-3000)}`);
      const res = JSON.parse(p.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
      assert.equal(res[CHAT_PLACEHOLDER_MODEL], '<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n');
      assert.equal(res['TinyLlama/TinyLlama-1.1B-Chat-v1.0'], '<|system|>\nS</s>\n<|user|>\nhi</s>\n<|assistant|>\n');
      assert.deepEqual(res.chosen_roles, ['user', 'assistant']);
      assert.equal(res.conversational, true);
      assert.equal(res.prompt_type, 'str', 'the trainer-format prompt stays a string');
      assert.match(String(res.formatted), /^<\|im_start\|>system\n[^<]*<\|im_end\|>\n<\|im_start\|>user\n/);
    },
  );
});

describe('Qwen2.5 and Qwen3 templates in the 2026-11 venv are the ones its trl recognises', { skip: skipReason('2026-11') }, () => {
  test(
    "tiny Qwen2.5 and Qwen3 tokenizers carry trl's original templates byte for byte; trl says they support tool calling",
    { timeout: 900_000 },
    async () => {
      const snapshot = '2026-11';
      const needs = { models: [{ id: 'Qwen/Qwen2.5-0.5B-Instruct' }, { id: 'Qwen/Qwen3-0.6B' }], datasets: [] };
      const r = await buildItems(snapshot, {
        needs,
        strict: true,
      });
      const code = `
import json, transformers as tr
from trl import chat_template_utils as ctu
res = {}
for mid, ref in [("Qwen/Qwen2.5-0.5B-Instruct", ctu.qwen2_5_chat_template), ("Qwen/Qwen3-0.6B", ctu.qwen3_chat_template)]:
    t = tr.AutoTokenizer.from_pretrained(mid)
    res[mid] = [t.chat_template == ref, ctu.supports_tool_calling(t)]
print(json.dumps(res))
`;
      const env: NodeJS.ProcessEnv = {
        PATH: process.env.PATH,
        HOME: cacheDir,
        ...realModeEnv(r.hubDir),
        TRANSFORMERS_VERBOSITY: 'error',
      };
      const p = spawnSync(snapshotPython(snapshot), ['-c', code], { env, encoding: 'utf8', timeout: 300_000 });
      assert.equal(p.status, 0, `reader failed:\n${p.stderr.slice(-3000)}`);
      const res = JSON.parse(p.stdout.trim().split('\n').pop()!) as Record<string, [boolean, boolean]>;
      assert.deepEqual(res['Qwen/Qwen2.5-0.5B-Instruct'], [true, true]);
      assert.deepEqual(res['Qwen/Qwen3-0.6B'], [true, true]);
    },
  );
});

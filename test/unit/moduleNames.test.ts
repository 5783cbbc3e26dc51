// LoRA targets that name another family than the placeholder model's: the recorded PEFT errors (both
// spellings), the family chosen for them, the rule's answer on a tiny script, and the table of module
// names checked against the snapshot venvs' real transformers and peft (a tiny model of each family,
// its named modules; get_peft_model with a script's targets). Skipped, saying why, without the venvs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { FAMILY_MODULES, familyForTargets, targetModulesOfError } from '../../src/env/hub/moduleNames';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose } from '../../src/env/taskmaking/rules';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

// peft 0.13+ (NoMatchingPeftModuleError) and peft 0.3-0.12 (ValueError with a list), as they print them.
const NEW_ERROR =
  "peft.utils.error.NoMatchingPeftModuleError: Target modules {'dense_h_to_4h', 'dense', 'query_key_value', 'dense_4h_to_h'} not found in the base model. Please check the target modules and try again.";
const OLD_ERROR =
  "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please check the target modules and try again.";

const SCRIPT = `import argparse
from transformers import AutoModelForCausalLM
from peft import LoraConfig, get_peft_model
p = argparse.ArgumentParser()
p.add_argument("--model_id", default="some-org/some-13b-model")
args = p.parse_args()
model = AutoModelForCausalLM.from_pretrained(args.model_id)
model = get_peft_model(model, LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"]))
`;
const ctx = (args: string[]) => ({
  script: SCRIPT,
  args,
  env: {},
  options: parseHelpOptions('usage: train.py [-h] [--model_id MODEL_ID]'),
});
const traceback = (last: string) => `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 8, in <module>\n${last}\n`;

describe('LoRA targets of another family', () => {
  test('the target names are read from both spellings of the error', () => {
    assert.deepEqual(targetModulesOfError(NEW_ERROR)?.sort(), ['dense', 'dense_4h_to_h', 'dense_h_to_4h', 'query_key_value']);
    assert.deepEqual(targetModulesOfError(OLD_ERROR), ['q_proj', 'v_proj']);
    assert.equal(targetModulesOfError('ValueError: something else'), undefined);
  });

  test('the family whose modules include every target, of the same head as the placeholder', () => {
    assert.equal(familyForTargets(['dense_h_to_4h', 'dense', 'query_key_value', 'dense_4h_to_h'], 'gpt2')?.model_type, 'gpt_neox');
    assert.equal(familyForTargets(['q_proj', 'v_proj'], 'gpt2')?.model_type, 'llama');
    assert.equal(familyForTargets(['fc1', 'out_proj'], 'gpt2')?.model_type, 'opt');
    // A seq2seq placeholder is not swapped for a causal LM: T5's own names, or nothing.
    assert.equal(familyForTargets(['q_proj', 'v_proj'], 't5-small'), undefined);
    assert.equal(familyForTargets(['nothing_like_this'], 'gpt2'), undefined);
  });

  test("a rule's substitute model (not named by the script) is swapped; the script's own model is not", () => {
    const d = diagnose(traceback(NEW_ERROR), ctx(['--model_id', 'gpt2']));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-model-lora-targets');
    assert.equal(optionValue(d.outcome.args!, 'model_id'), 'EleutherAI/pythia-70m');
    const own = diagnose(traceback(NEW_ERROR), ctx(['--model_id', 'some-org/some-13b-model']));
    assert.notEqual(own?.outcome.kind === 'adapt' ? own.outcome.adaptation.rule : undefined, 'placeholder-model-lora-targets');
  });
});

const PROBE = `
import json, sys, transformers
from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForSeq2SeqLM, AutoModel
small = dict(hidden_size=32, d_model=32, n_embd=32, num_hidden_layers=1, n_layer=1, num_layers=1, num_decoder_layers=1,
             num_attention_heads=2, n_head=2, num_heads=2, num_key_value_heads=2, intermediate_size=64, ffn_dim=64,
             d_ff=64, d_kv=16, word_embed_proj_dim=32, vocab_size=128)
out = {}
for model_type in json.loads(sys.argv[1]):
    cfg = AutoConfig.for_model(model_type, **small)
    auto = AutoModelForSeq2SeqLM if model_type == "t5" else AutoModel if model_type == "bert" else AutoModelForCausalLM
    model = auto.from_config(cfg)
    out[model_type] = sorted({n.split(".")[-1] for n, _ in model.named_modules() if n})
# A script's Falcon targets on the family chosen for them: PEFT wraps every one.
from peft import LoraConfig, get_peft_model
m = get_peft_model(AutoModelForCausalLM.from_config(AutoConfig.for_model("gpt_neox", **small)),
                   LoraConfig(r=4, lora_alpha=8, lora_dropout=0.0, target_modules=["query_key_value", "dense", "dense_h_to_4h", "dense_4h_to_h"]))
out["lora_wrapped"] = sorted({n.split(".")[-2] for n, _ in m.named_modules() if n.endswith("lora_A")})
print(json.dumps(out))
`;

describe("the table of module names agrees with the snapshots' real transformers", () => {
  for (const snapshot of ['2023-06', '2026-11']) {
    const skip = isSnapshotVenvReady(snapshot) ? false : `the ${snapshot} snapshot venv is not built`;
    test(`snapshot ${snapshot}`, { skip }, () => {
      const r = spawnSync(snapshotPython(snapshot), ['-c', PROBE, JSON.stringify(FAMILY_MODULES.map((f) => f.model_type))], {
        encoding: 'utf8',
        timeout: 240_000,
        env: { PATH: process.env.PATH, HF_HUB_OFFLINE: '1', TRANSFORMERS_VERBOSITY: 'error' },
      });
      assert.equal(r.status, 0, r.stderr.slice(-2000));
      const real = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as Record<string, string[]>;
      for (const f of FAMILY_MODULES)
        for (const name of f.modules) assert.ok(real[f.model_type].includes(name), `${f.model_type} has no module ${name} at ${snapshot}`);
      assert.deepEqual(real.lora_wrapped, ['dense', 'dense_4h_to_h', 'dense_h_to_4h', 'query_key_value']);
    });
  }
});

// A script that grows the vocabulary (TRL's setup_chat_format, add_special_tokens + resize_token_embeddings)
// saves embeddings of another shape than its base model's: the verifier's untrained twin (the base in the
// saved config) once failed to load ("size mismatch"), so no such task could verify. Real transformers in
// real snapshot venvs (skipped when not built): the grown embeddings count as fresh, the rest is compared;
// a resized model saved untrained still moves nothing, one trained a few steps moves.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { resourcesDir } from '../../src/env/paths';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { venvProgramJson } from './venvProgram';

const work = mkdtempSync(join(tmpdir(), 'forgeenv-resized-vocab-'));
after(() => rmSync(work, { recursive: true, force: true }));

const PROGRAM = `
import json, os, sys
sys.path.insert(0, sys.argv[1])
import torch, transformers
import forgeenv_verify as v

work = sys.argv[2]
base = os.path.join(work, "base")
cfg = transformers.GPT2Config(vocab_size=64, n_embd=16, n_layer=1, n_head=2, n_positions=32)
torch.manual_seed(0)
transformers.GPT2Model(cfg).save_pretrained(base)
loader = transformers.AutoModelForSequenceClassification
out = {}
for steps in (0, 3):
    torch.manual_seed(1)
    model = loader.from_pretrained(base, num_labels=1)
    model.resize_token_embeddings(66)
    model.config.pad_token_id = 65
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(steps):
        model(input_ids=torch.randint(0, 66, (4, 8)), labels=torch.randn(4, 1)).loss.backward()
        opt.step()
        opt.zero_grad()
    art = os.path.join(work, "art-%d" % steps)
    model.save_pretrained(art)
    trained = loader.from_pretrained(art)
    untrained, info = v.untrained_like(loader, base, transformers.AutoConfig.from_pretrained(art))
    fresh = set(info.get("missing_keys") or []) | v.mismatched_names(untrained, info)
    out["trained" if steps else "untrained"] = v.moved_share(trained, untrained, fresh, False)
    out["fresh_has_wte"] = any("wte" in k for k in fresh)
print("MOVED " + json.dumps(out))
`;

for (const snapshot of ['2023-06', '2026-11']) {
  const skip = isSnapshotVenvReady(snapshot) ? false : `the ${snapshot} snapshot venv is not built`;
  describe(`resized vocabulary in the ${snapshot} venv`, { skip }, () => {
    test('the grown embeddings are fresh; an untrained resized model moves nothing, a trained one moves', () => {
      const dir = mkdtempSync(join(work, `${snapshot}-`));
      const moved = venvProgramJson(snapshot, PROGRAM, [join(resourcesDir(), 'verifier'), dir], 'MOVED') as Record<
        string,
        number | boolean
      >;
      assert.equal(moved.fresh_has_wte, true);
      assert.equal(moved.untrained, 0);
      assert.ok((moved.trained as number) > 0, JSON.stringify(moved));
    });
  });
}

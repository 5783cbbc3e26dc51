// A speech family whose well-known checkpoints are pretraining-only (facebook/wav2vec2-base: no tokenizer, no CTC
// head): the tiny hub model is saved as the base model, so a script's CTC head sized by the vocabulary it builds
// from its data (`AutoModelForCTC.from_pretrained(id, vocab_size=len(tokenizer))`) loads as it does with the real
// checkpoint, instead of failing on a saved lm_head of another size. Built and read back by the 2024-06 venv.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ensureHubItems } from '../../src/env/hub/ensure';
import { localHubDir } from '../../src/env/hub/localHub';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

const snapshot = '2024-06';
const { cacheDir, skipReason, readBack } = realHubFixture('forgeenv-speechbase-');
const skip = skipReason(snapshot);

describe('pretraining-only speech checkpoints', { skip }, () => {
  test("a CTC head of the script's own vocabulary size loads over the tiny facebook/wav2vec2-base", { timeout: 600_000 }, async () => {
    const r = await ensureHubItems({
      hubKey: snapshot,
      python: snapshotPython(snapshot),
      baseHubDir: localHubDir(snapshot),
      cacheDir,
      needs: { models: [{ id: 'facebook/wav2vec2-base' }], datasets: [] },
    });
    assert.deepEqual(r.refusals, []);
    const code = [
      'from transformers import AutoConfig, AutoModelForCTC',
      'c = AutoConfig.from_pretrained("facebook/wav2vec2-base")',
      'c.update({"vocab_size": 37, "pad_token_id": 0})',
      'm = AutoModelForCTC.from_pretrained("facebook/wav2vec2-base", config=c)',
      'print("heads", m.lm_head.out_features, c.architectures)',
    ].join('\n');
    const out = readBack(snapshot, r.hubDir, code);
    assert.match(out, /heads 37 \['Wav2Vec2Model'\]/);
  });
});

// The tiny encoder-decoder models carry their family's real decoding start (make_hub_items.py DECODER_START,
// from the real checkpoints' config.json): built by a snapshot venv's own transformers, read back offline the
// way a seq2seq training script uses them (labels shifted right need decoder_start_token_id). Skipped, saying
// why, when the 2023-12 venv or its base hub is not built.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ensureHubItems } from '../../src/env/hub/ensure';
import { localHubDir } from '../../src/env/hub/localHub';
import { snapshotPython } from '../../src/env/snapshots/venv';
import { realHubFixture } from './realHubFixture';

const snapshot = '2023-12';
const { cacheDir, skipReason, readBack } = realHubFixture('forgeenv-hubspecial-');
const skip = skipReason(snapshot);

describe('special-token config of tiny encoder-decoder models', { skip }, () => {
  test('a Flan-T5 id starts decoding with pad, a BART id with eos; a loss with labels works', { timeout: 600_000 }, async () => {
    const r = await ensureHubItems({
      hubKey: snapshot,
      python: snapshotPython(snapshot),
      baseHubDir: localHubDir(snapshot),
      cacheDir,
      strict: true,
      needs: { models: [{ id: 'acme/flan-t5-xl-sharded' }, { id: 'acme/bart-large-news' }], datasets: [] },
    });
    assert.deepEqual(r.refusals, []);
    const code = `
import json, transformers as tr
res = {}
for mid in ["acme/flan-t5-xl-sharded", "acme/bart-large-news"]:
    t = tr.AutoTokenizer.from_pretrained(mid)
    m = tr.AutoModelForSeq2SeqLM.from_pretrained(mid)
    enc = t(["a city council report"], return_tensors="pt")
    lab = t(["a summary"], return_tensors="pt")["input_ids"]
    loss = m(**enc, labels=lab).loss.item()
    res[mid] = {"start": m.config.decoder_start_token_id, "pad": t.pad_token_id, "eos": t.eos_token_id, "loss": loss}
print(json.dumps(res))
`;
    const p = readBack(snapshot, r.hubDir, code);
    const res = JSON.parse(p.trim().split('\n').pop()!) as Record<string, { start: number | null; pad: number; eos: number; loss: number }>;
    const t5 = res['acme/flan-t5-xl-sharded'];
    const bart = res['acme/bart-large-news'];
    assert.equal(t5.start, t5.pad, 'T5 checkpoints start decoding with the pad token');
    assert.equal(bart.start, bart.eos, 'BART checkpoints start decoding with eos');
    assert.notEqual(bart.pad, bart.eos);
    for (const x of [t5, bart]) assert.ok(Number.isFinite(x.loss) && x.loss > 0);
  });
});

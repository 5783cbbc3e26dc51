// The verifier on a speech-recognition model with a CTC head (wav2vec2: audio in, characters out). Its base
// model has no tokenizer (a CTC script builds its own vocabulary), so the probe is audio: fixed tones at the
// feature extractor's rate, labelled with the probe sentences' characters as ids within the model's vocabulary.
// Real transformers in the real 2024-06 and 2025-03 venvs (skipped, saying why, when not built): a tiny
// wav2vec2 from the hub builder, trained three steps, verifies; its untrained copy is judged not trained.
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resourcesDir } from '../../src/env/paths';
import { realModeEnv } from '../../src/env/run/realMode';
import { realHubFixture } from './realHubFixture';
import { assertTrainedVerifiesCopyDoesNot, VERIFY_EACH_RUN } from './verifierPrograms';
import { venvProgramJson } from './venvProgram';

const { cacheDir, skipReason, buildItems } = realHubFixture('forgeenv-verifier-ctc-');
const MODEL = 'facebook/wav2vec2-base';

const PROGRAM =
  `
import json, os, subprocess, sys
import numpy as np, torch
from transformers import AutoFeatureExtractor, AutoModelForCTC
verifier, work, base = sys.argv[1], sys.argv[2], sys.argv[3]
ORIGINAL = 'from transformers import AutoModelForCTC\\nmodel = AutoModelForCTC.from_pretrained("%s", vocab_size=40)\\nmodel.save_pretrained("out")\\n' % base
fe = AutoFeatureExtractor.from_pretrained(base)
def save(name, model):
    run = os.path.join(work, name)
    model.save_pretrained(os.path.join(run, "out"))
    return run
waves = [np.random.RandomState(i).randn(4000).astype("float32") for i in range(4)]
inputs = fe(waves, sampling_rate=16000, return_tensors="pt", padding=True)
labels = torch.tensor([[(3 * i + j) % 38 + 1 for j in range(6)] for i in range(4)])
torch.manual_seed(0)
model = AutoModelForCTC.from_pretrained(base, vocab_size=40)
opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
model.train()
for _ in range(3):
    model(**inputs, labels=labels).loss.backward()
    opt.step()
    opt.zero_grad()
runs = {"original": save("original", model)}
torch.manual_seed(1)
runs["untrained copy"] = save("untrained", AutoModelForCTC.from_pretrained(base, vocab_size=40))
` + VERIFY_EACH_RUN;

for (const snapshot of ['2024-06', '2025-03']) {
  describe(`the verifier on a wav2vec2 CTC model in the ${snapshot} venv`, { skip: skipReason(snapshot) }, () => {
    test('a ctc head probed with fixed tones; the trained model verifies, its untrained copy does not', { timeout: 900_000 }, async () => {
      const hub = await buildItems(snapshot, { needs: { models: [{ id: MODEL }], datasets: [], files: [] }, strict: true });
      const env = { PATH: process.env.PATH, HOME: cacheDir, ...realModeEnv(hub.hubDir), TRANSFORMERS_VERBOSITY: 'error' };
      const work = join(cacheDir, `ctc-${snapshot}`);
      const stdouts = venvProgramJson(snapshot, PROGRAM, [join(resourcesDir(), 'verifier'), work, MODEL], 'VERDICTS', {
        env,
        cwd: cacheDir,
        timeout: 800_000,
      }) as Record<string, string>;
      assertTrainedVerifiesCopyDoesNot(stdouts, 'ctc', MODEL);
    });
  });
}

// Audio decoding in a snapshot before datasets 4: datasets 2.x–3.x decode an `Audio` column with librosa and
// soundfile (its own `audio` extra), so a snapshot whose users have audio scripts carries `datasets[audio]`, resolved
// at its cut-off like the rest. Checked on the real 2023-12 venv when it is built.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pinInputs } from '../../src/env/snapshots/pin';
import { getSnapshot, snapshotRequirements } from '../../src/env/snapshots/registry';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

const SNAPSHOT = '2023-12';
const work = mkdtempSync(join(tmpdir(), 'forgeenv-audio-'));
after(() => rmSync(work, { recursive: true, force: true }));

// A 16 kHz tone written with soundfile, cast to an 8 kHz Audio column: decoding reads the file (soundfile) and
// resamples it (librosa), the path every audio training script's map() takes.
const DECODE = String.raw`
import json, os, sys, numpy as np, soundfile as sf
from datasets import Audio, Dataset
path = os.path.join(sys.argv[1], "tone.wav")
sf.write(path, np.sin(np.linspace(0, 440 * 2 * np.pi, 16000)).astype("float32"), 16000)
ds = Dataset.from_dict({"audio": [path]}).cast_column("audio", Audio(sampling_rate=8000))
a = ds[0]["audio"]
print(json.dumps({"sr": a["sampling_rate"], "n": len(a["array"])}))
`;

describe('datasets audio extra', () => {
  test(`${SNAPSHOT} installs the datasets audio extra and resolves it with its pins`, () => {
    const snap = getSnapshot(SNAPSHOT);
    assert.ok(snapshotRequirements(snap).includes('datasets[audio]'));
    assert.ok(pinInputs(snap).includes('datasets[audio]'), 'part of the resolution, so its librosa is of the cut-off');
  });

  test(
    `${SNAPSHOT}: an Audio column decodes and resamples in the real venv`,
    { skip: !isSnapshotVenvReady(SNAPSHOT) && `the ${SNAPSHOT} venv is not built (or predates datasets[audio])` },
    () => {
      const r = spawnSync(snapshotPython(SNAPSHOT), ['-c', DECODE, work], {
        encoding: 'utf8',
        env: { ...process.env, HF_DATASETS_OFFLINE: '1', HF_HOME: join(work, 'hf'), NUMBA_CACHE_DIR: join(work, 'numba') },
        timeout: 300_000,
      });
      assert.equal(r.status, 0, r.stderr);
      const out = JSON.parse(r.stdout.trim().split('\n').pop() ?? '{}') as { sr: number; n: number };
      assert.equal(out.sr, 8000);
      assert.ok(Math.abs(out.n - 8000) <= 2, `resampled to ~8000 samples: ${out.n}`);
    },
  );
});

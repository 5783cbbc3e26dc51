// A derived environment for real (issue 20): the real resolver (`uv pip compile`) on a combination that installs and on
// one that conflicts, then the derived venv built with the managed-venv code and a tiny script that needs both eras:
// datasets 2.x's `load_metric` beside transformers 4.50+'s three-argument `get_parameter_names`. Slow the first time
// (an install from the uv cache); skips, saying why, when uv is missing or FORGEENV_TEST_SNAPSHOTS is "".
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { ensureSnapshotVenv, readReadyMarker } from '../../src/env/snapshots/venv';
import { uvResolver } from '../../src/env/taskmaking/derivedEnvironment';

const datasets2 = getSnapshot('2024-06').versions.datasets;
const trl2 = getSnapshot('2024-06').versions.trl;
// The newest base whose transformers takes three arguments, with datasets (and the trl that accepts it) of 2024-06.
const DERIVED = `2025-09+datasets@${datasets2}+trl@${trl2}`;

function skipReason(): string | false {
  if (process.env.FORGEENV_TEST_SNAPSHOTS === '') return 'FORGEENV_TEST_SNAPSHOTS is empty (no real-library tier)';
  if (spawnSync(process.env.FORGEENV_UV || 'uv', ['--version']).status !== 0) return 'uv is not installed (scripts/lib/ensure-uv.sh)';
  return false;
}
const skip = skipReason();
if (skip) console.log(`# derivedVenv.test.ts: skipping: ${skip}`);

describe('a derived environment with the real resolver and a real venv', { skip }, () => {
  test("the resolver refuses a combination whose pins conflict, with uv's own reason", async () => {
    const r = await uvResolver(getSnapshot(`2025-09+datasets@${datasets2}`));
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.message : '', /trl[^\n]*depends on datasets>=3/);
    assert.deepEqual(await uvResolver(getSnapshot(DERIVED)), { ok: true });
  });

  test(
    'the venv is built like a snapshot, keyed by the derived id, and runs a script that needs both eras',
    { timeout: 900_000 },
    async () => {
      const python = await ensureSnapshotVenv(DERIVED);
      assert.match(python, /venvs[/\\]2025-09\+datasets@[\d.]+\+trl@[\d.]+[/\\]bin[/\\]python$/);
      const marker = readReadyMarker(DERIVED)!;
      assert.equal(marker.installed.datasets, datasets2);
      assert.equal(marker.installed.transformers, getSnapshot('2025-09').versions.transformers);
      assert.equal(marker.exclude_newer, '2025-09-30T23:59:59Z');
      const code = [
        'import torch, transformers, datasets',
        'from datasets import load_metric',
        'from transformers.trainer_pt_utils import get_parameter_names',
        'model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.LayerNorm(2))',
        'names = get_parameter_names(model, [torch.nn.LayerNorm], ["bias"])',
        'print("OK", transformers.__version__, datasets.__version__, sorted(names))',
      ].join('\n');
      const r = spawnSync(python, ['-c', code], { encoding: 'utf8', timeout: 600_000, env: { ...process.env, HF_HUB_OFFLINE: '1' } });
      assert.equal(r.status, 0, r.stderr);
      assert.match(
        r.stdout,
        new RegExp(
          `^OK ${getSnapshot('2025-09').versions.transformers.replace(/\./g, '\\.')} ${datasets2.replace(/\./g, '\\.')} \\['0\\.weight'\\]`,
          'm',
        ),
      );
    },
  );
});

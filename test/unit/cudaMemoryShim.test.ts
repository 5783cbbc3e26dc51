// A script's GPU memory tracker resets the peak gauges around its loop (`torch.cuda.reset_max_memory_allocated()`):
// without CUDA that raises "invalid argument to reset_peak_memory_stats". The rule maps it to cpu-device, and the
// cuda-to-cpu shim makes the resets do nothing (the gauges read 0 without CUDA). Real torch in a real venv.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { diagnose } from '../../src/env/taskmaking/rules';
import { realRunFixture } from './realRunFixture';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';

const TRACKER = `import torch
torch.cuda.empty_cache()
torch.cuda.reset_max_memory_allocated()
torch.cuda.reset_peak_memory_stats()
print("peak", torch.cuda.max_memory_allocated(), "available", torch.cuda.is_available())
`;

describe('peak-memory resets without CUDA', () => {
  test('the recorded error maps to cpu-device with the cuda-to-cpu shim', () => {
    const err =
      'Traceback (most recent call last):\n  File "/tmp/run/train.py", line 66, in __enter__\n    torch.cuda.reset_max_memory_allocated()\nRuntimeError: invalid argument to reset_peak_memory_stats\n';
    const d = diagnose(err, { script: 'import torch\n', args: [], env: {}, options: undefined });
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'cpu-device');
    assert.deepEqual(d.outcome.runtime?.shims, ['cuda-to-cpu']);
  });

  const { realRun } = realRunFixture('forgeenv-cuda-memory-shim-');
  const snapshot = '2026-11';
  const skip = isSnapshotVenvReady(snapshot) ? false : `the managed venv of snapshot ${snapshot} is not built`;
  test(`in the real venv of ${snapshot}: fails bare, runs with the shim (CUDA still unavailable)`, { skip, timeout: 300_000 }, async () => {
    process.env.FORGEENV_WARM = '0';
    const bare = await realRun(snapshot, TRACKER, {});
    assert.notEqual(bare.exit_code, 0);
    assert.match(bare.stderr, /invalid argument to reset_peak_memory_stats/);
    const shimmed = await realRun(snapshot, TRACKER, { shims: ['cuda-to-cpu'] });
    assert.equal(shimmed.exit_code, 0, shimmed.stderr.slice(-2000));
    assert.match(shimmed.stdout, /peak 0 available False/);
  });
});

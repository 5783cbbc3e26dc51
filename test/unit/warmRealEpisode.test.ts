// A real-mode episode's runs are warm (issue 18): the task's runs have an HF_HOME of their own (the
// base hub plus the task's items, hub/ensure.ts), so the zygotes must be started with the episode's
// shape (`ForgeEnvironment.prewarm()` after reset), not the snapshot's. Real runs in the 2026-11
// venv, skipped saying why when it or its base hub is not built.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { warmPool } from '../../src/env/run/executor';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { realHubFixture } from './realHubFixture';
import { realRunFixture } from './realRunFixture';

const SNAPSHOT = '2026-11';
const { skipReason } = realHubFixture('forgeenv-warm-real-hub-');
// The run folders' parent, removed (with the warm pool and FORGEENV_WARM restored) after the file.
const { parentDir } = realRunFixture('forgeenv-warm-real-');

const BREAKAGE = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};

describe(`a real ${SNAPSHOT} episode on the warm runtime`, { skip: skipReason(SNAPSHOT) }, () => {
  test(
    'prewarm after reset: the broken run, the repair and the verifier run warm, the broken run as it runs cold',
    { timeout: 900_000 },
    async () => {
      delete process.env.FORGEENV_WARM;
      const versions = { ...getSnapshot(SNAPSHOT).versions };
      const episode = async (warm: boolean) => {
        const env = new ForgeEnvironment({ mode: 'real', parentDir, warm, timeoutMs: 600_000 });
        await env.reset({ taskId: 'distilbert_sst2', seed: 7, library_versions: versions });
        return env;
      };
      const env = await episode(true);
      try {
        const p = await env.prewarm();
        assert.ok(!('error' in p), 'error' in p ? p.error : '');
        assert.ok(await warmPool.waitReady(p.key, 2, 600_000), JSON.stringify(warmPool.stats()));
        const broken = await env.step({ breakage: BREAKAGE });
        assert.equal(broken.info.runtime, 'warm', broken.error_trace ?? '');
        assert.ok(await warmPool.waitReady(p.key, 2, 600_000), JSON.stringify(warmPool.stats()));
        const claimsBefore = warmPool.stats().keys.find((k) => k.label === p.label)?.claims ?? 0;
        const ev = await env.evaluateRepair(env.oracleDiff());
        assert.equal(ev.execution?.runtime, 'warm', ev.execution?.stderr.slice(-2000));
        assert.equal(ev.execution?.exit_code, 0, ev.execution?.stderr.slice(-2000));
        assert.ok(ev.reward > 1, `the oracle repair succeeds: ${ev.reward}`);
        // The repair's run and at least its verifier's evidence run claimed a zygote of this shape.
        const claims = warmPool.stats().keys.find((k) => k.label === p.label)?.claims ?? 0;
        assert.ok(claims - claimsBefore >= 2, `claims ${claimsBefore} -> ${claims}`);

        process.env.FORGEENV_WARM = '0';
        const coldEnv = await episode(false);
        try {
          const cold = await coldEnv.step({ breakage: BREAKAGE });
          assert.equal(cold.info.runtime, 'cold');
          assert.equal(broken.error_trace, cold.error_trace);
          assert.equal(broken.script_content, cold.script_content);
        } finally {
          await coldEnv.dispose();
          delete process.env.FORGEENV_WARM;
        }
      } finally {
        await env.dispose();
      }
    },
  );
});

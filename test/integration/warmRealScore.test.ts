// Run & Score in real mode on the warm runtime (issue 18, "the editor's Run & Score in real mode
// feels immediate"): opening an episode starts the pool of its runs in the background; once it is
// ready, the oracle fix is scored by a warm run. The 2026-11 venv and its base hub are built by CI's
// bootstrap; without them the suite is skipped. Real runs take minutes cold: run it with a longer
// runner timeout than the old 240 s per phase (the default is now 900 s; `VSCODE_TEST_TIMEOUT_MS` sets it).
import * as assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as vscode from 'vscode';
import { isLocalHubReady } from '../../src/env/hub/localHub';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import type { ScoreResult, StartResult } from '../../src/editor/episode/results';
import { api, endAnyEpisode, ok, replaceBuffer, setSetting, timing, useOwnDataset } from './helpers';

const SNAPSHOT = '2026-11';
const TASK = 'distilbert_sst2';
// transformers 5 (2026-11) has no `evaluation_strategy`: the broken script fails at TrainingArguments.
const PRIMITIVE = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};

suite('Warm real Run & Score', () => {
  let a: Awaited<ReturnType<typeof api>>;

  suiteSetup(async function () {
    if (!isSnapshotVenvReady(SNAPSHOT) || !isLocalHubReady(SNAPSHOT)) {
      console.log(`    [skip] the ${SNAPSHOT} snapshot venv or its base hub is not built`);
      this.skip();
    }
    a = await api();
    await setSetting('executionMode', 'real');
    // A cold real run imports torch and transformers (20-60 s on a loaded 2-core machine): the broken run is cold.
    await setSetting('runTimeoutSeconds', 600);
    // forgeenv.warmRuntime is a user (machine) setting, on by default.
    assert.equal(vscode.workspace.getConfiguration('forgeenv').get('warmRuntime'), true, 'the warm runtime is on');
  });
  useOwnDataset('dataset-warm-real');
  suiteTeardown(async () => {
    await endAnyEpisode();
    await setSetting('executionMode', undefined);
    await setSetting('runTimeoutSeconds', undefined);
  });

  test('opening a real episode starts its pool; Run & Score of the oracle fix runs warm and succeeds', async function () {
    this.timeout(1_200_000);
    const start = await ok<StartResult>('forgeenv.startEpisode', { taskId: TASK, seed: 7, primitive: PRIMITIVE, snapshot: SNAPSHOT });
    timing(`real episode open (${SNAPSHOT}, cold broken run)`, start.openMs);
    assert.equal(start.broke, true, 'the breakage fails under transformers 5');
    const live = a.episode().session.current;
    assert.ok(live, 'the episode is open');
    const t0 = Date.now();
    assert.equal(await live.warmReady, true, "the pool of the episode's runs gets ready");
    timing("warm pool and the original's reference ready after the episode opened", Date.now() - t0);

    const broken = readFileSync(start.filePath, 'utf8');
    assert.match(broken, /evaluation_strategy=/);
    await replaceBuffer(vscode.Uri.file(start.filePath), broken.replace('evaluation_strategy=', 'eval_strategy='));
    const r = await ok<ScoreResult>('forgeenv.runAndScore');
    timing(`Run & Score (oracle fix, real ${SNAPSHOT}, warm)`, r.scoreMs);
    assert.equal(r.runtime, 'warm', 'the repair ran in a zygote started when the episode opened');
    assert.equal(r.cached, false);
    assert.equal(r.exitCode, 0);
    assert.equal(r.success, true, r.findings.join('; '));
    assert.equal(r.reward_breakdown.script_executes, 1);
    assert.equal(r.reward_breakdown.checkpoint_appeared, 0.3);
    assert.equal(r.reward_breakdown.diff_size_penalty, 0);
    assert.equal(r.held_out_breakdown.hidden_tests_passed, 1);
    assert.equal(r.held_out_breakdown.intent_preserved, 1);
  });
});

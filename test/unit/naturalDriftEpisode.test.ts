// Episodes on natural-drift tasks (make-task --upgrade-to): the NaturalDrift breakage starts the
// repair phase from the original's real error at the task's (later) snapshot; a repair is judged on
// "runs and trains" (no band from an original that fails there); the task is marked solved by a
// successful repair, which then serves as the episode's oracle. The judge and the action's checks
// are pure; the episode itself runs for real in snapshot 2026-11's venv (skipped, saying why, without it).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { createRepairDiff } from '../../src/env/diff/diff';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { isLocalHubReady } from '../../src/env/hub/localHub';
import {
  judgeRunsAndTrains,
  MIN_MOVED_SHARE,
  NATURAL_DRIFT_PRIMITIVE,
  naturalDriftProblem,
} from '../../src/env/episode/naturalDriftEpisode';
import { TaskSchema } from '../../src/env/schemas';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { isSnapshotVenvReady } from '../../src/env/snapshots/venv';
import { markNaturalDriftSolved } from '../../src/env/taskmaking/naturalDrift';
import { TaskMetadataFileSchema } from '../../src/env/tasks/tasks';

const SNAPSHOT = '2026-11';
const ERA = '2024-09';
const skip = !isSnapshotVenvReady(SNAPSHOT)
  ? `the ${SNAPSHOT} venv is not built`
  : !isLocalHubReady(SNAPSHOT)
    ? `the ${SNAPSHOT} base hub is not built`
    : false;

const loaded = (trained: number, untrained: number, moved?: number) => ({
  ok: true as const,
  artifact: 'out',
  loaded_with: 'AutoModelForCausalLM',
  trained_loss: trained,
  untrained_loss: untrained,
  ...(moved === undefined ? {} : { moved }),
});

describe('natural drift: runs-and-trains judge', () => {
  test('a held-out improvement over the margin is trained and verified, with no band', () => {
    const e = judgeRunsAndTrains(loaded(2.0, 3.0), { margin: 0.02 });
    assert.equal(e.verified, true);
    assert.equal(e.in_range, true);
    assert.equal(e.check, 'held_out_loss');
    assert.ok(e.findings.some((f) => /no band/.test(f)));
  });
  test('no held-out gain: trained only when training moved most starting weights', () => {
    assert.equal(judgeRunsAndTrains(loaded(3.0, 3.0, MIN_MOVED_SHARE + 0.1), { margin: 0.02 }).verified, true);
    const untrained = judgeRunsAndTrains(loaded(3.0, 3.0, 0), { margin: 0.02 });
    assert.equal(untrained.verified, false);
    assert.ok(untrained.findings.some((f) => /not a trained model/.test(f)));
    assert.equal(judgeRunsAndTrains(loaded(3.0, 3.0), { margin: 0.02 }).verified, false);
  });
  test('no artifact: nothing verified', () => {
    const e = judgeRunsAndTrains({ ok: false, reason: 'no model saved' }, { margin: 0.02 });
    assert.equal(e.loaded, false);
    assert.equal(e.verified, false);
  });
});

describe('natural drift: the breakage action', () => {
  const versions = { ...getSnapshot(SNAPSHOT).versions };
  const base = {
    task_id: 't',
    description: '',
    script_content: 'print(1)\n',
    difficulty: 'easy',
    category: 'general',
    expected_loss_range: [0, 5],
    expected_accuracy_range: [0, 1],
    library_versions: versions,
  };
  const drift = TaskSchema.parse({
    ...base,
    natural_drift: { from_snapshot: ERA, to_snapshot: SNAPSHOT, error: 'ImportError: x', verified: true },
  });
  const plain = TaskSchema.parse(base);
  test('NaturalDrift starts a natural-drift task at its own snapshot, and nothing else does', () => {
    assert.equal(naturalDriftProblem(drift, { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} }, versions), undefined);
    assert.match(naturalDriftProblem(drift, { primitive_type: 'RenameApiCall', params: {} }, versions) ?? '', /natural-drift task/);
    assert.match(naturalDriftProblem(drift, { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: { x: 1 } }, versions) ?? '', /no params/);
    assert.match(
      naturalDriftProblem(drift, { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} }, { ...getSnapshot(ERA).versions }) ?? '',
      /own snapshot/,
    );
  });
  test('NaturalDrift is refused on an ordinary task; ordinary primitives are not affected', () => {
    assert.match(naturalDriftProblem(plain, { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} }, versions) ?? '', /applies only/);
    assert.equal(naturalDriftProblem(plain, { primitive_type: 'RenameApiCall', params: {} }, versions), undefined);
  });
});

// transformers.AdamW was removed in transformers 4.5x: the script runs at 2024-09 and fails at 2026-11.
const SCRIPT = `import torch
from datasets import load_dataset
from transformers import AdamW, AutoModelForCausalLM, AutoTokenizer

tok = AutoTokenizer.from_pretrained("gpt2")
tok.pad_token = tok.eos_token
model = AutoModelForCausalLM.from_pretrained("gpt2")
data = load_dataset("imdb", split="train")
texts = [data[i]["text"] for i in range(16)]
opt = AdamW(model.parameters(), lr=5e-3)
torch.manual_seed(0)
model.train()
for step in range(12):
    batch = tok(texts[(step * 4) % 16:(step * 4) % 16 + 4], return_tensors="pt", truncation=True, max_length=32, padding=True)
    out = model(**batch, labels=batch["input_ids"].masked_fill(batch["attention_mask"] == 0, -100))
    out.loss.backward()
    opt.step()
    opt.zero_grad()
    print(f"step={step} loss={out.loss.item():.4f}")
model.save_pretrained("out")
tok.save_pretrained("out")
`;
const FIXED = SCRIPT.replace(
  'from transformers import AdamW, AutoModelForCausalLM, AutoTokenizer',
  'from torch.optim import AdamW\nfrom transformers import AutoModelForCausalLM, AutoTokenizer',
);

describe(`natural drift: a real episode (${ERA} -> ${SNAPSHOT})`, { skip }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-natural-drift-'));
  writeFileSync(join(dir, 'adamw_drift.py'), SCRIPT);
  const entry = {
    task_id: 'adamw_drift',
    library_versions: { ...getSnapshot(SNAPSHOT).versions },
    natural_drift: {
      from_snapshot: ERA,
      to_snapshot: SNAPSHOT,
      error: "ImportError: cannot import name 'AdamW' from 'transformers'",
      verified: true,
      solved: false,
    },
  };
  writeFileSync(join(dir, 'tasks.json'), JSON.stringify([entry], null, 2));
  const env = new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs: 600_000 });
  after(async () => {
    await env.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  test(
    'starts from the real error, scores a repair on runs-and-trains, and the solved task keeps it as its oracle',
    { timeout: 1_800_000 },
    async () => {
      await env.reset({ taskId: 'adamw_drift', seed: 1 });
      const other = await env.step({
        breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'from_pretrained', new_name: 'load' } },
      });
      assert.match(String(other.info.error), /natural-drift task/);
      assert.equal(env.state?.phase, 'drift_gen', 'a refused breakage leaves the state as it was');

      const broken = await env.step({ breakage: { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} } });
      assert.equal(broken.info.error, undefined, String(broken.info.error));
      assert.equal(broken.current_phase, 'repair');
      assert.equal(broken.script_content, SCRIPT, 'the broken script is the original, unchanged');
      assert.equal(broken.info.broke, true);
      assert.match(broken.error_trace ?? '', /cannot import name 'AdamW' from 'transformers'/);
      assert.equal((broken.info.breakage_primitive as { primitive_type: string }).primitive_type, NATURAL_DRIFT_PRIMITIVE);
      assert.throws(() => env.oracleDiff(), /no oracle/);

      const diff = createRepairDiff(SCRIPT, FIXED);
      const repair = await env.evaluateRepair(diff);
      assert.equal(repair.execution?.exit_code, 0, repair.error_trace.slice(-2000));
      assert.equal(repair.verification?.verified, true, JSON.stringify(repair.verification));
      assert.ok(repair.verification?.findings.some((f) => /no band/.test(f)));
      assert.equal(repair.success, true, JSON.stringify({ findings: repair.findings, held: repair.held_out_breakdown }));

      // An unrepaired submission is no solution.
      await assert.rejects(markNaturalDriftSolved(dir, 'adamw_drift', { unified_diff: '', success: false }, 'human'), /stays unsolved/);
      await markNaturalDriftSolved(dir, 'adamw_drift', repair, 'human');
      const saved = TaskMetadataFileSchema.parse(JSON.parse(readFileSync(join(dir, 'tasks.json'), 'utf8')))[0];
      assert.equal(saved.natural_drift?.solved, true);
      assert.equal(saved.natural_drift?.reference_repair, diff);
      assert.equal(readFileSync(join(dir, 'adamw_drift.py'), 'utf8'), SCRIPT, 'the task script is unchanged');

      // A new environment sees the solved task: its oracle is the recorded repair.
      const env2 = new ForgeEnvironment({ mode: 'real', taskDirs: [dir], timeoutMs: 600_000 });
      try {
        await env2.reset({ taskId: 'adamw_drift', seed: 1 });
        await env2.step({ breakage: { primitive_type: NATURAL_DRIFT_PRIMITIVE, params: {} } });
        assert.equal(env2.oracleDiff(), diff);
      } finally {
        await env2.dispose();
      }
    },
  );
});

// naturalDriftAt at the later snapshot: a machine reason (bf16 on a CPU) is adapted as make-task adapts
// the era's runs, and what the script meets next decides (a library error: a natural drift carrying the
// adaptation; a clean run: no drift). Tiny stdlib scripts, simulated mode (the runs are real processes).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { naturalDriftAt, naturalDriftEntry } from '../../src/env/taskmaking/naturalDrift';

const script = (after: string) => `import argparse
p = argparse.ArgumentParser()
p.add_argument("--bf16", default="true")
a = p.parse_args()
if a.bf16 == "true":
    raise ValueError("Your setup doesn't support bf16/gpu. You need torch>=1.10, using Ampere GPU with cuda>=11.0")
${after}
`;
const at = (s: string) =>
  naturalDriftAt({
    script: s,
    args: ['--bf16', 'true'],
    files: {},
    env: {},
    from: '2024-09',
    to: '2026-11',
    mode: 'simulated',
    timeoutMs: 60_000,
  });

describe('natural drift: machine adaptations at the later snapshot', () => {
  test('bf16 turned off, then a library error: a drift that carries the adaptation', { timeout: 120_000 }, async () => {
    const r = await at(script('from json import gone_name'));
    assert.ok(r.drift, JSON.stringify(r.refusal));
    assert.match(r.drift.error, /cannot import name 'gone_name'/);
    assert.deepEqual(r.adapted?.args, ['--bf16', 'false']);
    assert.equal(r.adapted?.adaptations[0]?.rule, 'cpu-bf16-off');
    assert.match(r.adapted?.adaptations[0]?.change ?? '', /at 2026-11/);
    const entry = naturalDriftEntry({ task_id: 't', args: ['--bf16', 'true'], adaptations: [] }, r.drift, 't.py', r.adapted);
    assert.deepEqual(entry.args, ['--bf16', 'false']);
    assert.equal(entry.adaptations?.length, 1);
  });
  test('bf16 turned off, then a clean run: no drift, and the reason says what was adapted', { timeout: 120_000 }, async () => {
    const r = await at(script('print("ok")'));
    assert.equal(r.drift, undefined);
    assert.match(r.refusal?.reason ?? '', /runs at 2026-11 as well \(after --bf16 false/);
  });
});

import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { judgeEvidence } from '../../src/env/verify/judge';
import { VerifySpecSchema } from '../../src/env/verify/spec';
import { readVerdict, VERDICT_MARKER } from '../../src/env/verify/verifier';

const ok = (trained_loss: number, untrained_loss = 1) => ({ ok: true as const, artifact: 'out/final', loaded_with: 'AutoModelForCausalLM', trained_loss, untrained_loss });
const exec = (stdout: string, over: Partial<{ exit_code: number | null; timed_out: boolean; killed: boolean; stderr: string }> = {}) => ({
  exit_code: 0,
  stdout,
  stderr: '',
  timed_out: false,
  killed: false,
  ...over,
});

describe('readVerdict', () => {
  test('the last marked line is the verdict', () => {
    const v = readVerdict(exec(`warning\n${VERDICT_MARKER}{"ok": false, "reason": "first"}\nnoise\n${VERDICT_MARKER}${JSON.stringify(ok(0.5))}\n`));
    assert.deepEqual(v, ok(0.5));
  });
  test('no verdict, a bad one, a timeout or a cancel is a refusal that says so', () => {
    assert.match((readVerdict(exec('', { exit_code: 1, stderr: 'Traceback\nValueError: x' })) as { reason: string }).reason, /without a verdict \(exit code 1: ValueError: x\)/);
    assert.match((readVerdict(exec(`${VERDICT_MARKER}{nope`)) as { reason: string }).reason, /unreadable/);
    assert.match((readVerdict(exec(`${VERDICT_MARKER}{"ok": true, "artifact": "x"}`)) as { reason: string }).reason, /invalid/);
    assert.match((readVerdict(exec(`${VERDICT_MARKER}${JSON.stringify({ ...ok(0.5), trained_loss: 'NaN' })}`)) as { reason: string }).reason, /invalid/);
    assert.match((readVerdict(exec('', { timed_out: true })) as { reason: string }).reason, /timed out/);
    assert.match((readVerdict(exec('', { killed: true })) as { reason: string }).reason, /cancelled/);
  });
});

describe('judgeEvidence', () => {
  const spec = VerifySpecSchema.parse({});
  test('defaults: a 2% margin over the untrained model, half the original improvement either side', () => {
    assert.equal(spec.margin, 0.02);
    assert.equal(spec.tolerance, 0.5);
  });
  test('a repair that reaches the original is verified', () => {
    const e = judgeEvidence(ok(0.5), ok(0.5), spec);
    assert.equal(e.verified, true);
    assert.deepEqual(e.findings, []);
    assert.equal(e.measured?.reference_loss, 0.5);
  });
  test('an untrained artifact loads but is not trained', () => {
    const e = judgeEvidence(ok(0.995), ok(0.5), spec);
    assert.deepEqual([e.loaded, e.trained, e.verified], [true, false, false]);
    assert.match(e.findings.join('\n'), /not a trained model.*under the task's margin of 2\.0%/);
  });
  test('far better than the original could train is not plausible either', () => {
    const e = judgeEvidence(ok(0.1), ok(0.5), spec);
    assert.deepEqual([e.trained, e.in_range, e.verified], [true, false, false]);
    assert.match(e.findings.join('\n'), /outside the band the unbroken original reaches \(0\.2500–0\.7500\)/);
  });
  test("the verifier's refusal is the finding", () => {
    const e = judgeEvidence({ ok: false, reason: 'the run left no out/final' }, ok(0.5), spec);
    assert.equal(e.loaded, false);
    assert.deepEqual(e.findings, ['no verified artifact: the run left no out/final']);
  });
  test('a task whose original cannot pass its own check verifies nothing, and says so', () => {
    assert.match(judgeEvidence(ok(0.5), { ok: false, reason: 'no config.json' }, spec).findings[0], /original's own artifact fails it \(no config\.json\)/);
    assert.match(judgeEvidence(ok(0.5), ok(0.995), spec).findings[0], /original improves on the untrained model's held-out loss by 0\.5%/);
    assert.equal(judgeEvidence(ok(0.5), ok(0.995), spec).verified, false);
  });
  test('task specs are strict and keep paths inside the run folder', () => {
    assert.equal(VerifySpecSchema.safeParse({ artifact: '../x' }).success, false);
    assert.equal(VerifySpecSchema.safeParse({ artifact: '/etc/passwd' }).success, false);
    assert.equal(VerifySpecSchema.safeParse({ artefact: 'x' }).success, false);
    assert.equal(VerifySpecSchema.safeParse({ artifact: 'out/checkpoint-*', margin: 0.1 }).success, true);
  });
});

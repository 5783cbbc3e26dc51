import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { resourcesDir } from '../../src/env/paths';
import { judgeEvidence } from '../../src/env/verify/judge';
import { VerifySpecSchema } from '../../src/env/verify/spec';
import { readVerdict, VERDICT_MARKER } from '../../src/env/verify/verifier';

const N = 'a1b2c3';
const ok = (trained_loss: number, untrained_loss = 1) => ({
  ok: true as const,
  artifact: 'out/final',
  loaded_with: 'AutoModelForCausalLM',
  trained_loss,
  untrained_loss,
});
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
    const v = readVerdict(
      exec(`warning\n${VERDICT_MARKER}${N} {"ok": false, "reason": "first"}\nnoise\n${VERDICT_MARKER}${N} ${JSON.stringify(ok(0.5))}\n`),
      N,
    );
    assert.deepEqual(v, { ...ok(0.5), resolved: { artifact: 'out/final' } });
  });
  test('losses on the probe sentences or probe images are flagged as probe losses; held-out ones are not', () => {
    const read = (data: string) => readVerdict(exec(`${VERDICT_MARKER}${N} ${JSON.stringify({ ...ok(0.5), moved: 1, data })}\n`), N);
    assert.equal((read('probe images (held-out data unavailable: x)') as { probe?: boolean }).probe, true);
    assert.equal((read('probe sentences') as { probe?: boolean }).probe, true);
    assert.equal((read('held-out split') as { probe?: boolean }).probe, undefined);
  });
  test("a marked line without the run's nonce is not the verdict (text a library printed from the artifact)", () => {
    const forged = `${VERDICT_MARKER}${JSON.stringify(ok(0.1))}\n${VERDICT_MARKER}ffff ${JSON.stringify(ok(0.1))}\n`;
    assert.match((readVerdict(exec(forged), N) as { reason: string }).reason, /without a verdict/);
  });
  test('no verdict, a bad one, a timeout or a cancel is a refusal that says so', () => {
    assert.match(
      (readVerdict(exec('', { exit_code: 1, stderr: 'Traceback\nValueError: x' }), N) as { reason: string }).reason,
      /without a verdict \(exit code 1: ValueError: x\)/,
    );
    assert.match((readVerdict(exec(`${VERDICT_MARKER}${N} {nope`), N) as { reason: string }).reason, /unreadable/);
    assert.match((readVerdict(exec(`${VERDICT_MARKER}${N} {"ok": true, "artifact": "x"}`), N) as { reason: string }).reason, /invalid/);
    assert.match(
      (readVerdict(exec(`${VERDICT_MARKER}${N} ${JSON.stringify({ ...ok(0.5), trained_loss: 'NaN' })}`), N) as { reason: string }).reason,
      /invalid/,
    );
    assert.match((readVerdict(exec('', { timed_out: true }), N) as { reason: string }).reason, /timed out/);
    assert.match((readVerdict(exec('', { killed: true }), N) as { reason: string }).reason, /cancelled/);
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
    assert.match(
      judgeEvidence(ok(0.5), { ok: false, reason: 'no config.json' }, spec).findings[0],
      /original's own artifact fails it \(no config\.json\)/,
    );
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

describe("the verifier's pickle check (runs before any load)", () => {
  // Each case: Python that builds the bytes, and whether check_pickle accepts them.
  const cases: Array<[string, string, boolean]> = [
    [
      'a state dict of tensors (protocol 2)',
      'import collections, pickle\nclass T:\n    pass\npickle.dumps(collections.OrderedDict(a=1), protocol=2)',
      true,
    ],
    [
      'print through __reduce__ (protocol 4, STACK_GLOBAL)',
      'import pickle\nclass P:\n    def __reduce__(self):\n        return (print, ("x",))\npickle.dumps({"w": P()})',
      false,
    ],
    [
      'os.system through GLOBAL (protocol 2)',
      'import pickle, os\nclass P:\n    def __reduce__(self):\n        return (os.system, ("true",))\npickle.dumps(P(), protocol=2)',
      false,
    ],
    [
      'a name fetched from the memo for STACK_GLOBAL',
      'bytes.fromhex("8004") + b"\\x8c\\x02os\\x94\\x8c\\x06system\\x94\\x8c\\x0bcollections\\x94\\x8c\\x0bOrderedDict\\x94" + b"00h\\x00h\\x01\\x93\\x8c\\x04true\\x85R."',
      false,
    ],
    ['INST (protocol 0)', 'b"(S\'true\'\\nios\\nsystem\\n."', false],
    ['a truncated pickle', 'b"\\x80\\x02}q"', false],
  ];
  for (const [name, build, accepted] of cases) {
    test(`${accepted ? 'accepts' : 'refuses'} ${name}`, () => {
      const lines = build.split('\n');
      const program = [
        'import sys',
        `sys.path.insert(0, ${JSON.stringify(join(resourcesDir(), 'verifier'))})`,
        'import forgeenv_verify as v',
        ...lines.slice(0, -1),
        `data = ${lines[lines.length - 1]}`,
        'try:',
        '    v.check_pickle(data, "x.bin")',
        '    print("ACCEPTED")',
        'except v.Refusal as e:',
        '    print("REFUSED", e)',
      ].join('\n');
      const r = spawnSync('python3', ['-c', program], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.startsWith('ACCEPTED'), accepted, r.stdout);
    });
  }
});

describe("the verifier's head from a saved config", () => {
  const headOf = (config: unknown, adapter: unknown = null): string => {
    const program = [
      'import json, sys',
      `sys.path.insert(0, ${JSON.stringify(join(resourcesDir(), 'verifier'))})`,
      'import forgeenv_verify as v',
      `print(json.dumps(v.head_of(json.loads(${JSON.stringify(JSON.stringify(config))}), json.loads(${JSON.stringify(JSON.stringify(adapter))}))))`,
    ].join('\n');
    const r = spawnSync('python3', ['-c', program], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return JSON.parse(r.stdout) as string;
  };
  test('a ForConditionalGeneration with a vision tower is a vision-language model, without one a seq2seq model', () => {
    assert.equal(headOf({ architectures: ['Idefics3ForConditionalGeneration'], vision_config: { hidden_size: 32 } }), 'vlm');
    assert.equal(headOf({ architectures: ['LlavaForConditionalGeneration'], vision_config: { model_type: 'clip_vision_model' } }), 'vlm');
    assert.equal(headOf({ architectures: ['T5ForConditionalGeneration'] }), 'seq2seq');
    // IDEFICS v1's class names no ConditionalGeneration: a vision-language model by its own suffix.
    assert.equal(headOf({ architectures: ['IdeficsForVisionText2Text'] }), 'vlm');
    assert.equal(headOf({ architectures: ['GPT2ForSequenceClassification'], num_labels: 1 }), 'seqcls');
    assert.equal(headOf({}, { task_type: 'SEQ_CLS' }), 'seqcls');
  });
});

describe('the reference cache', () => {
  test('a finished answer is shared; a cancelled or timed-out one is computed again', async () => {
    const { clearReferences, referenceOutcome } = await import('../../src/env/verify/reference');
    clearReferences();
    const key = {
      task_id: 't',
      original: 'x',
      verify: {},
      mode: 'simulated',
      interpreter: undefined,
      library_versions: {},
      args: [],
      files: {},
    };
    let calls = 0;
    const answer = (reason?: string) => async () => {
      calls++;
      return reason ? { ok: false as const, reason } : ok(0.5);
    };
    await referenceOutcome(key, answer("the unbroken original's run was timed out"));
    await referenceOutcome(key, answer('the verifier was cancelled'));
    assert.equal(calls, 2, 'transient answers are not kept');
    await referenceOutcome(key, answer());
    assert.deepEqual(await referenceOutcome(key, answer('never asked')), ok(0.5));
    assert.equal(calls, 3, 'a finished answer is kept');
    await referenceOutcome({ ...key, original: 'y' }, answer());
    assert.equal(calls, 4, 'another script is another reference');
    clearReferences();
  });
});

describe('which check decides', () => {
  const spec = VerifySpecSchema.parse({});
  const withMoved = (trained_loss: number, moved: number, untrained_loss = 1) => ({ ...ok(trained_loss, untrained_loss), moved });
  test('held-out loss, where the original improves it by five margins or more', () => {
    assert.equal(judgeEvidence(withMoved(0.85, 1), withMoved(0.85, 1), spec).check, 'held_out_loss');
  });
  test('the weights training changed, where the original improves held-out loss by less (noise could decide)', () => {
    // The original improves by 3.9%; a repair whose fresh head landed 1% worse still trained.
    const e = judgeEvidence(withMoved(0.97, 1), withMoved(0.961, 1), spec);
    assert.deepEqual([e.check, e.verified], ['weights_moved', true]);
    const untrained = judgeEvidence(withMoved(1, 0), withMoved(0.961, 1), spec);
    assert.deepEqual([untrained.check, untrained.verified], ['weights_moved', false]);
    assert.match(untrained.findings.join('\n'), /changed 0\.0% of its starting weights/);
  });
  test('a state dict (no weights-moved measure) is judged on held-out loss past a single margin', () => {
    assert.equal(judgeEvidence(ok(0.96), ok(0.96), spec).check, 'held_out_loss');
  });
  test("real mode on the probe sentences: the weights decide, however far the original's probe loss moved", () => {
    // Recorded: a 1-label reward model's original improved the probe loss by 18%, its rerun landed outside the band.
    const probe = (trained_loss: number, moved: number, untrained_loss: number) => ({
      ...withMoved(trained_loss, moved, untrained_loss),
      probe: true,
    });
    const e = judgeEvidence(probe(0.5317, 0.9, 0.58), probe(0.3988, 0.92, 0.487), spec, { mode: 'real' });
    assert.deepEqual([e.check, e.verified], ['weights_moved', true]);
    assert.match(e.findings[0], /probe data/);
    assert.equal(judgeEvidence(probe(0.5, 0, 0.58), probe(0.3988, 0.92, 0.487), spec, { mode: 'real' }).verified, false);
    // Simulated mode's stand-ins make the probe loss depend on the weights: held-out loss still decides there.
    assert.equal(judgeEvidence(probe(0.5317, 0.9, 0.58), probe(0.3988, 0.92, 0.487), spec, { mode: 'simulated' }).check, 'held_out_loss');
  });
});

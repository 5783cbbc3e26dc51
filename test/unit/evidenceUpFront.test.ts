// make-task decides the trained-model evidence before verification when a script visibly saves no
// model (tiny scripts of ours): a loop that only logs or uploads with model.push_to_hub gets it; a save
// call, a Trainer (which checkpoints), or a task that declares its artifact does not. And verification's
// choice to score an episode's oracle repair (a run of the original) only where it can count.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { EVIDENCE_ARTIFACT } from '../../src/env/run/runtimeShims';
import { oracleWorthRunning } from '../../src/env/taskmaking/verification';
import { evidenceUpFront } from '../../src/env/taskmaking/verifySpecRules';

const LOOP = `from accelerate import Accelerator
import torch
def main():
    accelerator = Accelerator()
    model, optimizer, data = accelerator.prepare(model, optimizer, data)
    for batch in data:
        accelerator.backward(model(**batch).loss)
        optimizer.step()
    # model.save_pretrained("out") was here once
    model.push_to_hub("me/model")
main()
`;

describe('trained-model evidence decided up front', () => {
  test('a loop that saves nothing (a commented-out save does not count) gets the shim and the artifact', () => {
    const fix = evidenceUpFront(LOOP);
    assert.ok(fix);
    assert.equal(fix.shim, 'trained-model-evidence');
    assert.equal(fix.spec.artifact, EVIDENCE_ARTIFACT);
    assert.equal(fix.adaptation.rule, 'trained-model-evidence');
    assert.match(fix.adaptation.error, /saves no model/);
  });

  test('a save call, a Trainer, or a declared artifact: nothing decided', () => {
    for (const save of [
      'accelerator.unwrap_model(model).save_pretrained("out")',
      'torch.save(model.state_dict(), "m.pt")',
      'trainer = SFTTrainer(model=model)',
    ])
      assert.equal(evidenceUpFront(`${LOOP}${save}\n`), undefined, save);
    // Weights without a config are no model folder the verifier recognises: still decided up front.
    for (const state of ['accelerator.save_state("ckpt")', 'accelerator.save(model.state_dict(), "m.pt")'])
      assert.ok(evidenceUpFront(`${LOOP}${state}\n`), state);
    assert.equal(evidenceUpFront(LOOP, { artifact: 'out' }), undefined);
  });
});

describe('verification spends an oracle run only where it can count', () => {
  test('a breakage that cannot be verified skips its oracle while later candidates can bring the runs', () => {
    assert.equal(oracleWorthRunning({ broke: true, namesApi: true, originalRuns: 0, laterCandidates: 0 }), true);
    assert.equal(oracleWorthRunning({ broke: true, namesApi: false, originalRuns: 0, laterCandidates: 3 }), false);
    assert.equal(oracleWorthRunning({ broke: false, namesApi: false, originalRuns: 1, laterCandidates: 1 }), false);
    // Too few candidates left for the two oracle runs the verdict needs: scored anyway (a run of the original).
    assert.equal(oracleWorthRunning({ broke: true, namesApi: false, originalRuns: 0, laterCandidates: 1 }), true);
    assert.equal(oracleWorthRunning({ broke: false, namesApi: false, originalRuns: 1, laterCandidates: 0 }), true);
  });
});

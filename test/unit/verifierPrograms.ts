// What the verifier's real tests share: the Python tail of a program that verifies each saved run against
// its ORIGINAL, and the reader of one run's outcome.
import assert from 'node:assert/strict';
import { judgeEvidence } from '../../src/env/verify/judge';
import { readVerdict, VERDICT_MARKER, type VerifierOutcome } from '../../src/env/verify/verifier';

// The programs' last part: each saved run (`runs`: name -> run folder) verified by forgeenv_verify.py against the
// program's ORIGINAL, one verifier process each; their stdouts printed after `VERDICTS`.
export const VERIFY_EACH_RUN = `
out = {}
for name, run in runs.items():
    spec = run + ".spec.json"
    json.dump({"run_dir": run, "original": ORIGINAL, "verify": {}, "nonce": "n0"}, open(spec, "w"))
    r = subprocess.run([sys.executable, os.path.join(verifier, "forgeenv_verify.py"), spec], capture_output=True, text=True)
    out[name] = r.stdout if "FORGEENV_VERDICT" in r.stdout else "stderr: " + r.stderr[-1500:]
print("VERDICTS " + json.dumps(out))
`;

/** The verifier's outcome for one run of a program's VERDICTS. */
export function outcomeOf(stdouts: Record<string, string>, name: string): VerifierOutcome {
  assert.ok(stdouts[name].includes(VERDICT_MARKER), `${name}: ${stdouts[name]}`);
  return readVerdict({ exit_code: 0, stdout: stdouts[name], stderr: '', timed_out: false, killed: false }, 'n0');
}

/**
 * The verdicts of a trained model ("original") and its untrained copy ("untrained copy") on a probe: the
 * original loads with `head` from `base`, probed, its weights moved, and verifies in real mode; the copy loads
 * and is judged not trained against it.
 */
export function assertTrainedVerifiesCopyDoesNot(stdouts: Record<string, string>, head: string, base: string): void {
  const original = outcomeOf(stdouts, 'original');
  assert.ok(original.ok, JSON.stringify(original));
  assert.equal(original.resolved?.head, head);
  assert.equal(original.resolved?.base_model, base);
  assert.equal(original.probe, true);
  assert.ok((original.moved ?? 0) > 0.1, JSON.stringify(original));
  const spec = { margin: 0.02, tolerance: 0.5 };
  assert.equal(judgeEvidence(original, original, spec, { mode: 'real' }).verified, true);
  const copy = outcomeOf(stdouts, 'untrained copy');
  assert.ok(copy.ok, JSON.stringify(copy));
  const judged = judgeEvidence(copy, original, spec, { mode: 'real' });
  assert.equal(judged.verified, false);
  assert.match(judged.findings.join('\n'), /is not a trained model/);
}

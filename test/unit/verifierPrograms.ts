// What the verifier's real tests share: the Python tail of a program that verifies each saved run against
// its ORIGINAL, and the reader of one run's outcome.
import assert from 'node:assert/strict';
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

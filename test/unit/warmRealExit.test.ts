// The warm-vs-cold identity probes (warmProbes.ts) on real-mode runs: a real zygote has torch,
// transformers and the rest imported and frozen, and its prompt exit (zygote.ts) skips the
// shutdown of that heap; the script's exit code, stdout and stderr must still be a cold run's.
// Real runs in the 2026-11 venv, skipped saying why when it or its base hub is not built.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { realHubFixture } from './realHubFixture';
import { realRunFixture } from './realRunFixture';
import { PROBES } from './warmProbes';

const SNAPSHOT = '2026-11';
const { skipReason } = realHubFixture('forgeenv-warm-real-exit-hub-');
const { realRun } = realRunFixture('forgeenv-warm-real-exit-');

// The probes a real zygote's exit could change: SystemExit, uncaught exceptions, threads, atexit,
// finalizers (of the script's objects, and of one a library module keeps), buffered output.
const REAL = [
  'sys.exit with a message',
  'sys.exit(3) and atexit',
  'uncaught exception with a chained cause',
  'KeyboardInterrupt with a finalizer and an atexit function',
  'finalizers at shutdown: globals, a cycle, an object kept by a library, an unclosed file',
  'a non-daemon thread that prints after the script ends',
  '__del__ in a reference cycle and on a global, weakref.finalize and a weakref callback',
  'sys.exit inside try/finally',
  'SystemExit(None) after output without a newline',
  'SystemExit with an object code',
  'output buffered without a newline at exit',
  'a suspended generator with a finally',
];

describe(`warm vs cold exit on real ${SNAPSHOT} runs`, { skip: skipReason(SNAPSHOT) }, () => {
  for (const name of REAL) {
    test(`same outcome warm and cold (real): ${name}`, { timeout: 600_000 }, async () => {
      const script = PROBES[name];
      assert.ok(script, name);
      // Every probe runs with torch and transformers imported, as a training script does.
      const withLibraries = `import torch, transformers\n${script}`;
      process.env.FORGEENV_WARM = '0';
      const cold = await realRun(SNAPSHOT, withLibraries);
      process.env.FORGEENV_WARM = 'force';
      const warm = await realRun(SNAPSHOT, withLibraries);
      delete process.env.FORGEENV_WARM;
      assert.equal(cold.runtime, 'cold');
      assert.equal(warm.runtime, 'warm', warm.stderr.slice(-2000));
      assert.deepEqual(
        { exit: warm.exit_code, stdout: warm.stdout, stderr: warm.stderr },
        { exit: cold.exit_code, stdout: cold.stdout, stderr: cold.stderr },
      );
    });
  }
});

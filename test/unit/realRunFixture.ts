// One real-mode run of a small script in a snapshot's venv, as the executor runs a task's script
// (its real libraries, the offline hub, the sandbox): shared by the tests of runtime shims.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { executeScript, warmPool, type RunOptions, type RunResult } from '../../src/env/run/executor';
import { prepareRealRun } from '../../src/env/run/realMode';
import { getSnapshot } from '../../src/env/snapshots/registry';

/** The task's own hub items for the run (the offline hub of the snapshot plus these). */
type RealRunHub = NonNullable<Parameters<typeof prepareRealRun>[0]['hub']>;

/** A run folder parent for the calling test file, removed (with the warm pool and FORGEENV_WARM restored) after it. */
export function realRunFixture(prefix: string): {
  parentDir: string;
  realRun: (snapshot: string, script: string, over?: Partial<RunOptions>, hub?: RealRunHub) => Promise<RunResult>;
} {
  const parentDir = mkdtempSync(join(tmpdir(), prefix));
  const savedWarm = process.env.FORGEENV_WARM;
  after(async () => {
    await warmPool.clear();
    if (savedWarm === undefined) delete process.env.FORGEENV_WARM;
    else process.env.FORGEENV_WARM = savedWarm;
    rmSync(parentDir, { recursive: true, force: true });
  });
  const realRun = async (snapshot: string, script: string, over: Partial<RunOptions> = {}, hub?: RealRunHub): Promise<RunResult> => {
    const versions = { ...getSnapshot(snapshot).versions };
    const real = await prepareRealRun({ libraryVersions: versions, snapshot, ...(hub ? { hub } : {}) });
    return executeScript({
      script,
      mode: 'real',
      interpreter: real.interpreter,
      libraryVersions: versions,
      bytecodeCache: real.bytecodeCache,
      privateCopies: real.privateCopies,
      extraEnv: real.env,
      validate: false,
      timeoutMs: 240_000,
      parentDir,
      ...over,
    });
  };
  return { parentDir, realRun };
}

// Hub items built for real in a snapshot venv, for the calling test file: a temporary items cache (removed
// after the file), the skip reason of a snapshot whose venv or base hub is not built, a builder of items on
// the snapshot's base hub, and a reader that runs code with the snapshot's python against a hub, offline,
// the way a training script reads it.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { ensureHubItems, type EnsureHubItemsOptions, type HubItemsResult } from '../../src/env/hub/ensure';
import { isLocalHubReady, localHubDir } from '../../src/env/hub/localHub';
import { realModeEnv } from '../../src/env/run/realMode';
import { isSnapshotVenvReady, snapshotPython } from '../../src/env/snapshots/venv';

/** What a test chooses when it builds items; the snapshot gives the rest (its python, its base hub, the fixture's cache). */
export type ItemsOptions = Omit<EnsureHubItemsOptions, 'hubKey' | 'python' | 'cacheDir' | 'baseHubDir'> & { baseHubDir?: string };

export function realHubFixture(prefix: string): {
  cacheDir: string;
  skipReason: (snapshot: string) => string | false;
  buildItems: (snapshot: string, opts: ItemsOptions) => Promise<HubItemsResult>;
  readBack: (snapshot: string, hubDir: string, code: string) => string;
} {
  const cacheDir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(cacheDir, { recursive: true, force: true }));
  const skipReason = (snapshot: string): string | false => {
    if (!isSnapshotVenvReady(snapshot)) return `the ${snapshot} snapshot venv is not built (${snapshotPython(snapshot)})`;
    if (!isLocalHubReady(snapshot)) return `the ${snapshot} base hub is not built (${localHubDir(snapshot)})`;
    return false;
  };
  /** Builds items with the snapshot's python on its base hub (or `opts.baseHubDir`), in the fixture's cache. */
  const buildItems = (snapshot: string, opts: ItemsOptions): Promise<HubItemsResult> =>
    ensureHubItems({ hubKey: snapshot, python: snapshotPython(snapshot), baseHubDir: localHubDir(snapshot), cacheDir, ...opts });
  /** Runs `code` with the snapshot's python against `hubDir`, offline; returns stdout (fails the test with stderr). */
  const readBack = (snapshot: string, hubDir: string, code: string): string => {
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: cacheDir,
      ...realModeEnv(hubDir),
      TRANSFORMERS_VERBOSITY: 'error',
      HF_METRICS_CACHE: join(cacheDir, 'metrics'),
    };
    const r = spawnSync(snapshotPython(snapshot), ['-c', code], { env, cwd: cacheDir, encoding: 'utf8', timeout: 300_000 });
    assert.equal(r.status, 0, `reader failed:\n${r.stderr.slice(-3000)}`);
    return r.stdout;
  };
  return { cacheDir, skipReason, buildItems, readBack };
}

// Runs a Python program with a snapshot venv's interpreter (`python -c program args…`) and returns the JSON
// it prints after a marker (`MARKER {…}`), failing the test with the program's stderr when it exits non-zero
// and with its stdout when the marked line is missing. Offline by default: no program reaches the network.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { snapshotPython } from '../../src/env/snapshots/venv';

export interface VenvProgramOptions {
  /** The whole environment (default: this process's plus HF offline). */
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Default 300 s. */
  timeout?: number;
}

export function venvProgramJson(snapshot: string, program: string, args: string[], marker: string, opts: VenvProgramOptions = {}): unknown {
  const r = spawnSync(snapshotPython(snapshot), ['-c', program, ...args], {
    encoding: 'utf8',
    env: opts.env ?? { ...process.env, HF_HUB_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' },
    cwd: opts.cwd,
    timeout: opts.timeout ?? 300_000,
  });
  assert.equal(r.status, 0, r.stderr.slice(-3000));
  const line = r.stdout.split('\n').find((l) => l.startsWith(`${marker} `));
  assert.ok(line, r.stdout.slice(-2000));
  return JSON.parse(line.slice(marker.length + 1));
}

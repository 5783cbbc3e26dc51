// Runs resources/drifts/probe_runner.py once for a list of catalog entries, with either a snapshot
// venv's interpreter (real mode) or the system python over resources/simlibs (simulated mode).
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { simlibsDir } from '../paths';
import { killProcessTree } from '../processTree';
import type { Snapshot } from '../snapshots/registry';
import { ProbeRunFileSchema, type ProbeForm, type ProbeRunFile } from './outcomes';

export interface ProbeRunRequest {
  python: string;
  runnerPath: string;
  catalogPath: string;
  ids: readonly string[];
  forms?: readonly ProbeForm[];
  env: NodeJS.ProcessEnv;
  /** Whole-run limit; the runner also cuts each probe at 60 s. */
  timeoutMs?: number;
}

export type ProbeRunner = (req: ProbeRunRequest) => Promise<ProbeRunFile>;

/** Environment shared by both modes: no inherited Python path tricks, no user site, offline hub. */
function baseEnv(hfHome: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const k of Object.keys(env)) {
    if (k === 'PYTHONPATH' || k === 'PYTHONHOME' || k.startsWith('FORGEENV_') || k === 'HF_TOKEN' || k === 'HUGGING_FACE_HUB_TOKEN') delete env[k];
  }
  return { ...env, PYTHONNOUSERSITE: '1', HF_HOME: hfHome, HF_HUB_OFFLINE: '1', HF_DATASETS_OFFLINE: '1', TRANSFORMERS_OFFLINE: '1' };
}

export function realModeEnv(hfHome: string): NodeJS.ProcessEnv {
  return baseEnv(hfHome);
}

/** Simulated mode: simlibs first, the snapshot's versions and id (docs/simulated-libraries.md). */
export function simModeEnv(snapshot: Snapshot, hfHome: string): NodeJS.ProcessEnv {
  return {
    ...baseEnv(hfHome),
    PYTHONPATH: simlibsDir(),
    FORGEENV_LIBRARY_VERSIONS: JSON.stringify(snapshot.versions),
    FORGEENV_SNAPSHOT: snapshot.id,
  };
}

/** Spawns the runner and reads its JSON; rejects with the tail of stderr when it fails. */
export const runProbes: ProbeRunner = async (req) => {
  const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fidelity-'));
  const out = join(dir, 'results.json');
  const args = [req.runnerPath, '--catalog', req.catalogPath, '--ids', req.ids.join(','), '--forms', (req.forms ?? ['old', 'new']).join(','), '--out', out];
  const timeoutMs = req.timeoutMs ?? 120_000 + req.ids.length * 2 * 60_000;
  try {
    const { code, stderr, timedOut } = await new Promise<{ code: number | null; stderr: string; timedOut: boolean }>((resolve, reject) => {
      const child = spawn(req.python, args, { env: req.env, cwd: dir, detached: process.platform !== 'win32', stdio: ['ignore', 'ignore', 'pipe'] });
      let stderr = '';
      let timedOut = false;
      child.stderr.on('data', (d: Buffer) => {
        stderr = (stderr + d.toString('utf8')).slice(-20_000);
      });
      const timer = setTimeout(() => {
        timedOut = true;
        if (child.pid) void killProcessTree(child.pid);
      }, timeoutMs);
      child.on('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
      child.on('close', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr, timedOut });
      });
    });
    if (timedOut) throw new Error(`probe runner (${req.python}) did not finish within ${Math.round(timeoutMs / 1000)} s`);
    if (code !== 0) throw new Error(`probe runner (${req.python}) exited with ${code}: ${stderr.trim().split('\n').slice(-5).join('\n')}`);
    return ProbeRunFileSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

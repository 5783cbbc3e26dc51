import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { z } from 'zod';
import { executeScript } from '../run/executor';
import type { Snapshot } from '../snapshots/registry';
import { ProbeRunFileSchema, type ProbeForm, type ProbeRunFile } from './outcomes';

export interface ProbeRunRequest {
  /** A snapshot venv's interpreter (real mode) or the system python (simulated mode, over resources/simlibs). */
  python: string;
  runnerPath: string;
  catalogPath: string;
  ids: readonly string[];
  forms?: readonly ProbeForm[];
  mode: 'real' | 'simulated';
  snapshot: Snapshot;
  /** Whole-run limit; the runner also cuts each probe at 60 s. */
  timeoutMs?: number;
}

/** The runner's file, and which runtime ran it (a warm zygote or a cold start: docs/sandbox.md, "Warm runtime"). */
export type ProbeRunner = (req: ProbeRunRequest) => Promise<ProbeRunFile & { runtime?: 'warm' | 'cold' }>;

/** The catalog file with only the entries `ids` names, in their order in the file. */
function catalogOf(path: string, ids: readonly string[]): string {
  const wanted = new Set(ids);
  const file = z
    .object({ entries: z.array(z.looseObject({ id: z.string() })) })
    .loose()
    .parse(JSON.parse(readFileSync(path, 'utf8')));
  return JSON.stringify({ ...file, entries: file.entries.filter((e) => wanted.has(e.id)) });
}

/**
 * Runs the probe runner like every other script: in the sandbox, in a fresh run folder holding a
 * copy of the catalog (a `--catalog` file is code), with the executor's clean environment (no
 * secrets, offline, HOME = the run folder) and the simulated libraries' versions in simulated mode.
 */
export const runProbes: ProbeRunner = async (req) => {
  const parent = mkdtempSync(join(tmpdir(), 'forgeenv-fidelity-'));
  const timeoutMs = req.timeoutMs ?? 120_000 + req.ids.length * 2 * 60_000;
  try {
    const exec = await executeScript({
      script: readFileSync(req.runnerPath, 'utf8'),
      scriptName: basename(req.runnerPath),
      args: ['--catalog', 'catalog.json', '--forms', (req.forms ?? ['old', 'new']).join(','), '--out', 'results.json'],
      // Only the asked entries, in the file rather than in an argument (a run's arguments are capped).
      files: { 'catalog.json': catalogOf(req.catalogPath, req.ids) },
      mode: req.mode,
      libraryVersions: { ...req.snapshot.versions },
      interpreter: req.python,
      timeoutMs,
      outputCapBytes: 8 * 1024 * 1024,
      validate: false,
      keepRunDir: true,
      parentDir: parent,
    });
    const where = `probe runner (${req.python}, ${req.mode}${exec.sandbox_warning ? ', unsandboxed' : ''})`;
    if (exec.timed_out) throw new Error(`${where} did not finish within ${Math.round(timeoutMs / 1000)} s`);
    if (exec.exit_code !== 0)
      throw new Error(`${where} exited with ${exec.exit_code}: ${exec.stderr.trim().split('\n').slice(-5).join('\n')}`);
    const file = ProbeRunFileSchema.parse(JSON.parse(readFileSync(join(exec.run_dir, 'results.json'), 'utf8')));
    return exec.runtime ? { ...file, runtime: exec.runtime } : file;
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
};

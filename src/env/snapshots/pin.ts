// Computing a snapshot's pins from its cut-off date: `uv pip compile --exclude-newer <cutoff>` over the
// tracked libraries (unpinned) and the snapshot's extra requirements, for CPython `python` on Linux
// x86-64, wheels only. The resolver, not a person, decides which releases were current together.
import { spawn } from 'node:child_process';
import { renameSync, writeFileSync } from 'node:fs';
import { z } from 'zod';
import { distName, excludeNewerOf, parseSnapshotsFile, snapshotsFilePath, type Snapshot, type SnapshotsFile } from './registry';

/** The libraries every snapshot pins (import names), in the file's order. */
export const TRACKED_LIBRARIES = [
  'transformers',
  'datasets',
  'trl',
  'peft',
  'accelerate',
  'evaluate',
  'tokenizers',
  'huggingface_hub',
  'torch',
] as const;

/** The platform the pins are resolved for: the managed venvs are Linux x86-64 (torch's PyPI wheels). */
export const PIN_PLATFORM = 'x86_64-manylinux_2_28';

/** What `uv pip compile` reads on stdin: the tracked libraries unpinned, then the extras as written. */
export function pinInputs(s: Pick<Snapshot, 'extra_requirements'>): string[] {
  return [...TRACKED_LIBRARIES.map(distName), ...s.extra_requirements];
}

/** The uv argv (after the executable) that computes the pins of `s`. */
export function pinCompileArgs(s: Pick<Snapshot, 'cutoff'>, python: string): string[] {
  return [
    'pip',
    'compile',
    '-',
    '--exclude-newer',
    excludeNewerOf(s),
    '--python-version',
    python,
    '--python-platform',
    PIN_PLATFORM,
    // Wheels only: a version whose wheels came later than its sdist would otherwise need a compiler.
    '--only-binary',
    ':all:',
    '--no-header',
    '--no-annotate',
    '--quiet',
  ];
}

const LockLine = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][0-9A-Za-z.+!-]*$/);

/** `name==version` lines of a compile's output → normalised distribution name → version. */
export function parseCompiled(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const r = LockLine.safeParse(line.split(/\s*;/)[0].trim());
    if (!r.success) throw new Error(`unexpected line in uv pip compile output: ${line}`);
    const [name, version] = r.data.split('==');
    out.set(name.toLowerCase().replace(/[-_.]+/g, '-'), version);
  }
  return out;
}

/** The tracked libraries' versions in a compile's output; a missing one is an error. */
export function trackedPins(compiled: Map<string, string>): Record<string, string> {
  const pins: Record<string, string> = {};
  for (const lib of TRACKED_LIBRARIES) {
    const v = compiled.get(distName(lib));
    if (!v) throw new Error(`uv pip compile did not pin ${distName(lib)}`);
    // A local version label (torch's "+cpu") is not part of the release we record.
    pins[lib] = v.split('+')[0];
  }
  return pins;
}

export interface PinResult {
  id: string;
  cutoff: string;
  old: Record<string, string>;
  pins: Record<string, string>;
  /** The whole resolution (every package, normalised name → version), for the record. */
  lock: Record<string, string>;
}

/** Runs uv to compute the pins of one snapshot. `uv` is the executable (`$FORGEENV_UV` or `uv`). */
export async function computePins(s: Snapshot, python: string, uv = process.env.FORGEENV_UV || 'uv'): Promise<PinResult> {
  const stdout = await runWithStdin(uv, pinCompileArgs(s, python), pinInputs(s).join('\n') + '\n', s.id);
  const compiled = parseCompiled(stdout);
  return {
    id: s.id,
    cutoff: s.cutoff,
    old: { ...s.versions },
    pins: trackedPins(compiled),
    lock: Object.fromEntries([...compiled].sort()),
  };
}

/** The file with `pins` applied to their snapshots (other fields untouched). */
export function withPins(file: SnapshotsFile, results: readonly Pick<PinResult, 'id' | 'pins'>[]): SnapshotsFile {
  return {
    ...file,
    snapshots: file.snapshots.map((s) => {
      const r = results.find((x) => x.id === s.id);
      return r ? { ...s, versions: { ...r.pins } } : s;
    }),
  };
}

/** Writes the snapshots file atomically (temp file + rename), re-validating what it writes. */
export function writeSnapshotsFile(file: SnapshotsFile, path = snapshotsFilePath()): void {
  const text = JSON.stringify(file, null, 2) + '\n';
  parseSnapshotsFile(text, path); // never write a file the registry would refuse
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

function runWithStdin(cmd: string, args: string[], input: string, id: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (e) => reject(new Error(`snapshot ${id}: cannot run ${cmd}: ${e.message}`)));
    child.on('close', (code) => {
      if (code === 0) return resolve(stdout);
      reject(new Error(`snapshot ${id}: uv pip compile failed (exit ${code}): ${stderr.trim().split('\n').slice(-6).join(' | ')}`));
    });
    child.stdin.end(input);
  });
}

/**
 * Whether a (derived) snapshot's requirements install together: `uv pip compile` of its pins and extras with its
 * `--exclude-newer`, as the venv would be installed. `ok: false` carries the resolver's own message.
 */
export async function checkResolves(
  s: Snapshot,
  requirements: readonly string[],
  python: string,
  uv = process.env.FORGEENV_UV || 'uv',
): Promise<{ ok: true } | { ok: false; message: string }> {
  try {
    await runWithStdin(uv, pinCompileArgs(s, python), requirements.join('\n') + '\n', s.id);
    return { ok: true };
  } catch (e) {
    return { ok: false, message: (e as Error).message.replace(/^snapshot \S+: uv pip compile failed \(exit \d+\): /, '') };
  }
}

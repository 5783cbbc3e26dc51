// The dated library snapshots (resources/snapshots/snapshots.json): which real releases were current
// together. Read once, validated with zod; see docs/snapshots.md.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';
import { composeDerived, isDerivedId } from './derived';

const DottedVersion = z.string().regex(/^\d+(\.\d+)*$/, 'a dotted version such as 4.36.0');
/** A real calendar date, YYYY-MM-DD. */
const IsoDate = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, 'an ISO date such as 2025-03-31')
  .refine(
    (d) => !Number.isNaN(Date.parse(`${d}T00:00:00Z`)) && new Date(`${d}T00:00:00Z`).toISOString().startsWith(d),
    'not a calendar date',
  );

export const SnapshotSchema = z.object({
  id: z.string().regex(/^\d{4}-\d{2}$/, 'a YYYY-MM date'),
  date: z.string().regex(/^\d{4}-\d{2}(-\d{2})?$/, 'a YYYY-MM date'),
  /** Last day whose PyPI uploads the snapshot may contain: its pins are computed from it
   * (`forgeenv snapshots pin`) and its venv is installed with `uv pip install --exclude-newer`. */
  cutoff: IsoDate,
  note: z.string().optional(),
  /** Import name → the release current at `cutoff` (computed, not hand-kept). */
  versions: z.record(z.string().regex(/^[a-z_][a-z0-9_]*$/, 'an import name'), DottedVersion),
  /** pip requirement strings needed to make the set importable (e.g. `numpy<2`). */
  extra_requirements: z.array(z.string().min(1)).default([]),
  /** The torch actually installed when it differs from `versions.torch` (shared between snapshots). */
  torch_runtime: DottedVersion.optional(),
});
export type Snapshot = z.infer<typeof SnapshotSchema>;

export const SnapshotsFileSchema = z
  .object({
    format: z.literal(1),
    python: z.string().regex(/^\d+\.\d+$/),
    /** The snapshot the built-in corpus is written against (default: the newest). */
    corpus_snapshot: z.string().optional(),
    snapshots: z.array(SnapshotSchema).min(1),
  })
  .superRefine((f, ctx) => {
    const seen = new Set<string>();
    for (const [i, s] of f.snapshots.entries()) {
      if (seen.has(s.id)) ctx.addIssue({ code: 'custom', path: ['snapshots', i, 'id'], message: `duplicate snapshot id ${s.id}` });
      seen.add(s.id);
      if (i > 0 && s.date <= f.snapshots[i - 1].date)
        ctx.addIssue({
          code: 'custom',
          path: ['snapshots', i, 'date'],
          message: `snapshots must be listed oldest first (${s.id} after ${f.snapshots[i - 1].id})`,
        });
      if (!s.cutoff.startsWith(s.id))
        ctx.addIssue({ code: 'custom', path: ['snapshots', i, 'cutoff'], message: `cutoff ${s.cutoff} is not in the month ${s.id}` });
    }
    if (f.corpus_snapshot !== undefined && !seen.has(f.corpus_snapshot))
      ctx.addIssue({ code: 'custom', path: ['corpus_snapshot'], message: `corpus_snapshot ${f.corpus_snapshot} is not a snapshot id` });
  });
export type SnapshotsFile = z.infer<typeof SnapshotsFileSchema>;

export const snapshotsFilePath = (): string => join(resourcesDir(), 'snapshots', 'snapshots.json');

/** Parses and validates a snapshots.json text; `source` names it in errors. */
export function parseSnapshotsFile(text: string, source = 'snapshots.json'): SnapshotsFile {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON (${(e as Error).message})`, { cause: e });
  }
  const r = SnapshotsFileSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
    throw new Error(`${source}: invalid snapshots file: ${issues}`);
  }
  return r.data;
}

/** Reads a snapshots file from disk (validated). */
export function loadSnapshotsFile(path = snapshotsFilePath()): SnapshotsFile {
  return parseSnapshotsFile(readFileSync(path, 'utf8'), path);
}

let cached: { file: SnapshotsFile; mtimeMs: number } | undefined;

/** The shipped snapshots file; re-read when it changes on disk, so that a long-running process
 * never rebuilds a venv from stale definitions. */
export function snapshotsFile(): SnapshotsFile {
  const path = snapshotsFilePath();
  const mtimeMs = statSync(path).mtimeMs;
  if (!cached || cached.mtimeMs !== mtimeMs) cached = { file: loadSnapshotsFile(path), mtimeMs };
  return cached.file;
}

/** Snapshot ids in file order (chronological). */
export function snapshotIds(): string[] {
  return snapshotsFile().snapshots.map((s) => s.id);
}

export function allSnapshots(): readonly Snapshot[] {
  return snapshotsFile().snapshots;
}

/**
 * The snapshot `id`, or the derived environment it names (`2025-03+datasets@2.20.0`, derived.ts); an unknown id
 * throws an error listing the known ones.
 */
export function getSnapshot(id: string): Snapshot {
  if (isDerivedId(id)) return composeDerived(id, snapshotsFile().snapshots);
  const s = snapshotsFile().snapshots.find((x) => x.id === id);
  if (!s) throw new Error(`unknown snapshot "${id}"; known snapshots: ${snapshotIds().join(', ')}`);
  return s;
}

/** True for a snapshot id or a valid derived environment id (`2025-03+datasets@2.20.0`). */
export function isKnownSnapshot(id: string): boolean {
  try {
    getSnapshot(id);
    return true;
  } catch {
    return false;
  }
}

/** The instant uv's `--exclude-newer` takes for a snapshot: the end of its cut-off day, UTC. */
export function excludeNewerOf(s: Pick<Snapshot, 'cutoff'>): string {
  return `${s.cutoff}T23:59:59Z`;
}

/** Distribution name of an import name (`huggingface_hub` → `huggingface-hub`). */
export const distName = (importName: string): string => importName.replace(/_/g, '-');

/** pip requirement strings installing the snapshot (distribution names, `torch_runtime` honoured). */
export function snapshotRequirements(s: Snapshot): string[] {
  const reqs = Object.entries(s.versions).map(([name, v]) => {
    const version = name === 'torch' && s.torch_runtime ? s.torch_runtime : v;
    return `${distName(name)}==${version}`;
  });
  return [...reqs, ...s.extra_requirements];
}

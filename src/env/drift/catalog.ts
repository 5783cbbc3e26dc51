// The drift catalog (resources/drifts/catalog.json): real Hugging Face drifts probed against the
// real releases, with the version where the old form started to warn (`deprecated_in`) and where
// it changed (`changed_in`). The drift table links its entries to it by id and takes its version
// gates from it, so "breaks under this snapshot" means what the real library does.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';

const Version = z.string().regex(/^\d+(\.\d+)*$/);

export const CatalogEntrySchema = z
  .object({
    id: z.string().min(1),
    library: z.string().min(1),
    kind: z.string().min(1),
    api: z.string(),
    deprecated_in: Version.nullable().optional(),
    changed_in: Version,
    /** What the old form does from `changed_in` on. */
    expect_after: z.enum(['error', 'warning']).optional(),
    old: z.string().optional(),
    new: z.string().optional(),
    note: z.string().optional(),
  })
  .passthrough();
export type CatalogEntry = z.infer<typeof CatalogEntrySchema>;

const CatalogFileSchema = z.object({ format: z.number().optional(), entries: z.array(CatalogEntrySchema) }).passthrough();

export const catalogPath = (): string => join(resourcesDir(), 'drifts', 'catalog.json');

let cached: Map<string, CatalogEntry> | undefined;

/**
 * The catalog by id; empty when the file is absent or invalid (the drift table then refuses to
 * build: its linked entries have no versions of their own). Read once.
 */
export function driftCatalog(): ReadonlyMap<string, CatalogEntry> {
  if (cached) return cached;
  cached = new Map();
  const path = catalogPath();
  if (!existsSync(path)) return cached;
  try {
    const parsed = CatalogFileSchema.safeParse(JSON.parse(readFileSync(path, 'utf8')));
    if (parsed.success) for (const e of parsed.data.entries) cached.set(e.id, e);
  } catch {
    // Reported by the drift table, which names the entry it cannot link.
  }
  return cached;
}

/**
 * When drifts happened, as the catalog says, for explanations: `4.41.0 deprecated; 4.51.0 removed`,
 * prefixed with the library when several entries are named. An id the catalog lacks throws, so a
 * stale reference fails its test instead of showing a made-up version.
 */
export function catalogWhen(...ids: string[]): string {
  return ids
    .map((id) => {
      const e = driftCatalog().get(id);
      if (!e) throw new Error(`no drift ${id} in ${catalogPath()}`);
      const parts = [
        e.deprecated_in ? `${e.deprecated_in} deprecated` : '',
        `${e.changed_in} ${e.expect_after === 'warning' ? 'warns' : e.kind === 'added' ? 'added' : 'removed'}`,
      ].filter(Boolean);
      return `${ids.length > 1 ? `${e.library} ` : ''}${parts.join('; ')}`;
    })
    .join(' / ');
}

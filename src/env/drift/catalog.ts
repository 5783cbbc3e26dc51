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

// The drift catalog (resources/drifts/catalog.json): real API changes of the Hugging Face libraries,
// each with a probe in its old and new form, the release it happened in and a public source.
// Read with zod; `migrationHintFor` turns a primitive spec or an API name into the release's note.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';
import { TRACKED_LIBRARIES } from '../snapshots/pin';

// A drift is in a library every snapshot pins (torch only for gates on the torch a library needs, e.g.
// transformers' fp16-on-CPU check wants torch >= 2.3): one list, so a pinned library is always a drift library.
export const DRIFT_LIBRARIES = TRACKED_LIBRARIES;
export type DriftLibrary = (typeof DRIFT_LIBRARIES)[number];

export const DRIFT_KINDS = [
  'removed_kwarg',
  'renamed_kwarg',
  'replaced_kwarg',
  'moved_kwarg',
  'moved_import',
  'removed_name',
  'renamed_name',
  'removed_method',
  'removed_attribute',
  'return_type_change',
  'default_change',
  'keyword_only',
  'signature_change',
  'replaced_api',
  /** An API that first appears at `changed_in` (the new form fails before it); the stand-ins gate on it too. */
  'added',
] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

const Version = z.string().regex(/^\d+(\.\d+)*$/, 'a dotted version such as 4.46.0');

/** Hosts a source may live on: the libraries' own repositories and documentation. */
export function isTrustedSourceUrl(url: string): boolean {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return false;
  }
  if (u.protocol !== 'https:') return false;
  if (u.hostname === 'github.com') return /^\/huggingface\/[A-Za-z0-9_.-]+\/\S+/.test(u.pathname);
  if (u.hostname === 'huggingface.co') return u.pathname.startsWith('/docs/');
  return false;
}

export const DriftSourceSchema = z.object({
  type: z.enum(['release_notes', 'migration_guide', 'pr', 'commit']),
  url: z.string().refine(isTrustedSourceUrl, 'an https URL under github.com/huggingface/ or huggingface.co/docs/'),
  title: z.string().min(1),
});

export const DriftEntrySchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/, 'lower-case words joined by dashes'),
  library: z.enum(DRIFT_LIBRARIES),
  kind: z.enum(DRIFT_KINDS),
  /** What drifted, e.g. `transformers.TrainingArguments(evaluation_strategy=)`. */
  api: z.string().min(1),
  /** First release that warned about the old form; null when we could not pin it. */
  deprecated_in: Version.nullable(),
  /** First release where the old form behaves as `expect_after` says (the boundary the harness checks). */
  changed_in: Version,
  /** What the old form does from `changed_in` on. */
  expect_after: z.enum(['error', 'warning']),
  source: DriftSourceSchema,
  /** Probes: plain Python whose last statements exercise the drifting API. */
  old: z.string().min(1),
  new: z.string().min(1),
  /** The release's own deprecation or migration text, verbatim where possible. */
  note: z.string().min(1),
});
export type DriftEntry = z.infer<typeof DriftEntrySchema>;

/** Numeric comparison of dotted versions: negative, zero or positive. */
export function compareDotted(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

export const DriftCatalogSchema = z.object({ format: z.literal(1), entries: z.array(DriftEntrySchema).min(1) }).superRefine((c, ctx) => {
  const seen = new Set<string>();
  for (const [i, e] of c.entries.entries()) {
    if (seen.has(e.id)) ctx.addIssue({ code: 'custom', path: ['entries', i, 'id'], message: `duplicate id ${e.id}` });
    seen.add(e.id);
    if (e.deprecated_in && compareDotted(e.deprecated_in, e.changed_in) > 0)
      ctx.addIssue({
        code: 'custom',
        path: ['entries', i, 'deprecated_in'],
        message: `deprecated_in ${e.deprecated_in} is after changed_in ${e.changed_in}`,
      });
    if (e.old === e.new) ctx.addIssue({ code: 'custom', path: ['entries', i, 'new'], message: 'old and new probes are identical' });
  }
});
export type DriftCatalog = z.infer<typeof DriftCatalogSchema>;

export const driftCatalogPath = (): string => join(resourcesDir(), 'drifts', 'catalog.json');
export const probeRunnerPath = (): string => join(resourcesDir(), 'drifts', 'probe_runner.py');

/** Parses and validates a catalog text; `source` names it in errors. */
export function parseDriftCatalog(text: string, source = 'catalog.json'): DriftCatalog {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not valid JSON (${(e as Error).message})`, { cause: e });
  }
  const r = DriftCatalogSchema.safeParse(raw);
  if (!r.success) {
    const issues = r.error.issues
      .slice(0, 10)
      .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
      .join('; ');
    throw new Error(`${source}: invalid drift catalog: ${issues}`);
  }
  return r.data;
}

/** A short content hash (catalog text + probe runner): keys the real-mode outcome cache. */
export function catalogHash(...texts: string[]): string {
  const h = createHash('sha256');
  for (const t of texts) h.update(t).update('\0');
  return h.digest('hex').slice(0, 16);
}

let cached: DriftCatalog | undefined;

/** The catalog at `path` (default: the shipped one, read once). */
export function loadDriftCatalog(path?: string): DriftCatalog {
  if (path) return parseDriftCatalog(readFileSync(path, 'utf8'), path);
  return (cached ??= parseDriftCatalog(readFileSync(driftCatalogPath(), 'utf8'), driftCatalogPath()));
}

/** What a primitive spec looks like to us (a subset of `PrimitiveSpec`). */
export interface SpecLike {
  drift_id?: string;
  primitive_type?: string;
  params?: Record<string, unknown>;
}

/** The name an API string drifts on: the keyword in `f(x=)`, else the last dotted segment. */
export function apiKeyName(api: string): string {
  const kw = /\(([A-Za-z_][A-Za-z0-9_]*)=\)$/.exec(api);
  if (kw) return kw[1];
  const bare = api.replace(/\(.*\)$/, '');
  return bare.slice(bare.lastIndexOf('.') + 1);
}

/**
 * The catalog entry a primitive spec or an API string refers to: by `drift_id`, by entry id, by exact
 * `api`, else (specs) the one entry whose drifting name is one of the spec's string parameters.
 */
export function findDriftEntry(specOrApi: string | SpecLike, catalog: DriftCatalog = loadDriftCatalog()): DriftEntry | undefined {
  const byId = (id: string) => catalog.entries.find((e) => e.id === id);
  if (typeof specOrApi === 'string') {
    const s = specOrApi.trim();
    return byId(s) ?? catalog.entries.find((e) => e.api === s) ?? catalog.entries.find((e) => e.api.replace(/^[a-z_]+\./, '') === s);
  }
  if (specOrApi.drift_id) return byId(specOrApi.drift_id);
  const values = new Set(
    Object.values(specOrApi.params ?? {})
      .filter((v): v is string => typeof v === 'string' && v.length > 0)
      .flatMap((v) => [v, v.slice(v.lastIndexOf('.') + 1)]),
  );
  if (values.size === 0) return undefined;
  const hits = catalog.entries.filter((e) => values.has(apiKeyName(e.api)) || values.has(e.api));
  // Several entries on one name (e.g. a kwarg deprecated in two classes) are ambiguous: no hint.
  return hits.length === 1 ? hits[0] : undefined;
}

/** The release's own migration note for a primitive spec or API, for an optional prompt hint. */
export function migrationHintFor(specOrApi: string | SpecLike, catalog?: DriftCatalog): string | undefined {
  return findDriftEntry(specOrApi, catalog)?.note;
}

// Reading the recorded API data of a snapshot: resources/snapshots/api/<id>/<package>.json
// (format in docs/snapshots.md). Validated with zod on read.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { resourcesDir } from '../paths';
import { apiSourceOf } from './derived';
import { allSnapshots, getSnapshot } from './registry';

const Default = z.union([z.null(), z.boolean(), z.number(), z.string(), z.object({ r: z.string() })]);
export const ParamSchema = z.union([
  z.tuple([z.string(), z.enum(['p', 'pk', '*', 'k', '**'])]),
  z.tuple([z.string(), z.enum(['p', 'pk', '*', 'k', '**']), Default]),
]);
export type Param = z.infer<typeof ParamSchema>;
/** null when Python could not tell (builtins). */
const Signature = z.array(ParamSchema).nullable();

export const ClassInfoSchema = z.object({
  kind: z.literal('class'),
  module: z.string(),
  qualname: z.string(),
  bases: z.array(z.string()),
  dataclass: z.boolean(),
  init: Signature.optional(),
  methods: z.record(z.string(), Signature),
  classmethods: z.array(z.string()),
  properties: z.array(z.string()),
  attributes: z.array(z.string()),
  /** Only some methods were recorded (transformers model classes; see docs/snapshots.md). */
  cut: z.boolean().optional(),
});
export const FunctionInfoSchema = z.object({
  kind: z.literal('function'),
  module: z.string(),
  qualname: z.string(),
  signature: Signature,
});
export const ObjectInfoSchema = z.discriminatedUnion('kind', [ClassInfoSchema, FunctionInfoSchema]);
export type ClassInfo = z.infer<typeof ClassInfoSchema>;
export type FunctionInfo = z.infer<typeof FunctionInfoSchema>;
export type ObjectInfo = z.infer<typeof ObjectInfoSchema>;

export const ModuleInfoSchema = z.object({
  file: z.string().nullable(),
  lazy: z.boolean(),
  /** name → object key | `module:<name>` | `value:<type>` | `unavailable:<exception type>` */
  names: z.record(z.string(), z.string()),
  missing_getattr: z.string().nullable(),
});
export type ModuleInfo = z.infer<typeof ModuleInfoSchema>;

export const PackageApiSchema = z.object({
  format: z.literal(1),
  package: z.string(),
  version: z.string().nullable(),
  modules: z.record(z.string(), ModuleInfoSchema),
  objects: z.record(z.string(), ObjectInfoSchema),
  deprecations: z.record(z.string(), z.object({ category: z.string().nullable(), message: z.string() })),
  /** Modules on the walked tree that failed to import in this release (module → error). */
  unimportable: z.record(z.string(), z.string()).default({}),
  stats: z.record(z.string(), z.number()).optional(),
});
export type PackageApi = z.infer<typeof PackageApiSchema>;

export const apiRootDir = (): string => join(resourcesDir(), 'snapshots', 'api');
export const snapshotApiDir = (id: string): string => join(apiRootDir(), id);
/** A derived environment's library comes from the snapshot that pins its release (derived.ts). */
export const snapshotApiFile = (id: string, pkg: string): string =>
  join(snapshotApiDir(apiSourceOf(id, pkg, allSnapshots())), `${pkg}.json`);

/** True when every package of the snapshot has its API file. */
export function hasSnapshotApi(id: string): boolean {
  return Object.keys(getSnapshot(id).versions).every((p) => existsSync(snapshotApiFile(id, p)));
}

/** Packages of the snapshot whose API file exists. */
export function snapshotApiPackages(id: string): string[] {
  return Object.keys(getSnapshot(id).versions).filter((p) => existsSync(snapshotApiFile(id, p)));
}

export function parsePackageApi(text: string, source: string): PackageApi {
  const r = PackageApiSchema.safeParse(JSON.parse(text));
  if (!r.success) {
    const first = r.error.issues
      .slice(0, 3)
      .map((i) => `${i.path.join('.')}: ${i.message}`)
      .join('; ');
    throw new Error(`${source}: invalid API data: ${first}`);
  }
  return r.data;
}

const cache = new Map<string, PackageApi>();

/** The recorded API of `pkg` in snapshot `id` (read once per process). */
export function loadPackageApi(id: string, pkg: string): PackageApi {
  const path = snapshotApiFile(id, pkg);
  const hit = cache.get(path);
  if (hit) return hit;
  if (!existsSync(path)) throw new Error(`no API data for ${pkg} in snapshot ${id} (${path}); run: forgeenv snapshots build ${id}`);
  const api = parsePackageApi(readFileSync(path, 'utf8'), path);
  cache.set(path, api);
  return api;
}

// The primitive registry: the one list the environment, the CLI and the editor read. A primitive
// added here (with its zod params schema) shows up in every picker, prompt and check.
import { z } from 'zod';
import { formatZodError, type LibraryVersions, type PrimitiveSpec } from '../schemas';
import { ChangeReturnType } from './changeReturnType';
import { DeprecateImport, RestoreImport } from './deprecateImport';
import { ChangeArgumentSignature, ChangeTokenizerBehavior, ModifyConfigField } from './keywordArguments';
import { RemoveDeprecatedMethod, RestoreMethod } from './removeDeprecatedMethod';
import { RenameApiCall, RestoreApiCall } from './renameApiCall';
import { RestoreColumn, RestructureDatasetSchema } from './restructureDatasetSchema';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate, type PrimitiveResult } from './types';

export const PRIMITIVES: readonly Primitive[] = [
  ChangeArgumentSignature,
  ChangeReturnType,
  ChangeTokenizerBehavior,
  DeprecateImport,
  ModifyConfigField,
  RemoveDeprecatedMethod,
  RenameApiCall,
  RestructureDatasetSchema,
  RestoreApiCall,
  RestoreImport,
  RestoreMethod,
  RestoreColumn,
] as unknown as readonly Primitive[];

const byName = new Map(PRIMITIVES.map((p) => [p.name, p]));

export function getPrimitive(name: string): Primitive | undefined {
  return byName.get(name);
}

export function breakagePrimitives(): Primitive[] {
  return PRIMITIVES.filter((p) => p.kind === 'breakage');
}

/** Validates params and applies; every failure (unknown name, bad params, nothing to do, a bug) is a PrimitiveRefusal. */
export function applySpec(script: string, spec: { primitive_type: string; params?: Record<string, unknown> }): PrimitiveResult {
  const prim = byName.get(spec.primitive_type);
  if (!prim) throw new PrimitiveRefusal(spec.primitive_type, `unknown primitive; known: ${PRIMITIVES.map((p) => p.name).join(', ')}`);
  const parsed = prim.paramsSchema.safeParse(spec.params ?? {});
  if (!parsed.success) throw new PrimitiveRefusal(prim.name, `invalid params: ${formatZodError(parsed.error)}`);
  try {
    return prim.apply(script, parsed.data);
  } catch (e) {
    if (e instanceof PrimitiveRefusal) throw e;
    throw new PrimitiveRefusal(prim.name, `internal error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** Breakage primitives with at least one candidate on `script`, in registry order. */
export function applicablePrimitives(script: string, versions?: LibraryVersions): Array<{ primitive: Primitive; candidates: PrimitiveCandidate[] }> {
  const out: Array<{ primitive: Primitive; candidates: PrimitiveCandidate[] }> = [];
  for (const primitive of breakagePrimitives()) {
    let candidates: PrimitiveCandidate[] = [];
    try {
      candidates = primitive.candidates(script, versions);
    } catch {
      candidates = [];
    }
    if (candidates.length) out.push({ primitive, candidates });
  }
  return out;
}

export interface CatalogEntry {
  name: string;
  category: string;
  kind: 'breakage' | 'inverse';
  description: string;
  models: string;
  /** JSON Schema of the params (for prompts, editors and remote clients). */
  params: Record<string, unknown>;
}

let catalog: CatalogEntry[] | undefined;
export function primitiveCatalog(): CatalogEntry[] {
  catalog ??= PRIMITIVES.map((p) => ({
    name: p.name,
    category: p.category,
    kind: p.kind,
    description: p.description,
    models: p.models,
    params: z.toJSONSchema(p.paramsSchema, { unrepresentable: 'any', io: 'input' }) as Record<string, unknown>,
  }));
  return catalog;
}

export type { PrimitiveSpec };

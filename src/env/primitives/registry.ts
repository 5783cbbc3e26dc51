// The primitive registry: the one list the environment, the CLI and the editor read. A primitive
// added here shows up in every picker, prompt and check (docs/primitives.md, "How to add a primitive").
import { z } from 'zod';
import { formatZodError, type LibraryVersions, type PrimitiveSpec } from '../schemas';
import { ChangeArgumentSignature } from './changeArgumentSignature';
import { ChangeDefaultValue, RestoreExplicitArgument } from './changeDefaultValue';
import { ChangeReturnType, RestoreReturnType } from './changeReturnType';
import { ChangeTokenizerBehavior, RestoreTokenizerBehavior } from './changeTokenizerBehavior';
import { DeprecateImport, RestoreImport } from './deprecateImport';
import { ModifyConfigField } from './modifyConfigField';
import { PassArgumentPositionally, RestoreKeywordArgument } from './passArgumentPositionally';
import { RemoveDeprecatedMethod, RestoreMethod } from './removeDeprecatedMethod';
import { RenameApiCall, RestoreApiCall } from './renameApiCall';
import { RestoreColumn, RestructureDatasetSchema } from './restructureDatasetSchema';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate, type PrimitiveResult } from './types';

/** Breakage primitives first (the original's eight, alphabetical, then ours), then the repair-only inverses. */
export const PRIMITIVES: readonly Primitive[] = [
  ChangeArgumentSignature,
  ChangeReturnType,
  ChangeTokenizerBehavior,
  DeprecateImport,
  ModifyConfigField,
  RemoveDeprecatedMethod,
  RenameApiCall,
  RestructureDatasetSchema,
  ChangeDefaultValue,
  PassArgumentPositionally,
  RestoreApiCall,
  RestoreImport,
  RestoreMethod,
  RestoreColumn,
  RestoreTokenizerBehavior,
  RestoreReturnType,
  RestoreExplicitArgument,
  RestoreKeywordArgument,
] as readonly Primitive[];

const byName = new Map(PRIMITIVES.map((p) => [p.name, p]));

export function getPrimitive(name: string): Primitive | undefined {
  return byName.get(name);
}

export function breakagePrimitives(): Primitive[] {
  return PRIMITIVES.filter((p) => p.kind === 'breakage');
}

/**
 * Validates the params and applies the primitive. Every failure (unknown primitive, invalid params,
 * nothing to do, an inexact inverse, a bug) is a PrimitiveRefusal with a readable reason.
 */
export function applySpec(script: string, spec: { primitive_type: string; params?: Record<string, unknown> }): PrimitiveResult {
  const prim = byName.get(spec.primitive_type);
  if (!prim)
    throw new PrimitiveRefusal(String(spec.primitive_type), `unknown primitive; known: ${PRIMITIVES.map((p) => p.name).join(', ')}`);
  try {
    const parsed = prim.paramsSchema.safeParse(spec.params ?? {});
    if (!parsed.success) throw new PrimitiveRefusal(prim.name, `invalid params: ${formatZodError(parsed.error)}`);
    return prim.apply(script, parsed.data);
  } catch (e) {
    if (e instanceof PrimitiveRefusal) throw e;
    throw new PrimitiveRefusal(prim.name, `internal error: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/**
 * Breakage primitives with at least one candidate on `script`, in registry order (what the
 * editor's picker offers). The script is parsed once: candidates share a parse cache.
 */
export function applicablePrimitives(
  script: string,
  versions?: LibraryVersions,
): Array<{ primitive: Primitive; candidates: PrimitiveCandidate[] }> {
  const out: Array<{ primitive: Primitive; candidates: PrimitiveCandidate[] }> = [];
  for (const primitive of breakagePrimitives()) {
    const candidates = primitive.candidates(script, versions);
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
    params: z.toJSONSchema(p.paramsSchema, { unrepresentable: 'any', io: 'input' }),
  }));
  return structuredClone(catalog);
}

export type { PrimitiveSpec };

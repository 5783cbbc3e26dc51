// The guided input of "Apply a primitive": pick items built from the registry, params prefilled
// from the candidates found in the file, and the JSON the user edits validated with the
// primitive's own zod schema (then dry-run, so a refusal shows inline too). No vscode import.
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from '../../../env/primitives/types';
import { formatZodError } from '../../../env/schemas';
import type { ApplicablePrimitive } from './applicability';

export interface PrimitivePickItem {
  label: string;
  description: string;
  detail: string;
  primitive: string;
}

export interface CandidatePickItem {
  label: string;
  description: string;
  detail?: string;
  index: number;
}

/** 1-based line number of a character offset. */
export function lineOfOffset(text: string, offset: number): number {
  let line = 1;
  const end = Math.min(offset, text.length);
  for (let i = 0; i < end; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

export function primitivePickItems(applicable: readonly ApplicablePrimitive[]): PrimitivePickItem[] {
  return applicable.map(({ primitive, candidates }) => ({
    label: primitive.name,
    description: `${candidates.length} place${candidates.length === 1 ? '' : 's'} · ${primitive.category}`,
    detail: `${primitive.description} Models: ${primitive.models}`,
    primitive: primitive.name,
  }));
}

export function candidatePickItems(candidates: readonly PrimitiveCandidate[], script: string): CandidatePickItem[] {
  return candidates.map((c, index) => ({
    label: c.label,
    description: `line ${lineOfOffset(script, c.from)}`,
    detail: c.drift ? `real drift: ${c.drift}` : undefined,
    index,
  }));
}

/** The text the params input box starts with. */
export function paramsText(params: Record<string, unknown>): string {
  return JSON.stringify(params);
}

export type ParamsCheck = { ok: true; params: Record<string, unknown> } | { ok: false; error: string };

/**
 * Parses the user's JSON and validates it with the primitive's schema; with `script`, also
 * dry-runs the primitive so "nothing to break with these params" is reported before applying.
 */
export function checkParamsText(primitive: Primitive, text: string, script?: string): ParamsCheck {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { ok: false, error: `Not valid JSON: ${e instanceof Error ? e.message : String(e)}` };
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json))
    return { ok: false, error: 'Params must be a JSON object, e.g. {"old_name": "…", "new_name": "…"}' };
  const parsed = primitive.paramsSchema.safeParse(json);
  if (!parsed.success) return { ok: false, error: `${primitive.name} params: ${formatZodError(parsed.error)}` };
  const params = parsed.data;
  if (script !== undefined) {
    try {
      primitive.apply(script, params);
    } catch (e) {
      if (e instanceof PrimitiveRefusal) return { ok: false, error: `${primitive.name} refuses: ${e.reason}` };
      return { ok: false, error: `${primitive.name} failed: ${e instanceof Error ? e.message : String(e)}` };
    }
  }
  return { ok: true, params };
}

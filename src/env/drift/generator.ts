// The seeded baseline drift generator (the original's BaselineDriftGenerator): given a target
// category and a script, it proposes a concrete primitive spec that applies and breaks the
// script under the versions. Real drifts that the snapshot rejects come first: the target's, then
// another primitive's in a fixed order (the caller sees the changed primitive_type); synthetic
// drifts only when no real one breaks. Deterministic for a seed and a call sequence.
import { describeProblem, parsePython } from '../python/parse';
import { breakagePrimitives, getPrimitive } from '../primitives/registry';
import { PrimitiveRefusal, type Primitive, type PrimitiveCandidate } from '../primitives/types';
import { mulberry32, randomIndex } from '../random';
import { PrimitiveSpecSchema, type LibraryVersions, type PrimitiveSpec } from '../schemas';

/** Fallback order when the target has no candidate: the most broadly applicable first. */
export const FALLBACK_ORDER: readonly string[] = [
  'RenameApiCall',
  'ModifyConfigField',
  'RestructureDatasetSchema',
  'DeprecateImport',
  'RemoveDeprecatedMethod',
  'ChangeArgumentSignature',
  'ChangeTokenizerBehavior',
  'ChangeReturnType',
  'ChangeDefaultValue',
  'PassArgumentPositionally',
];

/** The breakage primitives a target names: a primitive name (any case) or a category such as `api_drift`. */
export function primitivesForTarget(target: string): Primitive[] {
  const t = target.trim();
  const exact = getPrimitive(t);
  if (exact && exact.kind === 'breakage') return [exact];
  const lower = t.toLowerCase();
  return breakagePrimitives().filter((p) => p.name.toLowerCase() === lower || p.category === lower);
}

/** A real drift that the versions reject. */
export const breaksReally = (c: PrimitiveCandidate): boolean => c.provenance === 'real' && c.breaks === true;

/** Real drifts that break first, then anything that breaks, then the rest. */
export function preferredCandidates(candidates: readonly PrimitiveCandidate[]): PrimitiveCandidate[] {
  const real = candidates.filter(breaksReally);
  if (real.length) return real;
  const breaking = candidates.filter((c) => c.breaks !== false);
  return breaking.length ? breaking : [...candidates];
}

export class BaselineDriftGenerator {
  private readonly rng: () => number;

  constructor(readonly seed: number) {
    this.rng = mulberry32(seed);
  }

  propose(targetCategory: string, script: string, versions?: LibraryVersions): PrimitiveSpec {
    const targets = primitivesForTarget(targetCategory).map((p) => ({ p, c: p.candidates(script, versions) }));
    const tried = new Set(targets.map((t) => t.p.name));
    const rest = FALLBACK_ORDER.map((n) => getPrimitive(n))
      .filter((p): p is Primitive => !!p && !tried.has(p.name))
      .map((p) => ({ p, c: p.candidates(script, versions) }));
    // A spec exists to break the script: a real drift the snapshot rejects (the target's, else
    // another primitive's in the fixed order), then a synthetic one that breaks, and only when
    // nothing breaks, a deprecation-only one.
    const real = (x: { c: PrimitiveCandidate[] }) => x.c.some(breaksReally);
    const breaks = (x: { c: PrimitiveCandidate[] }) => x.c.some((c) => c.breaks !== false);
    const choice =
      targets.find(real) ??
      rest.find(real) ??
      targets.find(breaks) ??
      rest.find(breaks) ??
      targets.find((x) => x.c.length) ??
      rest.find((x) => x.c.length);
    if (choice) return this.specOf(choice.p, choice.c);
    const problem = parsePython(script).problem;
    throw new PrimitiveRefusal(
      'BaselineDriftGenerator',
      problem
        ? `no breakage primitive applies: the script does not parse (${describeProblem(problem)})`
        : 'no breakage primitive applies to this script',
    );
  }

  private specOf(p: Primitive, candidates: readonly PrimitiveCandidate[]): PrimitiveSpec {
    const pool = preferredCandidates(candidates);
    const chosen = pool[randomIndex(this.rng, pool.length)];
    const spec: PrimitiveSpec = {
      primitive_type: p.name,
      category: p.category,
      params: structuredClone(chosen.params),
      provenance: chosen.provenance,
    };
    if (chosen.drift_id) spec.drift_id = chosen.drift_id;
    return spec;
  }
}

const MAX_COMPLETION_CHARS = 200_000;

/**
 * The spec in a drift model's completion: a bare JSON object, one inside a ```json (or plain
 * ```) fence, or one embedded in prose; `{"breakage": {...}}` (the action shape) is accepted too.
 * Null when no JSON object in the text is a valid spec.
 */
export function parseDriftOutput(text: string): PrimitiveSpec | null {
  if (typeof text !== 'string') return null;
  const input = text.length > MAX_COMPLETION_CHARS ? text.slice(0, MAX_COMPLETION_CHARS) : text;
  const tries: string[] = [];
  for (const m of input.matchAll(/```[A-Za-z0-9_-]*[ \t]*\r?\n([\s\S]*?)```/g)) tries.push(m[1]);
  tries.push(input.trim());
  tries.push(...jsonObjectsIn(input));
  for (const t of tries) {
    const spec = specFrom(t);
    if (spec) return spec;
  }
  return null;
}

function specFrom(text: string): PrimitiveSpec | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value && typeof value === 'object' && !Array.isArray(value) && 'breakage' in value) value = value.breakage;
  const parsed = PrimitiveSpecSchema.safeParse(value);
  return parsed.success ? parsed.data : null;
}

/** Balanced `{...}` substrings (string-aware) in order of their opening brace, nested ones too (bounded). */
function jsonObjectsIn(text: string): string[] {
  const out: string[] = [];
  let starts = 0;
  for (let start = text.indexOf('{'); start !== -1 && starts < 50; start = text.indexOf('{', start + 1), starts++) {
    const end = matchingBrace(text, start);
    if (end !== -1) out.push(text.slice(start, end + 1));
  }
  return out;
}

function matchingBrace(text: string, start: number): number {
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i];
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
    } else if (ch === '"') inString = true;
    else if (ch === '{') depth++;
    else if (ch === '}' && --depth === 0) return i;
  }
  return -1;
}

/**
 * The provenance of any spec (from a model, a human or the baseline), found by matching it to the
 * primitive's candidates on the script: `real` with the catalog id when it is a real drift's
 * params, `synthetic` otherwise. For recording which drift an episode reproduced.
 */
export function specProvenance(
  script: string,
  spec: { primitive_type: string; params?: Record<string, unknown> },
  versions?: LibraryVersions,
): Pick<PrimitiveSpec, 'provenance' | 'drift_id'> {
  const p = getPrimitive(spec.primitive_type);
  const key = JSON.stringify(sortedKeys(spec.params ?? {}));
  const match = p?.candidates(script, versions).find((c) => JSON.stringify(sortedKeys(c.params)) === key);
  if (!match || match.provenance !== 'real') return { provenance: 'synthetic' };
  return match.drift_id ? { provenance: 'real', drift_id: match.drift_id } : { provenance: 'real' };
}

function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (v && typeof v === 'object')
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, x]) => [k, sortedKeys(x)]),
    );
  return v;
}

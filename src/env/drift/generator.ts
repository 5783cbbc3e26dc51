// The seeded baseline drift generator: proposes a valid primitive spec for a target category and
// script, preferring real drifts from the drift table, and falling back to another primitive in a
// fixed order when the target has nothing to break.
import { mulberry32 } from '../random';
import { breakagePrimitives, getPrimitive } from '../primitives/registry';
import { PrimitiveRefusal } from '../primitives/types';
import { PrimitiveSpecSchema, type LibraryVersions, type PrimitiveSpec } from '../schemas';

export class BaselineDriftGenerator {
  private readonly rng: () => number;
  constructor(readonly seed: number) {
    this.rng = mulberry32(seed);
  }

  propose(targetCategory: string, script: string, versions?: LibraryVersions): PrimitiveSpec {
    const order = [getPrimitive(targetCategory), ...breakagePrimitives().filter((p) => p.name !== targetCategory)].filter(
      (p): p is NonNullable<typeof p> => !!p && p.kind === 'breakage',
    );
    for (const prim of order) {
      let cands;
      try {
        cands = prim.candidates(script, versions);
      } catch {
        continue;
      }
      if (!cands.length) continue;
      // Real drifts that break at this snapshot first, then any candidate that breaks, then the rest.
      const real = cands.filter((c) => c.drift && c.breaks !== false);
      const breaking = cands.filter((c) => c.breaks !== false);
      const pool = real.length ? real : breaking.length ? breaking : cands;
      const pick = pool[Math.floor(this.rng() * pool.length)] ?? pool[0]!;
      return { primitive_type: prim.name, category: prim.category, params: { ...pick.params } };
    }
    throw new PrimitiveRefusal(targetCategory, 'no breakage primitive applies to this script');
  }
}

/** A JSON spec from a model's completion: bare, inside a ```json fence, or embedded in prose. */
export function parseDriftOutput(text: string): PrimitiveSpec | null {
  const tries: string[] = [];
  const fence = /```(?:json)?\s*\n([\s\S]*?)```/i.exec(text);
  if (fence) tries.push(fence[1]!);
  tries.push(text.trim());
  const first = text.indexOf('{');
  const last = text.lastIndexOf('}');
  if (first >= 0 && last > first) tries.push(text.slice(first, last + 1));
  for (const t of tries) {
    try {
      const parsed = PrimitiveSpecSchema.safeParse(JSON.parse(t));
      if (parsed.success) return parsed.data;
    } catch {
      // not JSON: try the next reading
    }
  }
  return null;
}

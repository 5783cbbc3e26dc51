// The Teacher picks the episode's target category: a breakage primitive that applies to the
// script, seeded, favouring the ones it has asked for least (a curriculum over primitives).
import { mulberry32 } from './random';
import { applicablePrimitives, breakagePrimitives } from './primitives/registry';
import type { LibraryVersions } from './schemas';

export class Teacher {
  private readonly rng: () => number;
  private readonly asked = new Map<string, number>();
  constructor(readonly seed: number) {
    this.rng = mulberry32(seed ^ 0x5eed);
  }

  targetCategory(script: string, versions?: LibraryVersions): string {
    const applicable = applicablePrimitives(script, versions);
    // Prefer primitives that can really break this script under the simulated libraries.
    const breaking = applicable.filter((a) => a.candidates.some((c) => c.breaks !== false)).map((a) => a.primitive.name);
    const names = breaking.length ? breaking : applicable.map((a) => a.primitive.name);
    const pool = names.length ? names : breakagePrimitives().map((p) => p.name);
    const least = Math.min(...pool.map((n) => this.asked.get(n) ?? 0));
    const fewest = pool.filter((n) => (this.asked.get(n) ?? 0) === least);
    const pick = fewest[Math.floor(this.rng() * fewest.length)] ?? fewest[0]!;
    this.asked.set(pick, (this.asked.get(pick) ?? 0) + 1);
    return pick;
  }
}

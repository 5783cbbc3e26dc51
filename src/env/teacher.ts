// The Teacher picks an episode's target category: the name of a breakage primitive that applies
// to the script. Seeded, and a curriculum: among the applicable primitives (those with a candidate
// that really breaks under the versions, when there are any) it asks for the ones it has asked
// for least so far, breaking ties at random, so a run of episodes cycles through all of them.
import { applicablePrimitives } from './primitives/registry';
import { mulberry32, randomIndex } from './random';
import type { LibraryVersions } from './schemas';

/** The original's default category, used when nothing applies. */
export const DEFAULT_TARGET = 'RenameApiCall';

export class Teacher {
  private readonly rng: () => number;
  private readonly asked = new Map<string, number>();

  constructor(readonly seed: number) {
    this.rng = mulberry32(seed ^ 0x5eed);
  }

  /** How often each primitive was asked for so far. */
  get counts(): ReadonlyMap<string, number> {
    return new Map(this.asked);
  }

  targetCategory(script: string, versions?: LibraryVersions): string {
    const applicable = applicablePrimitives(script, versions);
    const breaking = applicable.filter((a) => a.candidates.some((c) => c.breaks !== false)).map((a) => a.primitive.name);
    // Nothing applies: name the default category anyway; the drift generator then says why it cannot act.
    const pool = breaking.length ? breaking : applicable.length ? applicable.map((a) => a.primitive.name) : [DEFAULT_TARGET];
    const least = Math.min(...pool.map((n) => this.asked.get(n) ?? 0));
    const fewest = pool.filter((n) => (this.asked.get(n) ?? 0) === least);
    const pick = fewest[randomIndex(this.rng, fewest.length)]!;
    this.asked.set(pick, (this.asked.get(pick) ?? 0) + 1);
    return pick;
  }
}

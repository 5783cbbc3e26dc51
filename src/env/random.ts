// Seeded pseudo-random numbers, so that an episode's choices (task, primitive, params) can be
// replayed from its seed. mulberry32: tiny, fast, and good enough for sampling (not for crypto).

/** A generator of floats in [0, 1) fully determined by `seed` (any number; taken modulo 2^32). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** An integer in [0, n) drawn from `rng` (n must be a positive integer). */
export function randomIndex(rng: () => number, n: number): number {
  if (!Number.isInteger(n) || n <= 0) throw new RangeError(`randomIndex needs a positive integer, got ${n}`);
  return Math.min(n - 1, Math.floor(rng() * n));
}

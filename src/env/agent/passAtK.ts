// pass@k with the unbiased estimator of Chen et al. (2021, "Evaluating Large Language Models
// Trained on Code"): from n samples of which c pass, pass@k = 1 - C(n-c, k) / C(n, k), computed as
// a running product so large n does not overflow. Groups (primitive, snapshot, overall) average
// their problems' estimates, as HumanEval and GitChameleon report them.

export function passAtK(n: number, c: number, k: number): number {
  if (!(Number.isInteger(n) && Number.isInteger(c) && Number.isInteger(k)) || n < 1 || c < 0 || c > n || k < 1 || k > n) {
    throw new RangeError(`pass@k needs integers 1 <= k <= n and 0 <= c <= n (n=${n}, c=${c}, k=${k})`);
  }
  if (n - c < k) return 1;
  let prod = 1;
  for (let i = n - c + 1; i <= n; i++) prod *= 1 - k / i;
  return 1 - prod;
}

/** The k values reported for n samples: 1 and the requested k (each at most n). */
export function reportedKs(n: number, k: number): number[] {
  return [...new Set([1, Math.min(k, n)])].filter((x) => x >= 1 && x <= n).sort((a, b) => a - b);
}

export type PassAt = Record<string, number>;

/** `{ "pass@1": …, "pass@k": … }` for one problem. */
export function passAtKs(n: number, c: number, ks: readonly number[]): PassAt {
  const out: PassAt = {};
  for (const k of ks) out[`pass@${k}`] = round(passAtK(n, c, k));
  return out;
}

/** The mean of the problems' estimates, key by key (problems lacking a key are left out of its mean). */
export function meanPassAt(rows: readonly PassAt[]): PassAt {
  const sums = new Map<string, { s: number; n: number }>();
  for (const r of rows) {
    for (const [key, v] of Object.entries(r)) {
      const acc = sums.get(key) ?? { s: 0, n: 0 };
      acc.s += v;
      acc.n++;
      sums.set(key, acc);
    }
  }
  const out: PassAt = {};
  for (const [key, { s, n }] of sums) out[key] = round(s / n);
  return out;
}

const round = (x: number) => Math.round(x * 1e4) / 1e4;

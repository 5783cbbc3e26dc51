// The drift catalog's probes warm vs cold (issue 18): compares two `forgeenv fidelity --json` reports, one
// made with FORGEENV_WARM=0 and one with FORGEENV_WARM=force, probe outcome by probe outcome, exactly
// (status, exception type, message, warnings; real and simulated sides apart). Real outcomes are cached,
// so each real side needs an empty --cache-dir to run again (docs/sandbox.md, "Warm runtime"):
//   FORGEENV_WARM=0 node bin/forgeenv.js fidelity --ids a,b --cache-dir "$(mktemp -d)" --json > cold.json
//   FORGEENV_WARM=force node bin/forgeenv.js fidelity --ids a,b --cache-dir "$(mktemp -d)" --json > warm.json
//   npm run -s bench:fidelity-identity -- cold.json warm.json
// Prints the pairs, how many are identical, each difference named, and which runtime ran each report's probe runs.
import { readFileSync } from 'node:fs';
import { compareFidelityReports } from './identity';

const [coldPath, warmPath] = process.argv.slice(2);
if (!coldPath || !warmPath) {
  console.error('usage: bench/fidelityIdentity.ts COLD.json WARM.json');
  process.exit(2);
}
const read = (p: string): unknown => JSON.parse(readFileSync(p, 'utf8'));
const r = compareFidelityReports(read(coldPath), read(warmPath));
console.log(`probe outcomes compared: ${r.pairs}; identical: ${r.identical}; differ: ${r.differ.length}`);
for (const d of r.differ) console.log(`  differs: ${d}`);
for (const u of r.unmatched) console.log(`  unmatched: ${u}`);
const fmt = (n: Record<string, number>) =>
  Object.entries(n)
    .map(([k, v]) => `${k} ${v}`)
    .join(', ') || 'none';
console.log(`probe runs of ${coldPath}: ${fmt(r.runtimes[0])}`);
console.log(`probe runs of ${warmPath}: ${fmt(r.runtimes[1])}`);

// The real-library tier of the fidelity check, as CI runs it: the drift catalog's probes in the real
// releases of the two snapshots that `scripts/setup-snapshots.sh` builds (2024-09 and 2026-11), and in
// the simulated libraries at the same snapshots. Every entry whose change these two bracket must check
// out in the real releases, and the simulation must agree with them (status, exception type and
// message) on at least the share measured when this tier was set up. The full catalog over all seven
// snapshots is `npm run fidelity`.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runFidelity, venvUsable } from '../../src/env/fidelity/harness';
import { getSnapshot } from '../../src/env/snapshots/registry';

const TIER = ['2024-09', '2026-11'];
/** Agreement measured on this tier when it was set up; a drop below it is a regression of the simulation. */
const MIN_AGREEMENT = 0.8;

describe('fidelity on the CI snapshots (real releases)', () => {
  const snapshots = TIER.map((id) => getSnapshot(id));
  const missing = snapshots.filter((s) => !venvUsable(s)).map((s) => s.id);
  test(
    'catalog entries bracketed by 2024-09 and 2026-11: valid in the real releases, and the simulation agrees',
    {
      skip: missing.length ? `snapshot venvs not built: ${missing.join(', ')} (bash scripts/setup-snapshots.sh)` : false,
      timeout: 900_000,
    },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fid-tier-'));
      try {
        const r = await runFidelity({ snapshotList: snapshots, cacheDir: dir });
        // Only the real releases decide what this pair can check: an API that appeared after 2024-09, or a
        // deprecation window that closed before 2026-11, is checked by its own adjacent snapshots in
        // `npm run fidelity` (all eight snapshots), not by this pair.
        const checked = r.entries.filter((e) => e.validity === 'valid');
        const skipped = r.entries.filter((e) => e.validity === 'invalid').map((e) => e.id);
        console.log(
          `    [fidelity] not checkable by ${TIER.join(' → ')} (checked by adjacent snapshots instead): ${skipped.join(', ') || 'none'}`,
        );
        assert.ok(checked.length >= 40, `only ${checked.length} entries bracketed by ${TIER.join(' and ')} check out in the real releases`);
        const ids = new Set(checked.map((e) => e.id));
        const runs = checked.flatMap((e) => e.runs.filter((x) => x.mismatch !== undefined));
        const agree = runs.filter((x) => x.mismatch === null).length;
        const share = agree / runs.length;
        console.log(
          `    [fidelity] ${TIER.join(' → ')}: ${checked.length} entries, simulated agrees with real on ${agree}/${runs.length} runs (${(share * 100).toFixed(1)}%)`,
        );
        assert.ok(
          share >= MIN_AGREEMENT,
          `agreement ${(share * 100).toFixed(1)}% < ${MIN_AGREEMENT * 100}%; first disagreements:\n${r.disagreements
            .filter((d) => ids.has(d.id))
            .slice(0, 8)
            .map((d) => `${d.id} ${d.slot}: real ${d.real.exc_type ?? d.real.status} / sim ${d.sim.exc_type ?? d.sim.status}`)
            .join('\n')}`,
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

// `forgeenv fidelity`: how closely the simulated libraries reproduce the real releases on the
// drift catalog (resources/drifts/catalog.json), per library, per kind and overall.
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { DRIFT_LIBRARIES } from '../env/fidelity/catalog';
import { runFidelity } from '../env/fidelity/harness';
import { renderFidelityReport } from '../env/fidelity/report';

export const FIDELITY_USAGE = `Usage: forgeenv fidelity [--library L] [--ids a,b] [--snapshots a,b] [--json] [--no-real] [--no-sim] [--catalog FILE] [--python PATH]

  --library L       only entries of one library (${DRIFT_LIBRARIES.join(', ')})
  --ids a,b         only these catalog entries
  --snapshots a,b   only entries whose before and after snapshots are both listed
  --no-real         do not run real-mode probes; use cached real outcomes only
  --no-sim          do not run the simulated side (records real outcomes in the cache only)
  --json            print the whole report as JSON
  --python PATH     interpreter for simulated mode (default python3)
  --cache-dir DIR   real outcomes cached in DIR instead of the cache root's fidelity/ (an empty DIR runs
                    every real probe again: FORGEENV_WARM=0 against FORGEENV_WARM=force)`;

const list = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);

/** Exit codes: 0 ok, 1 the run failed, 2 usage error. */
export async function runFidelityCommand(args: string[], out: (s: string) => void, err: (s: string) => void): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args,
      allowPositionals: false,
      options: {
        library: { type: 'string' },
        ids: { type: 'string' },
        snapshots: { type: 'string' },
        json: { type: 'boolean', default: false },
        'no-real': { type: 'boolean', default: false },
        'no-sim': { type: 'boolean', default: false },
        catalog: { type: 'string' },
        python: { type: 'string' },
        'cache-dir': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (e) {
    err(`forgeenv fidelity: ${(e as Error).message}\n${FIDELITY_USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    out(FIDELITY_USAGE);
    return 0;
  }
  if (v.library && !(DRIFT_LIBRARIES as readonly string[]).includes(v.library)) {
    err(`forgeenv fidelity: unknown library "${v.library}"\n${FIDELITY_USAGE}`);
    return 2;
  }
  try {
    const opts: Parameters<typeof runFidelity>[0] = {
      ids: list(v.ids),
      snapshots: list(v.snapshots),
      real: !v['no-real'],
      sim: !v['no-sim'],
      onProgress: (m) => err(`forgeenv fidelity: ${m}`),
    };
    if (v.library) opts.library = v.library;
    if (v.catalog) opts.catalogPath = v.catalog;
    if (v.python) opts.systemPython = v.python;
    if (v['cache-dir']) opts.cacheDir = resolve(v['cache-dir']);
    const report = await runFidelity(opts);
    out(v.json ? JSON.stringify(report, null, 2) : renderFidelityReport(report));
    return 0;
  } catch (e) {
    err(`forgeenv fidelity: ${(e as Error).message}`);
    return 1;
  }
}

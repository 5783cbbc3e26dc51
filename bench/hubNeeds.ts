// The hub needs of the real-world scripts and whether real mode can provide them (numbers, not
// assertions). For each script of ../shared/realworld/scripts (read from there, never copied): the
// models and datasets deriveHubNeeds finds with the task loader's derived args, then every item is
// built once in the snapshot's venv (cached under <cache>/hub-items; a second run costs nothing).
// `--args none` reads the scripts alone (their literals and defaults), without the derived args,
// whose placeholders (`--model_name_or_path gpt2`) hide the models a script names by default.
//   node --import tsx bench/hubNeeds.ts [--snapshot 2026-11] [--args derived|none] [--no-build] [--only 05,21]
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureHubItems, type HubRefusal } from '../src/env/hub/ensure';
import { resolveModel, UnknownModelError } from '../src/env/hub/modelTable';
import { deriveHubNeeds, type HubNeeds } from '../src/env/hub/needs';
import { ensureLocalHub } from '../src/env/hub/localHub';
import { deriveScriptArgs } from '../src/env/tasks/scriptArgs';
import { snapshotVenvDir } from '../src/env/snapshots/venv';

const { values } = parseArgs({
  options: {
    snapshot: { type: 'string', default: '2026-11' },
    'no-build': { type: 'boolean', default: false },
    only: { type: 'string' },
    args: { type: 'string', default: 'derived' },
  },
});
const SCRIPTS = resolve(__dirname, '..', '..', 'shared', 'realworld', 'scripts');

async function main(): Promise<void> {
  const only = values.only?.split(',');
  const files = readdirSync(SCRIPTS)
    .filter((f) => f.endsWith('.py') && (!only || only.some((o) => f.startsWith(o))))
    .sort();
  const perScript: Array<{ file: string; needs: HubNeeds }> = [];
  for (const f of files) {
    const script = readFileSync(resolve(SCRIPTS, f), 'utf8');
    const needs = deriveHubNeeds(script, values.args === 'none' ? [] : deriveScriptArgs(script).args, {});
    perScript.push({ file: f, needs });
    const models = needs.models.map((m) => {
      try {
        const r = resolveModel(m.id);
        return `${m.id}=${r.model_type}(${r.resolvedBy})`;
      } catch (e) {
        return `${m.id}=?`;
      }
    });
    const ds = needs.datasets.map(
      (d) => `${d.path}${d.config ? '/' + d.config : ''}${d.format ? `[${d.format} file]` : ''}{${Object.keys(d.columns ?? {}).join(',')}}`,
    );
    console.log(`${f}\n  models:   ${models.join('  ') || '-'}\n  datasets: ${ds.join('  ') || '-'}`);
  }
  const allModels = new Map<string, string>();
  const allDatasets = new Map<string, HubNeeds['datasets'][number]>();
  for (const { needs } of perScript) {
    for (const m of needs.models) allModels.set(m.id, m.id);
    for (const d of needs.datasets) allDatasets.set(`${d.path}\0${d.config ?? ''}\0${JSON.stringify(d.columns)}`, d);
  }
  let resolved = 0;
  const unknown: string[] = [];
  for (const id of allModels.keys()) {
    try {
      resolveModel(id);
      resolved++;
    } catch (e) {
      if (e instanceof UnknownModelError) unknown.push(id);
      else throw e;
    }
  }
  const hubDatasets = [...allDatasets.values()].filter((d) => !d.format);
  const fileDatasets = [...allDatasets.values()].filter((d) => d.format);
  console.log(
    `\nscripts: ${files.length}; distinct model ids: ${allModels.size} (resolved to an architecture: ${resolved}; unknown: ${unknown.join(', ') || 'none'})`,
  );
  console.log(`distinct dataset items: ${hubDatasets.length} hub ids, ${fileDatasets.length} local data files`);
  if (values['no-build']) return;
  const snapshot = values.snapshot;
  const python = resolve(snapshotVenvDir(snapshot), 'bin', 'python');
  if (!existsSync(python)) {
    console.log(`no venv for ${snapshot} at ${python}: build step skipped`);
    return;
  }
  const base = await ensureLocalHub(snapshot, python, { onProgress: (m) => console.error(`[hub] ${m}`) });
  const started = Date.now();
  const r = await ensureHubItems({
    hubKey: snapshot,
    python,
    baseHubDir: base,
    needs: { models: [...allModels.keys()].filter((id) => !unknown.includes(id)).map((id) => ({ id })), datasets: hubDatasets },
    onProgress: (m) => console.error(`[hub] ${m}`),
  });
  const seconds = (Date.now() - started) / 1000;
  const built = (kind: 'model' | 'dataset') => r.provided.filter((p) => p.kind === kind).length;
  const refused = (kind: 'model' | 'dataset') => r.refusals.filter((p) => p.kind === kind);
  console.log(
    `\nsnapshot ${snapshot}: models built ${built('model')}/${allModels.size - unknown.length} resolved; datasets built ${built('dataset')}/${hubDatasets.length}; items built now ${r.built}, from cache ${r.cached}; ${seconds.toFixed(1)} s`,
  );
  const reasons = new Map<string, HubRefusal[]>();
  for (const x of r.refusals) {
    const key = x.reason.replace(/"[^"]*"|'[^']*'/g, '…').slice(0, 140);
    reasons.set(key, [...(reasons.get(key) ?? []), x]);
  }
  console.log('refusal reasons:');
  for (const [reason, xs] of [...reasons].sort((a, b) => b[1].length - a[1].length))
    console.log(`  ${xs.length}× ${reason}  (${xs.map((x) => x.id).join(', ')})`);
  if (!reasons.size) console.log('  none');
  const unresolved = unknown.length + refused('model').length;
  console.log(
    `\nsummary: model ids ${allModels.size}, resolved ${resolved}, built ${built('model')}, unknown ${unknown.length}, refused ${unresolved - unknown.length}; dataset ids ${hubDatasets.length}, built ${built('dataset')}; data files ${fileDatasets.length}`,
  );
}

void main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

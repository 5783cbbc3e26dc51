import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { runSnapshotsCommand } from '../../src/cli/snapshots';
import { LibraryVersionsSchema } from '../../src/env/schemas';
import { hasSnapshotApi, loadPackageApi, snapshotApiFile, type ClassInfo, type PackageApi } from '../../src/env/snapshots/api';
import { resourcesDir } from '../../src/env/paths';
import {
  allSnapshots,
  getSnapshot,
  loadSnapshotsFile,
  parseSnapshotsFile,
  snapshotIds,
  snapshotRequirements,
} from '../../src/env/snapshots/registry';
import {
  cacheRoot,
  failedRequirement,
  isSnapshotVenvReady,
  READY_MARKER,
  snapshotPython,
  snapshotVenvDir,
} from '../../src/env/snapshots/venv';
import {
  compareVersions,
  CORPUS_SNAPSHOT,
  LATEST_SNAPSHOT,
  LIBRARY_SNAPSHOTS,
  SNAPSHOT_IDS,
  snapshotVersions,
} from '../../src/env/snapshots/versions';

const minimal = (over: Record<string, unknown> = {}): string =>
  JSON.stringify({
    format: 1,
    python: '3.11',
    snapshots: [{ id: '2024-04', date: '2024-04', cutoff: '2024-04-30', versions: { transformers: '4.40.0' }, ...over }],
  });

describe('snapshot registry', () => {
  test('the shipped file defines the dated snapshots, oldest first, with all nine packages', () => {
    const ids = snapshotIds();
    for (const id of ['2023-06', '2023-12', '2024-04', '2024-06', '2024-09', '2025-03', '2025-09', '2026-03', '2026-11'])
      assert.ok(ids.includes(id), id);
    assert.deepEqual([...ids].sort(), ids);
    for (const id of ids) {
      assert.deepEqual(Object.keys(getSnapshot(id).versions).sort(), [
        'accelerate',
        'datasets',
        'evaluate',
        'huggingface_hub',
        'peft',
        'tokenizers',
        'torch',
        'transformers',
        'trl',
      ]);
    }
  });

  test('the latest snapshot is computed from the file; the corpus snapshot is data and must be a snapshot', () => {
    const newest = [...allSnapshots()].sort((a, b) => a.date.localeCompare(b.date)).at(-1)!.id;
    assert.equal(LATEST_SNAPSHOT, newest);
    assert.ok(SNAPSHOT_IDS.includes(CORPUS_SNAPSHOT));
    assert.equal(CORPUS_SNAPSHOT, loadSnapshotsFile().corpus_snapshot ?? newest);
    assert.throws(
      () => parseSnapshotsFile(JSON.stringify({ ...JSON.parse(minimal()), corpus_snapshot: '1999-01' })),
      /corpus_snapshot 1999-01 is not a snapshot id/,
    );
    const two = JSON.parse(minimal());
    two.snapshots.unshift({ ...two.snapshots[0], id: '2024-06', date: '2024-06', cutoff: '2024-06-30' });
    assert.throws(() => parseSnapshotsFile(JSON.stringify(two)), /oldest first/);
  });

  test('each snapshot is dated: a cut-off in its month, and its transformers is of that era', () => {
    for (const s of allSnapshots()) assert.ok(s.cutoff.startsWith(s.id), s.id);
    // The original ForgeEnv's transformers series stay (the patch release is the one current at the cut-off).
    const series = (id: string) => getSnapshot(id).versions.transformers.split('.').slice(0, 2).join('.');
    assert.deepEqual(['2023-12', '2024-04', '2024-09', '2025-03'].map(series), ['4.36', '4.40', '4.45', '4.50']);
    // A March-2025 snapshot has the trl that brought GRPO (0.14) and later, not November 2024's 0.12.
    assert.ok(compareVersions(getSnapshot('2025-03').versions.trl, '0.14.0') >= 0);
  });

  test("the simulated libraries default to the latest snapshot's pins", () => {
    const text = readFileSync(join(resourcesDir(), 'simlibs', '_forgeenv_sim', 'versions.py'), 'utf8');
    for (const [lib, v] of Object.entries(snapshotVersions(CORPUS_SNAPSHOT)))
      assert.match(text, new RegExp(`"${lib}": "${v.replace(/\./g, '\\.')}"`), lib);
  });

  test('an unknown id lists the known ones', () => {
    assert.throws(
      () => getSnapshot('1999-01'),
      (e: Error) => e.message.includes('1999-01') && snapshotIds().every((id) => e.message.includes(id)),
    );
    assert.throws(() => snapshotVenvDir('../../etc'), /unknown snapshot/);
  });

  test('malformed files give errors that say what is wrong', () => {
    assert.throws(() => parseSnapshotsFile('{"format":1,', 'x.json'), /x\.json: not valid JSON/);
    assert.throws(
      () => parseSnapshotsFile(minimal({ versions: { transformers: '4.x' } })),
      /snapshots\.0\.versions\.transformers: a dotted version/,
    );
    assert.throws(() => parseSnapshotsFile(minimal({ id: 'april' })), /snapshots\.0\.id/);
    const dup = JSON.parse(minimal()) as { snapshots: unknown[] };
    dup.snapshots.push(dup.snapshots[0]);
    assert.throws(() => parseSnapshotsFile(JSON.stringify(dup)), /duplicate snapshot id 2024-04/);
    assert.deepEqual(parseSnapshotsFile(minimal()).snapshots[0].extra_requirements, []);
  });

  test('requirements use distribution names and honour torch_runtime', () => {
    const s = parseSnapshotsFile(
      minimal({ versions: { huggingface_hub: '0.22.2', torch: '2.2.0' }, torch_runtime: '2.2.2', extra_requirements: ['numpy<2'] }),
    ).snapshots[0];
    assert.deepEqual(snapshotRequirements(s), ['huggingface-hub==0.22.2', 'torch==2.2.2', 'numpy<2']);
  });

  test('versions.ts reads the same file and keeps dotted-number versions', () => {
    assert.deepEqual([...SNAPSHOT_IDS], snapshotIds());
    for (const id of SNAPSHOT_IDS) {
      assert.deepEqual(LIBRARY_SNAPSHOTS[id], loadSnapshotsFile().snapshots.find((s) => s.id === id)!.versions);
      assert.ok(LibraryVersionsSchema.safeParse(LIBRARY_SNAPSHOTS[id]).success, id);
    }
  });
});

describe('snapshot venvs', () => {
  test('live under $FORGEENV_CACHE_DIR and are ready only with a matching marker', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-cache-'));
    const saved = process.env.FORGEENV_CACHE_DIR;
    process.env.FORGEENV_CACHE_DIR = dir;
    try {
      assert.equal(cacheRoot(), dir);
      assert.equal(snapshotVenvDir('2024-04'), join(dir, 'venvs', '2024-04'));
      assert.equal(snapshotPython('2024-04'), join(dir, 'venvs', '2024-04', 'bin', 'python'));
      assert.equal(isSnapshotVenvReady('2024-04'), false);
      mkdirSync(join(dir, 'venvs', '2024-04', 'bin'), { recursive: true });
      writeFileSync(snapshotPython('2024-04'), '');
      const marker = {
        format: 1,
        id: '2024-04',
        requirements: snapshotRequirements(getSnapshot('2024-04')),
        exclude_newer: '2024-04-30T23:59:59Z',
        installed: {},
        installer: 'uv',
        created_at: 'x',
        seconds: 1,
      };
      writeFileSync(join(snapshotVenvDir('2024-04'), READY_MARKER), JSON.stringify(marker));
      assert.equal(isSnapshotVenvReady('2024-04'), true);
      // Installed by uv without the cut-off (before cut-off dates existed): its dependencies may be of any day.
      writeFileSync(join(snapshotVenvDir('2024-04'), READY_MARKER), JSON.stringify({ ...marker, exclude_newer: undefined }));
      assert.equal(isSnapshotVenvReady('2024-04'), false, 'a uv venv without the cut-off is stale');
      writeFileSync(join(snapshotVenvDir('2024-04'), READY_MARKER), JSON.stringify({ ...marker, exclude_newer: '2024-05-31T23:59:59Z' }));
      assert.equal(isSnapshotVenvReady('2024-04'), false, 'another cut-off makes the venv stale');
      // pip has no --exclude-newer: a pip-built venv is judged by its requirements alone.
      writeFileSync(
        join(snapshotVenvDir('2024-04'), READY_MARKER),
        JSON.stringify({ ...marker, installer: 'pip', exclude_newer: undefined }),
      );
      assert.equal(isSnapshotVenvReady('2024-04'), true);
      writeFileSync(join(snapshotVenvDir('2024-04'), READY_MARKER), JSON.stringify({ ...marker, requirements: ['transformers==4.39.0'] }));
      assert.equal(isSnapshotVenvReady('2024-04'), false, 'a changed snapshot definition makes the venv stale');
    } finally {
      if (saved === undefined) delete process.env.FORGEENV_CACHE_DIR;
      else process.env.FORGEENV_CACHE_DIR = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('an installer failure names the requirement it is about', () => {
    const reqs = ['transformers==4.45.0', 'trl==0.10.0', 'huggingface-hub==0.25.0', 'numpy<2'];
    const uv =
      '  × No solution found when resolving dependencies:\n  ╰─▶ Because there is no version of trl==0.10.0 and you require trl==0.10.0, we can conclude that your requirements are unsatisfiable.';
    assert.equal(failedRequirement(uv, reqs), 'trl==0.10.0');
    const pip =
      'ERROR: Could not find a version that satisfies the requirement huggingface_hub==0.25.0 (from versions: 0.24.0)\nERROR: No matching distribution found for huggingface_hub==0.25.0';
    assert.equal(failedRequirement(pip, reqs), 'huggingface-hub==0.25.0');
    assert.equal(failedRequirement('error: Failed to download `numpy`', reqs), 'numpy<2');
    assert.equal(failedRequirement('something unrelated', reqs), undefined);
  });
});

describe('forgeenv snapshots', () => {
  test('build with an unknown name exits 1 and lists the known ids', async () => {
    const out: string[] = [];
    const err: string[] = [];
    assert.equal(
      await runSnapshotsCommand(
        ['build', 'nope'],
        (s) => out.push(s),
        (s) => err.push(s),
      ),
      1,
    );
    assert.match(err.join('\n'), /unknown snapshot nope/);
    for (const id of snapshotIds()) assert.ok(err.join('\n').includes(id), id);
  });

  test('list --json reports every snapshot with its readiness', async () => {
    const out: string[] = [];
    assert.equal(
      await runSnapshotsCommand(
        ['list', '--json'],
        (s) => out.push(s),
        () => undefined,
      ),
      0,
    );
    const rows = JSON.parse(out.join('\n')) as { id: string; venv_ready: boolean; api: boolean }[];
    assert.deepEqual(
      rows.map((r) => r.id),
      snapshotIds(),
    );
    assert.equal(rows.find((r) => r.id === '2024-09')!.api, hasSnapshotApi('2024-09'));
  });
});

// --------------------------------------------------------------------------- recorded API facts

const api = (id: string, pkg: string): PackageApi => loadPackageApi(id, pkg);
const built = (id: string): boolean => hasSnapshotApi(id);
const initParams = (a: PackageApi, key: string): string[] => ((a.objects[key] as ClassInfo).init ?? []).map((p) => p[0]);
const trainingArgs = (id: string): string[] => {
  const a = api(id, 'transformers');
  return initParams(a, a.modules.transformers.names.TrainingArguments);
};

function assertSortedKeys(v: unknown, path: string): void {
  if (Array.isArray(v)) return v.forEach((x, i) => assertSortedKeys(x, `${path}[${i}]`));
  if (v === null || typeof v !== 'object') return;
  const keys = Object.keys(v);
  // JSON.parse puts integer-like keys first whatever the file says; none are expected, but do not judge them.
  if (!keys.some((k) => /^\d+$/.test(k))) {
    const sorted = [...keys].sort();
    assert.deepEqual(keys, sorted, `keys of ${path} are not sorted`);
  }
  for (const k of keys) assertSortedKeys((v as Record<string, unknown>)[k], `${path}.${k}`);
}

describe('recorded API data', () => {
  test('the CI snapshots (2024-09, 2026-11) are built', () => {
    assert.ok(built('2024-09'), 'run: forgeenv snapshots build 2024-09');
    assert.ok(built('2026-11'), 'run: forgeenv snapshots build 2026-11');
  });

  for (const id of snapshotIds()) {
    test(`${id}: every file parses, records the pinned version and has sorted keys`, { skip: !built(id) && 'not built' }, () => {
      for (const [pkg, version] of Object.entries(getSnapshot(id).versions)) {
        const a = api(id, pkg);
        assert.equal(a.package, pkg);
        assert.equal(a.version?.split('+')[0], version, `${id} ${pkg}`);
        assert.ok(a.modules[pkg], `${pkg} top-level module recorded`);
        assertSortedKeys(JSON.parse(readFileSync(snapshotApiFile(id, pkg), 'utf8')), `${id}/${pkg}`);
        for (const [key, obj] of Object.entries(a.objects)) assert.equal(`${obj.module}.${obj.qualname}`, key);
      }
    });
  }

  test(
    'TrainingArguments: eval_strategy from 4.41, evaluation_strategy until 4.46',
    { skip: !(built('2024-09') && built('2026-11')) && 'not built' },
    () => {
      assert.ok(trainingArgs('2024-09').includes('eval_strategy'));
      assert.ok(trainingArgs('2024-09').includes('evaluation_strategy'), '4.45 still accepts the deprecated name');
      assert.ok(trainingArgs('2026-11').includes('eval_strategy'));
      assert.ok(!trainingArgs('2026-11').includes('evaluation_strategy'));
      if (built('2023-12')) {
        assert.ok(trainingArgs('2023-12').includes('evaluation_strategy'));
        assert.ok(!trainingArgs('2023-12').includes('eval_strategy'));
      }
    },
  );

  test(
    'transformers.AdamW exists in 2023-12 and is gone in 2026-11',
    { skip: !(built('2023-12') && built('2026-11')) && 'not built' },
    () => {
      const ref = api('2023-12', 'transformers').modules.transformers.names.AdamW;
      assert.equal(ref, 'transformers.optimization.AdamW');
      assert.equal(api('2023-12', 'transformers').objects[ref].kind, 'class');
      assert.equal(api('2026-11', 'transformers').modules.transformers.names.AdamW, undefined);
    },
  );

  test(
    'decorated functions and module __getattr__ shims are recorded, clock-made defaults are not',
    { skip: !(built('2024-04') && built('2024-09') && built('2025-09')) && 'not built' },
    () => {
      // accelerate's is_*_available are functools.lru_cache wrappers: functions all the same.
      const acc = api('2024-09', 'accelerate');
      const xla = acc.modules['accelerate.utils'].names.is_torch_xla_available;
      assert.ok(xla && acc.objects[xla]?.kind === 'function', `is_torch_xla_available: ${xla}`);
      // peft 0.17 serves PEFT_TYPE_TO_MODEL_MAPPING from a module __getattr__, with a DeprecationWarning.
      const peft = api('2025-09', 'peft');
      assert.equal(peft.modules['peft.peft_model'].names.PEFT_TYPE_TO_MODEL_MAPPING, 'value:dict');
      assert.equal(peft.deprecations['peft.peft_model.PEFT_TYPE_TO_MODEL_MAPPING']?.category, 'DeprecationWarning');
      // transformers 4.40's BenchmarkArguments builds CSV names from time(): recorded as {time}, so rebuilds agree.
      const bench = api('2024-04', 'transformers').objects['transformers.benchmark.benchmark_args_utils.BenchmarkArguments'] as ClassInfo;
      const csv = (bench.init ?? []).find((p) => p[0] === 'inference_time_csv_file');
      assert.equal(csv?.[2], 'inference_time_{time}.csv');
    },
  );

  test(
    'trl.SFTTrainer takes tokenizer= up to trl 0.11 and processing_class= from 0.12',
    { skip: !(built('2024-09') && built('2025-03')) && 'not built' },
    () => {
      const sft = (id: string): string[] => {
        const a = api(id, 'trl');
        return initParams(a, a.modules.trl.names.SFTTrainer);
      };
      assert.ok(sft('2024-09').includes('tokenizer'));
      assert.ok(!sft('2024-09').includes('processing_class'));
      assert.ok(sft('2025-03').includes('processing_class'));
      assert.ok(!sft('2025-03').includes('tokenizer'));
    },
  );

  test('lazy modules and their missing-attribute error', { skip: !built('2024-09') && 'not built' }, () => {
    const t = api('2024-09', 'transformers').modules.transformers;
    assert.equal(t.lazy, true);
    assert.match(t.missing_getattr ?? '', /^AttributeError: .*\{name\}/);
    assert.equal(api('2024-09', 'torch').modules['torch.nn'].lazy, false);
    const trainer = api('2024-09', 'trl').modules.trl.names.SFTTrainer;
    assert.equal(api('2024-09', 'trl').objects[trainer].kind, 'class', 'trl.SFTTrainer imports in its venv');
  });

  test('2024-09 deprecations come from running the drift catalog probes', { skip: !built('2024-09') && 'not built' }, (t) => {
    const deps = api('2024-09', 'transformers').deprecations;
    if (Object.keys(deps).length === 0) return t.skip('built without the probe runner');
    const d = deps['transformers.TrainingArguments(evaluation_strategy=)'];
    assert.ok(d, 'evaluation_strategy warns in 4.45');
    assert.match(d.message, /eval_strategy/);
  });
});

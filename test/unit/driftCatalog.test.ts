import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { runFidelityCommand } from '../../src/cli/fidelity';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  apiKeyName,
  DRIFT_LIBRARIES,
  findDriftEntry,
  isTrustedSourceUrl,
  loadDriftCatalog,
  migrationHintFor,
  probeRunnerPath,
  parseDriftCatalog,
  type DriftEntry,
} from '../../src/env/fidelity/catalog';
import { realValidity, runFidelity, summarise, venvUsable, type EntryResult } from '../../src/env/fidelity/harness';
import { compareOutcomes, normaliseMessage, type ProbeOutcome } from '../../src/env/fidelity/outcomes';
import { snapshotPairFor } from '../../src/env/fidelity/pairs';
import { runProbes, type ProbeRunner } from '../../src/env/fidelity/probeRun';
import { getSnapshot, type Snapshot } from '../../src/env/snapshots/registry';

const catalog = loadDriftCatalog();

const entry = (over: Partial<DriftEntry> = {}): DriftEntry => ({
  id: 'x-kw',
  library: 'transformers',
  kind: 'renamed_kwarg',
  api: 'transformers.TrainingArguments(evaluation_strategy=)',
  deprecated_in: '4.41.0',
  changed_in: '4.46.0',
  expect_after: 'error',
  source: { type: 'pr', url: 'https://github.com/huggingface/transformers/pull/1', title: 't' },
  old: 'a = 1\n',
  new: 'a = 2\n',
  note: 'use eval_strategy',
  ...over,
});

const outcome = (over: Partial<ProbeOutcome> = {}): ProbeOutcome => ({
  id: 'x-kw',
  form: 'old',
  status: 'ok',
  exc_type: null,
  message: null,
  warnings: [],
  ...over,
});
const raised = (exc_type: string, message: string, over: Partial<ProbeOutcome> = {}) =>
  outcome({ status: 'raised', exc_type, message, ...over });

describe('the shipped drift catalog', () => {
  test('has at least 60 entries with unique ids over at least 6 libraries', () => {
    assert.ok(catalog.entries.length >= 60, `only ${catalog.entries.length} entries`);
    assert.equal(new Set(catalog.entries.map((e) => e.id)).size, catalog.entries.length);
    const libs = new Set(catalog.entries.map((e) => e.library));
    assert.ok(libs.size >= 6, `libraries: ${[...libs].join(', ')}`);
    for (const l of libs) assert.ok((DRIFT_LIBRARIES as readonly string[]).includes(l));
  });

  test('every source is an https URL on the libraries’ own GitHub or documentation', () => {
    for (const e of catalog.entries) {
      assert.match(e.source.url, /^https:\/\/(github\.com\/huggingface\/[\w.-]+\/|huggingface\.co\/docs\/)/, e.id);
      assert.ok(isTrustedSourceUrl(e.source.url), e.id);
    }
  });

  test('every probe parses as Python', () => {
    const probes = Object.fromEntries(
      catalog.entries.flatMap((e) => [
        [`${e.id}:old`, e.old],
        [`${e.id}:new`, e.new],
      ]),
    );
    const code =
      'import ast, json, sys\nbad = []\nfor k, src in json.load(sys.stdin).items():\n    try: ast.parse(src)\n    except SyntaxError as e: bad.append(f"{k}: {e}")\nprint(json.dumps(bad))';
    const r = spawnSync('python3', ['-c', code], { input: JSON.stringify(probes), encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), []);
  });
});

describe('catalog validation', () => {
  const text = (entries: unknown[]) => JSON.stringify({ format: 1, entries });
  test('accepts a well-formed entry', () => {
    assert.equal(parseDriftCatalog(text([entry()])).entries.length, 1);
  });
  test('rejects duplicate ids, foreign or plain-http sources, and deprecated_in after changed_in', () => {
    assert.throws(() => parseDriftCatalog(text([entry(), entry()])), /duplicate id x-kw/);
    assert.throws(
      () => parseDriftCatalog(text([entry({ source: { type: 'pr', url: 'http://github.com/huggingface/x/pull/1', title: 't' } })])),
      /source\.url/,
    );
    assert.throws(
      () => parseDriftCatalog(text([entry({ source: { type: 'pr', url: 'https://example.com/huggingface/x', title: 't' } })])),
      /source\.url/,
    );
    assert.throws(() => parseDriftCatalog(text([entry({ deprecated_in: '4.47.0' })])), /after changed_in/);
  });
  test('trusted hosts', () => {
    assert.equal(isTrustedSourceUrl('https://huggingface.co/docs/transformers/main/en/migration'), true);
    assert.equal(isTrustedSourceUrl('https://huggingface.co/models'), false);
    assert.equal(isTrustedSourceUrl('https://github.com/someone/transformers/pull/1'), false);
  });
});

describe('outcome normalisation and comparison', () => {
  test('paths into a venv and into simlibs normalise alike, as do memory addresses', () => {
    const real =
      "cannot import name 'AdamW' from 'transformers' (/root/.cache/forgeenv/venvs/2025-03/lib/python3.11/site-packages/transformers/__init__.py)";
    const sim = "cannot import name 'AdamW' from 'transformers' (/work/main/resources/simlibs/transformers/__init__.py)";
    assert.equal(normaliseMessage(real), normaliseMessage(sim));
    assert.equal(normaliseMessage('<object at 0x7f3a2b>'), normaliseMessage('<object at 0xdeadbeef>'));
    assert.notEqual(normaliseMessage(real), normaliseMessage(sim.replace('AdamW', 'Adam')));
  });
  test('reports the first difference', () => {
    const a = raised('TypeError', "f() got an unexpected keyword argument 'x'");
    assert.equal(compareOutcomes(a, { ...a }), undefined);
    assert.equal(compareOutcomes(a, outcome()), 'status');
    assert.equal(compareOutcomes(a, raised('ValueError', a.message!)), 'exc_type');
    assert.equal(compareOutcomes(a, raised('TypeError', "f() got an unexpected keyword argument 'y'")), 'message');
    const w = (m: string) => outcome({ status: 'warned', warnings: [{ category: 'FutureWarning', message: m }] });
    assert.equal(compareOutcomes(w('deprecated'), w('deprecated')), undefined);
    assert.equal(compareOutcomes(w('deprecated'), w('removed soon')), 'warnings');
  });
});

describe('real-mode validity', () => {
  const err = raised('TypeError', 'unexpected keyword');
  test('an error drift: old works before, new works after, old raises after', () => {
    assert.equal(realValidity(entry(), { 'before.old': outcome(), 'after.old': err, 'after.new': outcome() }).validity, 'valid');
    // a deprecation warning before the removal is fine for an error drift
    const warned = outcome({ status: 'warned', warnings: [{ category: 'FutureWarning', message: 'deprecated' }] });
    assert.equal(realValidity(entry(), { 'before.old': warned, 'after.old': err, 'after.new': outcome() }).validity, 'valid');
  });
  test('flags each broken expectation', () => {
    const r = realValidity(entry(), { 'before.old': err, 'after.old': outcome(), 'after.new': err });
    assert.equal(r.validity, 'invalid');
    assert.equal(r.problems.length, 3);
    assert.equal(realValidity(entry(), { 'before.old': outcome() }).validity, 'unchecked');
  });
  test('both forms failing alike in one snapshot is the environment, not the entry', () => {
    const broken = raised('ImportError', 'pyarrow requires NumPy 2.0 or newer, found 1.26.4');
    const r = realValidity(entry(), {
      'before.old': broken,
      'before.new': { ...broken, form: 'new' },
      'after.old': err,
      'after.new': outcome(),
    });
    assert.equal(r.validity, 'unchecked');
    assert.match(r.problems[0], /^environment: both forms fail before/);
    // a new form that merely does not exist yet fails differently: still a checkable entry
    const r2 = realValidity(entry(), {
      'before.old': broken,
      'before.new': raised('TypeError', 'x', { form: 'new' }),
      'after.old': err,
      'after.new': outcome(),
    });
    assert.equal(r2.validity, 'invalid');
  });
  test('an addition: the new form fails before the change and works after', () => {
    const added = entry({ kind: 'added' });
    const missing = raised('TypeError', "unexpected keyword argument 'use_dora'", { form: 'new' });
    const ok = (form: 'old' | 'new') => outcome({ form });
    assert.equal(realValidity(added, { 'before.old': ok('old'), 'before.new': missing, 'after.new': ok('new') }).validity, 'valid');
    const early = realValidity(added, { 'before.old': ok('old'), 'before.new': ok('new'), 'after.new': ok('new') });
    assert.deepEqual([early.validity, early.problems], ['invalid', ['new form already ok before the change']]);
    assert.equal(realValidity(added, { 'before.old': ok('old'), 'before.new': missing, 'after.new': missing }).validity, 'invalid');
    assert.equal(realValidity(added, { 'before.old': ok('old'), 'after.new': ok('new') }).validity, 'unchecked');
  });
  test('a warning drift must not warn before and must warn after', () => {
    const warned = outcome({ status: 'warned', warnings: [{ category: 'FutureWarning', message: 'x' }] });
    const w = entry({ expect_after: 'warning' });
    assert.equal(realValidity(w, { 'before.old': outcome(), 'after.old': warned, 'after.new': outcome() }).validity, 'valid');
    assert.equal(realValidity(w, { 'before.old': warned, 'after.old': warned, 'after.new': outcome() }).validity, 'invalid');
    assert.equal(realValidity(w, { 'before.old': outcome(), 'after.old': err, 'after.new': outcome() }).validity, 'invalid');
  });
});

const snap = (id: string, transformers: string): Snapshot => ({
  id,
  date: id,
  cutoff: `${id}-28`,
  versions: { transformers },
  extra_requirements: [],
});
const SNAPS = [snap('2024-04', '4.40.0'), snap('2024-09', '4.45.0'), snap('2025-03', '4.50.0')];

describe('snapshot pairs', () => {
  test('last snapshot before changed_in and first at or after it', () => {
    assert.deepEqual(snapshotPairFor({ library: 'transformers', changed_in: '4.46.0' }, SNAPS), { before: '2024-09', after: '2025-03' });
    assert.deepEqual(snapshotPairFor({ library: 'transformers', changed_in: '4.45.0' }, SNAPS), { before: '2024-04', after: '2024-09' });
    assert.deepEqual(snapshotPairFor({ library: 'transformers', changed_in: '4.10.0' }, SNAPS), { after: '2024-04' });
    assert.deepEqual(snapshotPairFor({ library: 'peft', changed_in: '0.10.0' }, SNAPS), {});
  });
});

describe('summaries', () => {
  test('tallies agreement over valid entries and groups disagreements into patterns', () => {
    const ok = outcome();
    const te = raised('TypeError', 'x');
    const mk = (id: string, library: string, validity: EntryResult['validity'], simAfterOld: ProbeOutcome): EntryResult => ({
      id,
      library,
      kind: 'renamed_kwarg',
      expect_after: 'error',
      changed_in: '1.0.0',
      before: 'a',
      after: 'b',
      validity,
      problems: [],
      runs: [
        { slot: 'before.old', snapshot: 'a', form: 'old', real: ok, sim: ok, mismatch: null },
        { slot: 'after.old', snapshot: 'b', form: 'old', real: te, sim: simAfterOld, mismatch: compareOutcomes(te, simAfterOld) ?? null },
      ],
    });
    const s = summarise([
      mk('e1', 'trl', 'valid', te),
      mk('e2', 'trl', 'valid', raised('ModuleNotFoundError', "No module named 'trl'")),
      mk('e3', 'peft', 'valid', raised('ModuleNotFoundError', "No module named 'peft'")),
      mk('e4', 'peft', 'invalid', ok),
    ]);
    assert.deepEqual([s.overall.entries, s.overall.valid, s.overall.invalid], [4, 3, 1]);
    assert.deepEqual([s.overall.runs_agree, s.overall.runs_compared], [4, 6]);
    assert.deepEqual([s.overall.entries_agree, s.overall.entries_compared], [1, 3]);
    assert.deepEqual([s.by_library.trl.runs_agree, s.by_library.trl.runs_compared], [3, 4]);
    assert.equal(s.disagreements.length, 2);
    assert.equal(s.patterns[0].pattern, 'exc_type: real raised TypeError / sim raised ModuleNotFoundError');
    assert.equal(s.patterns[0].count, 2);
  });
});

describe('migration hints', () => {
  test('by drift id, by api and by a primitive spec’s parameters', () => {
    const e = catalog.entries.find((x) => x.id === 'transformers-trainingargs-evaluation-strategy')!;
    assert.ok(e);
    assert.equal(migrationHintFor({ drift_id: e.id }), e.note);
    assert.equal(migrationHintFor(e.api), e.note);
    assert.equal(
      migrationHintFor({ primitive_type: 'RenameApiCall', params: { old_name: 'evaluation_strategy', new_name: 'eval_strategy' } }),
      e.note,
    );
    assert.equal(migrationHintFor({ primitive_type: 'RenameApiCall', params: { old_name: 'no_such_api_name', new_name: 'x' } }), undefined);
    assert.equal(migrationHintFor('not-an-entry'), undefined);
    assert.equal(apiKeyName('datasets.load_dataset(use_auth_token=)'), 'use_auth_token');
    assert.equal(apiKeyName('trl.DataCollatorForCompletionOnlyLM'), 'DataCollatorForCompletionOnlyLM');
    // a name shared by several entries is ambiguous: no hint rather than a wrong one
    assert.equal(findDriftEntry({ params: { old_name: 'use_auth_token' } }), undefined);
  });
});

describe('runFidelity with a stand-in runner', () => {
  test('compares both modes and serves real outcomes from the cache on the second run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fid-test-'));
    try {
      const catalogPath = join(dir, 'catalog.json');
      writeFileSync(catalogPath, JSON.stringify({ format: 1, entries: [entry()] }));
      const calls: string[] = [];
      // "real" = a venv python path, "sim" = python3: the real side raises after the change, the sim side does not.
      const runner: ProbeRunner = async (req) => {
        const mode = req.mode === 'simulated' ? 'sim' : 'real';
        const snapshot = req.snapshot.id;
        calls.push(`${mode}:${snapshot}`);
        const after = snapshot === '2025-03';
        const results = req.ids.flatMap((id) => [
          after && mode === 'real' ? raised('TypeError', 'gone', { id, form: 'old' }) : outcome({ id, form: 'old' }),
          outcome({ id, form: 'new' }),
        ]);
        return { format: 1, python: '3.11', versions: {}, results, runtime: mode === 'real' ? 'warm' : 'cold' };
      };
      const opts = {
        catalogPath,
        runner,
        snapshotList: SNAPS,
        venvReady: () => true,
        venvPython: (id: string) => `${id}/bin/python`,
        cacheDir: join(dir, 'cache'),
      };
      const r1 = await runFidelity(opts);
      assert.equal(r1.entries[0].validity, 'valid');
      assert.deepEqual([r1.overall.runs_agree, r1.overall.runs_compared], [3, 4]);
      assert.equal(r1.disagreements[0].slot, 'after.old');
      assert.deepEqual(calls.sort(), ['real:2024-09', 'real:2025-03', 'sim:2024-09', 'sim:2025-03']);
      // Which runtime ran each probe run (FORGEENV_WARM), per snapshot and side; the cache says none.
      assert.deepEqual(
        [...r1.real_snapshots, ...r1.sim_snapshots].map((s) => `${s.state} ${s.runtime}`),
        ['ran warm', 'ran warm', 'ran cold', 'ran cold'],
      );
      calls.length = 0;
      const r2 = await runFidelity(opts);
      assert.deepEqual(calls.sort(), ['sim:2024-09', 'sim:2025-03']);
      assert.deepEqual(
        r2.real_snapshots.map((s) => [s.state, s.runtime]),
        [
          ['cached', undefined],
          ['cached', undefined],
        ],
      );
      assert.deepEqual(r2.overall, r1.overall);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the probe runner runs like every other script', () => {
  test('in a fresh run folder with a clean environment: no secret, HOME is the run folder, the catalog a copy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fid-sandbox-'));
    const saved = process.env.HF_TOKEN;
    process.env.HF_TOKEN = 'hf_secret_never_seen_by_probes';
    try {
      const catalogPath = join(dir, 'catalog.json');
      const probe =
        "import os\nassert 'HF_TOKEN' not in os.environ, 'secret leaked'\nassert os.environ['HOME'] != " +
        JSON.stringify(process.env.HOME ?? '') +
        ", 'host HOME'\nassert os.path.abspath('../catalog.json') != " +
        JSON.stringify(catalogPath) +
        '\n';
      writeFileSync(
        catalogPath,
        JSON.stringify({ format: 1, entries: [entry({ old: probe, new: 'raise ValueError("new form ran")\n' })] }),
      );
      const snap = getSnapshot('2025-03');
      const file = await runProbes({
        python: 'python3',
        runnerPath: probeRunnerPath(),
        catalogPath,
        ids: ['x-kw'],
        mode: 'simulated',
        snapshot: snap,
        timeoutMs: 120_000,
      });
      const old = file.results.find((r) => r.form === 'old')!;
      assert.equal(old.status, 'ok', `${old.exc_type}: ${old.message}`);
      const neu = file.results.find((r) => r.form === 'new')!;
      assert.equal(neu.status, 'raised', 'the runner really ran the probes');
      assert.equal(file.versions.transformers, snap.versions.transformers, 'simulated libraries at the snapshot');
      // Many entries (their ids together far beyond a run argument's cap): all run, only those asked.
      const many = Array.from({ length: 200 }, (_, i) => entry({ id: `entry-with-a-long-enough-id-${String(i).padStart(3, '0')}` }));
      writeFileSync(catalogPath, JSON.stringify({ format: 1, entries: many }));
      const asked = many.slice(0, 150).map((e) => e.id);
      const all = await runProbes({
        python: 'python3',
        runnerPath: probeRunnerPath(),
        catalogPath,
        ids: asked,
        forms: ['old'],
        mode: 'simulated',
        snapshot: snap,
        timeoutMs: 300_000,
      });
      assert.deepEqual(
        all.results.map((r) => r.id),
        asked,
      );
    } finally {
      if (saved === undefined) delete process.env.HF_TOKEN;
      else process.env.HF_TOKEN = saved;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('runFidelity once a venv is deleted', () => {
  test("real outcomes recorded from exactly the snapshot's releases are still used; other releases are not", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fid-gone-'));
    try {
      const catalogPath = join(dir, 'catalog.json');
      writeFileSync(catalogPath, JSON.stringify({ format: 1, entries: [entry()] }));
      const runner: ProbeRunner = async (req) => {
        const snapshot = req.python.split('/')[0];
        const results = req.ids.flatMap((id) => [
          snapshot === '2025-03' ? raised('TypeError', 'gone', { id, form: 'old' }) : outcome({ id, form: 'old' }),
          outcome({ id, form: 'new' }),
        ]);
        // The probe runner reports what is installed; torch carries a local label the pins do not.
        const versions = { transformers: SNAPS.find((x) => x.id === snapshot)!.versions.transformers, torch: '2.6.0+cu124' };
        return { format: 1, python: '3.11', versions, results };
      };
      const base = { catalogPath, runner, sim: false, venvPython: (id: string) => `${id}/bin/python`, cacheDir: join(dir, 'cache') };
      await runFidelity({ ...base, snapshotList: SNAPS, venvReady: () => true });
      const gone = await runFidelity({
        ...base,
        snapshotList: SNAPS,
        venvReady: () => false,
        runner: async () => assert.fail('no venv: nothing may run'),
      });
      assert.deepEqual(
        gone.real_snapshots.map((s) => s.state),
        ['cached', 'cached'],
      );
      assert.equal(gone.entries[0].validity, 'valid');
      // The snapshot's pins changed since: its old outcomes say nothing about the new releases.
      const repinned = SNAPS.map((x) => (x.id === '2025-03' ? { ...x, versions: { transformers: '4.50.3' } } : x));
      const stale = await runFidelity({ ...base, snapshotList: repinned, venvReady: () => false });
      assert.deepEqual(
        stale.real_snapshots.map((s) => `${s.id}:${s.state}`),
        ['2024-09:cached', '2025-03:no-venv'],
      );
      assert.equal(stale.entries[0].validity, 'unchecked');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('real mode on the snapshot venvs', () => {
  // Two cheap entries whose snapshots bracket a real change (tokenizers 0.15 → 0.19, hub 0.34 → 1.x).
  const ids = ['tokenizers-metaspace-pretokenizer-add-prefix-space', 'huggingface-hub-hffolder-removed'];
  const needed = ['2023-12', '2024-04', '2025-09', '2026-03', '2026-11'];
  const missing = needed.filter((id) => !venvUsable(getSnapshot(id)));
  test(
    'the drift shows in the real releases',
    { skip: missing.length ? `snapshot venvs not built: ${missing.join(', ')} (forgeenv snapshots build)` : false },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'forgeenv-fid-real-'));
      try {
        const r = await runFidelity({ ids, sim: false, cacheDir: dir });
        for (const e of r.entries) assert.equal(e.validity, 'valid', `${e.id}: ${e.problems.join('; ')}`);
        const after = r.entries.find((e) => e.id === ids[1])!.runs.find((x) => x.slot === 'after.old')!.real!;
        assert.equal(after.exc_type, 'ImportError');
        assert.match(after.message!, /HfFolder/);
        // The real outcomes are cached per snapshot that ran them (the first release after the change: 2026-03 or later).
        const cached = readdirSync(dir).filter((f) => f.startsWith('real-') && f.endsWith(`-${r.catalog_hash}.json`));
        assert.ok(
          cached.some((f) => readFileSync(join(dir, f), 'utf8').includes('HfFolder')),
          cached.join(', '),
        );
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
});

describe('forgeenv fidelity (command line)', () => {
  test('usage errors exit 2, --help exits 0, an unknown id fails with 1', async () => {
    const lines: string[] = [];
    const out = (x: string) => lines.push(x);
    assert.equal(await runFidelityCommand(['--library', 'nope'], out, out), 2);
    assert.match(lines.join('\n'), /unknown library "nope"/);
    assert.equal(await runFidelityCommand(['--bogus'], out, out), 2);
    assert.equal(await runFidelityCommand(['--help'], out, out), 0);
    lines.length = 0;
    assert.equal(await runFidelityCommand(['--ids', 'no-such-drift', '--no-real'], out, out), 1);
    assert.match(lines.join('\n'), /unknown drift ids: no-such-drift/);
  });
});

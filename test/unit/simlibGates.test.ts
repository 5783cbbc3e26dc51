// Every version gate in the stand-ins names a drift catalog entry and takes its boundary from the
// catalog's data (resources/drifts/catalog.json via _forgeenv_sim/versions.py), never a literal version.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { simlibsDir } from '../../src/env/paths';
import { catalogPath } from '../../src/env/drift/catalog';
import { loadDriftCatalog } from '../../src/env/fidelity/catalog';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function pythonFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return name === '__pycache__' ? [] : pythonFiles(p);
    return name.endsWith('.py') ? [p] : [];
  });
}

const SOURCES = pythonFiles(simlibsDir()).map((path) => ({ path: relative(simlibsDir(), path), text: readFileSync(path, 'utf8') }));
const CATALOG = new Map(loadDriftCatalog(catalogPath()).entries.map((e) => [e.id, e]));

/** `at_least("lib", "4.46")` / `below("lib", "4.46")`: a boundary written in the code instead of the catalog. */
const LITERAL_GATE = /\b(?:at_least|below)\(\s*["'][\w-]+["']\s*,\s*["']\d[\d.]*["']\s*\)/g;
const NAMED_GATE = /\b(changed|deprecated)\(\s*["']([^"']+)["']\s*\)/g;
/** trl's name table: `"Name": ("added-id" | None, "removed-id" | None, module, attribute)`. */
const TABLE_GATE = /^\s*"\w+":\s*\((None|"[^"]+"),\s*(None|"[^"]+"),/gm;

function namedGates(): { file: string; form: 'changed' | 'deprecated'; id: string }[] {
  return SOURCES.flatMap(({ path, text }) => [
    ...[...text.matchAll(NAMED_GATE)].map((m) => ({ file: path, form: m[1] as 'changed' | 'deprecated', id: m[2] })),
    ...[...text.matchAll(TABLE_GATE)].flatMap((m) =>
      [m[1], m[2]].filter((g) => g !== 'None').map((g) => ({ file: path, form: 'changed' as const, id: g.slice(1, -1) })),
    ),
  ]);
}

function python(code: string, versions: Record<string, string>, extra: Record<string, string> = {}) {
  const cwd = mkdtempSync(join(tmpdir(), 'forgeenv-gates-'));
  dirs.push(cwd);
  const r = spawnSync('python3', ['-c', code], {
    cwd,
    encoding: 'utf8',
    timeout: 20_000,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      PYTHONPATH: simlibsDir(),
      FORGEENV_LIBRARY_VERSIONS: JSON.stringify(versions),
      PYTHONDONTWRITEBYTECODE: '1',
      ...extra,
    },
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

describe('stand-in version gates name catalog entries', () => {
  test('no gate in resources/simlibs has a literal version', () => {
    const literal = SOURCES.flatMap(({ path, text }) => [...text.matchAll(LITERAL_GATE)].map((m) => `${path}: ${m[0]}`));
    assert.deepEqual(literal, [], 'gate on _v.changed("<catalog id>") / _v.deprecated("<catalog id>") instead');
  });

  test('the scan sees the gates (a regression guard for the patterns above)', () => {
    assert.equal([...'_v.at_least("transformers", "4.46")'.matchAll(LITERAL_GATE)].length, 1);
    assert.equal([..."if not _v.below('trl', '0.22'):".matchAll(LITERAL_GATE)].length, 1);
    const gates = namedGates();
    assert.ok(gates.length >= 60, `only ${gates.length} named gates found`);
    assert.ok(
      gates.some((g) => g.file.startsWith('trl') && g.id === 'trl-online-dpo-moved-to-experimental'),
      'trl name table read',
    );
  });

  test('every named gate exists in the catalog; deprecated() gates have deprecated_in', () => {
    const problems = namedGates().flatMap((g) => {
      const e = CATALOG.get(g.id);
      if (!e) return [`${g.file}: ${g.form}("${g.id}") names no catalog entry`];
      if (g.form === 'deprecated' && !e.deprecated_in) return [`${g.file}: deprecated("${g.id}") but the entry has no deprecated_in`];
      return [];
    });
    assert.deepEqual(problems, []);
  });

  test('a gate reads its boundary from the catalog entry', () => {
    const e = CATALOG.get('transformers-trainingargs-evaluation-strategy')!;
    const code =
      'from _forgeenv_sim import versions as v\nprint(v.changed("transformers-trainingargs-evaluation-strategy"), v.deprecated("transformers-trainingargs-evaluation-strategy"))';
    const before = python(code, { transformers: e.deprecated_in! });
    assert.equal(before.stdout.trim(), 'False True', before.stderr);
    assert.equal(python(code, { transformers: e.changed_in }).stdout.trim(), 'True True');
    assert.equal(python(code, { transformers: '4.40.0' }).stdout.trim(), 'False False');
  });

  test('moving a boundary in the catalog moves the stand-in (FORGEENV_DRIFT_CATALOG)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-gates-cat-'));
    dirs.push(dir);
    const data = JSON.parse(readFileSync(catalogPath(), 'utf8')) as { entries: { id: string; changed_in: string }[] };
    data.entries.find((x) => x.id === 'transformers-trainingargs-evaluation-strategy')!.changed_in = '4.0.0';
    const moved = join(dir, 'catalog.json');
    writeFileSync(moved, JSON.stringify(data));
    const code =
      "from transformers import TrainingArguments\nTrainingArguments(output_dir='out', evaluation_strategy='steps', report_to=[])\nprint('ACCEPTED')";
    // No recorded API for this snapshot id: the stand-in's own gate decides, not the surface layer.
    const noSurface = { FORGEENV_SNAPSHOT: 'no-such-snapshot' };
    const shipped = python(code, { transformers: '4.50.3' }, noSurface);
    assert.match(shipped.stdout, /ACCEPTED/, shipped.stderr);
    const r = python(code, { transformers: '4.50.3' }, { ...noSurface, FORGEENV_DRIFT_CATALOG: moved });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /TypeError: .*evaluation_strategy/);
  });

  test('an unknown id is a clear error', () => {
    const r = python('from _forgeenv_sim import versions as v\nv.changed("no-such-drift")', { transformers: '4.50.3' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /drift catalog has no entry 'no-such-drift'/);
  });
});

describe('drift facts come from the catalog', () => {
  test('the drift table takes every linked version from its catalog entry', async () => {
    const { DRIFT_TABLE } = await import('../../src/env/drift/driftTable');
    const linked = DRIFT_TABLE.filter((d) => d.catalogId);
    assert.ok(linked.length >= 30, `only ${linked.length} linked entries`);
    for (const d of linked) {
      const c = CATALOG.get(d.catalogId!)!;
      assert.ok([c.changed_in, c.deprecated_in].includes(d.changedIn), `${d.id}: ${d.changedIn} is not a version of ${c.id}`);
      const gate = d.rejectedWhen;
      if (gate && gate !== 'always') assert.equal(gate.atLeast ?? gate.below, d.changedIn, d.id);
    }
    const evalStrategy = DRIFT_TABLE.find((d) => d.id === 'evaluation-strategy:TrainingArguments')!;
    assert.deepEqual(evalStrategy.rejectedWhen, {
      library: 'transformers',
      atLeast: CATALOG.get('transformers-trainingargs-evaluation-strategy')!.changed_in,
    });
  });

  test("the lab's known changes state the catalog's versions", async () => {
    const { KNOWN_CHANGES } = await import('../../src/editor/lab/core/knownChanges');
    const e = CATALOG.get('transformers-trainingargs-evaluation-strategy')!;
    const known = KNOWN_CHANGES.find((k) => k.names.includes('evaluation_strategy'))!;
    assert.equal(known.when, `${e.deprecated_in} deprecated; ${e.changed_in} removed`);
  });
});

// Snapshots dated right: pins computed from cut-off dates (`uv pip compile --exclude-newer`), none
// newer than the cut-off, none more than one minor release stale. The judge reads PyPI's upload dates
// from resources/snapshots/pypi-release-dates.json (fetched from PyPI, refreshed by
// `forgeenv snapshots dating --refresh`); the live tests re-ask PyPI and uv and skip when offline.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';
import { runSnapshotsCommand } from '../../src/cli/snapshots';
import { checkSnapshotDating, fetchReleaseDates, loadReleaseDates, releaseDatesOf } from '../../src/env/snapshots/dating';
import {
  computePins,
  parseCompiled,
  pinCompileArgs,
  pinInputs,
  TRACKED_LIBRARIES,
  trackedPins,
  withPins,
} from '../../src/env/snapshots/pin';
import { allSnapshots, excludeNewerOf, getSnapshot, parseSnapshotsFile, snapshotsFile } from '../../src/env/snapshots/registry';

const dates = loadReleaseDates();

describe('snapshot dating against PyPI upload dates', () => {
  test('every shipped snapshot: nothing uploaded after its cut-off, nothing more than one minor release stale', () => {
    for (const s of allSnapshots()) {
      const r = checkSnapshotDating(s, dates);
      assert.deepEqual(
        r.libraries.flatMap((l) => l.problems),
        [],
        s.id,
      );
      for (const l of r.libraries) {
        assert.ok(l.uploaded && l.uploaded.slice(0, 10) <= s.cutoff, `${s.id} ${l.library} ${l.pinned} uploaded ${l.uploaded}`);
        assert.ok(l.minorsBehind <= 1, `${s.id} ${l.library}`);
      }
    }
  });

  test('the pins measured wrong before cut-off dates existed are caught', () => {
    const at = (id: string, versions: Record<string, string>) =>
      checkSnapshotDating({ id, cutoff: getSnapshot(id).cutoff, versions }, dates);
    // 2023-06 pinned trl 0.4.7, uploaded in July 2023.
    const june = at('2023-06', { trl: '0.4.7' });
    assert.equal(june.ok, false);
    assert.match(june.libraries[0].problems[0], /trl 0\.4\.7 was uploaded 2023-07-\d\d, after the cut-off 2023-06-30/);
    // 2025-03 pinned trl 0.12.0 and datasets 3.2.0 beside March-2025 transformers.
    const march = at('2025-03', { trl: '0.12.0', datasets: '3.2.0', transformers: '4.50.0' });
    const by = Object.fromEntries(march.libraries.map((l) => [l.library, l]));
    assert.equal(by.trl.minorsBehind, 4);
    assert.match(by.trl.problems[0], /0\.13, 0\.14, 0\.15, 0\.16/);
    assert.equal(by.datasets.minorsBehind, 3);
    assert.deepEqual(by.transformers.problems, []);
    // 2023-12's datasets 2.14.0: 2.15 and 2.16 were out by the end of December.
    assert.equal(at('2023-12', { datasets: '2.14.0' }).libraries[0].minorsBehind, 2);
    // One minor behind is tolerated (the resolver may hold a library back for a dependency).
    assert.equal(at('2024-04', { torch: '2.2.0' }).ok, true);
    assert.equal(at('2024-04', { torch: '2.1.0' }).ok, false);
  });

  test('a version PyPI does not have is a problem, not a crash', () => {
    const r = checkSnapshotDating({ id: '2024-09', cutoff: '2024-09-30', versions: { trl: '0.10.0', nosuchlib: '1.0' } }, dates);
    assert.match(r.libraries[0].problems.join(), /trl 0\.10\.0 is not a final release on PyPI/);
    assert.match(r.libraries[1].problems.join(), /no release dates for nosuchlib/);
  });

  test('release dates: final releases only, first non-yanked upload, yanked-only releases dropped', () => {
    const file = (t: string, yanked = false) => ({ upload_time_iso_8601: t, yanked });
    const got = releaseDatesOf({
      releases: {
        '1.2.0': [file('2024-01-05T10:00:00Z'), file('2024-01-03T09:00:00.123456Z')],
        '1.3.0rc1': [file('2024-02-01T00:00:00Z')],
        '1.3.0': [file('2024-03-01T00:00:00Z', true)],
        '1.10.0': [file('2024-04-01T00:00:00Z')],
        '1.4.0': [],
      },
    });
    assert.deepEqual(got, { '1.2.0': '2024-01-03T09:00:00.123Z', '1.10.0': '2024-04-01T00:00:00.000Z' });
    assert.deepEqual(Object.keys(got), ['1.2.0', '1.10.0']); // numeric order
    assert.throws(() => releaseDatesOf({ releases: { '1.0': [{ yanked: false }] } }));
  });

  test('live: the cached upload dates agree with PyPI today (skips offline)', async (t) => {
    let live;
    try {
      live = await fetchReleaseDates(['trl'], (url, init) => fetch(url, { ...init, signal: AbortSignal.timeout(15_000) }));
    } catch (e) {
      t.skip(`PyPI unreachable: ${(e as Error).message}`);
      return;
    }
    const cached = dates.packages.trl;
    for (const [v, at] of Object.entries(cached)) if (live.packages.trl[v]) assert.equal(live.packages.trl[v], at, `trl ${v}`);
    assert.ok(Object.keys(cached).length > 50);
  });
});

describe('pins computed from the cut-off', () => {
  test('cut-off: an ISO date inside the snapshot month; uv excludes everything after that day (UTC)', () => {
    const one = (cutoff: unknown) =>
      JSON.stringify({ format: 1, python: '3.11', snapshots: [{ id: '2024-04', date: '2024-04', cutoff, versions: { torch: '2.3.0' } }] });
    assert.equal(parseSnapshotsFile(one('2024-04-30')).snapshots[0].cutoff, '2024-04-30');
    assert.throws(() => parseSnapshotsFile(one('2024-05-31')), /cutoff 2024-05-31 is not in the month 2024-04/);
    assert.throws(() => parseSnapshotsFile(one('2024-04-31')), /not a calendar date/);
    assert.throws(() => parseSnapshotsFile(one('April')), /an ISO date/);
    assert.throws(
      () =>
        parseSnapshotsFile(JSON.stringify({ format: 1, python: '3.11', snapshots: [{ id: '2024-04', date: '2024-04', versions: {} }] })),
      /cutoff/,
    );
    assert.equal(excludeNewerOf({ cutoff: '2025-03-31' }), '2025-03-31T23:59:59Z');
  });

  test('the compile command: stdin inputs, the cut-off, Python, Linux x86-64, wheels only', () => {
    const s = getSnapshot('2023-06');
    const args = pinCompileArgs(s, '3.11');
    assert.deepEqual(args.slice(0, 3), ['pip', 'compile', '-']);
    assert.equal(args[args.indexOf('--exclude-newer') + 1], '2023-06-30T23:59:59Z');
    assert.equal(args[args.indexOf('--python-version') + 1], '3.11');
    assert.equal(args[args.indexOf('--only-binary') + 1], ':all:');
    const inputs = pinInputs(s);
    assert.deepEqual(inputs.slice(0, TRACKED_LIBRARIES.length), [
      'transformers',
      'datasets',
      'trl',
      'peft',
      'accelerate',
      'evaluate',
      'tokenizers',
      'huggingface-hub',
      'torch',
    ]);
    assert.deepEqual(inputs.slice(TRACKED_LIBRARIES.length), s.extra_requirements);
  });

  test('parsing a compile: names normalised, local labels dropped from the pins, a missing library is an error', () => {
    const lines = TRACKED_LIBRARIES.map((l) => `${l.replace('_', '-')}==1.0.0`)
      .join('\n')
      .replace('torch==1.0.0', 'torch==2.6.0+cpu');
    const compiled = parseCompiled(`${lines}\nHuggingFace_Hub==9.9\nnvidia-cublas-cu12==12.4.5.8 ; sys_platform == 'linux'\n`);
    assert.equal(compiled.get('huggingface-hub'), '9.9');
    assert.equal(compiled.get('nvidia-cublas-cu12'), '12.4.5.8');
    assert.equal(trackedPins(compiled).torch, '2.6.0');
    compiled.delete('peft');
    assert.throws(() => trackedPins(compiled), /did not pin peft/);
    assert.throws(() => parseCompiled('error: no solution'), /unexpected line/);
  });

  test("withPins replaces only the named snapshots' versions", () => {
    const file = snapshotsFile();
    const next = withPins(file, [{ id: '2024-04', pins: { ...getSnapshot('2024-04').versions, torch: '9.9.9' } }]);
    assert.equal(next.snapshots.find((s) => s.id === '2024-04')!.versions.torch, '9.9.9');
    assert.deepEqual(
      next.snapshots.filter((s) => s.id !== '2024-04'),
      file.snapshots.filter((s) => s.id !== '2024-04'),
    );
    assert.equal(getSnapshot('2024-04').versions.torch !== '9.9.9', true); // the loaded file is untouched
  });

  const uv = spawnSync(process.env.FORGEENV_UV || 'uv', ['--version']).status === 0;
  test(
    'live: uv recomputes the shipped pins of 2023-06 and 2025-03 exactly (skips without uv or PyPI)',
    { skip: !uv && 'uv not installed', timeout: 120_000 },
    async (t) => {
      for (const id of ['2023-06', '2025-03']) {
        let r;
        try {
          r = await computePins(getSnapshot(id), snapshotsFile().python);
        } catch (e) {
          if (/failed to fetch|network|dns|connect|timed out/i.test((e as Error).message))
            return t.skip(`PyPI unreachable: ${(e as Error).message}`);
          throw e;
        }
        assert.deepEqual(r.pins, getSnapshot(id).versions, id);
        assert.ok(Object.keys(r.lock).length > TRACKED_LIBRARIES.length);
      }
    },
  );
});

describe('forgeenv snapshots dating / pin (command line)', () => {
  test('dating: one line per snapshot, exit 0 on the shipped file', async () => {
    const out: string[] = [];
    const code = await runSnapshotsCommand(
      ['dating'],
      (s) => out.push(s),
      (s) => out.push(s),
    );
    assert.equal(code, 0, out.join('\n'));
    for (const s of allSnapshots())
      assert.ok(
        out.some((l) => l.startsWith(`${s.id} (cut-off ${s.cutoff}): ok`)),
        s.id,
      );
  });
  test('pin: an unknown --id fails with the known ids; matching pins exit 0 (skips without uv)', async (t) => {
    const err: string[] = [];
    assert.equal(
      await runSnapshotsCommand(
        ['pin', '--id', '1999-01'],
        () => undefined,
        (s) => err.push(s),
      ),
      1,
    );
    assert.match(err.join(), /unknown snapshot "1999-01"/);
    if (spawnSync(process.env.FORGEENV_UV || 'uv', ['--version']).status !== 0) return t.skip('uv not installed');
    const out: string[] = [];
    const code = await runSnapshotsCommand(
      ['pin', '--id', '2024-04'],
      (s) => out.push(s),
      (s) => out.push(s),
    );
    if (code !== 0 && /failed to fetch|network|dns|connect/i.test(out.join())) return t.skip('PyPI unreachable');
    assert.equal(code, 0, out.join('\n'));
    assert.deepEqual(out.slice(-1), ['every snapshot matches its computed pins']);
  });
});

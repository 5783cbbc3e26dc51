// The pure parts of the warm-vs-cold identity benches (bench/identity.ts): options, the breakages a made
// task's episodes replay, and the comparisons of two episodes and of two fidelity reports.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import {
  compareFidelityReports,
  differingFields,
  expandTaskDir,
  firstDifference,
  maskWallClock,
  parseWarmIdentityArgs,
  verifiedBreakages,
} from '../../bench/identity';
import { breakageCandidates } from '../../src/env/taskmaking/verification';
import { snapshotVersions } from '../../src/env/snapshots/versions';
import type { MakeTaskVerdict } from '../../src/env/taskmaking/provenance';

function withDirs(f: (root: string) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'forgeenv-idt-'));
  try {
    f(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('parseWarmIdentityArgs', () => {
  test('defaults: the built-in corpus, simulated, seeds 1-3, 60 s', () => {
    assert.deepEqual(parseWarmIdentityArgs([]), { mode: 'simulated', taskDirs: [], seeds: [1, 2, 3], timeoutMs: 60_000, control: false });
  });

  test('real mode over a folder of task folders: one seed, 180 s, the folders expanded', () =>
    withDirs((root) => {
      for (const s of ['b', 'a']) {
        mkdirSync(join(root, s));
        writeFileSync(join(root, s, 'tasks.json'), '[]');
      }
      mkdirSync(join(root, 'not-a-task'));
      const o = parseWarmIdentityArgs(['--mode', 'real', '--task-dir', root, '--task', 'x', '--control']);
      assert.deepEqual(o, {
        mode: 'real',
        taskDirs: [join(root, 'a'), join(root, 'b')],
        seeds: [1],
        task: 'x',
        timeoutMs: 180_000,
        control: true,
      });
    }));

  test('bad input is refused with the option named', () => {
    assert.throws(() => parseWarmIdentityArgs(['--mode', 'fast']), /--mode must be real or simulated/);
    assert.throws(() => parseWarmIdentityArgs(['--mode', 'real']), /--mode real needs --task-dir/);
    assert.throws(() => parseWarmIdentityArgs(['--seeds', '0']), /--seeds must be a positive whole number/);
    assert.throws(() => parseWarmIdentityArgs(['--timeout', '2.5']), /--timeout must be a positive whole number/);
    assert.throws(() => parseWarmIdentityArgs(['--bogus']), /Unknown option/);
  });
});

describe('expandTaskDir', () => {
  test('a task folder is itself (a script or a tasks.json makes one); anything else is refused', () =>
    withDirs((root) => {
      writeFileSync(join(root, 't.py'), 'print(1)\n');
      assert.deepEqual(expandTaskDir(root), [root]);
      const empty = join(root, 'sub');
      mkdirSync(empty);
      assert.throws(() => expandTaskDir(empty), /neither a task folder nor a folder of task folders/);
      assert.throws(() => expandTaskDir(join(root, 'missing')), /not a folder/);
    }));
});

describe('verifiedBreakages', () => {
  const script = 'from transformers import AdamW, Trainer\nfrom datasets import load_dataset\nds = load_dataset("imdb")\n';
  const versions = snapshotVersions('2024-09');
  const check = (primitive_type: string, drift_id: string | undefined, ok: boolean) => ({
    primitive_type,
    ...(drift_id ? { drift_id } : {}),
    broke: ok,
    names_api: ok,
    oracle_verified: ok,
  });
  const verdict = (breakages: MakeTaskVerdict['breakages']): MakeTaskVerdict => ({
    mode: 'real',
    snapshot: '2024-09',
    original_runs: { verified: 3, of: 3 },
    breakages,
    verified: true,
    checked_at: '2026-12-06T00:00:00Z',
  });

  test('replays the verified ones with the params make-task applied; skips unverified; names the vanished', () => {
    const candidates = breakageCandidates(script, versions);
    assert.ok(candidates.length >= 2, 'the script offers candidates');
    const [a, b] = candidates;
    const r = verifiedBreakages(
      verdict([
        check(a.primitive_type, a.drift_id, true),
        check(b.primitive_type, b.drift_id, false),
        check('NoSuchPrimitive', 'gone', true),
      ]),
      script,
      versions,
    );
    assert.deepEqual(r.breakages, [
      { primitive_type: a.primitive_type, params: a.params, ...(a.drift_id ? { drift_id: a.drift_id } : {}) },
    ]);
    assert.deepEqual(r.missing, ['NoSuchPrimitive (gone)']);
  });

  test('no verdict: nothing to replay', () => {
    assert.deepEqual(verifiedBreakages(undefined, script, versions), { breakages: [], missing: [] });
  });
});

describe('maskWallClock', () => {
  test("the Trainer's timings and a tqdm bar's clock go; the loss, the steps and the keys stay", () => {
    const cold =
      "{'train_runtime': 0.2362, 'train_samples_per_second': 67.747, 'train_steps_per_second': 33.873, 'train_loss': 6.47, 'epoch': 0.25}";
    const warm =
      "{'train_runtime': 0.2585, 'train_samples_per_second': 61.898, 'train_steps_per_second': 30.949, 'train_loss': 6.47, 'epoch': 0.25}";
    assert.equal(maskWallClock(cold), maskWallClock(warm));
    assert.match(maskWallClock(cold), /'train_runtime': <wall-clock>, .*'train_loss': 6\.47, 'epoch': 0\.25/);
    assert.notEqual(maskWallClock(cold), maskWallClock(warm.replace("'train_loss': 6.47", "'train_loss': 6.48")));
    assert.equal(maskWallClock('eval_runtime = 1.5e-3'), 'eval_runtime = <wall-clock>');
    // TRL's PPO logs episodes per second; a tqdm bar in a unit of its own.
    assert.equal(maskWallClock("{'eps': 6, 'objective/kl': '4.7e-07'}"), maskWallClock("{'eps': 44, 'objective/kl': '4.7e-07'}"));
    assert.notEqual(maskWallClock("{'eps': 6, 'objective/kl': '4.7e-07'}"), maskWallClock("{'eps': 6, 'objective/kl': '4.8e-07'}"));
    assert.equal(maskWallClock('| 3/6 [00:01<00:01, 2.5category/s]'), maskWallClock('| 3/6 [00:02<00:02, 1.25category/s]'));
    assert.equal(maskWallClock('logging_dir=out/runs/Dec06_06-56-47_forgeenv,'), 'logging_dir=out/runs/<time-of-day>_forgeenv,');
    // A log record's time of day (accelerate examples log with asctime); the message still counts.
    const record = (t: string, m: string) => `${t} - INFO - __main__ - ${m}`;
    assert.equal(maskWallClock(record('12/06/2026 06:39:50', 'a')), maskWallClock(record('12/06/2026 06:40:29', 'a')));
    assert.equal(maskWallClock(record('2026-12-06 06:39:50,123', 'a')), maskWallClock(record('2026-12-06 07:00:01,9', 'a')));
    assert.notEqual(maskWallClock(record('12/06/2026 06:39:50', 'a')), maskWallClock(record('12/06/2026 06:39:50', 'b')));
    // transformers 5 quotes the logged values; the loss beside them still counts.
    const quoted = (t: string, l: string) => `{'train_runtime': '${t}', 'train_samples_per_second': '55.33', 'train_loss': '${l}'}`;
    assert.equal(maskWallClock(quoted('0.2892', '0.5')), maskWallClock(quoted('0.2388', '0.5')));
    assert.equal(
      maskWallClock(quoted('0.2892', '0.5')),
      "{'train_runtime': '<wall-clock>', 'train_samples_per_second': '<wall-clock>', 'train_loss': '0.5'}",
    );
    assert.notEqual(maskWallClock(quoted('0.2892', '0.5')), maskWallClock(quoted('0.2892', '0.6')));
    // log_metrics' table: the runtime as h:mm:ss.ff, the values right-aligned (the padding follows the number's width).
    assert.equal(maskWallClock('  train_samples_per_second =     9.5'), maskWallClock('  train_samples_per_second =    10.5'));
    assert.equal(
      maskWallClock('  train_runtime            = 0:00:00.15\n  train_loss = 6.4'),
      '  train_runtime            = <wall-clock>\n  train_loss = 6.4',
    );
    assert.equal(maskWallClock('  0%|          | 0/8 [00:01<00:02,  2.31it/s]'), '  0%|          | 0/8 [<elapsed><<remaining>,  <rate>]');
    assert.equal(maskWallClock('100%|##| 8/8 [01:02:03<00:00, 12.5s/it]'), '100%|##| 8/8 [<elapsed><<remaining>, <rate>]');
  });
});

describe('maskWallClock: a tqdm bar between its first and last step', () => {
  // realworld 12: the same run drew 25/32 cold and 24/32 warm (tqdm redraws every 0.1 s).
  const bar = (n: number, total: number, rate: string) =>
    `${String(Math.floor((100 * n) / total)).padStart(3)}%|███       | ${n}/${total} [00:00<00:00, ${rate}it/s]`;
  const run = (middle: string[], last = bar(32, 32, '247.73')) => ['Map:', bar(0, 32, '?'), ...middle, last, 'loss 0.5'].join('\n');

  test('which steps it drew in between, and how many times, follows the clock', () => {
    assert.equal(maskWallClock(run([bar(25, 32, '243.44')])), maskWallClock(run([bar(24, 32, '236.83')])));
    assert.equal(maskWallClock(run([bar(8, 32, '80.1'), bar(25, 32, '243.44')])), maskWallClock(run([bar(24, 32, '236.83')])));
    assert.equal(maskWallClock('a\r\n' + bar(3, 9, '1.0') + '\r' + bar(6, 9, '2.0') + '\rb'), 'a\r\n<progress>\rb');
  });

  test('its first and last draws, a bar that never finished, and every other line still count', () => {
    assert.notEqual(maskWallClock(run([bar(25, 32, '1')])), maskWallClock(run([bar(25, 32, '1')], bar(31, 31, '1'))));
    assert.notEqual(maskWallClock(run([])), maskWallClock(run([]).replace('loss 0.5', 'loss 0.6')));
    assert.notEqual(maskWallClock(run([bar(25, 32, '1')])), maskWallClock(run([bar(25, 32, '1')]).replace('0/32', '0/33')));
    // Stopped in between: the bar's last draw there differs from one that finished.
    assert.notEqual(maskWallClock(['Map:', bar(0, 32, '?'), bar(25, 32, '1')].join('\n')), maskWallClock(run([])));
  });
});

describe('differingFields and firstDifference', () => {
  test('wall time, peak memory and runtime never count; anything else does, by field', () => {
    const cold = { runtime: 'cold/cold', broken: [1, 'out', { wall_time_ms: 5, peak_memory_mb: 9 }], reward: 1, trace: 'E' };
    const warm = { runtime: 'warm/warm', broken: [1, 'out', { wall_time_ms: 7, peak_memory_mb: 3 }], reward: 0.5, trace: 'E' };
    assert.deepEqual(differingFields(cold, warm), ['reward']);
    assert.deepEqual(differingFields(cold, { ...warm, extra: 1 }), ['reward', 'extra']);
    const out = (t: number, loss: number) => [0, `{'train_runtime': ${t}, 'train_loss': ${loss}}`];
    assert.deepEqual(differingFields({ repair: out(0.2, 6.4) }, { repair: out(0.5, 6.4) }), []);
    assert.deepEqual(differingFields({ repair: out(0.2, 6.4) }, { repair: out(0.2, 6.5) }), ['repair']);
  });

  test('names the first line that differs, strings and arrays of strings by line', () => {
    assert.equal(firstDifference([0, 'a\nb\nc'], [0, 'a\nB\nc']), 'line 3: cold "b" / warm "B"');
    assert.equal(firstDifference('x', 'x\ny'), 'line 2: cold "(none)" / warm "y"');
    assert.equal(firstDifference('same', 'same'), 'same text');
  });
});

describe('compareFidelityReports', () => {
  const o = (status: 'ok' | 'raised', message: string | null = null) => ({
    id: 'e',
    form: 'old' as const,
    status,
    exc_type: status === 'raised' ? 'TypeError' : null,
    message,
    warnings: [],
  });
  const report = (afterReal: ReturnType<typeof o>, runtime: string) => ({
    real_snapshots: [{ id: '2025-03', state: 'ran', runtime }],
    sim_snapshots: [
      { id: '2025-03', state: 'ran', runtime },
      { id: '2024-09', state: 'skipped' },
    ],
    entries: [
      {
        id: 'e',
        runs: [
          { slot: 'before.old', snapshot: '2024-09', real: o('ok'), sim: o('ok') },
          { slot: 'after.old', snapshot: '2025-03', real: afterReal },
        ],
      },
    ],
  });

  test('identical reports: every outcome a pair, the runtimes counted per report', () => {
    const r = compareFidelityReports(report(o('raised', 'gone'), 'cold'), report(o('raised', 'gone'), 'warm'));
    assert.deepEqual([r.pairs, r.identical, r.differ, r.unmatched], [3, 3, [], []]);
    assert.deepEqual(r.runtimes, [
      { 'real cold': 1, 'sim cold': 1, 'sim skipped': 1 },
      { 'real warm': 1, 'sim warm': 1, 'sim skipped': 1 },
    ]);
  });

  test('a difference is named with its fields; an outcome only one side has is unmatched', () => {
    const r = compareFidelityReports(report(o('raised', 'gone'), 'cold'), report(o('ok'), 'warm'));
    assert.deepEqual(r.differ, ['e after.old real @2025-03: status, exc_type, message']);
    assert.equal(r.identical, 2);
    const w = report(o('raised', 'gone'), 'warm');
    w.entries[0].runs.pop();
    assert.deepEqual(compareFidelityReports(report(o('raised', 'gone'), 'cold'), w).unmatched, [
      'e after.old real @2025-03: only in the first',
    ]);
  });

  test('a file that is not a fidelity report is refused', () => {
    assert.throws(() => compareFidelityReports({ entries: 3 }, {}));
  });
});

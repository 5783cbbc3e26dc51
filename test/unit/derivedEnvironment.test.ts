// Derived environments (issue 20): a snapshot with per-library overrides for a script written against two eras.
// The ids and their snapshots (snapshots/derived.ts), and the composition from the committed API data of the real
// releases (taskmaking/derivedEnvironment.ts), with the resolver stubbed; the real resolver and a real derived venv
// are in derivedVenv.test.ts.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import {
  apiSourceOf,
  composeDerived,
  derivedId,
  derivedIdOfVersions,
  DerivedEnvironmentSchema,
  parseDerivedId,
} from '../../src/env/snapshots/derived';
import { snapshotApiFile } from '../../src/env/snapshots/api';
import { allSnapshots, getSnapshot } from '../../src/env/snapshots/registry';
import { snapshotIdOf } from '../../src/env/snapshots/versions';
import { snapshotIdForVersions } from '../../src/env/run/realMode';
import { apiNeedOf } from '../../src/env/taskmaking/apiRecurrence';
import { composeEnvironment, type Resolver } from '../../src/env/taskmaking/derivedEnvironment';
import { snapshotFits } from '../../src/env/taskmaking/snapshotInference';
import { TaskMetadataSchema } from '../../src/env/tasks/tasks';

const pinned = (id: string, lib: string) => getSnapshot(id).versions[lib];

describe('derived environment ids', () => {
  test('the id is stable: libraries sorted, whatever order the overrides came in', () => {
    assert.equal(derivedId('2025-03', { trl: '0.9.4', datasets: '2.20.0' }), '2025-03+datasets@2.20.0+trl@0.9.4');
    assert.deepEqual(parseDerivedId('2025-03+datasets@2.20.0+trl@0.9.4'), {
      base: '2025-03',
      overrides: { datasets: '2.20.0', trl: '0.9.4' },
    });
  });

  test('a derived id is a snapshot: the base with the overrides, installed as of the newest pin', () => {
    const datasets = pinned('2024-06', 'datasets');
    const s = getSnapshot(`2025-09+datasets@${datasets}`);
    assert.equal(s.versions.datasets, datasets);
    assert.equal(s.versions.transformers, pinned('2025-09', 'transformers'));
    assert.equal(s.cutoff, getSnapshot('2025-09').cutoff);
    // The override keeps the extra its era installs it with (datasets 2.x decodes audio through `datasets[audio]`).
    assert.deepEqual(s.extra_requirements, [...getSnapshot('2025-09').extra_requirements, 'datasets[audio]']);
    assert.deepEqual(getSnapshot(`2025-09+trl@${pinned('2024-06', 'trl')}`).extra_requirements, getSnapshot('2025-09').extra_requirements);
    // An override newer than the base moves --exclude-newer to the override's snapshot.
    const newer = getSnapshot(`2024-06+transformers@${pinned('2025-03', 'transformers')}`);
    assert.equal(newer.cutoff, getSnapshot('2025-03').cutoff);
  });

  test('a release no snapshot pins, an unknown base, a bad part or an unsorted id is refused, naming what is wrong', () => {
    assert.throws(() => getSnapshot('2025-03+datasets@2.21.0'), /no snapshot pins datasets 2\.21\.0.*pinned: /);
    assert.throws(() => getSnapshot('1999-01+datasets@2.20.0'), /unknown base snapshot "1999-01"; known snapshots: 2023-06/);
    assert.throws(() => getSnapshot('2025-03+datasets'), /not <library>@<version>/);
    assert.throws(() => getSnapshot('2025-03+trl@0.9.4+datasets@2.20.0'), /write it as 2025-03\+datasets@2\.20\.0\+trl@0\.9\.4/);
    assert.throws(() => getSnapshot(`2025-03+datasets@${pinned('2025-03', 'datasets')}`), /already pins datasets/);
    assert.throws(() => composeDerived('2025-03+numpy@1.0', allSnapshots()), /pins no numpy/);
  });

  test("each library's API data comes from the snapshot that pins its release", () => {
    const id = `2025-03+datasets@${pinned('2024-06', 'datasets')}`;
    assert.equal(apiSourceOf(id, 'datasets', allSnapshots()), '2024-06');
    assert.equal(apiSourceOf(id, 'transformers', allSnapshots()), '2025-03');
    assert.match(snapshotApiFile(id, 'datasets'), /api[/\\]2024-06[/\\]datasets\.json$/);
    assert.match(snapshotApiFile(id, 'transformers'), /api[/\\]2025-03[/\\]transformers\.json$/);
    // So the recorded API of the mix has both eras' names: load_metric (datasets 2.x) beside 2025-03's transformers.
    const script = 'from datasets import load_metric\nfrom transformers import Trainer\n';
    assert.deepEqual(snapshotFits(script, [id])[0].missing, []);
    assert.equal(snapshotFits(script, ['2025-03'])[0].missing.length, 1);
  });

  test("a record's versions name their derived environment, so runs, rescoring and the editor find its venv", () => {
    const id = `2025-03+datasets@${pinned('2024-06', 'datasets')}`;
    const versions = { ...getSnapshot(id).versions };
    assert.equal(snapshotIdOf(versions), id);
    assert.equal(snapshotIdForVersions(versions), id);
    assert.equal(derivedIdOfVersions({ ...versions, datasets: '9.9.9' }, allSnapshots()), undefined);
    // A plain snapshot's versions stay that snapshot.
    assert.equal(snapshotIdOf({ ...getSnapshot('2025-03').versions }), '2025-03');
  });

  test('tasks.json records it with zod: an id that does not match its parts is refused', () => {
    const ok = { id: '2025-03+datasets@2.20.0', base: '2025-03', overrides: { datasets: '2.20.0' } };
    assert.equal(DerivedEnvironmentSchema.safeParse(ok).success, true);
    assert.equal(DerivedEnvironmentSchema.safeParse({ ...ok, id: '2025-03+datasets@2.19.0' }).success, false);
    assert.equal(DerivedEnvironmentSchema.safeParse({ ...ok, overrides: {} }).success, false);
    assert.equal(TaskMetadataSchema.safeParse({ task_id: 't', environment: ok }).success, true);
    assert.equal(TaskMetadataSchema.safeParse({ task_id: 't', environment: { ...ok, extra: 1 } }).success, false);
  });
});

const traceback = (line: string, last: string, frames = '') =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 40, in main\n    ${line}\n${frames}${last}\n`;
const POSITIONAL = traceback(
  'decay = get_parameter_names(model, [torch.nn.LayerNorm], ["bias"])',
  'TypeError: get_parameter_names() takes 2 positional arguments but 3 were given',
);
// Two eras: load_metric left datasets in 3.0 (2024-09); get_parameter_names took a third argument from transformers 4.50 (2025-03).
const TWO_ERAS = 'from datasets import load_metric\nfrom transformers.trainer_pt_utils import get_parameter_names\n';
const always: Resolver = () => Promise.resolve({ ok: true });

describe('composing a derived environment from the recorded API', () => {
  test('an Enum member read in the script (`AttributeError: TPU`) is judged from its class, named on the failing line', () => {
    const out = traceback(
      'if accelerator.distributed_type == DistributedType.TPU:',
      'AttributeError: TPU',
      '  File "/uv/python/cpython-3.11/lib/python3.11/enum.py", line 784, in __getattr__\n    raise AttributeError(name) from None\n',
    );
    const need = apiNeedOf(out)!;
    assert.equal(need.needs, 'DistributedType.TPU');
    // Frame paths scrubbed of the machine's folders: the reading line still names the class.
    assert.equal(
      apiNeedOf(out.replace('/uv/python/cpython-3.11/lib/python3.11/enum.py', '<python>/enum.py'))?.needs,
      'DistributedType.TPU',
    );
    assert.equal(need.library('2023-12'), 'accelerate');
    assert.equal(need.acceptedAt('2023-12'), true);
    assert.equal(need.acceptedAt('2025-09'), false);
  });

  test('a config attribute a later release added (`config.dtype`) is accepted where its base class takes it', () => {
    const out = traceback('dtype = config.dtype', "AttributeError: 'LlamaConfig' object has no attribute 'dtype'");
    const need = apiNeedOf(out)!;
    assert.equal(need.acceptedAt('2025-09'), true);
    assert.equal(need.acceptedAt('2025-03'), false);
  });

  test('the fewest overrides, on the base nearest the script, each forced by a name the script uses', async () => {
    const r = await composeEnvironment({ script: TWO_ERAS, failures: [POSITIONAL], scriptDate: '2025-02-10', resolver: always });
    assert.ok(r.ok, !r.ok ? r.reason : '');
    assert.equal(r.choice.base, '2025-03');
    assert.deepEqual(Object.keys(r.choice.overrides), ['datasets']);
    assert.equal(r.choice.overrides.datasets, pinned('2024-06', 'datasets'));
    assert.match(r.choice.reasons[0].because, /2025-03 lacks datasets\.load_metric \(line 1\)/);
    // Dated in 2024: the other side, a 2024-06 base with 2025-03's transformers.
    const older = await composeEnvironment({ script: TWO_ERAS, failures: [POSITIONAL], scriptDate: '2024-05-01', resolver: always });
    assert.ok(older.ok);
    assert.equal(older.choice.base, '2024-06');
    assert.deepEqual(older.choice.overrides, { transformers: pinned('2025-03', 'transformers') });
    assert.match(older.choice.reasons[0].because, /get_parameter_names\(\) with 3 positional arguments/);
  });

  test("a library the resolver names in a conflict follows the override's snapshot", async () => {
    const seen: string[] = [];
    // Only a 2025-03 base installs (the stub refuses the others, naming no library), once trl follows datasets back.
    const trlNeedsNewDatasets: Resolver = (s) => {
      seen.push(s.id);
      if (!s.id.startsWith('2025-03+')) return Promise.resolve({ ok: false, message: 'No solution found' });
      return Promise.resolve(
        s.versions.trl === pinned('2025-03', 'trl')
          ? {
              ok: false,
              message: `Because trl==${s.versions.trl} depends on datasets>=3.0.0 and you require datasets==${s.versions.datasets} …`,
            }
          : { ok: true },
      );
    };
    const r = await composeEnvironment({
      script: TWO_ERAS,
      failures: [POSITIONAL],
      scriptDate: '2025-02-10',
      resolver: trlNeedsNewDatasets,
    });
    assert.ok(r.ok);
    assert.deepEqual(r.choice.overrides, { datasets: pinned('2024-06', 'datasets'), trl: pinned('2024-06', 'trl') });
    assert.match(r.choice.reasons[1].because, /^the resolver: Because trl==/);
    assert.ok(seen.includes(`2025-03+datasets@${pinned('2024-06', 'datasets')}`));
  });

  test("a conflict nothing answers is a refusal with the resolver's own message", async () => {
    const never: Resolver = () => Promise.resolve({ ok: false, message: 'No solution found: torch==0.0 is not available' });
    const r = await composeEnvironment({ script: TWO_ERAS, failures: [POSITIONAL], scriptDate: '2025-02-10', resolver: never });
    assert.equal(r.ok, false);
    assert.match(
      !r.ok ? r.reason : '',
      /no combination installs together; the resolver on 2025-03\+datasets@[\d.]+: No solution found: torch==0\.0/,
    );
  });

  test('a need no recorded release meets is a refusal saying which', async () => {
    const out = traceback('x = config.frobnicate', "AttributeError: 'LlamaConfig' object has no attribute 'frobnicate'");
    const r = await composeEnvironment({ script: TWO_ERAS, failures: [out], resolver: always });
    assert.equal(r.ok, false);
    assert.match(!r.ok ? r.reason : '', /no release any snapshot pins is recorded to accept LlamaConfig\.frobnicate/);
  });
});

// make-task's inputs: repo-local imports collected into task files (relative imports laid out as a
// package), snapshot inference on the recorded API data, atomic saving merged into tasks.json.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { absoluteImports, collectLocalImports } from '../../src/env/taskmaking/localImports';
import { apiPresence, importedApis, inferSnapshot, monthsApart } from '../../src/env/taskmaking/snapshotInference';
import { loadPackageApi } from '../../src/env/snapshots/api';
import { getSnapshot } from '../../src/env/snapshots/registry';
import { loadTaskFolder } from '../../src/env/tasks/tasks';
import { readEntries, uniqueTaskId, writeTask } from '../../src/env/taskmaking/writeTask';

const root = mkdtempSync(join(tmpdir(), 'forgeenv-taskmaking-'));
after(() => rmSync(root, { recursive: true, force: true }));

function tree(dir: string, files: Record<string, string>): string {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(join(dir, rel, '..'), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

describe('repo-local imports', () => {
  test('siblings and packages the script imports, transitively; third-party imports ignored', () => {
    const dir = tree(join(root, 'a'), {
      'train.py': 'import torch\nfrom data_utils import load\nimport mypkg.models as m\n',
      'data_utils.py': 'from text_cleaning import clean\n',
      'text_cleaning.py': 'def clean(x): return x\n',
      'mypkg/__init__.py': '',
      'mypkg/models.py': 'from .layers import Layer\n',
      'mypkg/layers.py': 'class Layer: pass\n',
      'unused.py': 'raise SystemExit(1)\n',
    });
    const r = collectLocalImports(join(dir, 'train.py'), readFileSync(join(dir, 'train.py'), 'utf8'));
    assert.deepEqual(Object.keys(r.files).sort(), [
      'data_utils.py',
      'mypkg/__init__.py',
      'mypkg/layers.py',
      'mypkg/models.py',
      'text_cleaning.py',
    ]);
    assert.deepEqual(r.missing, []);
    assert.deepEqual(r.rewrites, []);
  });

  test('a relative-import script: imports made absolute and its folder laid out as a package', () => {
    const dir = tree(join(root, 'b', 'proj'), {
      'train.py': 'from .utils import helper\nfrom . import config\nprint(helper(), config.X)\n',
      'utils.py': 'def helper(): return 1\n',
      'config.py': 'X = 2\n',
    });
    const text = readFileSync(join(dir, 'train.py'), 'utf8');
    const r = collectLocalImports(join(dir, 'train.py'), text);
    assert.match(r.script, /^from proj\.utils import helper\nfrom proj import config\n/);
    assert.deepEqual(Object.keys(r.files).sort(), ['proj/__init__.py', 'proj/config.py', 'proj/utils.py']);
    assert.equal(r.rewrites.length, 2);
  });

  test('absoluteImports leaves absolute and deeper relative imports alone', () => {
    const r = absoluteImports('import os\nfrom ..up import x\n', 'pkg');
    assert.deepEqual(r.rewrites, []);
  });

  test('a helper module that is not beside the script is reported missing', () => {
    const dir = tree(join(root, 'c'), { 'train.py': 'from luke_utils import Collator\nimport numpy\n' });
    const r = collectLocalImports(join(dir, 'train.py'), readFileSync(join(dir, 'train.py'), 'utf8'));
    assert.deepEqual(r.missing, ['luke_utils']);
  });
});

describe('snapshot inference on the recorded API data', () => {
  test('imports from the inference libraries are listed with their lines', () => {
    const apis = importedApis('import os\nfrom trl import GRPOConfig, GRPOTrainer\nimport peft\nfrom .x import y\n');
    assert.deepEqual(apis, [
      { module: 'trl', name: 'GRPOConfig', line: 2 },
      { module: 'trl', name: 'GRPOTrainer', line: 2 },
      { module: 'peft', line: 3 },
    ]);
  });

  test('GRPOConfig: absent from snapshots whose trl predates it, present later (from the data itself)', () => {
    const script = 'from trl import GRPOConfig\n';
    const choice = inferSnapshot(script, { ids: ['2024-09', '2026-11'] });
    const expected = (id: string) => apiPresence(loadPackageApi(id, 'trl'), { module: 'trl', name: 'GRPOConfig', line: 1 });
    // The claim is checked against the data: whichever snapshots have it are the candidates.
    const have = ['2024-09', '2026-11'].filter((id) => expected(id) === 'present');
    assert.ok(have.length >= 1, 'some snapshot has GRPOConfig');
    assert.ok(have.includes(choice.id));
    for (const f of choice.fits) assert.equal(f.missing.length === 0, have.includes(f.id), f.id);
    assert.ok(
      choice.fits.some((f) => f.missing.length > 0),
      `trl ${getSnapshot('2024-09').versions.trl} lacks GRPOConfig`,
    );
  });

  test("a library's test helpers (accelerate.test_utils, never walked) are unknown, not absent: every snapshot still fits", () => {
    const script = 'from accelerate import Accelerator\nfrom accelerate.test_utils.training import mocked_dataloaders\n';
    const api = loadPackageApi('2024-06', 'accelerate');
    assert.ok(!Object.keys(api.modules).some((m) => m.startsWith('accelerate.test_utils')), 'the data does not walk test_utils');
    assert.equal(apiPresence(api, { module: 'accelerate.test_utils.training', name: 'mocked_dataloaders', line: 2 }), 'unknown');
    const c = inferSnapshot(script, { ids: ['2023-12', '2024-06'] });
    for (const f of c.fits) assert.deepEqual(f.missing, [], f.id);
  });

  test('a public submodule the data did not walk is absent (trl.experimental), from the data itself', () => {
    const walked = (id: string) => 'trl.experimental' in loadPackageApi(id, 'trl').modules;
    const c = inferSnapshot('from trl.experimental.ppo import PPOTrainer\n', { ids: ['2025-03', '2026-11'] });
    for (const f of c.fits) if (!walked(f.id)) assert.match(f.missing.join(' '), /trl\.experimental\.ppo/, f.id);
    assert.ok(
      c.fits.some((f) => !walked(f.id)),
      'some snapshot predates trl.experimental',
    );
  });

  test('a module only the gap snapshot has (trl.experimental.ppo: trl 0.26 to 1.x) is inferred there', () => {
    const script = 'from trl import ModelConfig\nfrom trl.experimental.ppo import PPOConfig, PPOTrainer\n';
    const ids = ['2025-09', '2026-03', '2026-11'];
    const c = inferSnapshot(script, { ids });
    const trl = (id: string) => getSnapshot(id).versions.trl;
    assert.equal(c.id, '2026-03', `${c.reason}; trl ${ids.map(trl).join(', ')}`);
    assert.match(c.reason, /exist in 2026-03 only/);
    for (const f of c.fits.filter((x) => x.id !== '2026-03')) assert.match(f.missing.join(' '), /trl\.experimental\.ppo\.PPOTrainer/, f.id);
  });

  test('the script date picks the nearest complete snapshot and the reason says so', () => {
    const script = 'from transformers import AutoModelForCausalLM\n';
    const early = inferSnapshot(script, { scriptDate: '2024-08-20T10:00:00Z', ids: ['2024-09', '2025-03', '2026-11'] });
    const late = inferSnapshot(script, { scriptDate: '2026-10-01', ids: ['2024-09', '2025-03', '2026-11'] });
    assert.equal(early.id, '2024-09');
    assert.equal(late.id, '2026-11');
    assert.match(early.reason, /nearest to the script's date 2024-08-20/);
  });

  test('a name no snapshot has: the one lacking fewest, and the reason names what is missing', () => {
    const c = inferSnapshot('from transformers import NoSuchThingForForgeEnv\n', { ids: ['2025-03', '2026-11'] });
    assert.match(c.reason, /no snapshot has every import/);
    assert.match(c.reason, /NoSuchThingForForgeEnv \(line 1\)/);
  });

  test('--snapshot forces one', () => {
    assert.equal(inferSnapshot('from trl import GRPOConfig\n', { forced: '2025-03' }).id, '2025-03');
    assert.throws(() => inferSnapshot('', { forced: '1999-01' }), /unknown snapshot/);
  });

  test('monthsApart', () => {
    assert.equal(monthsApart('2024-09', '2025-03-15'), 6);
  });
});

describe('saving a made task', () => {
  test('merged into an existing tasks.json, the script copied, and the folder loads', async () => {
    const dir = join(root, 'tasks');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'old.py'), 'print(1)\n');
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'old', description: 'kept' }]));
    const id = uniqueTaskId('old.py', dir, readEntries(dir));
    assert.equal(id, 'old_2');
    await writeTask(
      dir,
      {
        task_id: id,
        args: ['--x', '1'],
        env: { SM_MODEL_DIR: 'out/m' },
        adaptations: [
          { round: 1, rule: 'missing-required-option', kind: 'args', error: 'the following arguments are required: --x', change: '--x 1' },
        ],
      },
      'print(2)\n',
    );
    const entries = readEntries(dir);
    assert.deepEqual(
      entries.map((e) => e.task_id),
      ['old', 'old_2'],
    );
    assert.equal(entries[0].description, 'kept');
    const loaded = loadTaskFolder(dir);
    assert.deepEqual(loaded.problems, []);
    const t = loaded.tasks.find((x) => x.task_id === 'old_2')!;
    assert.deepEqual(t.args, ['--x', '1']);
    assert.deepEqual(t.env, { SM_MODEL_DIR: 'out/m' });
  });

  test('a built-in task id is never reused (the built-in task would shadow the new one)', () => {
    const dir = join(root, 'empty');
    mkdirSync(dir, { recursive: true });
    assert.equal(uniqueTaskId('bert_ner.py', dir, []), 'bert_ner_2');
    assert.equal(uniqueTaskId('my script!.py', dir, []), 'my_script_');
  });

  test('an unreadable tasks.json is never overwritten and no script is left behind', async () => {
    const dir = join(root, 'bad');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'tasks.json'), '{not json');
    await assert.rejects(writeTask(dir, { task_id: 'n' }, 'x\n'), /not valid JSON/);
    assert.equal(readFileSync(join(dir, 'tasks.json'), 'utf8'), '{not json');
    assert.throws(() => readFileSync(join(dir, 'n.py')));
  });

  test('an adaptation with an unknown field is refused by the strict schema', async () => {
    const dir = join(root, 'strict');
    await assert.rejects(
      writeTask(
        dir,
        { task_id: 'n', adaptations: [{ round: 0, rule: 'r', kind: 'args', error: '', change: 'c', extra: 1 } as never] },
        'x\n',
      ),
      /invalid/,
    );
  });
});

describe('tasks.json env reaches the runs of an episode', () => {
  test("the broken script sees the task's variables (simulated mode)", async () => {
    const dir = join(root, 'envtask');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'env_task.py'),
      [
        'import os, sys',
        'assert os.environ["SM_MODEL_DIR"] == "out/model", "env was %r" % os.environ.get("SM_MODEL_DIR")',
        'from transformers import AutoTokenizer',
        'print("ok")',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'env_task', env: { SM_MODEL_DIR: 'out/model' } }]));
    const { ForgeEnvironment } = await import('../../src/env/episode/environment');
    const env = new ForgeEnvironment({ taskDirs: [dir], timeoutMs: 30_000 });
    try {
      await env.reset({ taskId: 'env_task', seed: 1 });
      const broken = await env.step({
        breakage: { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } },
      });
      assert.equal(broken.info.error, undefined, String(broken.info.error));
      // Past the environment assertion, to the renamed import.
      assert.match(env.state!.broken_execution!.stderr, /AutoTokeniser/);
      assert.doesNotMatch(env.state!.broken_execution!.stderr, /env was/);
    } finally {
      await env.dispose();
    }
  });

  test('a dangerous variable name in tasks.json env is refused when the folder loads', () => {
    const dir = join(root, 'badenv');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 't.py'), 'print(1)\n');
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 't', env: { LD_PRELOAD: '/x.so' } }]));
    const loaded = loadTaskFolder(dir);
    assert.ok(
      loaded.problems.some((p) => /LD_PRELOAD/.test(p)),
      loaded.problems.join('\n'),
    );
  });
});

describe('forgeenv make-task: usage and exit codes', () => {
  test('help 0; no script, a missing file, an unknown snapshot or mode: 2 with the reason', async () => {
    const { main } = await import('../../src/cli/main');
    const run = async (argv: string[]) => {
      const out: string[] = [];
      const err: string[] = [];
      const code = await main(
        argv,
        (s) => out.push(s),
        (s) => err.push(s),
      );
      return { code, out: out.join('\n'), err: err.join('\n') };
    };
    const help = await run(['make-task', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.out, /--upgrade-to ID/);
    assert.equal((await run(['make-task'])).code, 2);
    const missing = await run(['make-task', join(root, 'nope.py')]);
    assert.equal(missing.code, 2);
    assert.match(missing.err, /does not exist/);
    const script = join(root, 'cli.py');
    writeFileSync(script, 'print(1)\n');
    const snap = await run(['make-task', script, '--snapshot', '1999-01', '--task-dir', join(root, 'cli-tasks')]);
    assert.equal(snap.code, 2);
    assert.match(snap.err, /unknown snapshot "1999-01"/);
    assert.equal((await run(['make-task', script, '--mode', 'fast'])).code, 2);
  });

  test('a script that does not parse is refused (exit 1) and nothing is written', async () => {
    const { main } = await import('../../src/cli/main');
    const script = join(root, 'broken.py');
    writeFileSync(script, 'def f(:\n');
    const dir = join(root, 'refused-tasks');
    const out: string[] = [];
    const code = await main(
      ['make-task', script, '--task-dir', dir, '--json'],
      (s) => out.push(s),
      () => undefined,
    );
    assert.equal(code, 1);
    const result = JSON.parse(out.join('\n')) as { refusal?: { rule: string } };
    assert.equal(result.refusal?.rule, 'syntax-error');
    assert.throws(() => readFileSync(join(dir, 'tasks.json')));
  });
});

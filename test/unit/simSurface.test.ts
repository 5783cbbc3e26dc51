// The API surface layer (resources/simlibs/_forgeenv_sim/surface.py): real python3 runs small probes
// against the fixture data in test/fixtures/snapshot-api (format: docs/snapshots.md).
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { simlibsDir } from '../../src/env/paths';

const FIXTURE = join(__dirname, '..', 'fixtures', 'snapshot-api');
const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function python(code: string, env: Record<string, string>) {
  const cwd = mkdtempSync(join(tmpdir(), 'forgeenv-surface-'));
  dirs.push(cwd);
  const r = spawnSync('python3', ['-c', code], {
    cwd,
    encoding: 'utf8',
    timeout: 30_000,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PYTHONDONTWRITEBYTECODE: '1', ...env },
  });
  return { status: r.status, stdout: r.stdout ?? '', stderr: r.stderr ?? '' };
}

/** Runs `code` under the simulated libraries with the layer on for `snapshot`. */
function sim(code: string, snapshot: string, extra: Record<string, string> = {}) {
  return python(code, { PYTHONPATH: simlibsDir(), FORGEENV_API_DIR: FIXTURE, FORGEENV_SNAPSHOT: snapshot, ...extra });
}

// Each probe prints one line: OK <value> or the exception as `Type: message`.
const PROBE = (body: string) => `
try:
${body
  .trim()
  .split('\n')
  .map((l) => '    ' + l)
  .join('\n')}
except BaseException as e:
    print("%s: %s" % (type(e).__name__, e))
`;

const Param = z.union([z.tuple([z.string(), z.string()]), z.tuple([z.string(), z.string(), z.unknown()])]);
const Data = z.object({
  objects: z.record(z.string(), z.object({ init: z.array(Param).nullish(), signature: z.array(Param).nullish() }).passthrough()),
});

function realParams(snapshot: string, key: string, field: 'init' | 'signature'): z.infer<typeof Param>[] {
  const data = Data.parse(JSON.parse(readFileSync(join(FIXTURE, snapshot, 'transformers.json'), 'utf8')));
  const params = data.objects[key]?.[field];
  assert.ok(params, `${key} has no ${field} in the fixture`);
  return params;
}

/** Python source of a real function with exactly these parameters (defaults None), in `class Owner:` when given. */
function realDef(owner: string | undefined, name: string, params: z.infer<typeof Param>[]): string {
  const parts: string[] = [];
  let star = false;
  params.forEach(([n, kind, ...rest], i) => {
    const d = rest.length ? '=None' : '';
    if (kind === 'p') {
      parts.push(n + d);
      if (params[i + 1]?.[1] !== 'p') parts.push('/');
    } else if (kind === 'pk') parts.push(n + d);
    else if (kind === '*') {
      parts.push('*' + n);
      star = true;
    } else if (kind === 'k') {
      if (!star) parts.push('*');
      star = true;
      parts.push(n + d);
    } else parts.push('**' + n);
  });
  const def = `def ${name}(${parts.join(', ')}):\n    return None\n`;
  return owner ? `class ${owner}:\n${def.replace(/^/gm, '    ')}\n` : def;
}

/** What CPython itself says for `call` against the real signature (no simulated libraries involved). */
function cpython(defSource: string, call: string): string {
  const r = python(defSource + PROBE(call), {});
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.trim();
}

describe('call binding against the real signature', () => {
  const init = realParams('2024-09', 'transformers.training_args.TrainingArguments', 'init');
  const trainingArgs = realDef('TrainingArguments', '__init__', init);
  const setSeed = realDef(undefined, 'set_seed', realParams('2024-09', 'transformers.trainer_utils.set_seed', 'signature'));

  const cases: [string, string, string][] = [
    ['unexpected keyword', trainingArgs, "TrainingArguments.__init__(None, output_dir='o', bogus_option=1)"],
    ['missing required', trainingArgs, 'TrainingArguments.__init__(None)'],
    ['too many positionals', setSeed, 'set_seed(1, 2, 3)'],
  ];
  for (const [what, def, call] of cases) {
    test(`${what}: the sim's message equals CPython's for the real signature`, () => {
      const expected = cpython(def, call);
      assert.match(expected, /^TypeError: /);
      const simCall = call
        .replace('TrainingArguments.__init__(None, ', 'TrainingArguments(')
        .replace('TrainingArguments.__init__(None)', 'TrainingArguments()');
      const imports = 'from transformers import TrainingArguments, set_seed';
      const r = sim(PROBE(`${imports}\n${simCall}`), '2024-09');
      assert.equal(r.status, 0, r.stderr);
      assert.equal(r.stdout.trim(), expected);
    });
  }

  test('a removed keyword is the real TypeError in the snapshot that lacks it, accepted in the one that has it', () => {
    const code = PROBE(
      `from transformers import TrainingArguments\nprint("OK", TrainingArguments(output_dir="o", evaluation_strategy="steps", eval_steps=5).eval_strategy)`,
    );
    assert.equal(
      sim(code, 'fx-removed').stdout.trim(),
      "TypeError: TrainingArguments.__init__() got an unexpected keyword argument 'evaluation_strategy'",
    );
    assert.equal(sim(code, '2024-09').stdout.trim(), 'OK steps');
  });

  test('our hand-written implementation still runs after binding, and real-but-unsimulated keywords are kept', () => {
    const r = sim(
      PROBE(`
from transformers import TrainingArguments
a = TrainingArguments("o", eval_strategy="steps", logging_steps=7, split_batches=True)
print("OK", a.do_eval, a.eval_steps, type(a.eval_strategy).__name__, a.split_batches, a.output_dir)`),
      '2024-09',
    );
    assert.equal(r.stdout.trim(), 'OK True 7 IntervalStrategy True o', r.stderr);
  });
});

describe('modules and names follow the data', () => {
  test("a module the data lacks is CPython's ModuleNotFoundError", () => {
    const r = sim(PROBE('import transformers.no_such_module'), '2024-09');
    assert.equal(r.stdout.trim(), "ModuleNotFoundError: No module named 'transformers.no_such_module'");
  });

  test('a module the data has but the stand-ins lack is built, its names resolve to our implementation', () => {
    const r = sim(
      PROBE(`
import transformers
from transformers.models.llama.modeling_llama import LlamaForCausalLM
from accelerate.utils import set_seed
print("OK", LlamaForCausalLM is transformers.LlamaForCausalLM, LlamaForCausalLM.__name__, callable(set_seed))`),
      '2024-09',
    );
    assert.equal(r.stdout.trim(), 'OK True LlamaForCausalLM True', r.stderr);
    // fx-removed records no llama module (our stand-in has a transformers/models folder of its own).
    assert.match(
      sim(PROBE('import transformers.models.llama.modeling_llama'), 'fx-removed').stdout.trim(),
      /^ModuleNotFoundError: No module named 'transformers\.models(\.llama)?'$/,
    );
  });

  test("a name absent from the snapshot: the real ImportError and the data's missing_getattr wording", () => {
    const r = sim(PROBE('from transformers import AdamW'), 'fx-removed');
    assert.match(r.stdout.trim(), /^ImportError: cannot import name 'AdamW' from 'transformers' \(.*transformers\/__init__\.py\)$/);
    assert.equal(
      sim(PROBE('import transformers\ntransformers.AdamW'), 'fx-removed').stdout.trim(),
      'AttributeError: module transformers has no attribute AdamW',
    );
    assert.match(sim(PROBE('from transformers import AdamW\nprint("OK", AdamW.__name__)'), '2024-09').stdout, /^OK AdamW$/m);
  });

  test('a name the data has is not hidden by a hand-written version gate', () => {
    // Our stand-in drops AutoModelWithLMHead from 5.0; the data (here with versions saying 5.0) keeps it.
    const versions = JSON.stringify({ transformers: '5.0.0' });
    const code = PROBE('from transformers import AutoModelWithLMHead\nprint("OK", AutoModelWithLMHead.__name__)');
    assert.equal(sim(code, 'fx-removed', { FORGEENV_LIBRARY_VERSIONS: versions }).stdout.trim(), 'OK AutoModelWithLMHead');
    const off = python(code, {
      PYTHONPATH: simlibsDir(),
      FORGEENV_LIBRARY_VERSIONS: versions,
      FORGEENV_API_DIR: FIXTURE,
      FORGEENV_SNAPSHOT: 'no-such-snapshot',
    });
    assert.match(off.stdout.trim(), /^ImportError: cannot import name 'AutoModelWithLMHead'/);
  });

  test('generic stubs for recorded objects without an implementation', () => {
    const r = sim(
      PROBE(`
from transformers.integrations import WandbCallback, rewrite_logs
cb = WandbCallback()
print("OK", rewrite_logs({}), cb.setup(1, 2, 3), type(cb).__qualname__)
try:
    cb.setup(1, 2)
except TypeError as e:
    print("TypeError:", e)
try:
    rewrite_logs()
except TypeError as e:
    print("TypeError:", e)
cb.no_such_method`),
      'fx-removed',
    );
    assert.deepEqual(r.stdout.trim().split('\n'), [
      'OK None None WandbCallback',
      "TypeError: WandbCallback.setup() missing 1 required positional argument: 'model'",
      "TypeError: rewrite_logs() missing 1 required positional argument: 'd'",
      "AttributeError: 'WandbCallback' object has no attribute 'no_such_method'",
    ]);
  });
});

describe('attributes and warnings', () => {
  test('a removed method is the real AttributeError on instances and classes', () => {
    const code = PROBE(`
from transformers import AutoTokenizer, T5TokenizerFast
tok = AutoTokenizer.from_pretrained("t5-small")
try:
    tok.as_target_tokenizer
except AttributeError as e:
    print("AttributeError:", e)
T5TokenizerFast.as_target_tokenizer
`);
    assert.deepEqual(sim(code, 'fx-removed').stdout.trim().split('\n'), [
      "AttributeError: 'T5TokenizerFast' object has no attribute 'as_target_tokenizer'",
      "AttributeError: type object 'T5TokenizerFast' has no attribute 'as_target_tokenizer'",
    ]);
    // In 4.45 the method exists (our stand-in gates it away from 4.45: the data wins).
    const present = sim(
      PROBE(
        'from transformers import AutoTokenizer\ntok = AutoTokenizer.from_pretrained("t5-small")\nwith tok.as_target_tokenizer():\n    print("OK")',
      ),
      '2024-09',
    );
    assert.equal(present.stdout.trim(), 'OK', present.stderr);
  });

  test("the data's deprecation is emitted once, with its category and message", () => {
    const r = sim(
      PROBE(`
import warnings
from transformers import TrainingArguments
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    TrainingArguments(output_dir="o", evaluation_strategy="no")
for x in w:
    print(x.category.__name__, x.message)`),
      '2024-09',
    );
    assert.equal(
      r.stdout.trim(),
      'FutureWarning `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead',
    );
  });

  test('the layer is off without data: stand-ins behave as before', () => {
    const r = python(PROBE('import transformers\nprint("OK", type(transformers).__name__)'), {
      PYTHONPATH: simlibsDir(),
      FORGEENV_API_DIR: FIXTURE,
      FORGEENV_SNAPSHOT: 'no-such-snapshot',
    });
    assert.equal(r.stdout.trim(), 'OK module');
    assert.equal(sim(PROBE('import transformers\nprint("OK", type(transformers).__name__)'), '2024-09').stdout.trim(), 'OK _SurfaceModule');
  });
});

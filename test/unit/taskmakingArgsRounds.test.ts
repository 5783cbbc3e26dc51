// Rules that save rounds or answer a script's own argument errors, on recorded error texts (as the real
// libraries print them) and tiny scripts written here: the synthetic dataset chosen at once when the
// placeholder lacks the script's columns, an environment variable's siblings set together, the
// load_best_model_at_end consistency checks of TrainingArguments, and the train-and-eval mode.
import { strict as assert } from 'node:assert';
import { describe, test } from 'node:test';
import { optionValue } from '../../src/env/taskmaking/argEdits';
import { parseHelpOptions } from '../../src/env/taskmaking/parserOptions';
import { diagnose, mountFor, requiredEnvSiblings, type RuleContext } from '../../src/env/taskmaking/rules';
import { SYNTHETIC_DATASET_ID } from '../../src/env/hub/datasetTable';

const traceback = (last: string) =>
  `Traceback (most recent call last):\n  File "/tmp/run/train.py", line 12, in <module>\n    main()\n${last}\n`;

const QA_SCRIPT = [
  'import argparse',
  'from datasets import load_dataset',
  'p = argparse.ArgumentParser()',
  'p.add_argument("--dataset_name", type=str, default=None)',
  'p.add_argument("--train_file", type=str, default=None)',
  'args = p.parse_args()',
  'if args.dataset_name is None and args.train_file is None:',
  '    raise ValueError("Need either a dataset name or a training/validation file.")',
  'raw = load_dataset(args.dataset_name)',
  'source_column, target_column = "question", "answer"',
  'def preprocess(examples):',
  '    return tok(examples[source_column], text_target=examples[target_column])',
  'train = raw["train"].map(preprocess, batched=True)',
  'test = raw["test"].map(preprocess, batched=True)',
].join('\n');

const ctx = (over: Partial<RuleContext>): RuleContext => ({
  script: QA_SCRIPT,
  args: [],
  env: {},
  options: parseHelpOptions('usage: train.py [-h] [--dataset_name DATASET_NAME] [--train_file TRAIN_FILE]'),
  hub: { needs: { models: [], datasets: [] }, refusals: [] },
  ...over,
});

describe('missing-dataset: the synthetic dataset at once when the placeholder lacks the columns', () => {
  test('a script reading question/answer gets the synthetic dataset in one round', () => {
    const d = diagnose(traceback('ValueError: Need either a dataset name or a training/validation file.'), ctx({}));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(optionValue(d.outcome.args!, 'dataset_name'), SYNTHETIC_DATASET_ID);
    assert.match(d.outcome.adaptation.change, /question, answer/);
  });

  test('a script reading only text and label keeps the placeholder (its schema fits)', () => {
    const script = QA_SCRIPT.replace('examples[source_column], text_target=examples[target_column]', 'examples["text"]');
    const d = diagnose(traceback('ValueError: Need either a dataset name or a training/validation file.'), ctx({ script }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'dataset_name'), 'imdb');
  });

  test('simulated mode (no hub) keeps the placeholder', () => {
    const d = diagnose(traceback('ValueError: Need either a dataset name or a training/validation file.'), ctx({ hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'dataset_name'), 'imdb');
  });
});

describe('missing-environment-variable: siblings the script also requires, together', () => {
  const script = [
    'import os',
    'p.add_argument("--training_dir", default=os.environ["SM_CHANNEL_TRAIN"])',
    'p.add_argument("--test_dir", default=os.environ["SM_CHANNEL_TEST"])',
    'p.add_argument("--model_dir", default=os.environ.get("SM_MODEL_DIR", "out"))',
    'rank = os.environ["LOCAL_RANK"]',
  ].join('\n');

  test('the same prefix, by subscript only, launcher variables excluded', () => {
    assert.deepEqual(requiredEnvSiblings(script, 'SM_CHANNEL_TRAIN'), ['SM_CHANNEL_TEST']);
    assert.deepEqual(requiredEnvSiblings(script, 'LOCAL_WORLD_SIZE'), []);
  });

  test('one round sets both channels', () => {
    const d = diagnose(traceback("KeyError: 'SM_CHANNEL_TRAIN'"), ctx({ script, hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.env, { SM_CHANNEL_TRAIN: 'data/train', SM_CHANNEL_TEST: 'data/test' });
  });

  test('a sibling already set keeps its value', () => {
    const d = diagnose(traceback("KeyError: 'SM_CHANNEL_TRAIN'"), ctx({ script, env: { SM_CHANNEL_TEST: 'mine' }, hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.deepEqual(d.outcome.env, { SM_CHANNEL_TEST: 'mine', SM_CHANNEL_TRAIN: 'data/train' });
  });
});

// Recorded from transformers 4.41 (snapshot 2024-06): TrainingArguments(evaluation_strategy="epoch",
// load_best_model_at_end=True), and evaluation_strategy="steps", eval_steps=500, save_steps=8.
const STRATEGY_ERROR = traceback(
  'ValueError: --load_best_model_at_end requires the save and eval strategy to match, but found\n- Evaluation strategy: IntervalStrategy.EPOCH\n- Save strategy: IntervalStrategy.STEPS',
);
const STEPS_ERROR = traceback(
  'ValueError: --load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps, but found 8, which is not a round multiple of 500.',
);

describe('best-model-checkpoint-mismatch: load_best_model_at_end needs saving and evaluation in step', () => {
  const hf = parseHelpOptions('usage: t.py [--save_strategy SAVE_STRATEGY] [--eval_steps EVAL_STEPS] [--save_steps SAVE_STEPS]');

  test('through the parser: the save strategy follows the evaluation strategy', () => {
    const d = diagnose(STRATEGY_ERROR, ctx({ options: hf, args: ['--save_steps', '8'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(optionValue(d.outcome.args!, 'save_strategy'), 'epoch');
  });

  test("through the parser: eval_steps follows the bounded run's save_steps", () => {
    const d = diagnose(STEPS_ERROR, ctx({ options: hf, args: ['--save_steps', '8'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(optionValue(d.outcome.args!, 'eval_steps'), '8');
  });

  test("the script's own TrainingArguments, no option reaching them: refused, naming both strategies", () => {
    const d = diagnose(STRATEGY_ERROR, ctx({ hub: undefined }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.equal(d.outcome.rule, 'best-model-checkpoint-mismatch');
    assert.match(d.outcome.reason, /evaluation strategy "epoch" and save strategy "steps"/);
  });
});

describe('train-and-eval-mode: an unknown error of a train-only run tries --do_eval once', () => {
  const options = parseHelpOptions('usage: t.py [--do_train [DO_TRAIN]] [--do_eval [DO_EVAL]]');
  const err = traceback("TypeError: unhashable type: 'dict'");

  test('--do_train without --do_eval: --do_eval is added', () => {
    const d = diagnose(err, ctx({ options, args: ['--do_train'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt');
    assert.equal(d.outcome.adaptation.rule, 'train-and-eval-mode');
    assert.deepEqual(d.outcome.args, ['--do_train', '--do_eval']);
  });

  test('already evaluating, or no such option: not this rule (the error stays unrecognised)', () => {
    assert.equal(diagnose(err, ctx({ options, args: ['--do_train', '--do_eval'], hub: undefined })), undefined);
    assert.equal(diagnose(err, ctx({ args: ['--do_train'], hub: undefined })), undefined);
  });

  test('an error a rule knows is answered by that rule, not this one', () => {
    const d = diagnose(traceback("ModuleNotFoundError: No module named 'librosa'"), ctx({ options, args: ['--do_train'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'refuse' && d.outcome.rule === 'module-not-installed');
  });
});

describe('output-path-outside-run: a literal folder in the code becomes a task mount', () => {
  const script = [
    'import os',
    'trainer.save_model("/opt/ml/model/")',
    'os.makedirs("/opt/ml/model/code", exist_ok=True)',
    'open("/opt/ml/model/code/inference.py", "w").write("x")',
  ].join('\n');
  const denied = traceback("PermissionError: [Errno 13] Permission denied: '/opt'");

  test('the outermost folder is mounted, recorded as a mount adaptation', () => {
    const d = diagnose(denied, ctx({ script, hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.kind, 'mount');
    assert.deepEqual(d.outcome.mounts, ['/opt/ml/model']);
  });

  test('once mounted, the same denial is refused with the path named (no loop)', () => {
    const d = diagnose(denied, ctx({ script, mounts: ['/opt/ml/model'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'refuse');
    assert.match(d.outcome.reason, /\/opt\/ml\/model/);
  });

  test('a system folder is never mounted (RunMountsSchema): refused', () => {
    assert.equal(mountFor(['/etc/app/out']), undefined);
    assert.equal(mountFor(['/opt/ml/output/result.txt']), '/opt/ml/output');
    const d = diagnose(
      traceback("PermissionError: [Errno 13] Permission denied: '/etc/app'"),
      ctx({ script: 'open("/etc/app/out", "w")\n', hub: undefined }),
    );
    assert.ok(d && d.outcome.kind === 'refuse');
  });
});

describe('snapshot fallback: an Enum member a later release removed', () => {
  test('AttributeError: TPU (accelerate DistributedType.TPU, now XLA) moves to an older snapshot; train-and-eval-mode stays out', async () => {
    const { fallbackSnapshot } = await import('../../src/env/taskmaking/makeTask');
    const fit = (id: string) => ({ id, date: id, missing: [], unknown: 0, ready: true });
    const fits = [fit('2024-04'), fit('2025-09')];
    const refusal = { rule: 'unrecognised-error', reason: 'no rule recognises the error: AttributeError: TPU' };
    assert.equal(fallbackSnapshot({ refusal }, fits, ['2025-09']), '2024-04');
    const other = { rule: 'unrecognised-error', reason: "no rule recognises the error: AttributeError: can't set attribute" };
    assert.equal(fallbackSnapshot({ refusal: other }, fits, ['2025-09']), undefined);
    const options = parseHelpOptions('usage: t.py [--do_train [DO_TRAIN]] [--do_eval [DO_EVAL]]');
    assert.equal(diagnose(traceback('AttributeError: TPU'), ctx({ options, args: ['--do_train'], hub: undefined })), undefined);
  });
});

describe('placeholder-model-kind: an unknown error with a placeholder of another kind than the Auto class', () => {
  const script = [
    'from transformers import AutoModelForCTC, AutoTokenizer',
    'tok = AutoTokenizer.from_pretrained(training_args.output_dir, tokenizer_type=config.model_type)',
    'model = AutoModelForCTC.from_pretrained(model_args.model_name_or_path)',
  ].join('\n');
  const options = parseHelpOptions('usage: t.py [--model_name_or_path MODEL_NAME_OR_PATH] [--do_train [DO_TRAIN]] [--do_eval [DO_EVAL]]');
  // Recorded (transformers 4.41): GPT2Tokenizer given a character vocabulary and no merges file.
  const err = traceback('TypeError: expected str, bytes or os.PathLike object, not NoneType');

  test("the placeholder gpt2 becomes the Auto class's well-known model, before the train-and-eval mode", () => {
    const d = diagnose(err, ctx({ script, options, args: ['--model_name_or_path', 'gpt2', '--do_train'], hub: undefined }));
    assert.ok(d && d.outcome.kind === 'adapt', JSON.stringify(d));
    assert.equal(d.outcome.adaptation.rule, 'placeholder-model-kind');
    assert.equal(optionValue(d.outcome.args!, 'model_name_or_path'), 'facebook/wav2vec2-base');
  });

  test("the script's own model id, or a model of the right kind, is left alone", () => {
    const own = `${script}\nDEFAULT = "gpt2"\n`;
    const d = diagnose(err, ctx({ script: own, options, args: ['--model_name_or_path', 'gpt2', '--do_train'], hub: undefined }));
    assert.notEqual(d?.outcome.kind === 'adapt' ? d.outcome.adaptation.rule : undefined, 'placeholder-model-kind');
    const right = diagnose(
      err,
      ctx({ script, options, args: ['--model_name_or_path', 'facebook/wav2vec2-base', '--do_train'], hub: undefined }),
    );
    assert.notEqual(right?.outcome.kind === 'adapt' ? right.outcome.adaptation.rule : undefined, 'placeholder-model-kind');
  });
});

describe('repo-local-file-missing: a file the script reads beside itself', () => {
  test('refused naming the file; a missing file not read beside __file__ is not this rule', () => {
    const script =
      'import os, shutil\nshutil.copyfile(\n    os.path.join(os.path.dirname(__file__), "inference.py"),\n    "/opt/ml/model/code/inference.py",\n)\n';
    const err = traceback("FileNotFoundError: [Errno 2] No such file or directory: 'inference.py'");
    const d = diagnose(err, ctx({ script: script.replace('(\n    os.path.join', '(os.path.join'), hub: undefined }));
    assert.ok(d && d.outcome.kind === 'refuse', JSON.stringify(d));
    assert.equal(d.outcome.rule, 'repo-local-file-missing');
    assert.match(d.outcome.reason, /inference\.py/);
    const other = diagnose(err, ctx({ script: 'open("inference.py")\n', hub: undefined }));
    assert.notEqual(other?.outcome.kind === 'refuse' ? other.outcome.rule : undefined, 'repo-local-file-missing');
  });
});

describe('api-in-no-snapshot: API errors at every snapshot the fallback tried', () => {
  test("each snapshot's error is named; a refusal without fallbacks, or not an API error, is unchanged", async () => {
    const { acrossSnapshots } = await import('../../src/env/taskmaking/makeTask');
    const fallbacks = [
      {
        rule: 'snapshot-fallback',
        error: 'no rule recognises the error: AttributeError: TPU',
        change: 'snapshot 2025-09 -> 2025-03 (a library API error)',
      },
      { rule: 'short-run', error: 'bounded run', change: '--max_steps 8' },
    ];
    const last = {
      rule: 'unrecognised-error',
      reason: "no rule recognises the error: AttributeError: 'GPT2Config' object has no attribute 'dtype'",
    };
    const r = acrossSnapshots(last, '2025-03', fallbacks);
    assert.equal(r.rule, 'api-in-no-snapshot');
    assert.match(r.reason, /at 2025-09: AttributeError: TPU; at 2025-03: AttributeError: 'GPT2Config' object has no attribute 'dtype'/);
    assert.deepEqual(acrossSnapshots(last, '2025-03', fallbacks.slice(1)), last);
    const other = { rule: 'unrecognised-error', reason: 'no rule recognises the error: IndexError: index out of range' };
    assert.deepEqual(acrossSnapshots(other, '2025-03', fallbacks), other);
    // No run at another snapshot, but its recorded API predicts the same error there: refused the same way, saying so.
    const predicted = acrossSnapshots(last, '2024-06', fallbacks.slice(1), ['2023-12', '2024-04']);
    assert.equal(predicted.rule, 'api-in-no-snapshot');
    assert.match(predicted.reason, /at 2024-06: AttributeError: .*; by their recorded API the same error recurs at 2023-12, 2024-04$/);
  });

  test('the snapshots whose recorded API accepts the failing call, and the imports they lack, are named', async () => {
    const { acrossSnapshots, acceptedWhereImportsLack } = await import('../../src/env/taskmaking/makeTask');
    const { apiErrorFixedAt } = await import('../../src/env/taskmaking/apiRecurrence');
    // transformers' get_parameter_names gained its third parameter (forbidden_layer_names) in 4.50 (snapshot 2025-03).
    const stderr = [
      'Traceback (most recent call last):',
      '  File "train.py", line 9, in <module>',
      '    names = get_parameter_names(model, [torch.nn.LayerNorm], ["bias"])',
      'TypeError: get_parameter_names() takes 2 positional arguments but 3 were given',
    ].join('\n');
    assert.equal(apiErrorFixedAt(stderr, '2025-03'), true);
    assert.equal(apiErrorFixedAt(stderr, '2024-09'), false);
    assert.equal(apiErrorFixedAt(stderr.replace(/3 were/, '4 were'), '2025-03'), false);
    const fit = (id: string, date: string, missing: string[]) => ({ id, date, missing, unknown: 0, ready: true });
    const fits = [
      fit('2024-06', '2024-06-30', []),
      fit('2024-09', '2024-09-30', ['datasets.load_metric (line 3)']),
      fit('2025-03', '2025-03-31', ['datasets.load_metric (line 3)']),
      fit('2025-09', '2025-09-30', ['datasets.load_metric (line 3)', 'transformers.Trainer(tokenizer=) (line 8)']),
    ];
    assert.deepEqual(acceptedWhereImportsLack({ stdout: '', stderr }, fits)?.lacks, [
      'datasets.load_metric (line 3)',
      'transformers.Trainer(tokenizer=) (line 8) (at 2025-09)',
    ]);
    const accepted = acceptedWhereImportsLack({ stdout: '', stderr }, fits.slice(0, 3));
    assert.deepEqual(accepted, { ids: ['2025-03'], lacks: ['datasets.load_metric (line 3)'] });
    const last = { rule: 'unrecognised-error', reason: `no rule recognises the error: ${stderr.split('\n').pop()}` };
    const r = acrossSnapshots(last, '2024-06', [], ['2023-12'], accepted);
    assert.equal(r.rule, 'api-in-no-snapshot');
    assert.match(
      r.reason,
      /the recorded API of 2025-03 accepts that call, but there the script's imports lack datasets\.load_metric \(line 3\)$/,
    );
    assert.equal(acceptedWhereImportsLack({ stdout: '', stderr: 'IndexError: out of range' }, fits), undefined);
  });
});

describe("tasks.json mounts (make-task's output-path-outside-run) reach the task", () => {
  test('a valid mount is loaded; a system folder is a problem naming the field', async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { loadTaskFolder, TaskMetadataFileSchema } = await import('../../src/env/tasks/tasks');
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-mounts-test-'));
    try {
      writeFileSync(join(dir, 'sm.py'), 'import os\nos.makedirs("/opt/ml/model", exist_ok=True)\n');
      writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'sm', mounts: ['/opt/ml/model'] }]));
      const loaded = loadTaskFolder(dir);
      assert.deepEqual(loaded.problems, []);
      assert.deepEqual(loaded.tasks[0].mounts, ['/opt/ml/model']);
      assert.equal(TaskMetadataFileSchema.safeParse([{ task_id: 'sm', mounts: ['/etc/ml'] }]).success, false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('files the script reads beside __file__ come with it', () => {
  test('an existing sibling file becomes a task file; an absent one is left to repo-local-file-missing', async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { join } = await import('node:path');
    const { collectLocalImports, filesReadBesideScript } = await import('../../src/env/taskmaking/localImports');
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-beside-test-'));
    try {
      const script =
        'import os, shutil\nsrc = os.path.join(os.path.dirname(__file__), "inference.py")\ncfg = os.path.join(os.path.dirname(__file__), "conf/extra.json")\n';
      assert.deepEqual(filesReadBesideScript(script), ['inference.py', 'conf/extra.json']);
      writeFileSync(join(dir, 'train.py'), script);
      writeFileSync(join(dir, 'inference.py'), 'def model_fn(d):\n    return d\n');
      const local = collectLocalImports(join(dir, 'train.py'), script, undefined);
      assert.deepEqual(Object.keys(local.files), ['inference.py']);
      assert.match(local.files['inference.py'], /model_fn/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

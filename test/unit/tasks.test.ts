import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mulberry32, randomIndex } from '../../src/env/random';
import {
  countLines,
  deriveCategory,
  deriveDifficulty,
  describeScript,
  loadCorpus,
  loadTaskFolder,
  TaskSampler,
} from '../../src/env/tasks/tasks';
import { validateScript } from '../../src/env/scoring/validator';
import type { Task } from '../../src/env/schemas';

const dirs: string[] = [];
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
function folder(files: Record<string, string>): string {
  const d = mkdtempSync(join(tmpdir(), 'forgeenv-tasks-'));
  dirs.push(d);
  for (const [name, content] of Object.entries(files)) writeFileSync(join(d, name), content);
  return d;
}
const lines = (n: number) => Array.from({ length: n }, (_, i) => `x${i} = ${i}`).join('\n') + '\n';

describe('deriveDifficulty', () => {
  test('counts lines like Python splitlines()', () => {
    assert.equal(countLines(''), 0);
    assert.equal(countLines('a'), 1);
    assert.equal(countLines('a\n'), 1);
    assert.equal(countLines('a\n\n'), 2);
    assert.equal(countLines('a\r\nb\rc'), 3);
  });
  test('< 30 easy, < 60 medium, else hard', () => {
    assert.equal(deriveDifficulty(lines(29)), 'easy');
    assert.equal(deriveDifficulty(lines(30)), 'medium');
    assert.equal(deriveDifficulty(lines(59)), 'medium');
    assert.equal(deriveDifficulty(lines(60)), 'hard');
  });
});

describe('deriveCategory', () => {
  test('id words decide first', () => {
    const cases: Array<[string, string]> = [
      ['bert_ner', 'ner'],
      ['t5_summarization', 'seq2seq'],
      ['albert_qa', 'qa'],
      ['vit_cifar10', 'image_classification'],
      ['gpt2_textgen', 'text_generation'],
      ['simple_regression', 'regression'],
      ['tiny_mlp_mnist', 'tabular'],
      ['roberta_sentiment', 'text_classification'],
      ['electra_classification', 'text_classification'],
    ];
    for (const [id, category] of cases) assert.equal(deriveCategory('', id), category, id);
  });
  test('the script decides when the id says nothing', () => {
    assert.equal(deriveCategory('model = AutoModelForTokenClassification.from_pretrained(x)', 'my_task'), 'ner');
    assert.equal(deriveCategory('m = AutoModelForQuestionAnswering.from_pretrained(x)', 'job1'), 'qa');
    assert.equal(deriveCategory('m = AutoModelForSequenceClassification.from_pretrained("gpt2")', 'job2'), 'text_classification');
    assert.equal(deriveCategory('out = model.generate(**inputs)', 'job3'), 'text_generation');
    assert.equal(deriveCategory('loss_fn = nn.MSELoss()', 'job4'), 'regression');
    assert.equal(deriveCategory('print("hello")', 'job5'), 'general');
  });
});

describe('describeScript', () => {
  test('module docstring, first paragraph, whitespace collapsed', () => {
    assert.equal(
      describeScript('#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n"""Train a\n  model.\n\nMore text."""\nimport torch\n'),
      'Train a model.',
    );
    assert.equal(describeScript("'single line doc'\nx = 1\n"), 'single line doc');
  });
  test('first comment when there is no docstring', () => {
    assert.equal(describeScript('#!/usr/bin/env python\n# Fine-tune a model\nimport torch\n'), 'Fine-tune a model');
    assert.equal(describeScript('x = 1\n'), '');
  });
});

describe('loadTaskFolder', () => {
  test('applies valid metadata and derives the rest', () => {
    const d = folder({
      'my_regression.py': '"""Fit a line."""\nimport torch\nprint("TRAINING_COMPLETE")\n',
      'notes.txt': 'ignored',
      'tasks.json': JSON.stringify([
        { task_id: 'my_regression', expected_loss_range: [0, 1], tags: ['custom'], library_versions: { transformers: '4.40.0' } },
      ]),
    });
    const { tasks, problems } = loadTaskFolder(d, { source: 'user' });
    assert.deepEqual(problems, []);
    assert.equal(tasks.length, 1);
    const t = tasks[0];
    assert.equal(t.task_id, 'my_regression');
    assert.equal(t.description, 'Fit a line.');
    assert.equal(t.difficulty, 'easy');
    assert.equal(t.category, 'regression');
    assert.deepEqual(t.expected_loss_range, [0, 1]);
    assert.deepEqual(t.expected_accuracy_range, [0, 1]);
    assert.deepEqual(t.tags, ['custom']);
    assert.deepEqual(t.library_versions, { transformers: '4.40.0' });
    assert.equal(t.source, 'user');
  });
  test('a corrupt tasks.json is a problem naming the file; scripts still load with defaults', () => {
    const d = folder({ 'a.py': '# A task\nprint(1)\n', 'tasks.json': '[{"task_id": "a",' });
    const { tasks, problems } = loadTaskFolder(d);
    assert.equal(tasks.length, 1);
    assert.equal(tasks[0].description, 'A task');
    assert.deepEqual(tasks[0].expected_loss_range, [0, 5]);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /tasks\.json: invalid JSON/);
    assert.ok(problems[0].includes(join(d, 'tasks.json')));
  });
  test('invalid metadata, orphan entries, bad names and non-files are reported, never thrown', () => {
    const d = folder({
      'good.py': 'print(1)\n',
      'bad name.py': 'print(2)\n',
      'tasks.json': JSON.stringify([{ task_id: 'good', expected_accuracy_range: [0.9, 0.1] }]),
    });
    mkdirSync(join(d, 'folder.py'));
    const r1 = loadTaskFolder(d);
    assert.deepEqual(
      r1.tasks.map((t) => t.task_id),
      ['good'],
    );
    assert.equal(r1.tasks[0].description, 'good training script');
    assert.ok(
      r1.problems.some((p) => /tasks\.json: invalid task metadata .*expected_accuracy_range/.test(p)),
      r1.problems.join('\n'),
    );
    assert.ok(r1.problems.some((p) => p.includes('bad name.py') && /not a valid task id/.test(p)));
    assert.ok(r1.problems.some((p) => p.includes('folder.py') && /not a regular file/.test(p)));
    // Category is always derived: an entry that sets it is refused (difficulty may be set, see below).
    const d2 = folder({ 'one.py': 'print(1)\n', 'tasks.json': JSON.stringify([{ task_id: 'two' }, { task_id: 'one', category: 'ner' }]) });
    const r2 = loadTaskFolder(d2);
    assert.equal(r2.tasks.length, 1);
    assert.ok(
      r2.problems.some((p) => /Unrecognized key/.test(p) && p.includes('category')),
      r2.problems.join('\n'),
    );
    const d4 = folder({ 'one.py': 'print(1)\n', 'tasks.json': JSON.stringify([{ task_id: 'one', difficulty: 'hard' }]) });
    assert.equal(loadTaskFolder(d4).tasks[0]?.difficulty, 'hard', "an entry's difficulty overrides the line-count rule");
    const d5 = folder({ 'one.py': 'print(1)\n', 'tasks.json': JSON.stringify([{ task_id: 'one', difficulty: 'extreme' }]) });
    assert.ok(
      loadTaskFolder(d5).problems.some((p) => p.includes('difficulty')),
      'an invalid difficulty names the field',
    );
    const d3 = folder({ 'one.py': 'print(1)\n', 'tasks.json': JSON.stringify([{ task_id: 'two' }]) });
    assert.deepEqual(loadTaskFolder(d3).problems, [`${join(d3, 'tasks.json')}: entry "two" has no loaded script two.py`]);
  });
  test('a missing folder is one problem', () => {
    const r = loadTaskFolder(join(tmpdir(), 'forgeenv-no-such-folder-xyz'));
    assert.deepEqual(r.tasks, []);
    assert.equal(r.problems.length, 1);
    assert.match(r.problems[0], /task folder cannot be read/);
  });
});

describe('loadCorpus', () => {
  test('the built-in corpus: the original ten ids, all difficulties, valid scripts', () => {
    const { tasks, problems } = loadCorpus();
    assert.deepEqual(problems, []);
    const ids = tasks.map((t) => t.task_id);
    for (const id of [
      'distilbert_sst2',
      'bert_ner',
      'gpt2_textgen',
      't5_summarization',
      'vit_cifar10',
      'roberta_sentiment',
      'albert_qa',
      'electra_classification',
      'tiny_mlp_mnist',
      'simple_regression',
    ]) {
      assert.ok(ids.includes(id), id);
    }
    for (const level of ['easy', 'medium', 'hard'] as const) assert.ok(tasks.filter((t) => t.difficulty === level).length >= 2, level);
    for (const t of tasks) {
      assert.equal(t.source, 'builtin');
      assert.deepEqual(validateScript(t.script_content), [], t.task_id);
      assert.match(t.script_content, /print\("TRAINING_COMPLETE"\)\s*$/, t.task_id);
      const n = countLines(t.script_content);
      assert.ok(n >= 20 && n <= 150, `${t.task_id}: ${n} lines`);
      assert.ok(t.description.length > 20, t.task_id);
      assert.notEqual(t.category, 'general', t.task_id);
    }
  });
  test('user folders add tasks; a clashing id is reported and skipped', () => {
    const d = folder({ 'distilbert_sst2.py': 'print("mine")\n', 'my_extra.py': '"""Extra."""\nprint(1)\n', 'tasks.json': '{oops' });
    const { tasks, problems } = loadCorpus({ extraDirs: [d, join(d, 'missing')] });
    const builtin = tasks.find((t) => t.task_id === 'distilbert_sst2');
    assert.equal(builtin?.source, 'builtin');
    assert.notEqual(builtin?.script_content, 'print("mine")\n');
    assert.equal(tasks.find((t) => t.task_id === 'my_extra')?.source, d);
    assert.ok(problems.some((p) => p.includes(join(d, 'distilbert_sst2.py')) && /already used by the built-in corpus; skipped/.test(p)));
    assert.ok(problems.some((p) => p.includes(join(d, 'tasks.json')) && /invalid JSON/.test(p)));
    assert.ok(problems.some((p) => p.includes(join(d, 'missing'))));
  });
});

describe('TaskSampler and mulberry32', () => {
  const mk = (id: string, difficulty: Task['difficulty']): Task => ({
    task_id: id,
    description: id,
    script_content: '',
    difficulty,
    category: 'general',
    expected_loss_range: [0, 5],
    expected_accuracy_range: [0, 1],
    tags: [],
    source: 'test',
  });
  const sampler = new TaskSampler([mk('e1', 'easy'), mk('e2', 'easy'), mk('h1', 'hard')]);
  test('mulberry32 is deterministic and in [0, 1)', () => {
    const a = mulberry32(42);
    const b = mulberry32(42);
    const xs = Array.from({ length: 100 }, () => a());
    assert.deepEqual(
      xs,
      Array.from({ length: 100 }, () => b()),
    );
    assert.ok(xs.every((x) => x >= 0 && x < 1));
    assert.notDeepEqual(xs.slice(0, 5), Array.from({ length: 5 }, mulberry32(43)));
    assert.equal(
      randomIndex(() => 0.999999, 3),
      2,
    );
    assert.throws(() => randomIndex(() => 0.5, 0), RangeError);
  });
  test('sample honours difficulty, falls back to all, and replays from a seed', () => {
    const rng = mulberry32(1);
    for (let i = 0; i < 20; i++) assert.equal(sampler.sample(rng, 'easy').difficulty, 'easy');
    assert.equal(sampler.sample(rng, 'hard').task_id, 'h1');
    const seen = new Set(Array.from({ length: 50 }, () => sampler.sample(rng, 'medium').task_id));
    assert.deepEqual([...seen].sort(), ['e1', 'e2', 'h1']);
    const replay = (seed: number) =>
      Array.from(
        { length: 10 },
        (
          (r) => () =>
            sampler.sample(r).task_id
        )(mulberry32(seed)),
      );
    assert.deepEqual(replay(7), replay(7));
  });
  test('getById, all, and the empty corpus', () => {
    assert.equal(sampler.getById('h1')?.difficulty, 'hard');
    assert.equal(sampler.getById('nope'), undefined);
    assert.equal(sampler.all.length, 3);
    sampler.all.pop();
    assert.equal(sampler.all.length, 3);
    assert.throws(() => new TaskSampler([]).sample(mulberry32(1)), /corpus is empty/);
  });
});

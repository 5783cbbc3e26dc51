// "Make Task from This Script" files: any script becomes a task with its args, extra files,
// difficulty and snapshot; the corpus loader reads them back, bad input names the field, and an
// unusable tasks.json is never overwritten.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTaskFolder } from '../../src/env/tasks/tasks';
import { joinArgsLine, saveScriptTask, splitArgsLine, TaskSaveError } from '../../src/editor/lab/core/taskWriter';

const script = [
  'from dataclasses import dataclass, field',
  'from transformers import HfArgumentParser',
  '@dataclass',
  'class Args:',
  '    model_name_or_path: str = field()',
  'args, = HfArgumentParser(Args).parse_args_into_dataclasses()',
  'print(args.model_name_or_path)',
  '',
].join('\n');

describe('saveScriptTask', () => {
  test('writes the script and an entry the loader reads back with args, files, difficulty and versions', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-mktask-'));
    const saved = await saveScriptTask({
      dir,
      taskId: 'my_train',
      script,
      description: 'user script',
      args: ['--model_name_or_path', 'gpt2', '--config', 'cfg.yaml'],
      files: { 'cfg.yaml': 'lr: 0.1\n' },
      difficulty: 'hard',
      versions: { transformers: '4.45.0', datasets: '3.0.0' },
      tags: ['snapshot:2024-09'],
      taken: new Set(),
    });
    assert.equal(readFileSync(saved.scriptPath, 'utf8'), script);
    const { tasks, problems } = loadTaskFolder(dir);
    assert.deepEqual(problems, []);
    const t = tasks.find((x) => x.task_id === 'my_train');
    assert.ok(t);
    assert.deepEqual(t.args, ['--model_name_or_path', 'gpt2', '--config', 'cfg.yaml']);
    assert.deepEqual(t.files, { 'cfg.yaml': 'lr: 0.1\n' });
    // The script has 8 lines, which the line-count rule calls easy: the entry's difficulty wins.
    assert.equal(t.difficulty, 'hard');
    assert.deepEqual(t.library_versions, { transformers: '4.45.0', datasets: '3.0.0' });
    assert.ok(t.tags.includes('user-script') && t.tags.includes('snapshot:2024-09'));
  });

  test('a file path that leaves the run folder is refused with the field named, and nothing is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-mktask-'));
    await assert.rejects(
      saveScriptTask({ dir, taskId: 'bad', script, description: 'x', files: { '../escape.yaml': 'a' }, taken: new Set() }),
      (e: unknown) => e instanceof TaskSaveError && /files/.test(e.message) && /\.\./.test(e.message),
    );
    assert.equal(existsSync(join(dir, 'bad.py')), false);
    assert.equal(existsSync(join(dir, 'tasks.json')), false);
  });

  test('an unusable tasks.json is reported and left as it was', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-mktask-'));
    writeFileSync(join(dir, 'tasks.json'), '{ not json');
    await assert.rejects(saveScriptTask({ dir, taskId: 't', script, description: 'x', taken: new Set() }), TaskSaveError);
    assert.equal(readFileSync(join(dir, 'tasks.json'), 'utf8'), '{ not json');
    assert.equal(existsSync(join(dir, 't.py')), false);
  });

  test('a taken id is refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-mktask-'));
    await assert.rejects(saveScriptTask({ dir, taskId: 'dup', script, description: 'x', taken: new Set(['dup']) }), /already exists/);
  });
});

describe('args line', () => {
  test('splits like a shell for words and quotes, and joinArgsLine round-trips', () => {
    assert.deepEqual(splitArgsLine(`--a 1 --b "two words" --c 'it''s' --d=x\\ y ""`), [
      '--a',
      '1',
      '--b',
      'two words',
      '--c',
      'its',
      '--d=x y',
      '',
    ]);
    const args = ['--name', "O'Brien", '--path', 'a b/c', '--n', '3', ''];
    assert.deepEqual(splitArgsLine(joinArgsLine(args)), args);
  });
  test('an unclosed quote is an error', () => {
    assert.throws(() => splitArgsLine('--a "b'), /Unclosed/);
  });
});

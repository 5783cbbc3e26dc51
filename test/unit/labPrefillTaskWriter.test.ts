// "Save as task" files: the new task loads through the corpus loader with its metadata, the
// breakage spec sits beside it, and a broken tasks.json is never overwritten.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadTaskFolder } from '../../src/env/tasks/tasks';
import { applySpec } from '../../src/env/primitives/registry';
import { PrimitiveSpecSchema } from '../../src/env/schemas';
import { BREAKAGE_SUFFIX, saveLabTask, suggestTaskId, taskIdProblem, TaskSaveError } from '../../src/editor/lab/core/taskWriter';

const script = 'from transformers import TrainingArguments\nargs = TrainingArguments(output_dir="o", eval_strategy="epoch")\n';
const spec = {
  primitive_type: 'ModifyConfigField',
  params: { config_class: 'TrainingArguments', old_field: 'eval_strategy', new_field: 'evaluation_strategy' },
};

describe('saveLabTask', () => {
  test('writes script, tasks.json entry and spec; the loader picks the task up and the spec applies', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-task-'));
    writeFileSync(join(dir, 'tasks.json'), JSON.stringify([{ task_id: 'existing', description: 'kept' }]));
    writeFileSync(join(dir, 'existing.py'), 'print(1)\n');
    const saved = await saveLabTask({
      dir,
      taskId: 'train_modify',
      script,
      spec,
      description: 'lab task',
      versions: { transformers: '4.50.0' },
      taken: new Set(['existing']),
    });
    const { tasks, problems } = loadTaskFolder(dir);
    assert.deepEqual(problems, []);
    const t = tasks.find((x) => x.task_id === 'train_modify');
    assert.ok(t);
    assert.equal(t.script_content, script);
    assert.equal(t.description, 'lab task');
    assert.deepEqual(t.library_versions, { transformers: '4.50.0' });
    assert.ok(t.tags.includes('primitive:ModifyConfigField'));
    assert.equal(tasks.find((x) => x.task_id === 'existing')?.description, 'kept');
    const stored = PrimitiveSpecSchema.parse(JSON.parse(readFileSync(saved.specPath, 'utf8')));
    assert.notEqual(applySpec(t.script_content, stored).script, script);
    assert.ok(!readdirSync(dir).some((f) => f.endsWith('.tmp')));
  });

  test('an invalid tasks.json is reported and left exactly as it was; nothing else is written', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-task-'));
    writeFileSync(join(dir, 'tasks.json'), '{ not json');
    await assert.rejects(saveLabTask({ dir, taskId: 'x1', script, spec, description: '', taken: new Set() }), TaskSaveError);
    assert.equal(readFileSync(join(dir, 'tasks.json'), 'utf8'), '{ not json');
    assert.ok(!existsSync(join(dir, 'x1.py')));
    assert.ok(!existsSync(join(dir, `x1${BREAKAGE_SUFFIX}`)));
  });

  test('ids: suggested ids are unique and valid; taken, existing or malformed ids are refused', () => {
    const dir = mkdtempSync(join(tmpdir(), 'forgeenv-task-'));
    writeFileSync(join(dir, 'on_disk.py'), '');
    const taken = new Set(['train_rename_api_call']);
    const id = suggestTaskId('train.py', 'RenameApiCall', taken);
    assert.equal(id, 'train_rename_api_call_2');
    assert.equal(taskIdProblem(id, dir, taken), undefined);
    assert.match(taskIdProblem('train_rename_api_call', dir, taken)!, /already exists/);
    assert.match(taskIdProblem('on_disk', dir, taken)!, /on_disk\.py already exists/);
    assert.match(taskIdProblem('has space', dir, taken)!, /Task id/);
  });
});

import { strict as assert } from 'node:assert';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { scriptsInFolder } from '../../src/env/primitives/checkPrimitives';
import { readFolderFile } from '../../src/env/tasks/folderFile';
import { MAX_TASK_FILE_BYTES } from '../../src/env/limits';
import { loadTaskFolder } from '../../src/env/tasks/tasks';
import { readTaskMetadata, TaskSaveError } from '../../src/editor/lab/core/taskWriter';

// Hostile task folders: symlinks out of the folder, fifos and devices, oversized scripts.
const made: string[] = [];
after(() => made.forEach((d) => rmSync(d, { recursive: true, force: true })));
function folder(files: Record<string, string> = {}): string {
  const d = mkdtempSync(join(tmpdir(), 'forgeenv-task-faults-'));
  made.push(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  return d;
}
const hasMkfifo = spawnSync('mkfifo', ['--version']).status === 0;

describe('task folder faults', () => {
  test('a script symlinked to /proc/self/environ is refused, naming the file and the target', () => {
    const d = folder({ 'ok.py': 'print(1)\n' });
    symlinkSync('/proc/self/environ', join(d, 'x.py'));
    const { tasks, problems } = loadTaskFolder(d);
    assert.deepEqual(
      tasks.map((t) => t.task_id),
      ['ok'],
    );
    assert.ok(!tasks.some((t) => t.script_content.includes('PATH=')), 'no environment read as a script');
    assert.deepEqual(problems, [
      `${join(d, 'x.py')}: a symbolic link to /proc/self/environ; symbolic links are not followed in a task folder (copy the file in instead); skipped`,
    ]);
  });

  test('every symlink is refused, whether it points out of the folder, inside it or nowhere', () => {
    const outside = folder({ 'secret.py': 'print("outside")\n' });
    const d = folder({ 'real.py': 'print("inside")\n' });
    symlinkSync(join(outside, 'secret.py'), join(d, 'leak.py'));
    symlinkSync('real.py', join(d, 'alias.py'));
    symlinkSync(join(d, 'missing.py'), join(d, 'dangling.py'));
    const { tasks, problems } = loadTaskFolder(d);
    assert.deepEqual(
      tasks.map((t) => [t.task_id, t.script_content]),
      [['real', 'print("inside")\n']],
    );
    const link = (name: string, to: string) =>
      `${join(d, name)}: a symbolic link to ${to}; symbolic links are not followed in a task folder (copy the file in instead); skipped`;
    assert.deepEqual(problems, [
      link('alias.py', 'real.py'),
      link('dangling.py', join(d, 'missing.py')),
      link('leak.py', join(outside, 'secret.py')),
    ]);
  });

  test('a symlink to a device is refused', () => {
    const d = folder();
    symlinkSync('/dev/zero', join(d, 'zero.py'));
    const { tasks, problems } = loadTaskFolder(d);
    assert.equal(tasks.length, 0);
    assert.match(problems[0] ?? '', /zero\.py: a symbolic link to \/dev\/zero; symbolic links are not followed/);
  });

  test('a fifo is refused without blocking the reader', { skip: hasMkfifo ? false : 'mkfifo not installed', timeout: 20_000 }, () => {
    const d = folder({ 'ok.py': 'print(1)\n' });
    assert.equal(spawnSync('mkfifo', [join(d, 'pipe.py')]).status, 0);
    const { tasks, problems } = loadTaskFolder(d);
    assert.deepEqual(
      tasks.map((t) => t.task_id),
      ['ok'],
    );
    assert.deepEqual(problems, [`${join(d, 'pipe.py')}: a named pipe (fifo), not a regular file; skipped`]);
  });

  test('a script over the size limit is refused from its size, unread', () => {
    const d = folder({ 'small.py': 'print(1)\n' });
    writeFileSync(join(d, 'huge.py'), '');
    truncateSync(join(d, 'huge.py'), 20 * 1024 * 1024); // 20 MiB, sparse: nothing to read anyway
    const { tasks, problems } = loadTaskFolder(d);
    assert.deepEqual(
      tasks.map((t) => t.task_id),
      ['small'],
    );
    assert.deepEqual(problems, [`${join(d, 'huge.py')}: 20.0 MiB, over the 1.0 MiB limit; skipped`]);
    const atLimit = folder();
    writeFileSync(join(atLimit, 'edge.py'), '#'.repeat(MAX_TASK_FILE_BYTES - 1) + '\n');
    assert.equal(loadTaskFolder(atLimit).tasks.length, 1, 'exactly the limit is allowed');
  });

  test('a tasks.json symlinked out of the folder is ignored with a message; the scripts still load', () => {
    const outside = folder({ 'tasks.json': JSON.stringify([{ task_id: 'a', description: 'from outside' }]) });
    const d = folder({ 'a.py': '# A task\nprint(1)\n' });
    symlinkSync(join(outside, 'tasks.json'), join(d, 'tasks.json'));
    const { tasks, problems } = loadTaskFolder(d);
    assert.equal(tasks[0]?.description, 'A task');
    assert.ok(
      problems.some(
        (p) => p.startsWith(`${join(d, 'tasks.json')}: a symbolic link to `) && p.endsWith('(copy the file in instead); metadata ignored'),
      ),
      problems.join('\n'),
    );
  });

  test('a directory named like a script is refused as not a regular file', () => {
    const d = folder();
    mkdirSync(join(d, 'dir.py'));
    assert.deepEqual(readFolderFile(d, 'dir.py', 1024), { ok: false, problem: `${join(d, 'dir.py')}: a directory, not a regular file` });
  });

  test('check-primitives --scripts leaves out and reports the same files', () => {
    const d = folder({ 'ok.py': 'print(1)\n' });
    symlinkSync('/proc/self/environ', join(d, 'env.py'));
    const problems: string[] = [];
    const scripts = scriptsInFolder(d, (p) => problems.push(p));
    assert.deepEqual(
      scripts.map((s) => s.name),
      ['ok.py'],
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0], /env\.py: a symbolic link to \/proc\/self\/environ; symbolic links are not followed .*; skipped$/);
  });

  test('Save as task reads tasks.json the same way: a linked one is refused, not followed or overwritten', () => {
    const outside = folder({ 'tasks.json': JSON.stringify([{ task_id: 'a', description: 'from outside' }]) });
    const d = folder();
    symlinkSync(join(outside, 'tasks.json'), join(d, 'tasks.json'));
    assert.throws(
      () => readTaskMetadata(d),
      (e: unknown) =>
        e instanceof TaskSaveError && /tasks\.json: a symbolic link to .*; fix it first, it is not overwritten$/.test(e.message),
    );
    assert.deepEqual(readTaskMetadata(folder()), [], 'a folder without tasks.json has no entries');
  });
});

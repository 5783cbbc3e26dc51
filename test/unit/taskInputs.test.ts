// Task `args` and `files` (tasks.json, or derived from the script) reach every run of the task,
// and the validator's policy in an episode: the task's script and the broken script run as they
// are, a repair is judged against the broken script.
import { strict as assert } from 'node:assert';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { ForgeEnvironment } from '../../src/env/episode/environment';
import { executeScript } from '../../src/env/run/executor';
import { startHumanEpisode } from '../../src/env/episode/humanEpisode';
import { oracleRepairGenerate, rolloutOneEpisode } from '../../src/env/episode/rollout';
import { loadTaskFolder, TaskMetadataFileSchema } from '../../src/env/tasks/tasks';
import { formatZodError } from '../../src/env/schemas';

const root = mkdtempSync(join(tmpdir(), 'forgeenv-taskinputs-test-'));
after(() => rmSync(root, { recursive: true, force: true }));

// Fails with a clear message unless it got exactly its args and its file; imports os and
// subprocess, which a task's own script may do.
const ARGS_TASK = [
  'import json, os, subprocess, sys',
  'assert sys.argv[1:] == ["--output_dir", "out", "--lr", "0.5"], "argv was %r" % (sys.argv[1:],)',
  'cfg = json.load(open(os.path.join("conf", "run.json")))',
  'from transformers import AutoTokenizer',
  'tok = AutoTokenizer.from_pretrained("bert-base-uncased")',
  'print("tokens", len(tok("hello world")["input_ids"]), "config", cfg["name"])',
  '',
].join('\n');

// No tasks.json args: they are derived from the dataclasses (the simulated HfArgumentParser parses them).
const DERIVED_TASK = [
  'from dataclasses import dataclass, field',
  'from transformers import AutoTokenizer, HfArgumentParser, TrainingArguments',
  '',
  '@dataclass',
  'class ScriptArguments:',
  '    model_name_or_path: str',
  '    epochs: int = field(metadata={"help": "how many"})',
  '    note: str = "kept"',
  '',
  'script_args, training_args = HfArgumentParser((ScriptArguments, TrainingArguments)).parse_args_into_dataclasses()',
  'tok = AutoTokenizer.from_pretrained(script_args.model_name_or_path)',
  'print("args", script_args.model_name_or_path, script_args.epochs, script_args.note, training_args.output_dir)',
  '',
].join('\n');

const dir = join(root, 'tasks');
mkdirSync(dir);
writeFileSync(join(dir, 'args_task.py'), ARGS_TASK);
writeFileSync(join(dir, 'derived_task.py'), DERIVED_TASK);
writeFileSync(
  join(dir, 'tasks.json'),
  JSON.stringify([{ task_id: 'args_task', args: ['--output_dir', 'out', '--lr', '0.5'], files: { 'conf/run.json': '{"name": "demo"}' } }]),
);
const RENAME = { primitive_type: 'RenameApiCall', params: { old_name: 'AutoTokenizer', new_name: 'AutoTokeniser' } };

const env = new ForgeEnvironment({ taskDirs: [dir], timeoutMs: 30_000 });
after(() => env.dispose());

describe('task args and files', () => {
  test('tasks.json args and files are loaded; absent args are derived from the script', () => {
    assert.deepEqual(env.taskProblems, []);
    const t = env.tasks.getById('args_task')!;
    assert.deepEqual(t.args, ['--output_dir', 'out', '--lr', '0.5']);
    assert.deepEqual(t.files, { 'conf/run.json': '{"name": "demo"}' });
    assert.deepEqual(env.tasks.getById('derived_task')!.args, ['--model_name_or_path', 'gpt2', '--epochs', '1', '--output_dir', 'out']);
    assert.equal(env.tasks.getById('derived_task')!.files, undefined);
  });

  test('an episode runs the broken script and the repair with them; a script importing os and subprocess runs', async () => {
    await env.reset({ taskId: 'args_task', seed: 1 });
    const broken = await env.step({ breakage: RENAME });
    assert.equal(broken.info.error, undefined, String(broken.info.error));
    const exec = env.state!.broken_execution!;
    assert.deepEqual(exec.violations, [], 'the broken script is not judged');
    // It got past the argv assertion and the config file, to the renamed import.
    assert.match(exec.stderr, /ImportError: cannot import name 'AutoTokeniser' from 'transformers'/);
    assert.match(broken.error_trace ?? '', /File "train\.py", line 4, in <module>/);
    assert.ok(!(broken.error_trace ?? '').includes(tmpdir()) && !(broken.error_trace ?? '').includes(`${homedir()}/`));
    const ok = await env.evaluateRepair(env.oracleDiff());
    assert.equal(ok.execution?.exit_code, 0, ok.error_trace);
    assert.deepEqual(ok.execution?.violations, []);
    assert.match(ok.execution.stdout, /tokens \d+ config demo/);
  });

  test('a repair is refused only for what it adds to the broken script', async () => {
    await env.reset({ taskId: 'args_task', seed: 2 });
    await env.step({ breakage: RENAME });
    const broken = env.state!.broken_script!;
    const fixed = broken.replace('AutoTokeniser', 'AutoTokenizer').replace('AutoTokeniser', 'AutoTokenizer');
    const { createRepairDiff } = await import('../../src/env/diff/diff');
    const evil = await env.evaluateRepair(createRepairDiff(broken, `${fixed}subprocess.run(["id"])\n`));
    assert.equal(evil.execution?.exit_code, null);
    assert.deepEqual(evil.execution?.violations, ['line 7: use of subprocess.run']);
    assert.equal(evil.success, false);
    assert.match(evil.error_trace, /Script not run: forbidden constructs:\n {2}line 7: use of subprocess\.run/);
    const good = await env.evaluateRepair(createRepairDiff(broken, fixed));
    assert.equal(good.execution?.exit_code, 0, good.error_trace);
    assert.deepEqual(good.execution?.violations, []);
    // It runs clean, but the task trains nothing: no artifact, so the verifier cannot call it a success.
    assert.equal(good.success, false);
    assert.match(good.findings.join('\n'), /the run left no saved model/);
  });

  test('derived args reach the run (the simulated HfArgumentParser parses them)', async () => {
    await env.reset({ taskId: 'derived_task', seed: 1 });
    await env.step({ breakage: RENAME });
    assert.match(env.state!.broken_execution!.stderr, /cannot import name 'AutoTokeniser'/);
    const ok = await env.evaluateRepair(env.oracleDiff());
    assert.equal(ok.execution?.exit_code, 0, ok.error_trace);
    assert.match(ok.execution.stdout, /^args gpt2 1 kept out$/m);
  });

  test('humanEpisode and rollout run the task with its args and files', async () => {
    const start = await startHumanEpisode(env, { taskId: 'args_task', primitive: RENAME, seed: 3 });
    assert.match(start.brokenExecution.stderr, /cannot import name 'AutoTokeniser'/);
    assert.doesNotMatch(start.repairPrompt, /forgeenv-run-|simlibs/);
    const r = await rolloutOneEpisode(env, {
      taskId: 'args_task',
      seed: 3,
      driftGenerate: () => JSON.stringify(RENAME),
      repairGenerate: oracleRepairGenerate(env),
    });
    assert.equal(r.held_out_breakdown.executed_cleanly, 1, r.error_trace);
  });
});

describe('task args and files are validated with the field named', () => {
  const problemsOf = (entries: unknown) => {
    const r = TaskMetadataFileSchema.safeParse(entries);
    return r.success ? '' : formatZodError(r.error);
  };

  test('args must be an array of strings', () => {
    assert.match(problemsOf([{ task_id: 'a', args: '--x 1' }]), /^0\.args: /);
    assert.match(problemsOf([{ task_id: 'a', args: ['--x', 1] }]), /^0\.args\.1: /);
    assert.equal(problemsOf([{ task_id: 'a', args: ['--x', '1'], files: { 'cfg/a.yaml': 'x: 1' } }]), '');
  });

  test('file paths must stay inside the run folder', () => {
    assert.match(problemsOf([{ task_id: 'a', files: { '../x.yaml': '' } }]), /0\.files\.\.\.\/x\.yaml: invalid path: a '\.\.'/);
    assert.match(problemsOf([{ task_id: 'a', files: { 'a/../../x': '' } }]), /0\.files\.a\/\.\.\/\.\.\/x: invalid path/);
    assert.match(problemsOf([{ task_id: 'a', files: { '/etc/x': '' } }]), /0\.files\.\/etc\/x: invalid path: an absolute path/);
    assert.match(problemsOf([{ task_id: 'a', files: { 'C:/x': '' } }]), /invalid path: an absolute path/);
    assert.match(problemsOf([{ task_id: 'a', files: { 'a\\b': '' } }]), /invalid path: a backslash/);
    assert.match(problemsOf([{ task_id: 'a', files: { 'a//b': '' } }]), /invalid path: a '\.\.', '\.' or empty segment/);
    assert.match(problemsOf([{ task_id: 'a', files: { cfg: '', 'cfg/a': '' } }]), /0\.files\.cfg: is both a file and a folder/);
    assert.match(problemsOf([{ task_id: 'a', files: { 'a.txt': 3 } }]), /^0\.files\.a\.txt: /);
  });

  test('file sizes are limited', () => {
    assert.match(
      problemsOf([{ task_id: 'a', files: { 'big.txt': 'x'.repeat(1_048_577) } }]),
      /0\.files\.big\.txt: larger than 1048576 bytes/,
    );
    const many = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}.txt`, 'x'.repeat(1_000_000)]));
    assert.match(problemsOf([{ task_id: 'a', files: many }]), /bytes in all \(at most 4194304\)/);
  });

  test('a bad tasks.json is reported with the file and the field; the scripts still load with derived args', () => {
    const bad = join(root, 'bad');
    mkdirSync(bad);
    writeFileSync(join(bad, 'x.py'), 'import sys\nprint(sys.argv[1])\n');
    writeFileSync(join(bad, 'tasks.json'), JSON.stringify([{ task_id: 'x', args: [1], files: { '../escape.txt': 'x' } }]));
    const { tasks, problems } = loadTaskFolder(bad);
    assert.equal(problems.length, 1);
    assert.match(problems[0], /tasks\.json: invalid task metadata \(0\.args\.0: .*; 0\.files\.\.\.\/escape\.txt: invalid path/);
    assert.deepEqual(
      tasks.map((t) => [t.task_id, t.args]),
      [['x', ['x']]],
    );
  });

  test('the executor refuses bad args and files before writing anything', async () => {
    const base = { script: 'print(1)\n', mode: 'real' as const, libraryVersions: {}, parentDir: root };
    const escape = await executeScript({ ...base, files: { '../out.txt': 'x' } });
    assert.equal(escape.exit_code, null);
    assert.match(escape.stderr, /invalid run options: files\.\.\.\/out\.txt: invalid path/);
    assert.equal(escape.run_dir, '');
    const overwrite = await executeScript({ ...base, files: { 'train.py': 'print(2)\n' } });
    assert.match(overwrite.stderr, /files\.train\.py: would overwrite the script/);
    const notStrings = await executeScript({ ...base, args: [1 as unknown as string] });
    assert.match(notStrings.stderr, /invalid run options: args\.0: /);
    const fine = await executeScript({
      ...base,
      args: ['a b', '--c'],
      files: { 'd/e.txt': 'hi' },
      script: 'import sys\nprint(sys.argv[1:], open("d/e.txt").read())\n',
      validate: false,
    });
    assert.equal(fine.stdout, "['a b', '--c'] hi\n");
  });
});

// make-task's time (issue 20): a snapshot fallback starts from where the earlier snapshot's adaptation
// ended (args, env, shims, hub items) instead of repeating its rounds; a carried option the new release's
// parser refuses is undone by the rules like any other error.
import { describe, test } from 'node:test';
import * as assert from 'node:assert/strict';
import { adaptUntilRuns } from '../../src/env/taskmaking/adaptLoop';
import type { CandidateRun } from '../../src/env/taskmaking/runner';
import type { ExecutionResult } from '../../src/env/schemas';

const script = [
  'import argparse',
  'p = argparse.ArgumentParser()',
  "p.add_argument('--model_name_or_path', required=True)",
  "p.add_argument('--max_steps', type=int, default=100)",
  'args = p.parse_args()',
  '',
].join('\n');

const HELP =
  'usage: train.py [-h] --model_name_or_path MODEL_NAME_OR_PATH [--max_steps MAX_STEPS]\n\noptions:\n  -h, --help  show this help message and exit\n  --model_name_or_path MODEL_NAME_OR_PATH\n  --max_steps MAX_STEPS\n';

const result = (exit: number, stdout = '', stderr = ''): ExecutionResult => ({
  exit_code: exit,
  stdout,
  stderr,
  wall_time_ms: 1,
  checkpoint_exists: false,
  peak_memory_mb: 0,
  script_content: script,
  timed_out: false,
  output_truncated: false,
  killed: false,
  violations: [],
  mode: 'real',
  interpreter: 'python3',
});

describe('adaptUntilRuns carried from an earlier snapshot', () => {
  test('the first run uses the carried args, env and shims, and needs no round to learn them again', async () => {
    const runs: CandidateRun[] = [];
    const carried = {
      args: ['--model_name_or_path', 'tiny/model', '--max_steps', '8', '--bf16', 'false'],
      env: { SM_CHANNEL_TRAIN: 'data' },
      hubExtra: { models: [{ id: 'tiny/model', from: 'named by a run error' }], datasets: [] },
      runtime: undefined,
      mounts: [],
    };
    const r = await adaptUntilRuns({
      script,
      files: {},
      carried,
      run: async (c) => {
        runs.push(c);
        return c.args[0] === '--help' ? result(0, HELP) : result(0, 'loss 1.0\n');
      },
    });
    assert.equal(r.refusal, undefined);
    assert.equal(r.rounds, 1);
    const first = runs.find((c) => c.args[0] !== '--help')!;
    assert.deepEqual(first.args.slice(0, 6), carried.args.slice(0, 6));
    assert.deepEqual(first.env, carried.env);
    assert.deepEqual(first.hub, carried.hubExtra);
    // --max_steps was carried: the bounded run does not set it again.
    assert.equal(r.adaptations.filter((a) => a.change.startsWith('--max_steps')).length, 0);
  });

  test("a plain argparse parser's carried --help reading saves the help run; its options still drive the rules", async () => {
    const runs: CandidateRun[] = [];
    const first = await adaptUntilRuns({
      script,
      files: {},
      run: async (c) => {
        runs.push(c);
        return c.args[0] === '--help' ? result(0, HELP) : result(0);
      },
    });
    assert.ok(first.parser?.options, 'the help run was read');
    runs.length = 0;
    const again = await adaptUntilRuns({
      script,
      files: {},
      carried: { ...first, args: first.args },
      run: async (c) => {
        runs.push(c);
        return c.args[0] === '--help' ? result(0, HELP) : result(0);
      },
    });
    assert.equal(again.refusal, undefined);
    assert.equal(runs.filter((c) => c.args[0] === '--help').length, 0);
    assert.deepEqual(again.parser, first.parser);
  });

  test('a dataclass parser (library fields) is read again at the new snapshot', async () => {
    const dc = [
      'from transformers import HfArgumentParser, TrainingArguments',
      'p = HfArgumentParser((TrainingArguments,))',
      'a, = p.parse_args_into_dataclasses()',
      '',
    ].join('\n');
    const runs: CandidateRun[] = [];
    const parser = { options: new Map([['output_dir', 'output_dir']]), flags: new Set<string>(), defaults: new Map<string, string>() };
    await adaptUntilRuns({
      script: dc,
      files: {},
      carried: { args: ['--output_dir', 'out'], env: {}, hubExtra: { models: [], datasets: [] }, mounts: [], parser },
      run: async (c) => {
        runs.push(c);
        return c.args[0] === '--help' ? result(0, HELP) : result(0);
      },
    });
    assert.equal(runs.filter((c) => c.args[0] === '--help').length, 1);
  });

  test('a carried option the release refuses is removed by the unrecognized-arguments rule', async () => {
    const runs: CandidateRun[] = [];
    const r = await adaptUntilRuns({
      script,
      files: {},
      carried: { args: ['--model_name_or_path', 'm', '--use_cpu'], env: {}, hubExtra: { models: [], datasets: [] }, mounts: [] },
      run: async (c) => {
        runs.push(c);
        if (c.args[0] === '--help') return result(0, HELP);
        return c.args.includes('--use_cpu')
          ? result(2, '', 'usage: train.py\ntrain.py: error: unrecognized arguments: --use_cpu\n')
          : result(0);
      },
    });
    assert.equal(r.refusal, undefined);
    assert.equal(r.rounds, 2);
    assert.ok(!r.args.includes('--use_cpu'));
    assert.ok(r.adaptations.some((a) => a.rule === 'unrecognized-arguments'));
  });
});

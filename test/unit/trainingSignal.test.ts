// A clean run that cannot train: an online RL trainer whose rewards are constant on every completion.
// Recorded TRL log lines (TRL 1.x under transformers 5, floats printed as strings; TRL 0.14 under
// transformers 4.4x, floats as numbers), not a script's text.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { constantRewardReason, loggedValues } from '../../src/env/taskmaking/trainingSignal';

// trl 1.16 GRPOTrainer, a tiny random model, rewards think_format_reward + accuracy_reward (recorded).
const CONSTANT_NEW = Array.from(
  { length: 3 },
  (_, i) =>
    `{'loss': '0', 'grad_norm': '0', 'learning_rate': '1e-06', 'num_tokens': '468', 'completions/mean_length': '16', 'rewards/think_format_reward/mean': '0', 'rewards/think_format_reward/std': '0', 'rewards/accuracy_reward/mean': None, 'rewards/accuracy_reward/std': None, 'reward': '0', 'reward_std': '0', 'frac_reward_zero_std': '1', 'entropy': '6.39', 'epoch': '0.${i + 1}'}`,
).join('\n');
// trl 0.14-style: floats as numbers; a length reward that varies within a group.
const VARYING_OLD =
  "{'loss': 0.0, 'grad_norm': 0.8312, 'learning_rate': 1e-06, 'completion_length': 12.5, 'rewards/len_reward': -0.25, 'reward': -0.25, 'reward_std': 0.3536, 'kl': 0.0, 'epoch': 0.5}\n" +
  "{'loss': 0.0, 'grad_norm': 0.0, 'learning_rate': 1e-06, 'completion_length': 16.0, 'rewards/len_reward': 0.0, 'reward': 0.0, 'reward_std': 0.0, 'kl': 0.0, 'epoch': 1.0}";

describe('constant rewards: the run exits 0 but nothing trains', () => {
  test('the logged values are read in both float spellings, eval keys apart', () => {
    assert.deepEqual(loggedValues(CONSTANT_NEW, 'reward_std'), [0, 0, 0]);
    assert.deepEqual(loggedValues(VARYING_OLD, 'reward_std'), [0.3536, 0]);
    assert.deepEqual(loggedValues("{'eval_reward_std': 0.5}", 'reward_std'), []);
  });

  test('every step with reward_std 0 and grad_norm 0 is refused, naming the reward functions', () => {
    const reason = constantRewardReason(`Generating train split\n${CONSTANT_NEW}\n{'train_runtime': '12.1', 'epoch': '1'}`);
    assert.ok(reason);
    assert.match(reason, /same reward to every completion in all 3 logged steps/);
    assert.match(reason, /think_format_reward/);
  });

  test('a reward that varied in one step, a moving gradient, or no reward logged at all is not refused', () => {
    assert.equal(constantRewardReason(VARYING_OLD), undefined);
    assert.equal(constantRewardReason(CONSTANT_NEW.replace("'grad_norm': '0'", "'grad_norm': '0.4'")), undefined);
    assert.equal(constantRewardReason("{'loss': 2.31, 'grad_norm': 0.0, 'epoch': 1.0}"), undefined);
  });
});

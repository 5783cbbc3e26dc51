// A run that exits 0 but cannot train: an online RL trainer (GRPO, GSPO, RLOO) whose reward functions give
// the same reward to every completion of a group. The advantages (reward minus the group's mean) are then
// zero, the policy gradient is zero, and the weights never move: the verifier rejects every run of the
// original. A tiny random model makes this the rule for rewards keyed on a format (`<think>…</think>`) or a
// correct answer, and no dataset can change what a random model writes. Read from the trainer's own logs
// (`{'reward_std': 0.0, 'grad_norm': 0.0, …}`; later releases print floats as strings, `'reward_std': '0'`)
// so make-task refuses with the reason instead of spending the verification runs on it.

/** The values of a logged metric in a Trainer's printed log dicts (training logs only: `'eval_…'` keys are other keys). */
export function loggedValues(output: string, key: string): number[] {
  const re = new RegExp(`'${key.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}': '?(-?[\\d.]+(?:e[-+]?\\d+)?|nan)'?`, 'g');
  return [...output.matchAll(re)].map((m) => Number(m[1]));
}

/**
 * The refusal's reason when every logged step had a reward constant within each group (`reward_std` 0) and
 * no gradient (`grad_norm` 0, when logged): nothing trained. Undefined otherwise (or when nothing was logged).
 */
export function constantRewardReason(output: string): string | undefined {
  const std = loggedValues(output, 'reward_std');
  if (!std.length || std.some((v) => v !== 0)) return undefined;
  const grad = loggedValues(output, 'grad_norm');
  if (grad.some((v) => v !== 0)) return undefined;
  const means = [...new Set([...output.matchAll(/'rewards\/([\w.-]+)\/mean'/g)].map((m) => m[1]))];
  return (
    `every reward function gave the same reward to every completion in all ${std.length} logged steps (reward_std 0${grad.length ? ', grad_norm 0' : ''})` +
    `${means.length ? `: ${means.join(', ')}` : ''}; the advantages are zero, so the tiny random model the task trains never moves ` +
    `and no run of the original can be verified (a reward keyed on a format or a correct answer is constant on a random model's completions)`
  );
}

"""trl.rewards: accuracy_reward and think_format_reward (exact-match / regex checks as in trl)."""
import re

from _forgeenv_sim import versions as _v

if not _v.changed("trl-rewards-module-added"):
    raise ModuleNotFoundError("No module named 'trl.rewards'")


def think_format_reward(completions, **kwargs):
    pattern = r"^<think>(?!.*<think>)(.*?)</think>.*$"
    contents = [c[0]["content"] if isinstance(c, list) else c for c in completions]
    return [1.0 if re.match(pattern, c, re.DOTALL | re.MULTILINE) else 0.0 for c in contents]


def _boxed(text):
    m = re.search(r"\\boxed\{([^}]*)\}", text)
    return m.group(1).strip() if m else None


def accuracy_reward(completions, solution, **kwargs):
    contents = [c[0]["content"] if isinstance(c, list) else c for c in completions]
    rewards = []
    for content, sol in zip(contents, solution):
        gold = _boxed(sol)
        if gold is None:
            rewards.append(None)
            continue
        pred = _boxed(content)
        rewards.append(1.0 if pred is not None and pred == gold else 0.0)
    return rewards


def get_soft_overlong_punishment(max_completion_len, soft_punish_cache):
    def reward(completion_ids, **kwargs):
        return [0.0 for _ in completion_ids]

    return reward

# /// script
# requires-python = ">=3.10"
# dependencies = ["trl>=1.0", "openenv[core]>=0.3.1", "datasets", "jmespath"]
# ///
"""GRPO on ForgeEnv's repair phase with TRL's OpenEnv integration (`environment_factory`).

Each generation gets its own ForgeEnv session (one WebSocket to `forgeenv serve`): `reset` starts
an episode and breaks the task's script with the row's primitive (the drift phase is played by the
dataset, not the model), and the model's only tool, `submit_repair`, sends a unified diff that
ForgeEnv runs and scores. The reward is ForgeEnv's visible reward for that repair.

    npx forgeenv serve --port 7860 --max-sessions 64      # at least per_device_train_batch_size * num_generations
    uv run examples/openenv/grpo_forgeenv.py --model Qwen/Qwen3-0.6B --env-url http://127.0.0.1:7860

The typed client comes from clients/python (forge_env); install it with
`pip install ./clients/python`, or run from the repository root (the path is added below).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from datasets import Dataset
from trl import GRPOConfig, GRPOTrainer

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "clients", "python"))
from forge_env import BreakageAction, ForgeAction, ForgeEnv, RepairAction  # noqa: E402

ENV_URL = os.environ.get("FORGEENV_URL", "http://127.0.0.1:7860")

# Episodes to train on: a corpus task, a seed and the breakage that drifts it. `forgeenv tasks`
# lists the tasks; `forgeenv primitives` the primitives and their parameters.
EPISODES = [
    {"task_id": "distilbert_sst2", "primitive_type": "RenameApiCall", "params": {"old_name": "AutoTokenizer", "new_name": "AutoTokeniser"}},
    {"task_id": "distilbert_sst2", "primitive_type": "RenameApiCall", "params": {"old_name": "Trainer", "new_name": "TrainerV2"}},
]

PROMPT = (
    "You repair Hugging Face training scripts broken by library drift. The script and its error "
    "follow. Call submit_repair exactly once with a unified diff (---/+++/@@ hunks against train.py) "
    "that makes the script train again."
)


class ForgeRepairEnv:
    """One ForgeEnv session per generation (TRL calls the class, with no arguments, for each one)."""

    def __init__(self) -> None:
        self.client = ForgeEnv(base_url=ENV_URL, message_timeout_s=600).sync()
        self.client.connect()
        self.reward = 0.0
        self.done = False

    def reset(self, task_id: str, seed: int, primitive_type: str, params: str, **kwargs) -> str:
        self.reward = 0.0
        self.done = False
        self.client.reset(task_id=task_id, seed=seed)
        broken = self.client.step(ForgeAction(breakage=BreakageAction(primitive_type=primitive_type, params=json.loads(params))))
        obs = broken.observation
        return f"```python\n{obs.script_content}```\n\nError when it runs:\n```\n{obs.error_trace or '(no error)'}\n```"

    def submit_repair(self, unified_diff: str) -> str:
        """
        Submit a repair of the broken training script; ForgeEnv runs the repaired script and scores it.

        Args:
            unified_diff: A unified diff against train.py (lines starting with ---, +++, @@, space, - and +).

        Returns:
            The outcome: the reward, and the error the repaired script still raises, if any.
        """
        if self.done:
            raise ValueError("The episode is over: the repair was already submitted.")
        result = self.client.step(ForgeAction(repair=RepairAction(unified_diff=unified_diff)))
        self.reward = float(result.reward or 0.0)
        self.done = True
        trace = result.observation.error_trace
        return f"reward {self.reward:.2f}" + (f"; still failing:\n{trace[-2000:]}" if trace else "; the script trains")


def reward_from_env(environments, **kwargs) -> list[float]:
    return [env.reward for env in environments]


def main() -> None:
    global ENV_URL
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", default="Qwen/Qwen3-0.6B")
    parser.add_argument("--env-url", default=ENV_URL)
    parser.add_argument("--max-steps", type=int, default=50)
    parser.add_argument("--num-generations", type=int, default=4)
    args = parser.parse_args()
    ENV_URL = args.env_url

    rows = [dict(e, seed=s, params=json.dumps(e["params"])) for s in range(32) for e in EPISODES]
    dataset = Dataset.from_list([{"prompt": [{"role": "user", "content": PROMPT}], **r} for r in rows])
    trainer = GRPOTrainer(
        model=args.model,
        train_dataset=dataset,
        reward_funcs=reward_from_env,
        args=GRPOConfig(
            output_dir="grpo-forgeenv",
            max_steps=args.max_steps,
            num_generations=args.num_generations,
            per_device_train_batch_size=args.num_generations,
            max_completion_length=2048,
            chat_template_kwargs={"enable_thinking": False},
            log_completions=True,
        ),
        environment_factory=ForgeRepairEnv,
    )
    trainer.train()


if __name__ == "__main__":
    main()

from ..._trainers import PPOConfig, PPOTrainer  # noqa: F401
from ..._ppo_legacy import AutoModelForCausalLMWithValueHead  # noqa: F401

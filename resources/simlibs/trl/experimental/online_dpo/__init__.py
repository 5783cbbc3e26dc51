from ..._trainers import OnlineDPOConfig, OnlineDPOTrainer  # noqa: F401

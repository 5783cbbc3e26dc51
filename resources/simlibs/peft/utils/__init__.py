"""peft.utils (simulated)."""
from .. import PeftType, TaskType, prepare_model_for_kbit_training  # noqa: F401
from .._more import fsdp_auto_wrap_policy, get_peft_model_state_dict, set_peft_model_state_dict  # noqa: F401
from . import other  # noqa: F401

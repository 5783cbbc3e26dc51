from .._more import fsdp_auto_wrap_policy  # noqa: F401
from .. import prepare_model_for_kbit_training  # noqa: F401

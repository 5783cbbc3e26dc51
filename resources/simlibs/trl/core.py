"""trl.core (trl < 0.12): LengthSampler, respond_to_batch."""
from _forgeenv_sim import versions as _v

if _v.at_least("trl", "0.12"):
    raise ModuleNotFoundError("No module named 'trl.core'")

from ._ppo_legacy import LengthSampler, respond_to_batch  # noqa: E402,F401

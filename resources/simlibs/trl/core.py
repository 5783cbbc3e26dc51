"""trl.core (trl < 0.14, catalog trl-core-respond-to-batch-removed): LengthSampler, respond_to_batch."""
from _forgeenv_sim import versions as _v

if _v.changed("trl-core-respond-to-batch-removed"):
    raise ModuleNotFoundError("No module named 'trl.core'")

from ._ppo_legacy import LengthSampler, respond_to_batch  # noqa: E402,F401

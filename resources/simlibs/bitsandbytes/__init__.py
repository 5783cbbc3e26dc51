"""Simulated bitsandbytes (ForgeEnv): quantized layers and 8-bit optimizers that run in float on CPU."""
from _forgeenv_sim import versions as _v

from . import nn, optim  # noqa: F401

__version__ = _v.ACTIVE.get("bitsandbytes", "0.45.3")

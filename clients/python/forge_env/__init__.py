"""OpenEnv client for ForgeEnv (see client.py)."""

from .client import ForgeEnv
from .models import BreakageAction, ForgeAction, ForgeObservation, ForgeState, RepairAction

__all__ = ["ForgeEnv", "ForgeAction", "BreakageAction", "RepairAction", "ForgeObservation", "ForgeState"]

"""trl.experimental (trl >= 0.22): trainers moved out of the stable API."""
from _forgeenv_sim import versions as _v

if _v.below("trl", "0.22"):
    raise ModuleNotFoundError("No module named 'trl.experimental'")

"""torch.utils (simulated)."""
from . import data

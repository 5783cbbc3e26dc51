"""Simulated torchvision (ForgeEnv): the transforms training scripts build pipelines from. Images are
the simulation's lazy images; ToTensor samples them at the simulation's resolution (3 x 8 x 8), like
the simulated image processors."""
from . import transforms  # noqa: F401

__version__ = "0.20.0+cpu"

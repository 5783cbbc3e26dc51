"""ForgeEnv's CPU stand-in for bitsandbytes (the `no-quantization` runtime shim, ../../_forgeenv_shims.py):
served to a script's own `import bitsandbytes` when the package is not installed. Nothing here
quantizes: 8-bit optimizers are torch's optimizers, quantized layers are torch.nn.Linear."""
__version__ = "0.0.0+forgeenv.cpu"

from . import nn, optim  # noqa: E402,F401

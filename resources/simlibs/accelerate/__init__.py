"""Simulated accelerate (ForgeEnv): one CPU process, real autograd, real-format checkpoints."""
import contextlib

from _forgeenv_sim import versions as _v

from .accelerator import Accelerator
from .state import AcceleratorState, DistributedType, GradientState, PartialState
from .utils import (
    DataLoaderConfiguration,
    DeepSpeedPlugin,
    DistributedDataParallelKwargs,
    FullyShardedDataParallelPlugin,
    GradScalerKwargs,
    InitProcessGroupKwargs,
    ProjectConfiguration,
    infer_auto_device_map,
)

__version__ = _v.ACTIVE.get("accelerate", "1.5.2")


@contextlib.contextmanager
def init_empty_weights(include_buffers=None):
    yield


@contextlib.contextmanager
def init_on_device(device, include_buffers=None):
    yield


def dispatch_model(model, device_map, main_device=None, state_dict=None, offload_dir=None, offload_index=None, offload_buffers=False,
                   skip_keys=None, preload_module_classes=None, force_hooks=False):
    return model


def cpu_offload(model, execution_device=None, offload_buffers=False, state_dict=None, preload_module_classes=None):
    return model


def load_checkpoint_and_dispatch(model, checkpoint, device_map=None, **kwargs):
    return model


def notebook_launcher(function, args=(), num_processes=None, **kwargs):
    return function(*args)


def skip_first_batches(dataloader, num_batches=0):
    from .accelerator import _SkipDataLoader

    return _SkipDataLoader(dataloader, num_batches)

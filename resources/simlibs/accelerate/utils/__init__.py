"""accelerate.utils (simulated): the helpers training scripts import."""
import contextlib
import random
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

import torch

from ..state import DistributedType, PrecisionType  # noqa: F401


def set_seed(seed, device_specific=False, deterministic=False):
    random.seed(seed)
    torch.manual_seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass


@dataclass
class ProjectConfiguration:
    project_dir: Optional[str] = None
    logging_dir: Optional[str] = None
    automatic_checkpoint_naming: bool = False
    total_limit: Optional[int] = None
    iteration: int = 0
    save_on_each_node: bool = False

    def __post_init__(self):
        if self.logging_dir is None:
            self.logging_dir = self.project_dir

    def set_directories(self, project_dir=None):
        self.project_dir = project_dir
        if self.logging_dir is None:
            self.logging_dir = project_dir


@dataclass
class DistributedDataParallelKwargs:
    dim: int = 0
    broadcast_buffers: bool = True
    bucket_cap_mb: int = 25
    find_unused_parameters: bool = False
    check_reduction: bool = False
    gradient_as_bucket_view: bool = False
    static_graph: bool = False


@dataclass
class GradScalerKwargs:
    init_scale: float = 65536.0
    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000
    enabled: bool = True


@dataclass
class InitProcessGroupKwargs:
    backend: Optional[str] = "nccl"
    init_method: Optional[str] = None
    timeout: Any = None


@dataclass
class GradientAccumulationPlugin:
    num_steps: Optional[int] = None
    adjust_scheduler: bool = True
    sync_with_dataloader: bool = True
    sync_each_batch: bool = False


@dataclass
class DataLoaderConfiguration:
    split_batches: bool = False
    dispatch_batches: Optional[bool] = None
    even_batches: bool = True
    use_seedable_sampler: bool = False
    non_blocking: bool = False


@dataclass
class DeepSpeedPlugin:
    hf_ds_config: Any = None
    gradient_accumulation_steps: Any = None
    gradient_clipping: Any = None
    zero_stage: Optional[int] = None
    deepspeed_config: Dict = field(default_factory=dict)


@dataclass
class FullyShardedDataParallelPlugin:
    sharding_strategy: Any = None
    auto_wrap_policy: Any = None


@dataclass
class MegatronLMPlugin:
    tp_degree: Optional[int] = None
    pp_degree: Optional[int] = None


class MegatronLMDummyScheduler:
    def __init__(self, optimizer, total_num_steps=None, warmup_num_steps=0, **kwargs):
        self.optimizer, self.total_num_steps, self.warmup_num_steps, self.kwargs = optimizer, total_num_steps, warmup_num_steps, kwargs


class DummyOptim:
    def __init__(self, params, lr=0.001, weight_decay=0, **kwargs):
        self.params, self.lr, self.weight_decay, self.kwargs = params, lr, weight_decay, kwargs


class DummyScheduler:
    def __init__(self, optimizer, total_num_steps=None, warmup_num_steps=0, lr_scheduler_callable=None, **kwargs):
        self.optimizer, self.total_num_steps, self.warmup_num_steps = optimizer, total_num_steps, warmup_num_steps


def gather_object(obj):
    return list(obj) if isinstance(obj, (list, tuple)) else [obj]


def gather(tensor):
    return tensor


def broadcast(tensor, from_process=0):
    return tensor


def broadcast_object_list(object_list, from_process=0):
    return object_list


def pad_across_processes(tensor, dim=0, pad_index=0, pad_first=False):
    return tensor


def reduce(tensor, reduction="mean", scale=1.0):
    return tensor


def send_to_device(tensor, device, non_blocking=False, skip_keys=None):
    return tensor


def wait_for_everyone():
    pass


def is_deepspeed_available():
    return False


def is_bf16_available(ignore_tpu=False):
    return True


def is_wandb_available():
    return False


def is_tensorboard_available():
    return False


def is_torch_version(operation, version):
    import operator

    from _forgeenv_sim import versions as _v

    ops = {">=": operator.ge, ">": operator.gt, "<=": operator.le, "<": operator.lt, "==": operator.eq, "!=": operator.ne}
    return ops[operation](_v.parse(_v.version("torch")), _v.parse(version))


def compute_module_sizes(model, dtype=None, special_dtypes=None):
    sizes = {"": 0}
    for _, p in model.named_parameters():
        sizes[""] += p.numel() * 4
    return sizes


def get_balanced_memory(model, max_memory=None, no_split_module_classes=None, dtype=None, low_zero=False):
    return {"cpu": 1 << 34}


def infer_auto_device_map(model, max_memory=None, no_split_module_classes=None, dtype=None, **kwargs):
    return {"": "cpu"}


@contextlib.contextmanager
def release_memory_ctx():
    yield


def release_memory(*objects):
    return [None for _ in objects]


def write_basic_config(mixed_precision="no", save_location=None, use_xpu=False):
    return False


def extract_model_from_parallel(model, keep_fp32_wrapper=True, keep_torch_compile=True):
    return model


def merge_dicts(source, destination):
    destination.update(source)
    return destination


class FindTiedParametersResult(list):
    """accelerate < 1.11: find_tied_parameters' list, with a deprecated dict-like values()."""

    def values(self):
        import warnings

        warnings.warn(
            "The 'values' method of FindTiedParametersResult is deprecated and will be removed in Accelerate v1.3.0. ",
            FutureWarning,
            stacklevel=2,
        )
        return sum([group[1:] for group in self], [])


def find_tied_parameters(model, **kwargs):
    """Groups of parameter names sharing one tensor (sorted, as accelerate returns them)."""
    seen = {}
    for name, p in model.named_parameters(remove_duplicate=False):
        seen.setdefault(id(p), []).append(name)
    groups = [sorted(names) for names in seen.values() if len(names) > 1]
    groups.sort()
    from _forgeenv_sim import versions as _v

    return FindTiedParametersResult(groups) if not _v.changed("accelerate-find-tied-parameters-values") else groups

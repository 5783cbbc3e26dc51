"""accelerate's process state on a single CPU process (what `accelerate launch` gives with one process)."""
import contextlib
import enum
import os

import torch


class DistributedType(str, enum.Enum):
    NO = "NO"
    MULTI_CPU = "MULTI_CPU"
    MULTI_GPU = "MULTI_GPU"
    MULTI_NPU = "MULTI_NPU"
    MULTI_MLU = "MULTI_MLU"
    MULTI_XPU = "MULTI_XPU"
    DEEPSPEED = "DEEPSPEED"
    FSDP = "FSDP"
    XLA = "XLA"
    TPU = "TPU"
    MEGATRON_LM = "MEGATRON_LM"


class PrecisionType(str, enum.Enum):
    NO = "no"
    FP8 = "fp8"
    FP16 = "fp16"
    BF16 = "bf16"


class _OneProcessSync:
    """The synchronisation helpers of PartialState and Accelerator on one CPU process: barriers pass,
    "main process first" blocks run at once, the whole input is this process's share."""

    def wait_for_everyone(self):
        pass

    @contextlib.contextmanager
    def main_process_first(self):
        yield

    @contextlib.contextmanager
    def local_main_process_first(self):
        yield

    @contextlib.contextmanager
    def split_between_processes(self, inputs, apply_padding=False):
        yield inputs

    def on_main_process(self, function):
        return function

    def on_local_main_process(self, function):
        return function


class PartialState(_OneProcessSync):
    _shared_state = {}

    def __init__(self, cpu=False, **kwargs):
        self.__dict__ = self._shared_state
        if not self._shared_state:
            # torchrun/accelerate launch set these; a plain `python script.py` has none.
            self.num_processes = int(os.environ.get("WORLD_SIZE", "1"))
            self.process_index = int(os.environ.get("RANK", "0"))
            self.local_process_index = int(os.environ.get("LOCAL_RANK", "0"))
            self.distributed_type = DistributedType.NO if self.num_processes == 1 else DistributedType.MULTI_CPU
            self.device = torch.device("cpu")
            self.backend = None
            self.debug = False

    @property
    def is_main_process(self):
        return self.process_index == 0

    @property
    def is_local_main_process(self):
        return self.local_process_index == 0

    @property
    def is_last_process(self):
        return self.process_index == self.num_processes - 1

    @property
    def use_distributed(self):
        return self.distributed_type != DistributedType.NO

    def print(self, *args, **kwargs):
        if self.is_local_main_process:
            print(*args, **kwargs)

    @classmethod
    def _reset_state(cls):
        cls._shared_state.clear()

    def __repr__(self):
        return "Distributed environment: %s\nNum processes: %d\nProcess index: %d\nLocal process index: %d\nDevice: cpu\n" % (
            self.distributed_type.value, self.num_processes, self.process_index, self.local_process_index)


class AcceleratorState(PartialState):
    _shared_state = {}

    def __init__(self, mixed_precision=None, cpu=False, **kwargs):
        super().__init__(cpu=cpu)
        if not hasattr(self, "mixed_precision"):
            self.mixed_precision = mixed_precision or os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
        self.deepspeed_plugin = None
        self.fsdp_plugin = None
        self.megatron_lm_plugin = None
        self.dynamo_plugin = None

    def __repr__(self):
        return super().__repr__() + "\nMixed precision type: %s\n" % self.mixed_precision


class GradientState:
    _shared_state = {}

    def __init__(self, gradient_accumulation_plugin=None):
        self.__dict__ = self._shared_state
        if not self._shared_state:
            self.sync_gradients = True
            self.end_of_dataloader = False
            self.num_steps = 1

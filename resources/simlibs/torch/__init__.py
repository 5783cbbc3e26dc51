"""Simulated torch (ForgeEnv): a tiny pure-Python stand-in for the slice of PyTorch the task corpus uses."""
import contextlib as _contextlib
import functools as _functools
import pickle as _pickle

from _forgeenv_sim import versions as _versions

from ._tensor import (  # noqa: F401
    Size,
    Tensor,
    arange,
    as_tensor,
    bfloat16,
    bool_ as bool,
    cat,
    concat,
    default_generator,
    device,
    dtype,
    empty,
    eye,
    float16,
    float32,
    float64,
    full,
    full_like,
    int8,
    int16,
    int32,
    int64,
    is_tensor,
    linspace,
    matmul,
    maximum,
    minimum,
    mm,
    ones,
    ones_like,
    rand,
    rand_like,
    randint,
    randn,
    randn_like,
    randperm,
    stack,
    tensor,
    uint8,
    where,
    zeros,
    zeros_like,
)
from ._tensor import _Generator, _GradMode

__version__ = _versions.version("torch") + "+cpu"

float = float32
double = float64
half = float16
long = int64
int = int32

from . import nn, optim, utils  # noqa: E402
from .nn import functional as _F  # noqa: E402


class Generator(_Generator):
    def __init__(self, device="cpu"):
        super().__init__(67280421310721)


def manual_seed(seed):
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    return None


class _NoGrad(_contextlib.ContextDecorator):
    def __init__(self, mode=False):
        self.mode = mode

    def __enter__(self):
        self.prev = _GradMode.enabled
        _GradMode.enabled = self.mode
        return self

    def __exit__(self, *exc):
        _GradMode.enabled = self.prev
        return False


no_grad = type("no_grad", (_NoGrad,), {"__init__": lambda self, orig_func=None: _NoGrad.__init__(self, False)})
inference_mode = type("inference_mode", (_NoGrad,), {"__init__": lambda self, mode=True: _NoGrad.__init__(self, not mode)})
enable_grad = type("enable_grad", (_NoGrad,), {"__init__": lambda self, orig_func=None: _NoGrad.__init__(self, True)})


class set_grad_enabled(_NoGrad):
    def __init__(self, mode):
        super().__init__(mode)
        self.prev = _GradMode.enabled
        _GradMode.enabled = mode


def is_grad_enabled():
    return _GradMode.enabled


from _forgeenv_sim import hardware as _hw  # noqa: E402


def _no_cuda():
    if not _hw.SIM_CUDA:
        raise AssertionError("Torch not compiled with CUDA enabled")


class _Cuda:
    @staticmethod
    def is_available():
        return _hw.SIM_CUDA

    @staticmethod
    def device_count():
        return 1 if _hw.SIM_CUDA else 0

    @staticmethod
    def manual_seed(seed):
        return None

    manual_seed_all = manual_seed

    @staticmethod
    def empty_cache():
        return None

    @staticmethod
    def is_bf16_supported():
        return _hw.SIM_CUDA

    # A CPU-only build: every device query fails the way real torch's _lazy_init does (unless the
    # run opted into a simulated GPU, see _forgeenv_sim/hardware.py).
    @staticmethod
    def current_device():
        _no_cuda()
        return 0

    @staticmethod
    def get_device_capability(device=None):
        _no_cuda()
        return _hw.CAPABILITY

    @staticmethod
    def get_device_properties(device=None):
        _no_cuda()
        return type("_CudaDeviceProperties", (), {"name": _hw.DEVICE_NAME, "major": _hw.CAPABILITY[0], "minor": _hw.CAPABILITY[1],
                                                   "total_memory": _hw.TOTAL_MEMORY, "multi_processor_count": 108})()

    @staticmethod
    def get_device_name(device=None):
        _no_cuda()
        return _hw.DEVICE_NAME

    @staticmethod
    def mem_get_info(device=None):
        _no_cuda()
        return (_hw.TOTAL_MEMORY - 1024 ** 3, _hw.TOTAL_MEMORY)

    @staticmethod
    def set_device(device):
        _no_cuda()

    @staticmethod
    def memory_allocated(device=None):
        return 0

    max_memory_allocated = memory_allocated

    @staticmethod
    def synchronize(device=None):
        _no_cuda()

    @staticmethod
    def is_initialized():
        return False

    class amp:
        class autocast:
            """torch.cuda.amp.autocast on a machine without CUDA: disabled (real torch warns and disables)."""

            def __init__(self, enabled=True, dtype=None, cache_enabled=True):
                self.enabled = False

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                return False

            def __call__(self, fn):
                return fn

        class GradScaler:
            def __init__(self, init_scale=65536.0, growth_factor=2.0, backoff_factor=0.5, growth_interval=2000, enabled=True):
                self._enabled = False

            def scale(self, outputs):
                return outputs

            def step(self, optimizer, *args, **kwargs):
                return optimizer.step(*args, **kwargs)

            def update(self, new_scale=None):
                pass

            def unscale_(self, optimizer):
                pass

            def is_enabled(self):
                return False

            def state_dict(self):
                return {}

            def load_state_dict(self, state):
                pass


cuda = _Cuda()


class autocast:
    """torch.autocast: a context manager and decorator. The stand-ins compute in float32, so it changes no
    dtype; what it keeps is where real torch refuses. CPU autocast takes float16 only from the catalog's
    `torch-cpu-amp-fp16` on: before, real torch warns and disables at construction, then raises on entry."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (bfloat16 if device_type == "cpu" else float16)
        self._enabled = enabled
        self._cpu_refused = device_type == "cpu" and self.fast_dtype is not bfloat16 and not (
            self.fast_dtype is float16 and _versions.changed("torch-cpu-amp-fp16")
        )
        if self._cpu_refused and enabled:
            import warnings

            warnings.warn(
                "In CPU autocast, but the target dtype is not supported. Disabling autocast.\n"
                "CPU Autocast only supports dtype of torch.bfloat16 currently."
            )
            self._enabled = False

    def __enter__(self):
        if self._cpu_refused and not _versions.changed("torch-cpu-amp-fp16"):
            raise RuntimeError("Currently, AutocastCPU only support Bfloat16 as the autocast_cpu_dtype")
        return self

    def __exit__(self, *exc):
        return False

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapped(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)

        return wrapped


class _Mps:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def is_built():
        return False


class _Backends:
    mps = _Mps()

    class cudnn:
        deterministic = False
        benchmark = False


backends = _Backends()


def use_deterministic_algorithms(mode, *, warn_only=False):
    return None


def set_num_threads(n):
    return None


def get_num_threads():
    return 1


def softmax(input, dim=None, dtype=None):
    return _F.softmax(input, dim)


def log_softmax(input, dim=None, dtype=None):
    return _F.log_softmax(input, dim)


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def relu(input):
    return input.relu()


def exp(input):
    return input.exp()


def log(input):
    return input.log()


def sqrt(input):
    return input.sqrt()


def abs(input):
    return input.abs()


def clamp(input, min=None, max=None):
    return input.clamp(min, max)


def sum(input, dim=None, keepdim=False, dtype=None):
    return input.sum(dim, keepdim)


def mean(input, dim=None, keepdim=False, dtype=None):
    return input.mean(dim, keepdim)


def argmax(input, dim=None, keepdim=False):
    return input.argmax(dim, keepdim)


def max(input, dim=None, keepdim=False):
    return input.max(dim, keepdim)


def min(input, dim=None, keepdim=False):
    return input.min(dim, keepdim)


def flatten(input, start_dim=0, end_dim=-1):
    return input.flatten(start_dim, end_dim)


def squeeze(input, dim=None):
    return input.squeeze(dim)


def unsqueeze(input, dim):
    return input.unsqueeze(dim)


def reshape(input, shape):
    return input.reshape(shape)


def numel(input):
    return input.numel()


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(abs(x - y) <= atol + rtol * abs(y) for x, y in zip(a.data, b.data))


def equal(a, b):
    return a.shape == b.shape and a.data == b.data


def save(obj, f, pickle_module=_pickle, pickle_protocol=2, _use_new_zipfile_serialization=True):
    """Pickles `obj` (real torch writes a zip of pickles; the sim keeps plain pickle)."""
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "wb") as fh:
            pickle_module.dump(obj, fh, protocol=pickle_protocol)
    else:
        pickle_module.dump(obj, f, protocol=pickle_protocol)


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None, **pickle_load_args):
    pm = pickle_module or _pickle
    if isinstance(f, (str, bytes)) or hasattr(f, "__fspath__"):
        with open(f, "rb") as fh:
            return pm.load(fh)
    return pm.load(f)


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None, options=None, disable=False):
    return model if model is not None else (lambda m: m)


class _TypedTensorMeta(type):
    """torch.LongTensor & co.: calling one builds a tensor of its dtype; isinstance checks the dtype."""

    def __call__(cls, *args):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            return tensor(args[0], dtype=cls._dtype)
        if len(args) == 1 and isinstance(args[0], Tensor):
            return args[0].to(cls._dtype)
        return zeros(*args, dtype=cls._dtype)

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls._dtype


LongTensor = _TypedTensorMeta("LongTensor", (), {"_dtype": int64})
IntTensor = _TypedTensorMeta("IntTensor", (), {"_dtype": int32})
FloatTensor = _TypedTensorMeta("FloatTensor", (), {"_dtype": float32})
DoubleTensor = _TypedTensorMeta("DoubleTensor", (), {"_dtype": float64})
HalfTensor = _TypedTensorMeta("HalfTensor", (), {"_dtype": float16})
BFloat16Tensor = _TypedTensorMeta("BFloat16Tensor", (), {"_dtype": bfloat16})
BoolTensor = _TypedTensorMeta("BoolTensor", (), {"_dtype": bool})

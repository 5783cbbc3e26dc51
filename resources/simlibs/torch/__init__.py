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


class _Cuda:
    @staticmethod
    def is_available():
        return False

    @staticmethod
    def device_count():
        return 0

    @staticmethod
    def manual_seed(seed):
        return None

    manual_seed_all = manual_seed

    @staticmethod
    def empty_cache():
        return None

    @staticmethod
    def is_bf16_supported():
        return False

    @staticmethod
    def current_device():
        raise AssertionError("Torch not compiled with CUDA enabled")


cuda = _Cuda()


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

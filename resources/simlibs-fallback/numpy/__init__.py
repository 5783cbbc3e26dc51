"""Stand-in numpy (ForgeEnv fallback, used only when real numpy is not installed): arrays are the
simulated torch's tensors, which already answer numpy's spellings (astype, axis=, shape, tolist)."""
import builtins as _b
import math as _math
import random as _random

import torch as _torch

__version__ = "1.26.4"

ndarray = _torch.Tensor
float64 = double = _torch.float64
float32 = single = _torch.float32
float16 = half = _torch.float16
int64 = _torch.int64
int32 = _torch.int32
int8 = _torch.int8
uint8 = _torch.uint8
bool_ = _torch.bool
nan = float("nan")
inf = float("inf")
pi = _math.pi
e = _math.e
newaxis = None


def _flat(x):
    if isinstance(x, _torch.Tensor):
        return x.reshape(-1).tolist()
    if isinstance(x, (list, tuple)):
        out = []
        for v in x:
            out.extend(_flat(v) if isinstance(v, (list, tuple, _torch.Tensor)) else [v])
        return out
    return [x]


def array(obj, dtype=None, copy=True, **kwargs):
    if isinstance(obj, _torch.Tensor):
        t = obj.detach().clone()
    else:
        if isinstance(obj, (list, tuple)) and obj and all(isinstance(v, _torch.Tensor) for v in obj):
            return _torch.stack([array(v) for v in obj])
        t = _torch.tensor(obj)
    return t.to(dtype) if dtype is not None else t


def asarray(obj, dtype=None, **kwargs):
    return obj if isinstance(obj, _torch.Tensor) and dtype is None else array(obj, dtype=dtype)


def zeros(shape, dtype=float64):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _torch.zeros(*shape, dtype=dtype)


def ones(shape, dtype=float64):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _torch.ones(*shape, dtype=dtype)


def zeros_like(a, dtype=None):
    return _torch.zeros_like(asarray(a)) if dtype is None else _torch.zeros_like(asarray(a)).to(dtype)


def ones_like(a, dtype=None):
    return _torch.ones_like(asarray(a)) if dtype is None else _torch.ones_like(asarray(a)).to(dtype)


def full(shape, fill_value, dtype=None):
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    return _torch.full(shape, fill_value)


def arange(*args, dtype=None):
    return _torch.arange(*args)


def argmax(a, axis=None, out=None, keepdims=False):
    return asarray(a).argmax(dim=axis, keepdim=keepdims)


def argmin(a, axis=None, out=None, keepdims=False):
    return asarray(a).argmin(dim=axis, keepdim=keepdims)


def _num(t):
    return t.item() if isinstance(t, _torch.Tensor) and t.dim() == 0 else t


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    return _num(asarray(a).float().mean(dim=axis, keepdim=keepdims) if axis is not None else asarray(a).float().mean())


def sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    t = asarray(a)
    return _num(t.sum(dim=axis, keepdim=keepdims) if axis is not None else t.sum())


def max(a, axis=None, out=None, keepdims=False, **kwargs):
    t = asarray(a)
    return _num(t.max(dim=axis, keepdim=keepdims).values if axis is not None else t.max())


def min(a, axis=None, out=None, keepdims=False, **kwargs):
    t = asarray(a)
    return _num(t.min(dim=axis, keepdim=keepdims).values if axis is not None else t.min())


amax, amin = max, min


def std(a, axis=None, ddof=0, **kwargs):
    vals = [float(v) for v in _flat(a)]
    m = _b.sum(vals) / len(vals)
    return _math.sqrt(_b.sum((v - m) ** 2 for v in vals) / (len(vals) - ddof))


def median(a, axis=None, **kwargs):
    return percentile(a, 50)


def percentile(a, q, axis=None, method="linear", **kwargs):
    vals = sorted(float(v) for v in _flat(a))
    if not vals:
        return nan
    pos = (len(vals) - 1) * q / 100.0
    lo = int(_math.floor(pos))
    hi = _b.min(lo + 1, len(vals) - 1)
    return vals[lo] + (vals[hi] - vals[lo]) * (pos - lo)


def quantile(a, q, axis=None, **kwargs):
    return percentile(a, q * 100.0)


def where(condition, x=None, y=None):
    c = asarray(condition)
    if x is None and y is None:
        return (_torch.tensor([i for i, v in enumerate(c.reshape(-1).tolist()) if v]),)
    return _torch.where(c.bool(), asarray(x) if not isinstance(x, (int, float)) else x, asarray(y) if not isinstance(y, (int, float)) else y)


def concatenate(arrays, axis=0, **kwargs):
    return _torch.cat([asarray(a) for a in arrays], dim=axis)


def stack(arrays, axis=0, **kwargs):
    return _torch.stack([asarray(a) for a in arrays], dim=axis)


def unique(a, return_counts=False, **kwargs):
    vals = sorted(set(_flat(a)))
    if return_counts:
        flat = _flat(a)
        return _torch.tensor(vals), _torch.tensor([flat.count(v) for v in vals])
    return _torch.tensor(vals)


def count_nonzero(a, axis=None):
    return _b.sum(1 for v in _flat(a) if v)


def isnan(x):
    if isinstance(x, (int, float)):
        return _math.isnan(x)
    return _torch.tensor([_math.isnan(float(v)) for v in _flat(x)])


def exp(x):
    return _math.exp(x) if isinstance(x, (int, float)) else asarray(x).float().exp()


def log(x):
    return _math.log(x) if isinstance(x, (int, float)) else asarray(x).float().log()


def sqrt(x):
    return _math.sqrt(x) if isinstance(x, (int, float)) else asarray(x).float().sqrt()


def abs(x):
    return _b.abs(x) if isinstance(x, (int, float)) else asarray(x).abs()


absolute = abs


def round(a, decimals=0):
    return _b.round(a, decimals) if isinstance(a, (int, float)) else asarray(a).round()


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _b.all(_b.abs(float(x) - float(y)) <= atol + rtol * _b.abs(float(y)) for x, y in zip(_flat(a), _flat(b)))


def prod(a, **kwargs):
    out = 1
    for v in _flat(a):
        out *= v
    return out


def clip(a, a_min, a_max):
    return asarray(a).clamp(a_min, a_max)


def dot(a, b):
    return _b.sum(x * y for x, y in zip(_flat(a), _flat(b)))


def exp2(x):
    return 2 ** x


def log2(x):
    return _math.log2(x)


def ceil(x):
    return float(_math.ceil(x))


def floor(x):
    return float(_math.floor(x))


def isscalar(x):
    return isinstance(x, (int, float, complex, str, bytes, bool))


class _Random:
    def __init__(self):
        self._r = _random.Random(0)

    def seed(self, seed=None):
        self._r.seed(seed)

    def rand(self, *shape):
        if not shape:
            return self._r.random()
        return _torch.tensor([self._r.random() for _ in range(_b.int(prod(shape)))]).reshape(*shape)

    def randn(self, *shape):
        if not shape:
            return self._r.gauss(0, 1)
        return _torch.tensor([self._r.gauss(0, 1) for _ in range(_b.int(prod(shape)))]).reshape(*shape)

    def randint(self, low, high=None, size=None, dtype=int):
        if high is None:
            low, high = 0, low
        if size is None:
            return self._r.randrange(low, high)
        n = size if isinstance(size, int) else _b.int(prod(size))
        return _torch.tensor([self._r.randrange(low, high) for _ in range(n)])

    def choice(self, a, size=None, replace=True, p=None):
        pool = list(range(a)) if isinstance(a, int) else list(_flat(a))
        if size is None:
            return self._r.choice(pool)
        n = size if isinstance(size, int) else _b.int(prod(size))
        return _torch.tensor(self._r.choices(pool, k=n) if replace else self._r.sample(pool, n))

    def shuffle(self, x):
        self._r.shuffle(x)

    def permutation(self, x):
        pool = list(range(x)) if isinstance(x, int) else list(_flat(x))
        self._r.shuffle(pool)
        return _torch.tensor(pool)

    def uniform(self, low=0.0, high=1.0, size=None):
        if size is None:
            return self._r.uniform(low, high)
        n = size if isinstance(size, int) else _b.int(prod(size))
        return _torch.tensor([self._r.uniform(low, high) for _ in range(n)])

    def default_rng(self, seed=None):
        r = _Random()
        r.seed(seed)
        return r

    RandomState = None


random = _Random()
random.RandomState = lambda seed=None: random.default_rng(seed)

"""The simulated torch.Tensor: flat Python lists with a shape, plus a small reverse-mode autograd.

Everything is contiguous and materialised; that is plenty for the corpus's tiny models and keeps the
code small. Ops that the corpus does not need raise a clear NotImplementedError.
"""
import math

from _forgeenv_sim import hardware as _hardware
from _forgeenv_sim import progress as _progress
import operator
import random as _random


class dtype:
    def __init__(self, name, is_floating_point, kind):
        self.name = name
        self.is_floating_point = is_floating_point
        self.kind = kind  # "f", "i" or "b"
        self.itemsize = 1 if kind == "b" else 8 if name in ("float64", "int64") else 4

    def __repr__(self):
        return "torch." + self.name

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))


float32 = dtype("float32", True, "f")
float64 = dtype("float64", True, "f")
float16 = dtype("float16", True, "f")
bfloat16 = dtype("bfloat16", True, "f")
int64 = dtype("int64", False, "i")
int32 = dtype("int32", False, "i")
int16 = dtype("int16", False, "i")
int8 = dtype("int8", False, "i")
uint8 = dtype("uint8", False, "i")
bool_ = dtype("bool", False, "b")
_DTYPES = {d.name: d for d in (float32, float64, float16, bfloat16, int64, int32, int16, int8, uint8, bool_)}


def _dtype_by_name(name):
    return _DTYPES[name]


class device:
    def __init__(self, type="cpu", index=None):
        if isinstance(type, device):
            type, index = type.type, type.index
        type = str(type)
        if ":" in type:
            type, idx = type.split(":", 1)
            index = int(idx)
        if type not in ("cpu", "cuda", "mps", "meta"):
            raise RuntimeError(
                "Expected one of cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, lazy, "
                "vulkan, mps, meta, hpu, mtia, privateuseone device type at start of device string: %s" % type
            )
        self.type = type
        self.index = index

    def __repr__(self):
        return "device(type='%s')" % self.type if self.index is None else "device(type='%s', index=%d)" % (self.type, self.index)

    def __str__(self):
        return self.type if self.index is None else "%s:%d" % (self.type, self.index)

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))


_CPU = device("cpu")


def _check_device(dev):
    if isinstance(dev, int) and not isinstance(dev, bool):
        d = device("cuda", dev)  # a bare ordinal names a CUDA device
    else:
        d = dev if isinstance(dev, device) else device(dev)
    if d.type == "cuda" and _hardware.SIM_CUDA:
        return d
    if d.type == "cuda":
        raise AssertionError("Torch not compiled with CUDA enabled")
    if d.type == "mps":
        raise RuntimeError("PyTorch is not linked with support for mps devices")
    return d


# --- global state -----------------------------------------------------------------------------
class _GradMode:
    enabled = True


class _Generator:
    """torch's default generator: a seeded Mersenne Twister (seed 0 until manual_seed is called,
    so that runs are reproducible even without a seed; real torch starts from a random seed)."""

    def __init__(self, seed=0):
        self.manual_seed(seed)

    def manual_seed(self, seed):
        self._seed = int(seed)
        self._rng = _random.Random(self._seed)
        return self

    def initial_seed(self):
        return self._seed

    def seed(self):
        self.manual_seed(self._rng.getrandbits(63))
        return self._seed

    def random(self):
        return self._rng.random()

    def normal(self):
        # Box-Muller on random() only: stable across Python versions.
        u1 = self._rng.random() or 1e-12
        u2 = self._rng.random()
        return math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)

    def randbelow(self, n):
        return int(self._rng.random() * n)

    def get_state(self):
        return Tensor._make(list(range(1)), (1,), uint8)

    def set_state(self, state):
        return None


default_generator = _Generator(0)


def _gen(generator):
    return generator if generator is not None else default_generator


# --- helpers ---------------------------------------------------------------------------------
def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def _strides(shape):
    st = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        st[i] = st[i + 1] * shape[i + 1]
    return st


def _infer(data):
    """Flattens nested lists/tuples, returning (flat, shape); raises torch's own ragged-list error."""
    if isinstance(data, Tensor):
        return list(data.data), data.shape
    if not isinstance(data, (list, tuple)):
        return [data], ()
    if len(data) == 0:
        return [], (0,)
    if all(not isinstance(x, (list, tuple, Tensor)) for x in data):
        return list(data), (len(data),)
    flat = []
    inner = None
    for x in data:
        f, s = _infer(x)
        if inner is None:
            inner = s
        elif s != inner:
            dim = 1
            for a, b in zip(inner, s):
                if a != b:
                    break
                dim += 1
            if len(s) != len(inner) and dim > min(len(s), len(inner)):
                raise ValueError("expected sequence of length %d at dim %d (got %d)" % (inner[0] if inner else 0, dim, s[0] if s else 0))
            raise ValueError("expected sequence of length %d at dim %d (got %d)" % (inner[dim - 1], dim, s[dim - 1]))
        flat.extend(f)
    return flat, (len(data),) + inner


def _dtype_of(flat):
    if not flat:
        return float32
    if all(isinstance(x, bool) for x in flat):
        return bool_
    if all(isinstance(x, int) for x in flat):
        return int64
    for x in flat:
        if not isinstance(x, (int, float)):
            raise TypeError("new(): invalid data type '%s'" % type(x).__name__)
    return float32


def _cast(flat, dt):
    if dt.kind == "f":
        return [float(x) for x in flat]
    if dt.kind == "b":
        return [bool(x) for x in flat]
    return [int(x) for x in flat]


def _result_dtype(a, b):
    if a.kind == "f" or b.kind == "f":
        if a.kind == "f" and b.kind == "f":
            return a if a.itemsize >= b.itemsize else b
        return a if a.kind == "f" else b
    if a.kind == "i" or b.kind == "i":
        return int64
    return bool_


_BROADCAST_CACHE = {}


def _broadcast(sa, sb):
    key = (sa, sb)
    hit = _BROADCAST_CACHE.get(key)
    if hit is not None:
        return hit
    n = max(len(sa), len(sb))
    pa = (1,) * (n - len(sa)) + sa
    pb = (1,) * (n - len(sb)) + sb
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise RuntimeError(
                "The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d"
                % (x, y, len(out))
            )
    out = tuple(out)
    total = _prod(out)
    sta, stb, sto = _strides(pa), _strides(pb), _strides(out)
    ia, ib = [0] * total, [0] * total
    for flat in range(total):
        rem = flat
        a = b = 0
        for d in range(n):
            k, rem = divmod(rem, sto[d]) if sto[d] else (0, rem)
            if pa[d] != 1:
                a += k * sta[d]
            if pb[d] != 1:
                b += k * stb[d]
        ia[flat] = a
        ib[flat] = b
    hit = (out, ia, ib)
    if len(_BROADCAST_CACHE) < 256:
        _BROADCAST_CACHE[key] = hit
    return hit


def _norm_dim(dim, ndim):
    if dim < -max(ndim, 1) or dim >= max(ndim, 1):
        raise IndexError(
            "Dimension out of range (expected to be in range of [%d, %d], but got %d)" % (-max(ndim, 1), max(ndim, 1) - 1, dim)
        )
    return dim + ndim if dim < 0 else dim


def _as_tensor(x, like=None):
    if isinstance(x, Tensor):
        return x
    if isinstance(x, (int, float, bool)):
        dt = float32 if isinstance(x, float) else (bool_ if isinstance(x, bool) else int64)
        if like is not None and dt.kind != "f" and like.dtype.kind == "f":
            dt = like.dtype
        elif like is not None and dt.kind == "f" and like.dtype.kind == "f":
            dt = like.dtype
        elif like is not None and dt is int64 and like.dtype.kind == "i":
            dt = like.dtype
        return Tensor._make([_cast([x], dt)[0]], (), dt)
    return tensor(x)


class _Values(tuple):
    """The (values, indices) named tuple that torch.max(dim=...) returns."""

    @property
    def values(self):
        return self[0]

    @property
    def indices(self):
        return self[1]


class Size(tuple):
    def __repr__(self):
        return "torch.Size([%s])" % ", ".join(str(s) for s in self)

    def numel(self):
        return _prod(self)


# --- the tensor ------------------------------------------------------------------------------
class Tensor:
    __array_priority__ = 1000

    def __init__(self, *args):
        if len(args) == 1 and isinstance(args[0], (list, tuple)):
            flat, shape = _infer(args[0])
            self._init(_cast(flat, float32), shape, float32)
        else:
            shape = tuple(int(a) for a in args)
            self._init([0.0] * _prod(shape), shape, float32)

    def _init(self, data, shape, dt, requires_grad=False):
        self.data = data
        self._shape = tuple(shape)
        self.dtype = dt
        self.requires_grad = requires_grad
        self.grad = None
        self._ctx = None
        self._retain = False

    @classmethod
    def _make(cls, data, shape, dt, requires_grad=False):
        t = cls.__new__(cls)
        t._init(data, shape, dt, requires_grad)
        return t

    def __reduce__(self):
        return (_rebuild, (list(self.data), self._shape, self.dtype.name, self.requires_grad, type(self).__name__ == "Parameter"))

    # -- metadata --
    @property
    def shape(self):
        return Size(self._shape)

    def size(self, dim=None):
        return Size(self._shape) if dim is None else self._shape[_norm_dim(dim, len(self._shape))]

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    def numel(self):
        return len(self.data)

    nelement = numel

    @property
    def device(self):
        return _CPU

    @property
    def is_cuda(self):
        return False

    @property
    def is_leaf(self):
        return self._ctx is None

    @property
    def T(self):
        return self.t() if self.dim() == 2 else self.permute(*reversed(range(self.dim())))

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def element_size(self):
        return self.dtype.itemsize

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d tensor")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._shape[0]))

    def __hash__(self):
        return id(self)

    # -- conversion --
    def item(self):
        if len(self.data) != 1:
            raise RuntimeError("a Tensor with %d elements cannot be converted to Scalar" % len(self.data))
        return self.data[0]

    def tolist(self):
        if not self._shape:
            return self.data[0]

        def build(off, d):
            if d == len(self._shape) - 1:
                return list(self.data[off : off + self._shape[d]])
            step = _prod(self._shape[d + 1 :])
            return [build(off + i * step, d + 1) for i in range(self._shape[d])]

        if 0 in self._shape:
            return [] if len(self._shape) == 1 else [[] for _ in range(self._shape[0])]
        return build(0, 0)

    def numpy(self):
        # There is no numpy in the simulated environment; our tensors already answer numpy's
        # common array methods (argmax(axis=), mean(), reshape, astype, tolist).
        if self.requires_grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() instead.")
        return self

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def __bool__(self):
        if len(self.data) != 1:
            raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
        return bool(self.data[0])

    def __index__(self):
        if self.dtype.kind == "f" or len(self.data) != 1:
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return int(self.data[0])

    def __format__(self, spec):
        if self.dim() == 0 or len(self.data) == 1 and not spec:
            return format(self.item(), spec)
        if not spec:
            return repr(self)
        raise TypeError("unsupported format string passed to Tensor.__format__")

    def __repr__(self):
        def fmt(x):
            if self.dtype.kind == "b":
                return "True" if x else "False"
            if self.dtype.kind == "i":
                return str(x)
            if x == int(x) and abs(x) < 1e16:
                return "%d." % int(x)
            return "%.4f" % x

        def build(off, d):
            if d == len(self._shape):
                return fmt(self.data[off])
            step = _prod(self._shape[d + 1 :])
            inner = [build(off + i * step, d + 1) for i in range(self._shape[d])]
            sep = ", " if d == len(self._shape) - 1 else ",\n" + " " * (8 + d)
            return "[" + sep.join(inner) + "]"

        body = build(0, 0) if self.data or not self._shape else "[]"
        extra = ""
        if self.dtype not in (float32, int64, bool_):
            extra += ", dtype=%r" % self.dtype
        if self.requires_grad and self._ctx is None:
            extra += ", requires_grad=True"
        elif self._ctx is not None:
            extra += ", grad_fn=<%sBackward0>" % self._ctx[2]
        return "tensor(%s%s)" % (body, extra)

    __str__ = __repr__

    def _to_dtype(self, dt):
        if dt is self.dtype:
            return self
        out = Tensor._make(_cast(self.data, dt), self._shape, dt)
        if dt.kind == "f" and self.requires_grad and _GradMode.enabled:
            out.requires_grad = True
            out._ctx = ((self,), lambda g: [g], "ToCopy")
        return out

    def to(self, *args, **kwargs):
        out = self
        for a in list(args) + [kwargs.get("device"), kwargs.get("dtype")]:
            if a is None:
                continue
            if isinstance(a, dtype):
                out = out._to_dtype(a)
            elif isinstance(a, Tensor):
                out = out._to_dtype(a.dtype)
            else:
                _check_device(a)
        return out

    def cpu(self):
        return self

    def cuda(self, *args, **kwargs):
        if _hardware.SIM_CUDA:
            return self
        raise AssertionError("Torch not compiled with CUDA enabled")

    def float(self):
        return self._to_dtype(float32)

    def double(self):
        return self._to_dtype(float64)

    def half(self):
        return self._to_dtype(float16)

    def long(self):
        return self._to_dtype(int64)

    def int(self):
        return self._to_dtype(int32)

    def bool(self):
        return self._to_dtype(bool_)

    def type(self, dt=None):
        if dt is None:
            return {"f": "torch.FloatTensor", "i": "torch.LongTensor", "b": "torch.BoolTensor"}[self.dtype.kind]
        return self._to_dtype(dt)

    def astype(self, dt):  # numpy spelling, used by metric code written for numpy arrays
        if dt in (float, "float", "float32", "float64"):
            return self._to_dtype(float32)
        if dt in (int, "int", "int32", "int64"):
            return self._to_dtype(int64)
        if dt in (bool, "bool"):
            return self._to_dtype(bool_)
        return self._to_dtype(dt)

    def detach(self):
        return Tensor._make(self.data, self._shape, self.dtype)

    def clone(self):
        out = Tensor._make(list(self.data), self._shape, self.dtype)
        if self.requires_grad and _GradMode.enabled:
            out.requires_grad = True
            out._ctx = ((self,), lambda g: [g], "Clone")
        return out

    def contiguous(self):
        return self

    def copy(self):
        return self.clone()

    def requires_grad_(self, requires_grad=True):
        if requires_grad and not self.dtype.is_floating_point:
            raise RuntimeError("only Tensors of floating point dtype can require gradients")
        self.requires_grad = requires_grad
        return self

    def retain_grad(self):
        self._retain = True

    def zero_(self):
        self.data[:] = [self.dtype.kind == "f" and 0.0 or 0] * len(self.data)
        return self

    def fill_(self, value):
        self.data[:] = _cast([value] * len(self.data), self.dtype)
        return self

    def copy_(self, src):
        src = _as_tensor(src)
        _, ia, _ = _broadcast(self._shape, src._shape) if src._shape != self._shape else (None, None, None)
        if src._shape == self._shape:
            self.data[:] = _cast(src.data, self.dtype)
        else:
            out, _, ib = _broadcast(self._shape, src._shape)
            self.data[:] = _cast([src.data[i] for i in ib], self.dtype)
        return self

    def normal_(self, mean=0.0, std=1.0, generator=None):
        g = _gen(generator)
        self.data[:] = [mean + std * g.normal() for _ in self.data]
        return self

    def uniform_(self, a=0.0, b=1.0, generator=None):
        g = _gen(generator)
        self.data[:] = [a + (b - a) * g.random() for _ in self.data]
        return self

    # -- autograd --
    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        if not self.requires_grad:
            raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
        if gradient is None:
            if len(self.data) != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            seed = [1.0]
            _progress.record(float(self.data[0]))
        else:
            seed = list(_as_tensor(gradient).data)
        order, seen = [], set()
        stack = [(self, False)]
        while stack:
            node, done = stack.pop()
            if done:
                order.append(node)
                continue
            if id(node) in seen:
                continue
            seen.add(id(node))
            stack.append((node, True))
            if node._ctx is not None:
                for p in node._ctx[0]:
                    if isinstance(p, Tensor) and p.requires_grad and id(p) not in seen:
                        stack.append((p, False))
        grads = {id(self): seed}
        for node in reversed(order):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node._ctx is None or node._retain:
                acc = node.grad
                if acc is None:
                    node.grad = Tensor._make(list(g), node._shape, node.dtype if node.dtype.kind == "f" else float32)
                else:
                    acc.data = [a + b for a, b in zip(acc.data, g)]
                if node._ctx is None:
                    continue
            parents, fn, _ = node._ctx
            for p, pg in zip(parents, fn(g)):
                if pg is None or not isinstance(p, Tensor) or not p.requires_grad:
                    continue
                prev = grads.get(id(p))
                grads[id(p)] = pg if prev is None else [a + b for a, b in zip(prev, pg)]

    # -- elementwise --
    def _binary(self, other, fn, name, grad_fn=None, out_dtype=None):
        other = _as_tensor(other, self)
        dt = out_dtype or _result_dtype(self.dtype, other.dtype)
        a, b = self.data, other.data
        if self._shape == other._shape:
            shape, ia, ib = self._shape, None, None
            data = list(map(fn, a, b))
        elif len(b) == 1 and len(other._shape) <= len(self._shape):
            # scalar right operand: the common `x * 0.5` case, without index maps
            shape, ia, ib = self._shape, None, [0] * len(a)
            bv = b[0]
            data = [fn(x, bv) for x in a]
        else:
            shape, ia, ib = _broadcast(self._shape, other._shape)
            data = [fn(a[i], b[j]) for i, j in zip(ia, ib)]
        if dt.kind == "f":
            data = [float(x) for x in data] if self.dtype.kind != "f" or other.dtype.kind != "f" else data
        elif dt.kind == "i" and fn is operator.truediv:
            dt = float32
        out = Tensor._make(data, shape, dt)
        if grad_fn is not None and _GradMode.enabled and (self.requires_grad or other.requires_grad):
            out.requires_grad = True
            n = len(data)
            sa, sb = self, other

            def back(g):
                ga, gb = grad_fn(g, sa, sb, out, ia, ib)
                return [_reduce_to(ga, ia, len(sa.data), n), _reduce_to(gb, ib, len(sb.data), n)]

            out._ctx = ((self, other), back, name)
        return out

    def __add__(self, other):
        return self._binary(other, operator.add, "Add", _g_add)

    __radd__ = __add__

    def __sub__(self, other):
        return self._binary(other, operator.sub, "Sub", _g_sub)

    def __rsub__(self, other):
        return _as_tensor(other, self).__sub__(self)

    def __mul__(self, other):
        return self._binary(other, operator.mul, "Mul", _g_mul)

    __rmul__ = __mul__

    def __truediv__(self, other):
        res = self._binary(other, _safe_div, "Div", _g_div)
        if res.dtype.kind != "f":
            res = Tensor._make([float(x) for x in res.data], res._shape, float32)
        return res

    def __rtruediv__(self, other):
        return _as_tensor(other, self).__truediv__(self)

    def __floordiv__(self, other):
        return self._binary(other, operator.floordiv, "FloorDivide")

    def __mod__(self, other):
        return self._binary(other, operator.mod, "Remainder")

    def __pow__(self, other):
        return self._binary(other, _safe_pow, "Pow", _g_pow)

    def __rpow__(self, other):
        return _as_tensor(other, self).__pow__(self)

    def __neg__(self):
        return self._unary(operator.neg, lambda g, x, y: [-v for v in g], "Neg")

    def __pos__(self):
        return self

    def __abs__(self):
        return self.abs()

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(_as_tensor(other), self)

    def _cmp(self, other, fn):
        return self._binary(other, fn, "Cmp", None, bool_)

    def __eq__(self, other):
        return self._cmp(other, operator.eq)

    def __ne__(self, other):
        return self._cmp(other, operator.ne)

    def __lt__(self, other):
        return self._cmp(other, operator.lt)

    def __le__(self, other):
        return self._cmp(other, operator.le)

    def __gt__(self, other):
        return self._cmp(other, operator.gt)

    def __ge__(self, other):
        return self._cmp(other, operator.ge)

    def __and__(self, other):
        return self._binary(other, lambda x, y: bool(x) and bool(y), "And", None, bool_)

    def __or__(self, other):
        return self._binary(other, lambda x, y: bool(x) or bool(y), "Or", None, bool_)

    def __invert__(self):
        if self.dtype.kind != "b":
            raise TypeError("ufunc 'invert' not supported for the input types")
        return Tensor._make([not x for x in self.data], self._shape, bool_)

    def eq(self, other):
        return self == other

    def ne(self, other):
        return self != other

    def gt(self, other):
        return self > other

    def lt(self, other):
        return self < other

    def add(self, other, alpha=1):
        return self + (other * alpha if alpha != 1 else other)

    def sub(self, other, alpha=1):
        return self - (other * alpha if alpha != 1 else other)

    def mul(self, other):
        return self * other

    def div(self, other):
        return self / other

    def pow(self, e):
        return self ** e

    def add_(self, other, alpha=1):
        o = _as_tensor(other, self)
        if o._shape == self._shape:
            self.data[:] = [a + alpha * b for a, b in zip(self.data, o.data)]
        else:
            self.data[:] = (self + o * alpha).data
        return self

    def sub_(self, other, alpha=1):
        return self.add_(other, -alpha)

    def mul_(self, other):
        o = _as_tensor(other, self)
        self.data[:] = (self * o).data if o._shape != () else [a * o.data[0] for a in self.data]
        return self

    def div_(self, other):
        self.data[:] = (self / other).data
        return self

    def clamp_(self, min=None, max=None):
        self.data[:] = self.clamp(min, max).data
        return self

    def _unary(self, fn, grad, name):
        data = [fn(x) for x in self.data]
        dt = self.dtype if self.dtype.kind == "f" or name in ("Neg", "Abs") else float32
        out = Tensor._make(_cast(data, dt) if dt.kind == "f" else data, self._shape, dt)
        if grad is not None and _GradMode.enabled and self.requires_grad:
            out.requires_grad = True
            src = self
            out._ctx = ((self,), lambda g: [grad(g, src.data, out.data)], name)
        return out

    def exp(self):
        return self._unary(_safe_exp, lambda g, x, y: [a * b for a, b in zip(g, y)], "Exp")

    def log(self):
        return self._unary(_safe_log, lambda g, x, y: [a / b if b else math.copysign(math.inf, a) for a, b in zip(g, x)], "Log")

    def sqrt(self):
        return self._unary(lambda v: math.sqrt(v) if v >= 0 else math.nan, lambda g, x, y: [a / (2 * b) if b else math.inf for a, b in zip(g, y)], "Sqrt")

    def abs(self):
        return self._unary(abs, lambda g, x, y: [a * (1 if b > 0 else -1 if b < 0 else 0) for a, b in zip(g, x)], "Abs")

    def relu(self):
        return self._unary(lambda v: v if v > 0 else 0.0, lambda g, x, y: [a if b > 0 else 0.0 for a, b in zip(g, x)], "Relu")

    def sigmoid(self):
        return self._unary(_sigmoid, lambda g, x, y: [a * b * (1 - b) for a, b in zip(g, y)], "Sigmoid")

    def tanh(self):
        return self._unary(math.tanh, lambda g, x, y: [a * (1 - b * b) for a, b in zip(g, y)], "Tanh")

    def clamp(self, min=None, max=None):
        lo = -math.inf if min is None else min
        hi = math.inf if max is None else max
        return self._unary(lambda v: lo if v < lo else hi if v > hi else v, lambda g, x, y: [a if lo <= b <= hi else 0.0 for a, b in zip(g, x)], "Clamp")

    clip = clamp

    def round(self):
        return Tensor._make([float(round(x)) for x in self.data], self._shape, self.dtype)

    def softmax(self, dim=-1):
        from .nn import functional as F

        return F.softmax(self, dim=dim)

    def log_softmax(self, dim=-1):
        from .nn import functional as F

        return F.log_softmax(self, dim=dim)

    # -- reductions --
    def _reduce(self, dim, keepdim, fn, name, grad=None):
        nd = len(self._shape)
        if dim is None:
            val = fn(self.data) if self.data else fn([])
            out = Tensor._make([val], (), self._red_dtype(name))
            if grad is not None and _GradMode.enabled and self.requires_grad:
                out.requires_grad = True
                src = self
                out._ctx = ((self,), lambda g: [grad(g[0], src.data, len(src.data))], name)
            return out
        if isinstance(dim, (tuple, list)):
            out = self
            for d in sorted((_norm_dim(d, nd) for d in dim), reverse=True):
                out = out._reduce(d, keepdim, fn, name, grad)
            return out
        d = _norm_dim(dim, nd)
        outer = _prod(self._shape[:d])
        n = self._shape[d]
        inner = _prod(self._shape[d + 1 :])
        vals = []
        for o in range(outer):
            base = o * n * inner
            for i in range(inner):
                vals.append(fn(self.data[base + i : base + n * inner : inner]))
        shape = self._shape[:d] + ((1,) if keepdim else ()) + self._shape[d + 1 :]
        out = Tensor._make(vals, shape, self._red_dtype(name))
        if grad is not None and _GradMode.enabled and self.requires_grad:
            out.requires_grad = True
            src = self

            def back(g):
                res = [0.0] * len(src.data)
                k = 0
                for o in range(outer):
                    base = o * n * inner
                    for i in range(inner):
                        part = grad(g[k], src.data[base + i : base + n * inner : inner], n)
                        for j, v in enumerate(part):
                            res[base + i + j * inner] = v
                        k += 1
                return [res]

            out._ctx = ((self,), back, name)
        return out

    def _red_dtype(self, name):
        if name in ("Mean", "Std", "Var"):
            if self.dtype.kind != "f" and name != "Mean":
                return float32
            if self.dtype.kind == "b" or self.dtype.kind == "i":
                return float32
            return self.dtype
        if name == "Sum":
            return self.dtype if self.dtype.kind == "f" else int64
        if name in ("Argmax", "Argmin"):
            return int64
        if name in ("Any", "All"):
            return bool_
        return self.dtype

    def sum(self, dim=None, keepdim=False, dtype=None, axis=None):
        dim = axis if dim is None else dim
        return self._reduce(dim, keepdim, lambda xs: sum(xs) if self.dtype.kind != "b" else sum(1 for x in xs if x), "Sum", lambda g, xs, n: [g] * n)

    def mean(self, dim=None, keepdim=False, dtype=None, axis=None):
        dim = axis if dim is None else dim
        # Lenient on integer/bool tensors (torch raises): metric code written for numpy arrays
        # calls (preds == labels).mean(), and our tensors stand in for those arrays too.
        return self._reduce(dim, keepdim, lambda xs: (sum(float(x) for x in xs) / len(xs)) if xs else math.nan, "Mean", lambda g, xs, n: [g / n] * n)

    def var(self, dim=None, unbiased=True, keepdim=False, correction=None):
        c = (1 if unbiased else 0) if correction is None else correction

        def f(xs):
            m = sum(xs) / len(xs)
            return sum((x - m) ** 2 for x in xs) / max(len(xs) - c, 1)

        def g(go, xs, n):
            m = sum(xs) / n
            return [go * 2 * (x - m) / max(n - c, 1) for x in xs]

        return self._reduce(dim, keepdim, f, "Var", g)

    def std(self, dim=None, unbiased=True, keepdim=False, correction=None):
        return self.var(dim, unbiased, keepdim, correction).sqrt()

    def max(self, dim=None, keepdim=False, axis=None):
        dim = axis if dim is None else dim
        if isinstance(dim, Tensor):
            return maximum(self, dim)
        if dim is None:
            return self._reduce(None, False, max, "Max")
        return _Values((self._reduce(dim, keepdim, max, "Max"), self.argmax(dim, keepdim)))

    def min(self, dim=None, keepdim=False, axis=None):
        dim = axis if dim is None else dim
        if dim is None:
            return self._reduce(None, False, min, "Min")
        return _Values((self._reduce(dim, keepdim, min, "Min"), self.argmin(dim, keepdim)))

    def argmax(self, dim=None, keepdim=False, axis=None):
        dim = axis if dim is None else dim
        return self._reduce(dim, keepdim, lambda xs: max(range(len(xs)), key=lambda i: (xs[i], -i)), "Argmax")

    def argmin(self, dim=None, keepdim=False, axis=None):
        dim = axis if dim is None else dim
        return self._reduce(dim, keepdim, lambda xs: min(range(len(xs)), key=lambda i: (xs[i], i)), "Argmin")

    def any(self, dim=None):
        return self._reduce(dim, False, lambda xs: any(xs), "Any")

    def all(self, dim=None):
        return self._reduce(dim, False, lambda xs: all(xs), "All")

    def norm(self, p=2, dim=None):
        return (self * self).sum(dim).sqrt()

    # -- shape --
    def _shaped(self, shape, name):
        out = Tensor._make(self.data, shape, self.dtype)
        if _GradMode.enabled and self.requires_grad:
            out.requires_grad = True
            out._ctx = ((self,), lambda g: [g], name)
        return out

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], dtype):
            return self._to_dtype(shape[0])
        if len(shape) == 1 and isinstance(shape[0], (tuple, list, Size)):
            shape = tuple(shape[0])
        shape = [int(s) for s in shape]
        if shape.count(-1) > 1:
            raise RuntimeError("only one dimension can be inferred")
        total = len(self.data)
        if -1 in shape:
            rest = _prod([s for s in shape if s != -1])
            if rest == 0 or total % rest:
                raise RuntimeError("shape '%s' is invalid for input of size %d" % (list(shape), total))
            shape[shape.index(-1)] = total // rest
        if _prod(shape) != total:
            raise RuntimeError("shape '%s' is invalid for input of size %d" % (list(shape), total))
        return self._shaped(tuple(shape), "View")

    reshape = view

    def view_as(self, other):
        return self.view(other.shape)

    def flatten(self, start_dim=0, end_dim=-1):
        nd = len(self._shape)
        if nd == 0:
            return self.view(1)
        s, e = _norm_dim(start_dim, nd), _norm_dim(end_dim, nd)
        return self.view(self._shape[:s] + (_prod(self._shape[s : e + 1]),) + self._shape[e + 1 :])

    def squeeze(self, dim=None):
        if dim is None:
            return self.view(tuple(s for s in self._shape if s != 1))
        d = _norm_dim(dim, len(self._shape))
        if self._shape and self._shape[d] == 1:
            return self.view(self._shape[:d] + self._shape[d + 1 :])
        return self

    def unsqueeze(self, dim):
        d = _norm_dim(dim, len(self._shape) + 1)
        return self.view(self._shape[:d] + (1,) + self._shape[d:])

    def expand(self, *sizes):
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list, Size)):
            sizes = tuple(sizes[0])
        target = tuple(s if s != -1 else self._shape[i - (len(sizes) - len(self._shape))] for i, s in enumerate(sizes))
        return self + zeros(target, dtype=self.dtype)

    def repeat(self, *sizes):
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        out = self
        while out.dim() < len(sizes):
            out = out.unsqueeze(0)  # torch prepends dimensions when sizes has more entries
        for d, r in enumerate(sizes):
            if r != 1:
                out = cat([out] * r, dim=d)
        return out

    def permute(self, *dims):
        if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
            dims = tuple(dims[0])
        nd = len(self._shape)
        dims = [_norm_dim(d, nd) for d in dims]
        shape = tuple(self._shape[d] for d in dims)
        src_st = _strides(self._shape)
        idx = []
        for flat in range(len(self.data)):
            rem, off = flat, 0
            for d, st in zip(dims, _strides(shape)):
                k, rem = divmod(rem, st)
                off += k * src_st[d]
            idx.append(off)
        return _gather(self, idx, shape, "Permute")

    def transpose(self, dim0, dim1):
        nd = len(self._shape)
        dims = list(range(nd))
        a, b = _norm_dim(dim0, nd), _norm_dim(dim1, nd)
        dims[a], dims[b] = dims[b], dims[a]
        return self.permute(*dims)

    def t(self):
        if self.dim() < 2:
            return self
        return self.transpose(0, 1)

    def __getitem__(self, key):
        if isinstance(key, Tensor) and key.dtype.kind == "b":
            return _mask_select(self, key)
        if not isinstance(key, tuple):
            key = (key,)
        idx, shape = _index_map(self._shape, key)
        return _gather(self, idx, shape, "Index")

    def __setitem__(self, key, value):
        if isinstance(key, Tensor) and key.dtype.kind == "b":
            if key._shape == self._shape:
                vals = _as_tensor(value)
                it = iter(vals.data) if len(vals.data) > 1 else None
                for i, m in enumerate(key.data):
                    if m:
                        self.data[i] = _cast([next(it) if it else vals.data[0]], self.dtype)[0]
                return
            idx, _ = _index_map(self._shape, ([i for i, m in enumerate(key.data) if m],))
        else:
            idx, _ = _index_map(self._shape, key if isinstance(key, tuple) else (key,))
        vals = _as_tensor(value)
        if len(vals.data) == 1:
            v = _cast(vals.data, self.dtype)[0]
            for i in idx:
                self.data[i] = v
        else:
            if len(vals.data) != len(idx):
                raise RuntimeError("shape mismatch: value tensor of shape %s cannot be broadcast to indexing result" % list(vals._shape))
            for i, v in zip(idx, _cast(vals.data, self.dtype)):
                self.data[i] = v

    def masked_fill(self, mask, value):
        out = self.clone().detach()
        m = _as_tensor(mask)
        shape, ia, ib = _broadcast(self._shape, m._shape)
        for i, j in zip(ia, ib):
            if m.data[j]:
                out.data[i] = _cast([value], self.dtype)[0]
        return out

    def masked_fill_(self, mask, value):
        self.data[:] = self.masked_fill(mask, value).data
        return self

    def unique(self):
        return Tensor._make(sorted(set(self.data)), (len(set(self.data)),), self.dtype)

    def topk(self, k, dim=-1):
        if self.dim() != 1:
            raise NotImplementedError("simulated torch: topk on 1-d tensors only")
        order = sorted(range(len(self.data)), key=lambda i: (-self.data[i], i))[:k]
        return _Values((Tensor._make([self.data[i] for i in order], (k,), self.dtype), Tensor._make(order, (k,), int64)))

    def split(self, size, dim=0):
        n = self._shape[dim]
        return tuple(self[tuple([slice(None)] * dim + [slice(i, i + size)])] for i in range(0, n, size))

    def chunk(self, chunks, dim=0):
        return self.split(max(1, -(-self._shape[dim] // chunks)), dim)


def _rebuild(data, shape, dtname, requires_grad, is_param=False):
    if is_param:
        from .nn import Parameter

        return Parameter(Tensor._make(data, shape, _DTYPES[dtname]), requires_grad)
    return Tensor._make(data, shape, _DTYPES[dtname], requires_grad)


def _safe_div(a, b):
    if b == 0:
        return math.nan if a == 0 else math.copysign(math.inf, a) * (1 if str(b)[0] != "-" else -1)
    return a / b


def _safe_pow(a, b):
    try:
        return a ** b
    except (OverflowError, ZeroDivisionError):
        return math.inf


def _safe_exp(v):
    try:
        return math.exp(v)
    except OverflowError:
        return math.inf


def _safe_log(v):
    if v > 0:
        return math.log(v)
    return -math.inf if v == 0 else math.nan


def _sigmoid(v):
    if v >= 0:
        return 1.0 / (1.0 + math.exp(-v))
    e = math.exp(v)
    return e / (1.0 + e)


def _reduce_to(g, idx, n, total):
    if g is None:
        return None
    if idx is None:
        if len(g) == n:
            return g
        return [sum(g)] * n if n == 1 else g
    res = [0.0] * n
    for k, i in enumerate(idx):
        res[i] += g[k]
    return res


def _g_add(g, a, b, out, ia, ib):
    return g, g


def _g_sub(g, a, b, out, ia, ib):
    return g, [-x for x in g]


def _expand(t, idx, n):
    if idx is None:
        return t.data if len(t.data) == n else t.data * n
    return [t.data[i] for i in idx]


def _g_mul(g, a, b, out, ia, ib):
    n = len(g)
    av, bv = _expand(a, ia, n), _expand(b, ib, n)
    return [x * y for x, y in zip(g, bv)], [x * y for x, y in zip(g, av)]


def _g_div(g, a, b, out, ia, ib):
    n = len(g)
    av, bv = _expand(a, ia, n), _expand(b, ib, n)
    return [x / y for x, y in zip(g, bv)], [-x * p / (y * y) for x, p, y in zip(g, av, bv)]


def _g_pow(g, a, b, out, ia, ib):
    n = len(g)
    av, bv = _expand(a, ia, n), _expand(b, ib, n)
    ga = [x * e * (p ** (e - 1) if not (p == 0 and e < 1) else 0.0) for x, p, e in zip(g, av, bv)]
    gb = [x * o * math.log(p) if p > 0 else 0.0 for x, o, p in zip(g, out.data, av)] if b.requires_grad else None
    return ga, gb


def _gather(src, idx, shape, name):
    out = Tensor._make([src.data[i] for i in idx], shape, src.dtype)
    if _GradMode.enabled and src.requires_grad:
        out.requires_grad = True
        n = len(src.data)

        def back(g):
            res = [0.0] * n
            for k, i in enumerate(idx):
                res[i] += g[k]
            return [res]

        out._ctx = ((src,), back, name)
    return out


def _mask_select(src, mask):
    if mask._shape == src._shape:
        idx = [i for i, m in enumerate(mask.data) if m]
        return _gather(src, idx, (len(idx),), "MaskedSelect")
    if mask.dim() == 1 and src._shape and mask._shape[0] == src._shape[0]:
        rows = [i for i, m in enumerate(mask.data) if m]
        idx, shape = _index_map(src._shape, (rows,))
        return _gather(src, idx, shape, "Index")
    raise IndexError(
        "The shape of the mask %s at index 0 does not match the shape of the indexed tensor %s at index 0" % (list(mask._shape), list(src._shape))
    )


def _index_map(shape, key):
    """Flat source indices and result shape for basic indexing (ints, slices, None, Ellipsis) plus
    one integer list/tensor on a dimension."""
    key = list(key)
    if any(k is Ellipsis for k in key):
        i = key.index(Ellipsis)
        fill = len(shape) - (len([k for k in key if k is not None]) - 1)
        key = key[:i] + [slice(None)] * fill + key[i + 1 :]
    real = [k for k in key if k is not None]
    if len(real) > len(shape):
        raise IndexError("too many indices for tensor of dimension %d" % len(shape))
    key = key + [slice(None)] * (len(shape) - len(real))
    per_dim = []  # (list of indices, keeps_dim)
    out_shape = []
    d = 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        n = shape[d]
        if isinstance(k, Tensor):
            k = k.tolist() if k.dim() else int(k.item())
        if isinstance(k, bool):
            k = int(k)
        if isinstance(k, int):
            if k < -n or k >= n:
                raise IndexError("index %d is out of bounds for dimension %d with size %d" % (k, d, n))
            per_dim.append([k % n])
        elif isinstance(k, slice):
            r = list(range(*k.indices(n)))
            per_dim.append(r)
            out_shape.append(len(r))
        elif isinstance(k, (list, tuple)):
            ks = []
            for v in k:
                v = int(v)
                if v < -n or v >= n:
                    raise IndexError("index %d is out of bounds for dimension %d with size %d" % (v, d, n))
                ks.append(v % n)
            per_dim.append(ks)
            out_shape.append(len(ks))
        else:
            raise IndexError(
                "only integers, slices (`:`), ellipsis (`...`), None and long or byte Variables are valid indices (got %s)" % type(k).__name__
            )
        d += 1
    st = _strides(shape)
    offs = [0]
    for dim_i, ks in enumerate(per_dim):
        s = st[dim_i]
        offs = [o + k * s for o in offs for k in ks]
    return offs, tuple(out_shape)


# --- free functions ---------------------------------------------------------------------------
def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if device is not None:
        _check_device(device)
    if isinstance(data, Tensor):
        flat, shape = list(data.data), data._shape
        dt = dtype or data.dtype
    else:
        flat, shape = _infer(data)
        dt = dtype or _dtype_of(flat)
    t = Tensor._make(_cast(flat, dt), shape, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def as_tensor(data, dtype=None, device=None):
    if isinstance(data, Tensor) and (dtype is None or dtype is data.dtype):
        return data
    return tensor(data, dtype=dtype, device=device)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def _shape_args(size):
    if len(size) == 1 and isinstance(size[0], (tuple, list, Size)):
        return tuple(int(s) for s in size[0])
    return tuple(int(s) for s in size)


def _filled(shape, value, dtype, requires_grad):
    dt = dtype or (float32 if isinstance(value, float) else int64 if isinstance(value, int) and not isinstance(value, bool) else float32)
    t = Tensor._make(_cast([value], dt) * _prod(shape), shape, dt)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return _filled(_shape_args(size), 0.0, dtype or float32, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return _filled(_shape_args(size), 1.0, dtype or float32, requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    return _filled(tuple(size), fill_value, dtype, requires_grad)


def zeros_like(t, dtype=None):
    return _filled(t._shape, 0.0, dtype or t.dtype, False)


def ones_like(t, dtype=None):
    return _filled(t._shape, 1.0, dtype or t.dtype, False)


def full_like(t, fill_value, dtype=None):
    return _filled(t._shape, fill_value, dtype or t.dtype, False)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, requires_grad=requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = []
    v = start
    while (step > 0 and v < end) or (step < 0 and v > end):
        vals.append(v)
        v += step
    dt = dtype or (float32 if any(isinstance(x, float) for x in (start, end, step)) else int64)
    return Tensor._make(_cast(vals, dt), (len(vals),), dt)


def linspace(start, end, steps, dtype=None, device=None):
    if steps == 1:
        vals = [float(start)]
    else:
        vals = [start + (end - start) * i / (steps - 1) for i in range(steps)]
    return Tensor._make([float(v) for v in vals], (steps,), dtype or float32)


def eye(n, m=None, dtype=None):
    m = n if m is None else m
    return Tensor._make([1.0 if i == j else 0.0 for i in range(n) for j in range(m)], (n, m), dtype or float32)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    shape = _shape_args(size)
    g = _gen(generator)
    t = Tensor._make([g.normal() for _ in range(_prod(shape))], shape, dtype or float32)
    if requires_grad:
        t.requires_grad_(True)
    return t


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    shape = _shape_args(size)
    g = _gen(generator)
    t = Tensor._make([g.random() for _ in range(_prod(shape))], shape, dtype or float32)
    if requires_grad:
        t.requires_grad_(True)
    return t


def randint(low, high=None, size=None, generator=None, dtype=None, device=None):
    if high is None:
        low, high = 0, low
    if size is None:
        raise TypeError("randint() received an invalid combination of arguments - missing 'size'")
    shape = tuple(size)
    g = _gen(generator)
    return Tensor._make([low + g.randbelow(high - low) for _ in range(_prod(shape))], shape, dtype or int64)


def randperm(n, generator=None, dtype=None, device=None):
    g = _gen(generator)
    items = list(range(n))
    for i in range(n - 1, 0, -1):
        j = g.randbelow(i + 1)
        items[i], items[j] = items[j], items[i]
    return Tensor._make(items, (n,), dtype or int64)


def randn_like(t, generator=None):
    return randn(t._shape, generator=generator, dtype=t.dtype)


def rand_like(t, generator=None):
    return rand(t._shape, generator=generator, dtype=t.dtype)


def stack(tensors, dim=0, out=None):
    tensors = [_as_tensor(t) for t in tensors]
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    first = tensors[0]._shape
    for i, t in enumerate(tensors):
        if t._shape != first:
            raise RuntimeError("stack expects each tensor to be equal size, but got %s at entry 0 and %s at entry %d" % (list(first), list(t._shape), i))
    return cat([t.unsqueeze(dim) for t in tensors], dim=dim)


def cat(tensors, dim=0, out=None, axis=None):
    dim = axis if axis is not None else dim
    tensors = [_as_tensor(t) for t in tensors if not (isinstance(t, Tensor) and t._shape == (0,))]
    if not tensors:
        return zeros(0)
    nd = len(tensors[0]._shape)
    if nd == 0:
        raise RuntimeError("zero-dimensional tensor (at position 0) cannot be concatenated")
    d = _norm_dim(dim, nd)
    base = tensors[0]._shape
    for i, t in enumerate(tensors):
        if len(t._shape) != nd or any(t._shape[k] != base[k] for k in range(nd) if k != d):
            raise RuntimeError(
                "Sizes of tensors must match except in dimension %d. Expected size %d but got size %d for tensor number %d in the list."
                % (d, base[(d + 1) % nd], t._shape[(d + 1) % nd], i)
            )
    outer = _prod(base[:d])
    inner = _prod(base[d + 1 :])
    dt = tensors[0].dtype
    for t in tensors[1:]:
        dt = _result_dtype(dt, t.dtype)
    data = []
    spans = []
    for o in range(outer):
        for t in tensors:
            chunk = t._shape[d] * inner
            data.extend(t.data[o * chunk : (o + 1) * chunk])
    shape = base[:d] + (sum(t._shape[d] for t in tensors),) + base[d + 1 :]
    out_t = Tensor._make(_cast(data, dt) if dt.kind == "f" else data, shape, dt)
    if _GradMode.enabled and any(t.requires_grad for t in tensors):
        out_t.requires_grad = True

        def back(g):
            res = [[] for _ in tensors]
            pos = 0
            for o in range(outer):
                for k, t in enumerate(tensors):
                    chunk = t._shape[d] * inner
                    res[k].extend(g[pos : pos + chunk])
                    pos += chunk
            return res

        out_t._ctx = (tuple(tensors), back, "Cat")
    return out_t


concat = cat


def where(condition, input=None, other=None):
    c = _as_tensor(condition)
    if input is None:
        return tuple(Tensor._make([i for i, v in enumerate(c.data) if v], (sum(1 for v in c.data if v),), int64) for _ in [0])
    a, b = _as_tensor(input), _as_tensor(other)
    return c.float() * a + (1 - c.float()) * b if a.dtype.kind == "f" or b.dtype.kind == "f" else (c.long() * a + (1 - c.long()) * b)


def maximum(a, b):
    return a._binary(b, max, "Maximum")


def minimum(a, b):
    return a._binary(b, min, "Minimum")


def matmul(a, b):
    a, b = _as_tensor(a), _as_tensor(b)
    if a.dim() == 1 and b.dim() == 1:
        return (a * b).sum()
    squeeze_a = a.dim() == 1
    squeeze_b = b.dim() == 1
    if squeeze_a:
        a = a.unsqueeze(0)
    if squeeze_b:
        b = b.unsqueeze(1)
    if b.dim() != 2:
        raise NotImplementedError("simulated torch: matmul with a batched right operand")
    lead = a._shape[:-1]
    k = a._shape[-1]
    if b._shape[0] != k:
        raise RuntimeError(
            "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (_prod(lead), k, b._shape[0], b._shape[1])
        )
    out = _linear(a.view(-1, k) if a.dim() != 2 else a, b.t(), None)
    out = out.view(lead + (b._shape[1],))
    if squeeze_a:
        out = out.squeeze(-2) if out.dim() > 1 else out
    if squeeze_b:
        out = out.squeeze(-1)
    return out


mm = matmul


def _linear(x, weight, bias):
    """y = x @ weight.T + bias for x [N, in], weight [out, in]; fused with its backward for speed."""
    n, k = x._shape
    out_f, k2 = weight._shape
    if k != k2:
        raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (n, k, k2, out_f))
    xd, wd = x.data, weight.data
    rows = [xd[i * k : (i + 1) * k] for i in range(n)]
    wrows = [wd[j * k : (j + 1) * k] for j in range(out_f)]
    mul = operator.mul
    if x.dtype.kind != "f":
        raise RuntimeError("expected m1 and m2 to have the same dtype, but got: %s != %s" % ({"i": "long int", "b": "bool"}[x.dtype.kind], "float"))
    data = []
    if bias is not None:
        bd = bias.data
        for r in rows:
            data.extend([sum(map(mul, r, w)) + b for w, b in zip(wrows, bd)])
    else:
        for r in rows:
            data.extend([sum(map(mul, r, w)) for w in wrows])
    out = Tensor._make(data, (n, out_f), float32)
    parents = (x, weight) if bias is None else (x, weight, bias)
    if _GradMode.enabled and any(p.requires_grad for p in parents):
        out.requires_grad = True

        def back(g):
            grows = [g[i * out_f : (i + 1) * out_f] for i in range(n)]
            gx = None
            if x.requires_grad:
                cols = [wd[c::k] for c in range(k)]  # column c of W over outputs
                gx = []
                for gr in grows:
                    gx.extend([sum(map(mul, gr, col)) for col in cols])
            gw = None
            if weight.requires_grad:
                gcols = [g[j::out_f] for j in range(out_f)]
                xcols = [xd[c::k] for c in range(k)]
                gw = []
                for gc in gcols:
                    gw.extend([sum(map(mul, gc, xc)) for xc in xcols])
            res = [gx, gw]
            if bias is not None:
                res.append([sum(g[j::out_f]) for j in range(out_f)] if bias.requires_grad else None)
            return res

        out._ctx = (parents, back, "Addmm")
    return out

"""torch.nn: Module, Parameter and the layers/losses the corpus uses."""
import math
from collections import OrderedDict

from .. import _tensor as _t
from .._tensor import Tensor, float32
from . import functional
from . import functional as F
from . import init, utils


class _ParamData(list):
    """A parameter's `.data`: its flat values (the simulation's storage), answering the dtype/device
    conversions scripts apply to `param.data` (e.g. `param.data = param.data.to(torch.float32)`)."""

    def to(self, *args, **kwargs):
        return self

    def _same(self, *args, **kwargs):
        return self

    float = half = bfloat16 = double = cpu = cuda = contiguous = detach = _same

    def clone(self):
        return _ParamData(self)

    def zero_(self):
        self[:] = [0.0] * len(self)
        return self

    def fill_(self, value):
        self[:] = [float(value)] * len(self)
        return self


class Parameter(Tensor):
    @property
    def data(self):
        return self.__dict__["_pdata"]

    @data.setter
    def data(self, value):
        if isinstance(value, Tensor):
            value = value.data
        self.__dict__["_pdata"] = value if isinstance(value, _ParamData) else _ParamData(value)

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _t.zeros(0)
        p = Tensor.__new__(cls)
        p._init(data.data if isinstance(data, Tensor) else list(data), data.shape if isinstance(data, Tensor) else (len(data),), data.dtype if isinstance(data, Tensor) else float32, requires_grad)
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + Tensor.__repr__(self.detach()).replace(")", ", requires_grad=True)", 1) if self.requires_grad else Tensor.__repr__(self)


class _RemovableHandle:
    def __init__(self, table, key):
        self._table, self.id = table, key

    def remove(self):
        self._table.pop(self.id, None)


class Module:
    training = True

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError("Module.__init__() takes 1 positional argument but %d were given" % (1 + len(args)))
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__ and isinstance(value, (Parameter, Module)):
            raise AttributeError("cannot assign module before Module.__init__() call")
        params = self.__dict__.get("_parameters")
        mods = self.__dict__.get("_modules")
        if params is not None:
            params.pop(name, None)
            mods.pop(name, None)
        if isinstance(value, Parameter):
            params[name] = value
        elif isinstance(value, Module):
            mods[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        for store in ("_parameters", "_buffers", "_modules"):
            if store in d and name in d[store]:
                return d[store][name]
        raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name))

    def __delattr__(self, name):
        for store in ("_parameters", "_buffers", "_modules"):
            if name in self.__dict__.get(store, {}):
                del self.__dict__[store][name]
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        self._buffers[name] = tensor

    def register_parameter(self, name, param):
        self._parameters[name] = param

    def add_module(self, name, module):
        self._modules[name] = module

    def forward(self, *args, **kwargs):
        raise NotImplementedError('Module [%s] is missing the required "forward" function' % type(self).__name__)

    def __call__(self, *args, **kwargs):
        hooks = self.__dict__.get("_sim_forward_hooks")
        out = self.forward(*args, **kwargs)
        if hooks:
            for h in list(hooks.values()):
                res = h(self, args, out)
                if res is not None:
                    out = res
        return out

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False, always_call=False):
        hooks = self.__dict__.setdefault("_sim_forward_hooks", {})
        key = len(hooks)
        hooks[key] = hook
        return _RemovableHandle(hooks, key)

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        for mod_prefix, mod in (self.named_modules(prefix=prefix) if recurse else [(prefix, self)]):
            for name, p in mod._parameters.items():
                if p is None or (remove_duplicate and id(p) in seen):
                    continue
                seen.add(id(p))
                yield (mod_prefix + "." + name if mod_prefix else name), p

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True):
        for mod_prefix, mod in self.named_modules(prefix=prefix):
            for name, b in mod._buffers.items():
                yield (mod_prefix + "." + name if mod_prefix else name), b

    def buffers(self, recurse=True):
        for _, b in self.named_buffers():
            yield b

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        memo = set() if memo is None else memo
        if id(self) in memo:
            return
        memo.add(id(self))
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            yield from m.named_modules(memo, prefix + "." + name if prefix else name)

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        return iter(self._modules.items())

    def children(self):
        return iter(self._modules.values())

    def state_dict(self, destination=None, prefix="", keep_vars=False):
        out = OrderedDict() if destination is None else destination
        for name, p in self.named_parameters(prefix=prefix.rstrip(".")):
            out[name] = p if keep_vars else p.detach()
        for name, b in self.named_buffers(prefix=prefix.rstrip(".")):
            out[name] = b
        return out

    def load_state_dict(self, state_dict, strict=True, assign=False):
        own = dict(self.named_parameters())
        own.update(dict(self.named_buffers()))
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        errors = []
        for k, v in state_dict.items():
            if k in own:
                if tuple(own[k].shape) != tuple(v.shape):
                    errors.append(
                        "size mismatch for %s: copying a param with shape %s from checkpoint, the shape in current model is %s."
                        % (k, v.shape, own[k].shape)
                    )
                else:
                    own[k].data[:] = list(v.data)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: %s. " % ", ".join('"%s"' % k for k in unexpected))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: %s. " % ", ".join('"%s"' % k for k in missing))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for %s:\n\t%s" % (type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def to(self, *args, **kwargs):
        for a in list(args) + [kwargs.get("device")]:
            if a is not None and not isinstance(a, _t.dtype):
                _t._check_device(a)
        return self

    def cpu(self):
        return self

    def cuda(self, device=None):
        from _forgeenv_sim import hardware

        if hardware.SIM_CUDA:
            return self
        raise AssertionError("Torch not compiled with CUDA enabled")

    def float(self):
        return self

    def double(self):
        return self

    def half(self):
        return self

    def apply(self, fn):
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = []
        for name, m in self._modules.items():
            sub = repr(m).replace("\n", "\n  ")
            lines.append("(%s): %s" % (name, sub))
        head = type(self).__name__ + "(" + self.extra_repr()
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


class _IncompatibleKeys(tuple):
    def __new__(cls, missing, unexpected):
        t = tuple.__new__(cls, (missing, unexpected))
        t.missing_keys, t.unexpected_keys = missing, unexpected
        return t

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return "_IncompatibleKeys(missing_keys=%r, unexpected_keys=%r)" % (self.missing_keys, self.unexpected_keys)


class Identity(Module):
    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        bound = 1.0 / math.sqrt(in_features) if in_features > 0 else 0.0
        self.weight = Parameter(_t.empty(out_features, in_features).uniform_(-bound, bound))
        self.bias = Parameter(_t.empty(out_features).uniform_(-bound, bound)) if bias else None
        if not bias:
            self._parameters["bias"] = None

    def forward(self, input):
        if input.shape[-1] != self.in_features:
            lead = 1
            for s in input.shape[:-1]:
                lead *= s
            raise RuntimeError(
                "mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (lead, input.shape[-1], self.in_features, self.out_features)
            )
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return "in_features=%d, out_features=%d, bias=%s" % (self.in_features, self.out_features, self.bias is not None)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings, self.embedding_dim, self.padding_idx = num_embeddings, embedding_dim, padding_idx
        self.weight = Parameter(_t.randn(num_embeddings, embedding_dim))

    def forward(self, input):
        idx = []
        d = self.embedding_dim
        for v in input.data:
            if v < 0 or v >= self.num_embeddings:
                raise IndexError("index out of range in self")
            idx.extend(range(v * d, (v + 1) * d))
        return _t._gather(self.weight, idx, tuple(input.shape) + (d,), "Embedding")

    def extra_repr(self):
        return "%d, %d" % (self.num_embeddings, self.embedding_dim)


class _Activation(Module):
    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


class ReLU(_Activation):
    def forward(self, input):
        return input.relu()


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()

    def forward(self, input):
        return F.gelu(input)


class SiLU(_Activation):
    def forward(self, input):
        return F.silu(input)


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Softmax(Module):
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)


class Dropout(Module):
    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
        self.p = p

    def forward(self, input):
        return F.dropout(input, self.p, self.training)

    def extra_repr(self):
        return "p=%s, inplace=False" % self.p


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True, device=None, dtype=None):
        super().__init__()
        n = normalized_shape if isinstance(normalized_shape, int) else normalized_shape[-1]
        self.eps = eps
        self.weight = Parameter(_t.ones(n))
        self.bias = Parameter(_t.zeros(n))

    def forward(self, input):
        m = input.mean(-1, keepdim=True)
        v = ((input - m) * (input - m)).mean(-1, keepdim=True)
        return (input - m) / (v + self.eps).sqrt() * self.weight + self.bias


class BatchNorm1d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True, device=None, dtype=None):
        super().__init__()
        self.eps = eps
        self.weight = Parameter(_t.ones(num_features))
        self.bias = Parameter(_t.zeros(num_features))

    def forward(self, input):
        m = input.mean(0, keepdim=True)
        v = ((input - m) * (input - m)).mean(0, keepdim=True)
        return (input - m) / (v + self.eps).sqrt() * self.weight + self.bias


class Sequential(Module):
    def __init__(self, *args):
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for k, m in args[0].items():
                self.add_module(k, m)
        else:
            for i, m in enumerate(args):
                if not isinstance(m, Module):
                    raise TypeError("%s is not a Module subclass" % type(m).__name__)
                self.add_module(str(i), m)

    def forward(self, input):
        for m in self._modules.values():
            input = m(input)
        return input

    def __getitem__(self, idx):
        mods = list(self._modules.values())
        return Sequential(*mods[idx]) if isinstance(idx, slice) else mods[idx]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self


class ModuleList(Module):
    def __init__(self, modules=None):
        super().__init__()
        for m in modules or []:
            self.append(m)

    def append(self, module):
        self.add_module(str(len(self._modules)), module)
        return self

    def __getitem__(self, idx):
        return list(self._modules.values())[idx]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())


class ModuleDict(Module):
    def __init__(self, modules=None):
        super().__init__()
        for k, m in (modules or {}).items():
            self.add_module(k, m)

    def __getitem__(self, key):
        return self._modules[key]

    def __setitem__(self, key, module):
        self.add_module(key, module)

    def keys(self):
        return self._modules.keys()

    def items(self):
        return self._modules.items()

    def values(self):
        return self._modules.values()


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        self.reduction = reduction


class CrossEntropyLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
        super().__init__(reduction=reduction)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, ignore_index=self.ignore_index, reduction=self.reduction, label_smoothing=self.label_smoothing)


class NLLLoss(_Loss):
    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean"):
        super().__init__(reduction=reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, ignore_index=self.ignore_index, reduction=self.reduction)


class MSELoss(_Loss):
    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
        super().__init__(reduction=reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, reduction=self.reduction)


class BCELoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction=reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, reduction=self.reduction)

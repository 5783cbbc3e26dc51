"""torch.nn.functional: the losses and activations the corpus uses, with fused backward passes."""
import math

from .. import _tensor as _t
from .._tensor import Tensor, _GradMode, float32, int64


def linear(input, weight, bias=None):
    lead = input.shape[:-1]
    x = input if input.dim() == 2 else input.reshape(-1, input.shape[-1])
    out = _t._linear(x, weight, bias)
    return out if input.dim() == 2 else out.reshape(tuple(lead) + (weight.shape[0],))


def relu(input, inplace=False):
    return input.relu()


def gelu(input, approximate="none"):
    return input * (input * 1.702).sigmoid()


def silu(input, inplace=False):
    return input * input.sigmoid()


def sigmoid(input):
    return input.sigmoid()


def tanh(input):
    return input.tanh()


def dropout(input, p=0.5, training=True, inplace=False):
    # Deterministic simulation: dropout is the identity (documented sim choice).
    if p < 0 or p > 1:
        raise ValueError("dropout probability has to be between 0 and 1, but got %s" % p)
    return input


def _rows(x, dim):
    nd = x.dim()
    d = _t._norm_dim(dim, nd)
    if d != nd - 1:
        raise NotImplementedError("simulated torch: softmax over the last dimension only")
    c = x.shape[-1]
    return c, [x.data[i : i + c] for i in range(0, len(x.data), c)]


def softmax(input, dim=None, dtype=None):
    c, rows = _rows(input, -1 if dim is None else dim)
    data = []
    for r in rows:
        m = max(r)
        e = [math.exp(v - m) for v in r]
        s = sum(e)
        data.extend(v / s for v in e)
    out = Tensor._make(data, input._shape, float32)
    if _GradMode.enabled and input.requires_grad:
        out.requires_grad = True

        def back(g):
            res = []
            for i in range(0, len(data), c):
                y = data[i : i + c]
                gy = g[i : i + c]
                dot = sum(a * b for a, b in zip(gy, y))
                res.extend(b * (a - dot) for a, b in zip(gy, y))
            return [res]

        out._ctx = ((input,), back, "Softmax")
    return out


def log_softmax(input, dim=None, dtype=None):
    c, rows = _rows(input, -1 if dim is None else dim)
    data, probs = [], []
    for r in rows:
        m = max(r)
        lse = m + math.log(sum(math.exp(v - m) for v in r))
        data.extend(v - lse for v in r)
        probs.extend(math.exp(v - lse) for v in r)
    out = Tensor._make(data, input._shape, float32)
    if _GradMode.enabled and input.requires_grad:
        out.requires_grad = True

        def back(g):
            res = []
            for i in range(0, len(data), c):
                gs = sum(g[i : i + c])
                res.extend(a - p * gs for a, p in zip(g[i : i + c], probs[i : i + c]))
            return [res]

        out._ctx = ((input,), back, "LogSoftmax")
    return out


def _reduce(values, weights, reduction):
    if reduction == "none":
        return values
    if reduction == "sum":
        return values.sum()
    if reduction == "mean":
        return values.sum() / weights if weights is not None else values.mean()
    raise ValueError("%s is not a valid value for reduction" % reduction)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction="mean", label_smoothing=0.0):
    if input.dim() == 1:
        input = input.unsqueeze(0)
        target = target.unsqueeze(0)
    if input.dim() > 2:
        # [N, C, d1...] -> move C last, flatten
        perm = [0] + list(range(2, input.dim())) + [1]
        input = input.permute(*perm).reshape(-1, input.shape[1])
        target = target.reshape(-1)
    if target.dtype.kind == "f" and target.shape == input.shape:
        # class probabilities
        return _reduce((-(target * log_softmax(input, -1)).sum(-1)), None, reduction)
    if target.dtype.kind != "i":
        raise RuntimeError("expected scalar type Long but found %s" % {"f": "Float", "b": "Bool"}[target.dtype.kind])
    n, c = input.shape
    if target.shape[0] != n:
        raise ValueError("Expected input batch_size (%d) to match target batch_size (%d)." % (n, target.shape[0]))
    x = input.data
    losses, grads_rows, kept = [], [], 0
    for i in range(n):
        y = target.data[i]
        row = x[i * c : (i + 1) * c]
        if y == ignore_index:
            losses.append(0.0)
            grads_rows.append([0.0] * c)
            continue
        if y < 0 or y >= c:
            raise IndexError("Target %d is out of bounds." % y)
        m = max(row)
        e = [math.exp(v - m) for v in row]
        s = sum(e)
        p = [v / s for v in e]
        logp_y = row[y] - m - math.log(s)
        if label_smoothing:
            mean_logp = sum(v - m - math.log(s) for v in row) / c
            losses.append(-(1 - label_smoothing) * logp_y - label_smoothing * mean_logp)
            gr = [pi - label_smoothing / c for pi in p]
            gr[y] -= 1 - label_smoothing
        else:
            losses.append(-logp_y)
            gr = p
            gr[y] -= 1.0
        grads_rows.append(gr)
        kept += 1
    if reduction == "none":
        total, scale = None, 1.0
    elif reduction == "sum":
        scale = 1.0
    else:
        scale = 1.0 / kept if kept else math.nan
    value = [sum(losses) * scale] if reduction != "none" else losses
    out = Tensor._make(value if kept or reduction != "mean" else [math.nan], () if reduction != "none" else (n,), float32)
    if _GradMode.enabled and input.requires_grad:
        out.requires_grad = True

        def back(g):
            res = []
            for i, gr in enumerate(grads_rows):
                gi = g[0] * scale if reduction != "none" else g[i]
                res.extend(v * gi for v in gr)
            return [res, None]

        out._ctx = ((input, target), back, "NllLoss")
    return out


def nll_loss(input, target, weight=None, ignore_index=-100, reduction="mean"):
    n, c = input.shape
    idx = [i * c + int(y) for i, y in enumerate(target.data) if y != ignore_index]
    vals = _t._gather(input.reshape(-1), idx, (len(idx),), "NllLoss")
    return _reduce(-vals, None, reduction)


def _check_same(input, target, name):
    if input.shape != target.shape:
        import warnings

        warnings.warn(
            "Using a target size (%s) that is different to the input size (%s). This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size."
            % (target.shape, input.shape),
            UserWarning,
            stacklevel=3,
        )


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_same(input, target, "mse")
    d = input - target
    return _reduce(d * d, None, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    _check_same(input, target, "l1")
    return _reduce((input - target).abs(), None, reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None, reduce=None, reduction="mean", pos_weight=None):
    if input.shape != target.shape:
        raise ValueError("Target size (%s) must be the same as input size (%s)" % (target.shape, input.shape))
    p = input.sigmoid()
    eps = 1e-12
    loss = -(target * (p + eps).log() + (1 - target) * (1 - p + eps).log())
    return _reduce(loss, None, reduction)


def binary_cross_entropy(input, target, weight=None, reduction="mean"):
    eps = 1e-12
    return _reduce(-(target * (input + eps).log() + (1 - target) * (1 - input + eps).log()), None, reduction)


def one_hot(tensor, num_classes=-1):
    n = num_classes if num_classes >= 0 else max(tensor.data) + 1
    data = []
    for v in tensor.data:
        if v >= n or v < 0:
            raise RuntimeError("Class values must be smaller than num_classes.")
        row = [0] * n
        row[v] = 1
        data.extend(row)
    return Tensor._make(data, tensor._shape + (n,), int64)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None):
    k = kernel_size if isinstance(kernel_size, int) else kernel_size[0]
    s = stride or k
    s = s if isinstance(s, int) else s[0]
    if input.dim() not in (3, 4):
        raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
    shape = input.shape
    h, w = shape[-2], shape[-1]
    planes = len(input.data) // (h * w)
    oh, ow = (h - k) // s + 1, (w - k) // s + 1
    data = []
    x = input.data
    area = float(k * k)
    idx_lists = []
    for i in range(oh):
        for j in range(ow):
            idx_lists.append([(i * s + a) * w + (j * s + b) for a in range(k) for b in range(k)])
    for p in range(planes):
        base = p * h * w
        data.extend(sum(x[base + q] for q in idxs) / area for idxs in idx_lists)
    out = Tensor._make(data, tuple(shape[:-2]) + (oh, ow), float32)
    if _GradMode.enabled and input.requires_grad:
        out.requires_grad = True

        def back(g):
            res = [0.0] * len(x)
            t = 0
            for p in range(planes):
                base = p * h * w
                for idxs in idx_lists:
                    v = g[t] / area
                    for q in idxs:
                        res[base + q] += v
                    t += 1
            return [res]

        out._ctx = ((input,), back, "AvgPool2D")
    return out


def pad(input, pad, mode="constant", value=0):
    if len(pad) != 2 or input.dim() < 1:
        raise NotImplementedError("simulated torch: F.pad on the last dimension only")
    left, right = pad
    n = input.shape[-1]
    rows = [input.data[i : i + n] for i in range(0, len(input.data), n)]
    fill = _t._cast([value], input.dtype)[0]
    data = []
    for r in rows:
        data.extend([fill] * left + list(r) + [fill] * right)
    return Tensor._make(data, tuple(input.shape[:-1]) + (n + left + right,), input.dtype)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    n = (input * input).sum(dim, keepdim=True).sqrt().clamp(min=eps)
    return input / n


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    return (normalize(x1, dim=dim) * normalize(x2, dim=dim)).sum(dim)


def logsigmoid(input):
    # log(sigmoid(x)) = -softplus(-x), written with the tensor ops that carry gradients.
    return input.sigmoid().log()

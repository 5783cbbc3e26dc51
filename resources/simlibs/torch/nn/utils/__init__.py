"""torch.nn.utils: gradient clipping."""
import math

from ..._tensor import Tensor, float32


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    total = math.sqrt(sum(v * v for g in grads for v in g.data))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.data[:] = [v * coef for v in g.data]
    return Tensor._make([total], (), float32)


def clip_grad_value_(parameters, clip_value, foreach=None):
    for p in parameters:
        if p.grad is not None:
            p.grad.data[:] = [max(-clip_value, min(clip_value, v)) for v in p.grad.data]

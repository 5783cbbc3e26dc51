"""Learning-rate schedules (and the deprecated transformers.AdamW, which __init__ gates)."""
import math

import torch
from torch.optim.lr_scheduler import LambdaLR

from _forgeenv_sim import warn as _warn


def get_constant_schedule(optimizer, last_epoch=-1):
    return LambdaLR(optimizer, lambda _: 1.0, last_epoch=last_epoch)


def get_constant_schedule_with_warmup(optimizer, num_warmup_steps, last_epoch=-1):
    return LambdaLR(optimizer, lambda s: float(s) / max(1.0, num_warmup_steps) if s < num_warmup_steps else 1.0, last_epoch=last_epoch)


def get_linear_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, last_epoch=-1):
    def f(step):
        if step < num_warmup_steps:
            return float(step) / float(max(1, num_warmup_steps))
        return max(0.0, float(num_training_steps - step) / float(max(1, num_training_steps - num_warmup_steps)))

    return LambdaLR(optimizer, f, last_epoch)


def get_cosine_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, num_cycles=0.5, last_epoch=-1):
    def f(step):
        if step < num_warmup_steps:
            return float(step) / float(max(1, num_warmup_steps))
        progress = float(step - num_warmup_steps) / float(max(1, num_training_steps - num_warmup_steps))
        return max(0.0, 0.5 * (1.0 + math.cos(math.pi * float(num_cycles) * 2.0 * progress)))

    return LambdaLR(optimizer, f, last_epoch)


def get_polynomial_decay_schedule_with_warmup(optimizer, num_warmup_steps, num_training_steps, lr_end=1e-7, power=1.0, last_epoch=-1):
    lr_init = optimizer.defaults["lr"]

    def f(step):
        if step < num_warmup_steps:
            return float(step) / float(max(1, num_warmup_steps))
        if step > num_training_steps:
            return lr_end / lr_init
        rem = 1 - (step - num_warmup_steps) / (num_training_steps - num_warmup_steps)
        return ((lr_init - lr_end) * rem ** power + lr_end) / lr_init

    return LambdaLR(optimizer, f, last_epoch)


_SCHEDULERS = {
    "linear": get_linear_schedule_with_warmup,
    "cosine": get_cosine_schedule_with_warmup,
    "constant": get_constant_schedule,
    "constant_with_warmup": get_constant_schedule_with_warmup,
    "polynomial": get_polynomial_decay_schedule_with_warmup,
}


def get_scheduler(name, optimizer, num_warmup_steps=None, num_training_steps=None, scheduler_specific_kwargs=None):
    name = str(name.value if hasattr(name, "value") else name)
    if name not in _SCHEDULERS:
        raise ValueError("%r is not a valid SchedulerType, please select one of %s" % (name, list(_SCHEDULERS)))
    fn = _SCHEDULERS[name]
    if name == "constant":
        return fn(optimizer)
    if num_warmup_steps is None:
        raise ValueError("%s requires `num_warmup_steps`, please provide that argument." % name)
    if name == "constant_with_warmup":
        return fn(optimizer, num_warmup_steps)
    if num_training_steps is None:
        raise ValueError("%s requires `num_training_steps`, please provide that argument." % name)
    return fn(optimizer, num_warmup_steps, num_training_steps, **(scheduler_specific_kwargs or {}))


class AdamW(torch.optim.AdamW):
    """transformers' own AdamW (deprecated; gated by transformers.__getattr__)."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-6, weight_decay=0.0, correct_bias=True, no_deprecation_warning=False):
        if not no_deprecation_warning:
            _warn.future(
                "This implementation of AdamW is deprecated and will be removed in a future version. Use the PyTorch implementation "
                "torch.optim.AdamW instead, or set `no_deprecation_warning=True` to disable this warning",
                stacklevel=3,
            )
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)

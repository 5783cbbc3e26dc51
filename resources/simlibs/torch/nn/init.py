"""torch.nn.init: the initialisers, drawing from torch's default generator."""
import math

from .. import _tensor as _t


def zeros_(tensor):
    return tensor.zero_()


def ones_(tensor):
    return tensor.fill_(1.0)


def constant_(tensor, val):
    return tensor.fill_(val)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    return tensor.normal_(mean, std, generator)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    return tensor.uniform_(a, b, generator)


def _fans(tensor):
    shape = tensor.shape
    fan_in = shape[1] if len(shape) > 1 else shape[0]
    return fan_in, shape[0]


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fi, fo = _fans(tensor)
    a = gain * math.sqrt(6.0 / (fi + fo))
    return tensor.uniform_(-a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fi, fo = _fans(tensor)
    return tensor.normal_(0.0, gain * math.sqrt(2.0 / (fi + fo)), generator)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fi, fo = _fans(tensor)
    fan = fi if mode == "fan_in" else fo
    bound = math.sqrt(6.0 / ((1 + a * a) * fan))
    return tensor.uniform_(-bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    fi, fo = _fans(tensor)
    fan = fi if mode == "fan_in" else fo
    return tensor.normal_(0.0, math.sqrt(2.0 / ((1 + a * a) * fan)), generator)

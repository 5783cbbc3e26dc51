"""torch.optim: SGD, Adam, AdamW over the simulated tensors."""
import math

from .._tensor import Tensor
from . import lr_scheduler


from _forgeenv_sim import progress as _progress  # noqa: E402


class Optimizer:
    def __init_subclass__(cls, **kwargs):
        # Every optimizer's step reports the loss of the backward pass it applies (see _forgeenv_sim/progress.py).
        super().__init_subclass__(**kwargs)
        if "step" in cls.__dict__:
            orig = cls.__dict__["step"]

            def step(self, *args, **kw):
                out = orig(self, *args, **kw)
                _progress.after_step()
                return out

            step.__name__, step.__qualname__, step.__doc__ = orig.__name__, orig.__qualname__, orig.__doc__
            cls.step = step

    def __init__(self, params, defaults):
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, but got torch.FloatTensor")
        groups = list(params)
        if not groups:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        self.param_groups = []
        self.state = {}
        for g in groups:
            self.add_param_group(g)

    def add_param_group(self, group):
        g = dict(group)
        ps = g["params"]
        g["params"] = [ps] if isinstance(ps, Tensor) else list(ps)
        for k, v in self.defaults.items():
            g.setdefault(k, v)
        self.param_groups.append(g)

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def state_dict(self):
        return {
            "state": {i: dict(v) for i, v in enumerate(self.state.values())},
            "param_groups": [{k: v for k, v in g.items() if k != "params"} for g in self.param_groups],
        }

    def load_state_dict(self, state_dict):
        for g, saved in zip(self.param_groups, state_dict.get("param_groups", [])):
            g.update(saved)

    def __repr__(self):
        lines = [type(self).__name__ + " ("]
        for i, g in enumerate(self.param_groups):
            lines.append("Parameter Group %d" % i)
            for k in sorted(k for k in g if k != "params"):
                lines.append("    %s: %s" % (k, g[k]))
        return "\n".join(lines) + "\n)"

    def _params(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is not None:
                    yield g, p


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0, nesterov=False, *, maximize=False, foreach=None, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError("Invalid learning rate: %s" % lr)
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay, nesterov=nesterov, maximize=maximize))

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for g, p in self._params():
            lr, mom, wd = g["lr"], g["momentum"], g["weight_decay"]
            grad = p.grad.data
            if g["maximize"]:
                grad = [-v for v in grad]
            if wd:
                grad = [v + wd * w for v, w in zip(grad, p.data)]
            if mom:
                st = self.state.setdefault(id(p), {})
                buf = st.get("momentum_buffer")
                buf = list(grad) if buf is None else [mom * b + (1 - g["dampening"]) * v for b, v in zip(buf, grad)]
                st["momentum_buffer"] = buf
                grad = [v + mom * b for v, b in zip(grad, buf)] if g["nesterov"] else buf
            p.data[:] = [w - lr * v for w, v in zip(p.data, grad)]
        return loss


class Adam(Optimizer):
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0, amsgrad=False, *, foreach=None, maximize=False, capturable=False, differentiable=False, fused=None):
        if lr < 0.0:
            raise ValueError("Invalid learning rate: %s" % lr)
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError("Invalid beta parameter at index 0: %s" % betas[0])
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize))

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for g, p in self._params():
            lr, (b1, b2), eps, wd = g["lr"], g["betas"], g["eps"], g["weight_decay"]
            grad = p.grad.data
            if g["maximize"]:
                grad = [-v for v in grad]
            if wd and self._decoupled:
                p.data[:] = [w * (1 - lr * wd) for w in p.data]
            elif wd:
                grad = [v + wd * w for v, w in zip(grad, p.data)]
            st = self.state.setdefault(id(p), {"step": 0, "exp_avg": [0.0] * len(grad), "exp_avg_sq": [0.0] * len(grad)})
            st["step"] += 1
            t = st["step"]
            m = st["exp_avg"] = [b1 * a + (1 - b1) * v for a, v in zip(st["exp_avg"], grad)]
            v2 = st["exp_avg_sq"] = [b2 * a + (1 - b2) * v * v for a, v in zip(st["exp_avg_sq"], grad)]
            c1 = 1 - b1 ** t
            c2 = math.sqrt(1 - b2 ** t)
            step = lr / c1
            p.data[:] = [w - step * a / (math.sqrt(s) / c2 + eps) for w, a, s in zip(p.data, m, v2)]
        return loss


class AdamW(Adam):
    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2, amsgrad=False, *, maximize=False, foreach=None, capturable=False, differentiable=False, fused=None):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad, maximize=maximize)

"""bitsandbytes.optim on the CPU: each optimizer is torch's of the same algorithm, in 32 bits; the
bitsandbytes-only keywords (optim_bits, block_wise, is_paged, …) are accepted and have no effect."""
import torch

_BNB_ONLY = ("optim_bits", "args", "min_8bit_size", "percentile_clipping", "block_wise", "is_paged", "max_unorm", "skip_zeros")


def _cpu(base, doc):
    class Optimizer(base):
        def __init__(self, params, *args, **kwargs):
            for k in _BNB_ONLY:
                kwargs.pop(k, None)
            super().__init__(params, *args, **kwargs)

    Optimizer.__doc__ = doc
    return Optimizer


Adam = Adam8bit = Adam32bit = PagedAdam = PagedAdam8bit = PagedAdam32bit = _cpu(torch.optim.Adam, "torch.optim.Adam (ForgeEnv CPU stand-in)")
AdamW = AdamW8bit = AdamW32bit = PagedAdamW = PagedAdamW8bit = PagedAdamW32bit = _cpu(torch.optim.AdamW, "torch.optim.AdamW (ForgeEnv CPU stand-in)")
SGD = SGD8bit = SGD32bit = _cpu(torch.optim.SGD, "torch.optim.SGD (ForgeEnv CPU stand-in)")
RMSprop = RMSprop8bit = RMSprop32bit = _cpu(torch.optim.RMSprop, "torch.optim.RMSprop (ForgeEnv CPU stand-in)")
Adagrad = Adagrad8bit = Adagrad32bit = _cpu(torch.optim.Adagrad, "torch.optim.Adagrad (ForgeEnv CPU stand-in)")

import torch


class _Opt(torch.optim.AdamW):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0, *args, **kwargs):
        super().__init__(params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay)


class AdamW8bit(_Opt):
    pass


class PagedAdamW(_Opt):
    pass


class PagedAdamW8bit(_Opt):
    pass


class PagedAdamW32bit(_Opt):
    pass


class Adam8bit(_Opt):
    pass


class GlobalOptimManager:
    _instance = None

    @classmethod
    def get_instance(cls):
        if cls._instance is None:
            cls._instance = cls()
        return cls._instance

    def register_module_override(self, module, param_name, config):
        pass

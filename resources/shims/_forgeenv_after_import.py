"""The loader the seeding (_forgeenv_seed.py) and the runtime shims (_forgeenv_shims.py) wrap a
library's own loader in: the module runs as it would, then a hook gets it (seeds its generator,
patches a GPU assumption). The module keeps its own loader in sight (`__loader__`, `__spec__.loader`)."""
import importlib.abc


class AfterImportLoader(importlib.abc.Loader):
    def __init__(self, loader, hook):
        self._loader, self._hook = loader, hook

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        module.__loader__ = self._loader
        if module.__spec__ is not None:
            module.__spec__.loader = self._loader
        self._loader.exec_module(module)
        self._hook(module)

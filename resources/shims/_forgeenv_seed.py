"""ForgeEnv real mode: every run starts from the same random state, so that a run's outcome (its losses,
its trained weights, its reward) is a function of the script alone, run after run, warm or cold.

Why: a script that seeds nothing still trains from random numbers drawn before it seeds (a Trainer
seeds in its __init__, after from_pretrained has drawn a new classification head), and recent torch
releases start each process from a random seed; the logged losses then differ from run to run and
with them the reward's loss_decreased (issue 18). A script that seeds itself overrides this.

- `install()` (sitecustomize, at interpreter start): seeds `random` now, and numpy's and torch's
  global generators the moment each finishes importing (a cold run imports them from the script);
  numpy's fresh entropy (an unseeded `default_rng()`) comes from a seeded generator too.
- `seed_all()` (the warm zygote, just before the script): seeds all three again, as a cold run has
  them when its script starts: the zygote imported the libraries ahead, and importing draws nothing.
"""
import importlib.abc
import sys

from _forgeenv_after_import import AfterImportLoader

SEED = 0


def _seed_numpy(np):
    import random

    import numpy.random

    numpy.random.seed(SEED)
    # Fresh entropy too: `default_rng()`, `SeedSequence()`, `RandomState()` with no seed take theirs from
    # the OS (numpy's bit_generator calls secrets.randbits), and libraries ask for it: datasets'
    # `IterableDataset.shuffle(seed=None)` (trl's stack-llama SFT script streams and shuffles so), whose
    # losses then differed between two cold runs. Here it comes from a generator seeded with SEED: each
    # call still gets new entropy, the same sequence in every run.
    try:
        import numpy.random.bit_generator as bit_generator
    except ImportError:
        return
    if hasattr(bit_generator, "randbits"):
        bit_generator.randbits = random.Random(SEED).getrandbits


def _seed_torch(torch):
    torch.manual_seed(SEED)


_HOOKS = {"numpy": _seed_numpy, "torch": _seed_torch}


def seed_all():
    import random

    random.seed(SEED)
    for name, hook in _HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        hook = _HOOKS.get(name)
        if hook is None:
            return None
        # Only the finders after this one: a finder before it that delegates to the rest (the runtime
        # shims' does) would otherwise be asked again, back and forth without end.
        after = sys.meta_path[sys.meta_path.index(self) + 1 :] if self in sys.meta_path else []
        for finder in after:
            if not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = AfterImportLoader(spec.loader, hook)
                return spec
        return None


def install():
    if any(isinstance(f, _Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, _Finder())
    seed_all()

"""Simulated evaluate (ForgeEnv): the common metrics, computed locally."""
from _forgeenv_sim import versions as _v

from . import _metrics
from ._metrics import Metric as EvaluationModule

__version__ = _v.version("evaluate")


def load(path, config_name=None, module_type=None, process_id=0, num_process=1, cache_dir=None, experiment_id=None, keep_in_memory=False, download_config=None, download_mode=None, revision=None, **init_kwargs):
    return _metrics.create(path, config_name)


class CombinedEvaluations:
    def __init__(self, evaluation_modules):
        self.modules = [load(m) if isinstance(m, str) else m for m in evaluation_modules]

    def add_batch(self, predictions=None, references=None, **kwargs):
        for m in self.modules:
            m.add_batch(predictions=predictions, references=references)

    def compute(self, predictions=None, references=None, **kwargs):
        out = {}
        for m in self.modules:
            out.update(m.compute(predictions=predictions, references=references, **kwargs))
        return out


def combine(evaluations, force_prefix=False):
    return CombinedEvaluations(evaluations)


def list_evaluation_modules(module_type=None, include_community=True, with_details=False):
    return sorted(_metrics.REGISTRY)

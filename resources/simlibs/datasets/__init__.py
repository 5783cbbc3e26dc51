"""Simulated datasets (ForgeEnv): synthetic, deterministic stand-ins for the Hub datasets the corpus uses."""
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

from .arrow_dataset import Dataset
from .dataset_dict import DatasetDict
from .features import Audio, ClassLabel, Features, Image, List, Sequence, Value
from .load import DatasetNotFoundError, load_dataset, load_from_disk
from . import utils  # noqa: F401

__version__ = _v.version("datasets")


def concatenate_datasets(dsets, info=None, split=None, axis=0):
    cols = {}
    for d in dsets:
        if set(d.column_names) != set(dsets[0].column_names):
            raise ValueError("The features can't be aligned because the key %s of features %s has unexpected type" % (d.column_names[0], d.features))
        for k in dsets[0].column_names:
            cols.setdefault(k, []).extend(d._data[k])
    return Dataset(cols, features=dsets[0].features)


def disable_caching():
    return None


def enable_caching():
    return None


def is_caching_enabled():
    return False


class _Logging:
    @staticmethod
    def set_verbosity_error():
        return None

    set_verbosity_warning = set_verbosity_info = set_verbosity_error

    @staticmethod
    def disable_progress_bar():
        return None


logging = _Logging()


def disable_progress_bar():
    return None


def _load_metric(path, config_name=None, process_id=0, num_process=1, cache_dir=None, experiment_id=None, keep_in_memory=False, download_config=None, download_mode=None, revision=None, trust_remote_code=None, **metric_init_kwargs):
    _warn.future(
        "load_metric is deprecated and will be removed in the next major version of datasets. "
        "Use 'evaluate.load' instead, from the new library 🤗 Evaluate: https://huggingface.co/docs/evaluate",
        stacklevel=2,
    )
    from evaluate import _metrics

    return _metrics.create(path, config_name)


_load_metric.__name__ = "load_metric"


def __getattr__(name):
    # `load_metric` left datasets in 3.0: from-imports then fail with the real ImportError.
    if name == "load_metric" and not _v.changed("datasets-load-metric-removed"):
        return _load_metric
    raise AttributeError("module 'datasets' has no attribute '%s'" % name)


# Streaming returns the same in-memory datasets (the simulation never downloads).
IterableDataset = Dataset
IterableDatasetDict = DatasetDict


def interleave_datasets(datasets, probabilities=None, seed=None, info=None, split=None, stopping_strategy="first_exhausted"):
    return concatenate_datasets(list(datasets))


def disable_caching():
    pass


def enable_caching():
    pass


def is_caching_enabled():
    return True

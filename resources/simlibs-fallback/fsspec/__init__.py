"""Minimal fsspec stand-in (ForgeEnv simulated mode; a really installed fsspec wins): the local
filesystem only, enough for scripts that pass `fs=`/`storage_options=` to datasets."""
from .implementations.local import LocalFileSystem
from .spec import AbstractFileSystem

__version__ = "2024.6.1"

_REGISTRY = {"file": LocalFileSystem, "local": LocalFileSystem}


def filesystem(protocol, **storage_options):
    try:
        cls = _REGISTRY[protocol]
    except KeyError:
        raise ValueError("Protocol not known: %s" % protocol) from None
    return cls(**storage_options)


def get_filesystem_class(protocol):
    if protocol not in _REGISTRY:
        raise ValueError("Protocol not known: %s" % protocol)
    return _REGISTRY[protocol]


def open(urlpath, mode="rb", **kwargs):  # noqa: A001 - fsspec's own name
    import builtins

    path = urlpath[len("file://"):] if urlpath.startswith("file://") else urlpath
    return builtins.open(path, mode)


__all__ = ["AbstractFileSystem", "LocalFileSystem", "filesystem", "get_filesystem_class", "open"]

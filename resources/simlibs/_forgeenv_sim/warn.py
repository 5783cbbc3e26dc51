"""Warnings printed the way the real libraries print them."""
import sys
import warnings


def future(message, stacklevel=3):
    warnings.warn(message, FutureWarning, stacklevel=stacklevel)


LEVEL = [30]  # transformers' verbosity (WARNING); set_verbosity_error() silences log()


def log(message):
    # transformers' logger.warning goes to stderr without a location.
    if LEVEL[0] <= 30:
        sys.stderr.write(message + "\n")


def unexpected_kwarg(qualname, name):
    """The TypeError CPython 3.10+ raises for an unknown keyword argument."""
    return TypeError("%s() got an unexpected keyword argument '%s'" % (qualname, name))

"""transformers.logging / transformers.utils.logging: verbosity switches (the sim's warnings honour them)."""
import logging as _logging

from _forgeenv_sim import warn as _warn

CRITICAL, ERROR, WARNING, INFO, DEBUG = 50, 40, 30, 20, 10


def set_verbosity(level):
    _warn.LEVEL[0] = level


def set_verbosity_error():
    set_verbosity(ERROR)


def set_verbosity_warning():
    set_verbosity(WARNING)


def set_verbosity_info():
    set_verbosity(INFO)


def set_verbosity_debug():
    set_verbosity(DEBUG)


def get_verbosity():
    return _warn.LEVEL[0]


def get_logger(name=None):
    return _logging.getLogger(name or "transformers")


def disable_progress_bar():
    return None


def enable_progress_bar():
    return None


def disable_default_handler():
    return None


def enable_explicit_format():
    return None


def enable_default_handler():
    pass


def reset_format():
    pass


def add_handler(handler):
    pass


def remove_handler(handler):
    pass

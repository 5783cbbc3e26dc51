import logging as _logging

CRITICAL, ERROR, WARNING, INFO, DEBUG = _logging.CRITICAL, _logging.ERROR, _logging.WARNING, _logging.INFO, _logging.DEBUG
_LEVEL = [WARNING]


def get_logger(name=None):
    return _logging.getLogger(name or "datasets")


def set_verbosity(verbosity):
    _LEVEL[0] = verbosity


def get_verbosity():
    return _LEVEL[0]


def set_verbosity_warning():
    set_verbosity(WARNING)


def set_verbosity_info():
    set_verbosity(INFO)


def set_verbosity_error():
    set_verbosity(ERROR)


def set_verbosity_debug():
    set_verbosity(DEBUG)


def disable_propagation():
    pass


def enable_propagation():
    pass

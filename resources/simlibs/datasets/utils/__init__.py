"""datasets.utils (simulated): logging verbosity helpers and progress-bar switches."""
from . import logging  # noqa: F401


def disable_progress_bar():
    pass


def enable_progress_bar():
    pass


def is_progress_bar_enabled():
    return False

"""trl.experimental (trl >= 0.24, catalog trl-experimental-module-added): trainers moved out of the stable API."""
import os as _os
import warnings as _warnings

from _forgeenv_sim import surface_data as _data
from _forgeenv_sim import versions as _v

if not _v.changed("trl-experimental-module-added"):
    raise ModuleNotFoundError("No module named 'trl.experimental'")


class TRLExperimentalWarning(UserWarning):
    pass


TRLExperimentalWarning.__module__ = "trl.import_utils"

# Releases that define TRLExperimentalWarning (recorded in the snapshot's data) warn on import, as the real
# trl/experimental/__init__.py does, unless TRL_EXPERIMENTAL_SILENCE is set.
if _data.find_object("trl.import_utils.TRLExperimentalWarning") is not None and not _os.environ.get("TRL_EXPERIMENTAL_SILENCE"):
    _warnings.warn(
        "You are importing from 'trl.experimental'. APIs here are unstable and may change or be removed without "
        "notice. Silence this warning by setting environment variable TRL_EXPERIMENTAL_SILENCE=1.",
        TRLExperimentalWarning,
        stacklevel=2,
    )

"""ForgeEnv simulated mode: stand-ins for third-party packages outside the Hugging Face stack (numpy,
tqdm, wandb, ...) live in ../simlibs-fallback, appended AFTER site-packages so that a really
installed package wins and the stand-in is used only when it is missing."""
import os as _os
import sys as _sys

_fallback = _os.path.join(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))), "simlibs-fallback")
if _os.path.isdir(_fallback) and _fallback not in _sys.path:
    _sys.path.append(_fallback)
del _os, _sys, _fallback

# The episode snapshot's recorded API (resources/snapshots/api): see _forgeenv_sim/surface.py.
try:
    from _forgeenv_sim import surface as _surface

    _surface.install()
    del _surface
except Exception as _exc:  # noqa: BLE001 - never stop a run: without the layer the stand-ins behave as before
    import sys as _sys

    _sys.stderr.write("forgeenv-sim: API surface layer disabled (%s: %s)\n" % (type(_exc).__name__, _exc))
    del _sys, _exc

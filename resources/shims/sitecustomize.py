"""ForgeEnv real mode: the executor puts this folder on PYTHONPATH for every real run. Each run starts
from the same random state (_forgeenv_seed.py: the same outcome run after run, warm or cold), and
gets the runtime shims its task recorded (tasks.json `runtime.shims`, made by make-task when a run
failed on a GPU assumption), named in FORGEENV_SHIMS for that task's runs only; what each one
replaces is in _forgeenv_shims.py and docs/make-task.md ("CPU runtime shims")."""


def _forgeenv_install():
    import os
    import sys

    try:
        import _forgeenv_seed

        _forgeenv_seed.install()
    except Exception as e:  # noqa: BLE001 - an unseeded run must show, not silently differ
        sys.stderr.write("forgeenv: the run's random state could not be seeded (%s: %s)\n" % (type(e).__name__, e))
    try:
        if os.environ.get("FORGEENV_SHIMS"):
            import _forgeenv_shims

            _forgeenv_shims.install(os.environ["FORGEENV_SHIMS"])
    except Exception as e:  # noqa: BLE001 - a broken shim must show, not silently change the run
        sys.stderr.write("forgeenv: the runtime shims could not be installed (%s: %s)\n" % (type(e).__name__, e))
    # This file shadows the interpreter's own sitecustomize (Debian's, a user's): run that one too.
    here = os.path.dirname(os.path.abspath(__file__))
    for d in sys.path:
        if not d or os.path.abspath(d) == here:
            continue
        other = os.path.join(d, "sitecustomize.py")
        if os.path.isfile(other):
            with open(other, "rb") as f:
                code = compile(f.read(), other, "exec")
            exec(code, {"__name__": "sitecustomize", "__file__": other, "__builtins__": __builtins__})
            break


_forgeenv_install()
del _forgeenv_install

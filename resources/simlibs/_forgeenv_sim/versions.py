"""Which library versions the simulated packages pretend to be.

The executor passes the episode's snapshot as JSON in FORGEENV_LIBRARY_VERSIONS; every simulated
package reads it once, at import, so version-gated names and signatures are fixed for the run.
"""
import json
import os
import sys

# The latest snapshot (src/env/versions.ts, '2025-03'; resources/snapshots/snapshots.json): used when the
# variable is absent. test/unit/snapshots.test.ts checks they agree.
DEFAULTS = {
    "transformers": "4.50.3",
    "datasets": "3.5.0",
    "trl": "0.16.0",
    "torch": "2.6.0",
    "peft": "0.15.1",
    "evaluate": "0.4.3",
    "accelerate": "1.5.2",
    "tokenizers": "0.21.1",
    "huggingface_hub": "0.30.1",
    "bitsandbytes": "0.45.3",
}


def _load():
    active = dict(DEFAULTS)
    raw = os.environ.get("FORGEENV_LIBRARY_VERSIONS")
    if not raw:
        return active
    try:
        given = json.loads(raw)
        if not isinstance(given, dict):
            raise ValueError("not a JSON object")
        for name, value in given.items():
            if isinstance(value, str) and value and all(p.isdigit() for p in value.split(".")):
                active[str(name)] = value
    except ValueError as exc:
        sys.stderr.write("forgeenv-sim: ignoring invalid FORGEENV_LIBRARY_VERSIONS (%s)\n" % exc)
    return active


ACTIVE = _load()


def parse(v):
    return tuple(int(p) for p in v.split("."))


def version(lib):
    return ACTIVE[lib]


def at_least(lib, v):
    """True when the simulated `lib` is version `v` or newer."""
    a, b = parse(ACTIVE[lib]), parse(v)
    n = max(len(a), len(b))
    return a + (0,) * (n - len(a)) >= b + (0,) * (n - len(b))


def below(lib, v):
    return not at_least(lib, v)

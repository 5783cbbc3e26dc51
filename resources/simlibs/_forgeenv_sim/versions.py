"""Which library versions the simulated packages pretend to be, and where their behaviour changes.

The executor passes the episode's snapshot as JSON in FORGEENV_LIBRARY_VERSIONS; every simulated
package reads it once, at import, so version-gated names and signatures are fixed for the run.

A stand-in never writes a version boundary itself: it names the drift catalog's entry
(resources/drifts/catalog.json, passed as FORGEENV_DRIFT_CATALOG) and asks `changed(id)` or
`deprecated(id)`, so the catalog, checked against the real releases, is the only source of those
boundaries (test/unit/simlibGates.test.ts fails on a gate with a literal version).
"""
import json
import os
import sys

# The latest snapshot (src/env/snapshots/versions.ts, '2025-03'; resources/snapshots/snapshots.json): used when the
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


_CATALOG = None


def catalog_path():
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.environ.get("FORGEENV_DRIFT_CATALOG") or os.path.join(os.path.dirname(here), "drifts", "catalog.json")


def _entries():
    """The catalog's entries by id: read once per run, on the first gate asked."""
    global _CATALOG
    if _CATALOG is None:
        path = catalog_path()
        try:
            with open(path, encoding="utf-8") as f:
                data = json.load(f)
            _CATALOG = {e["id"]: e for e in data["entries"]}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise RuntimeError("forgeenv-sim: cannot read the drift catalog %s (%s)" % (path, exc))
    return _CATALOG


def entry(drift_id):
    e = _entries().get(drift_id)
    if e is None:
        raise KeyError("forgeenv-sim: the drift catalog has no entry %r" % drift_id)
    return e


def changed(drift_id):
    """True when the simulated library is at or after the entry's `changed_in`."""
    e = entry(drift_id)
    return at_least(e["library"], e["changed_in"])


def deprecated(drift_id):
    """True when the simulated library is at or after the entry's `deprecated_in` (where the new form arrived)."""
    e = entry(drift_id)
    if not e.get("deprecated_in"):
        raise KeyError("forgeenv-sim: the drift catalog's %r has no deprecated_in" % drift_id)
    return at_least(e["library"], e["deprecated_in"])

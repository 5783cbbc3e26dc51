"""Deterministic hashing (Python's own hash() is salted per process, so it is never used)."""
import zlib


def stable_hash(*parts):
    return zlib.crc32("\x1f".join(str(p) for p in parts).encode("utf-8"))


def unit(*parts):
    """A deterministic number in [0, 1) for the given parts."""
    return stable_hash(*parts) / 4294967296.0

"""Loss lines for hand-written training loops: a scalar `loss.backward()` records its value and the
next optimizer step reports it on stderr as `step=N loss=X (sim: ...)` (stdout stays the script's own).
Loops that report by themselves (the Trainer, Accelerator.backward, trl's legacy PPO step) mute or
clear it."""
import sys

_state = {"pending": None, "quiet": 0, "count": 0}


def record(value):
    _state["pending"] = value


def clear():
    _state["pending"] = None


class muted:
    def __enter__(self):
        _state["quiet"] += 1
        _state["pending"] = None

    def __exit__(self, *exc):
        _state["quiet"] -= 1
        _state["pending"] = None
        return False


def after_step():
    value, _state["pending"] = _state["pending"], None
    if value is None or _state["quiet"]:
        return
    _state["count"] += 1
    n = _state["count"]
    # Steps 1-10, then every 10th up to 100, every 100th up to 1000, ...: a long loop stays a few lines.
    if n <= 10 or n % (10 ** (len(str(n)) - 1)) == 0:
        sys.stderr.write("step=%d loss=%.4f (sim: custom training loop)\n" % (n, value))

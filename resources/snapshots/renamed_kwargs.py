"""Keywords that a renaming decorator still accepts, recorded from a real release.

Run inside a snapshot venv:  python renamed_kwargs.py API_DIR OUT.json
API_DIR is resources/snapshots/api/<snapshot> (its <package>.json files name the public classes and
functions to look at; files starting with "_" are skipped). Output (sorted keys, compact):

  {"<object key>.<method>": {"<old kwarg>": {"new": "<new kwarg>" | null, "category": "FutureWarning",
                                               "message": "..."}}}

where <object key> is the API data's key (`<__module__>.<__qualname__>`) and <method> is `__init__`, a
method name, or absent for a function (then the key is the function's object key).

How: the recorded signatures are the unwrapped ones, so each wrapped callable (`__wrapped__`) is probed
one decorator layer at a time. The strings found in the layer's closure are the candidate old names
(deprecate_kwarg's old_name, trl/peft equivalents); the layer is called with just that keyword while the
closure cell holding the inner function is swapped for a recorder, so nothing real runs. When the
recorder receives the value under another name, it was renamed; the warning raised (or logged) on the
way is the message. A keyword the signature already has is not a rename and is skipped."""
import importlib
import json
import logging
import signal
import sys
import warnings
from pathlib import Path

_SENTINEL = object()


class _Got(Exception):
    def __init__(self, args, kwargs):
        super().__init__()
        self.args_, self.kwargs_ = args, kwargs


def _recorder_for(inner):
    """A stand-in for the inner function that reports its arguments; named like it, because the
    decorators word their messages from the wrapped function's name."""

    def recorder(*args, **kwargs):
        raise _Got(args, kwargs)

    for attr in ("__name__", "__qualname__", "__module__"):
        try:
            setattr(recorder, attr, getattr(inner, attr))
        except (AttributeError, TypeError):
            pass
    return recorder


class _LogCatcher(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.records = []

    def emit(self, record):
        try:
            self.records.append(record.getMessage())
        except Exception:  # noqa: BLE001
            pass


def _strings(value, depth=0):
    if isinstance(value, str):
        return [value] if value.isidentifier() else []
    if depth < 2 and isinstance(value, (list, tuple, set, frozenset)):
        return [s for v in value for s in _strings(v, depth + 1)]
    if depth < 2 and isinstance(value, dict):
        return [s for k, v in value.items() for s in _strings(k, depth + 1) + _strings(v, depth + 1)]
    return []


def _code_strings(code, depth=0):
    if code is None or depth > 2:
        return []
    out = []
    for c in code.co_consts:
        if isinstance(c, str) and c.isidentifier():
            out.append(c)
        elif hasattr(c, "co_consts"):
            out.extend(_code_strings(c, depth + 1))
    return out


def _params(func):
    import inspect

    try:
        return set(inspect.signature(func, follow_wrapped=True).parameters)
    except (TypeError, ValueError):
        return None


def _timeout(signum, frame):
    raise TimeoutError()


def _probe_layer(layer, inner, first_arg, known):
    """{old: {"new", "category", "message"}} for one decorator layer."""
    cells = [c for c in (getattr(layer, "__closure__", None) or ()) if _cell(c) is inner]
    if not cells:
        return {}
    cands = []
    for c in layer.__closure__ or ():
        v = _cell(c)
        if v is not inner:
            cands.extend(_strings(v))
    # Decorators that always rename the same keyword name it in their code (huggingface_hub's
    # validate_hf_hub_args: use_auth_token -> token).
    code = getattr(layer, "__code__", None)
    cands.extend(_code_strings(code))
    # ... or in a helper it calls (smoothly_deprecate_use_auth_token).
    glb = getattr(layer, "__globals__", {}) or {}
    for n in getattr(code, "co_names", ()):
        helper = glb.get(n)
        if callable(helper) and hasattr(helper, "__code__") and helper.__code__.co_filename == code.co_filename:
            cands.extend(_code_strings(helper.__code__))
    out = {}
    for old in dict.fromkeys(cands):
        if old in known or old in ("self", "cls") or old.startswith("_"):
            continue
        recorder = _recorder_for(inner)
        for c in cells:
            c.cell_contents = recorder
        catcher = _LogCatcher()
        root = logging.getLogger()
        root.addHandler(catcher)
        got = None
        signal.signal(signal.SIGALRM, _timeout)
        signal.alarm(5)
        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    args = (first_arg,) if first_arg is not _SENTINEL else ()
                    layer(*args, **{old: _SENTINEL})
                except _Got as g:
                    got = g
                except BaseException:  # noqa: BLE001 - the layer refused (raise_if_...): not accepted
                    got = None
        finally:
            signal.alarm(0)
            root.removeHandler(catcher)
            for c in cells:
                c.cell_contents = inner
        if got is None:
            continue
        kw = got.kwargs_
        if old in kw and kw[old] is _SENTINEL:
            continue  # passed through unchanged: not a rename
        new = next((k for k, v in kw.items() if v is _SENTINEL), None)
        if new is None and any(a is _SENTINEL for a in got.args_):
            continue
        msgs = [(w.category.__name__, str(w.message)) for w in caught if old in str(w.message)]
        logs = [m for m in catcher.records if old in m]
        if msgs:
            cat, msg = msgs[0]
        elif logs:
            cat, msg = "logging.WARNING", logs[0]
        elif new is not None:
            cat, msg = None, None  # renamed silently
        else:
            continue
        entry = {"new": new}
        if cat is not None:
            entry["category"], entry["message"] = cat, msg
        out[old] = entry
    return out


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return None


def _probe(func, first_arg):
    out = {}
    layer = func
    known = _params(func) or set()
    seen = 0
    while callable(layer) and hasattr(layer, "__wrapped__") and seen < 8:
        inner = layer.__wrapped__
        for old, entry in _probe_layer(layer, inner, first_arg, known).items():
            out.setdefault(old, entry)
        layer, seen = inner, seen + 1
    return out


def _dummy_instance(cls_name):
    return type(cls_name, (), {})()


def _import(module, qualname):
    obj = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    return obj


def main(argv):
    api_dir, out_path = Path(argv[0]), Path(argv[1])
    warnings.simplefilter("ignore")
    logging.disable(logging.NOTSET)
    result = {}
    for f in sorted(api_dir.glob("*.json")):
        if f.name.startswith("_"):
            continue
        data = json.loads(f.read_text(encoding="utf-8"))
        for key, obj in sorted(data.get("objects", {}).items()):
            try:
                target = _import(obj["module"], obj["qualname"])
            except BaseException:  # noqa: BLE001 - unimportable here: nothing to record
                continue
            if obj.get("kind") == "function":
                if callable(target) and hasattr(target, "__wrapped__"):
                    found = _probe(target, _SENTINEL)
                    if found:
                        result[key] = found
                continue
            if not isinstance(target, type):
                continue
            names = set(obj.get("methods") or {}) | {"__init__"}
            cms = set(obj.get("classmethods") or [])
            for name in sorted(names):
                raw = target.__dict__.get(name)
                if raw is None:
                    continue
                if isinstance(raw, (classmethod, staticmethod)):
                    fn = raw.__func__
                    first = type(target.__name__, (), {}) if isinstance(raw, classmethod) or name in cms else _SENTINEL
                else:
                    fn, first = raw, _dummy_instance(target.__name__)
                if not callable(fn) or not hasattr(fn, "__wrapped__"):
                    continue
                found = _probe(fn, first)
                if found:
                    result[key + "." + name] = found
    out_path.write_text(json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n", encoding="utf-8")
    print("%s: %d callables with renamed keywords" % (out_path, len(result)))


if __name__ == "__main__":
    main(sys.argv[1:])

"""Binding a call against a REAL signature recorded in the API data, so that CPython itself words the
TypeError (unexpected keyword, missing argument, too many positionals), then calling our
implementation with the arguments it can take."""
import inspect
import os
import sys
import warnings

from _forgeenv_sim.surface_data import SIMLIBS

_PREFIX = SIMLIBS + os.sep
_NOT_GIVEN = type("NotGiven", (), {"__repr__": lambda self: "<not given>"})()
_SHADOWS = {}
_KW_SAFE = ("p", "pk", "*", "k", "**")


def internal(depth):
    """True when the frame `depth` levels up is our own simulated code (never bound or gated)."""
    try:
        return sys._getframe(depth + 1).f_code.co_filename.startswith(_PREFIX)
    except ValueError:
        return False


def _ident(s):
    return s.isidentifier() and s not in ("None", "True", "False")


def shadow(owner, fname, params):
    """A function with exactly the real parameters (defaults replaced by a sentinel) that returns its
    locals; compiled inside nested class bodies named like the real owner so co_qualname matches."""
    key = (owner, fname, tuple(tuple(p[:2]) + ((len(p) > 2),) for p in params))
    fn = _SHADOWS.get(key)
    if fn is not None:
        return fn
    parts, seen_kw_only, saw_slash = [], False, False
    kinds = [p[1] for p in params]
    for i, p in enumerate(params):
        name, kind = p[0], p[1]
        if not _ident(name) or kind not in _KW_SAFE:
            return None
        d = "=_fe_S_" if len(p) > 2 else ""
        if kind == "p":
            parts.append(name + d)
            if i + 1 == len(params) or kinds[i + 1] != "p":
                parts.append("/")
                saw_slash = True
        elif kind == "pk":
            parts.append(name + d)
        elif kind == "*":
            parts.append("*" + name)
            seen_kw_only = True
        elif kind == "k":
            if not seen_kw_only:
                parts.append("*")
                seen_kw_only = True
            parts.append(name + d)
        else:
            parts.append("**" + name)
    del saw_slash
    owners = [o for o in owner.split(".") if o] if owner else []
    if any(not _ident(o) for o in owners) or not _ident(fname):
        owners = ["_fe_owner_"] if owners else []
    indent = ""
    src = []
    for o in owners:
        src.append("%sclass %s:" % (indent, o))
        indent += "    "
    src.append("%sdef %s(%s):" % (indent, fname, ", ".join(parts)))
    src.append("%s    return _fe_locals_()" % indent)
    ns = {"_fe_S_": _NOT_GIVEN, "_fe_locals_": locals}
    try:
        exec(compile("\n".join(src) + "\n", "<forgeenv-surface>", "exec"), ns)
    except SyntaxError:
        return None
    obj = ns[owners[0]] if owners else ns[fname]
    for o in owners[1:]:
        obj = obj.__dict__[o]
    fn = obj.__dict__[fname] if owners else obj
    if owner:
        fn.__qualname__ = owner + "." + fname
    _SHADOWS[key] = fn
    return fn


class Acceptor:
    """What our implementation's signature takes."""

    __slots__ = ("kw", "pos_only", "varargs", "varkw", "required")

    def __init__(self, func):
        self.kw, self.pos_only, self.varargs, self.varkw, self.required = set(), [], False, True, set()
        try:
            sig = inspect.signature(func, follow_wrapped=False)  # our decorators take what they rename
        except (TypeError, ValueError):
            self.varargs = True
            return
        self.varkw = False
        for p in sig.parameters.values():
            if p.kind is p.VAR_KEYWORD:
                self.varkw = True
            elif p.kind is p.VAR_POSITIONAL:
                self.varargs = True
            elif p.kind is p.POSITIONAL_ONLY:
                self.pos_only.append(p.name)
            else:
                self.kw.add(p.name)
                if p.default is p.empty:
                    self.required.add(p.name)


_ACCEPTORS = {}


def acceptor(func):
    a = _ACCEPTORS.get(func)
    if a is None:
        a = _ACCEPTORS[func] = Acceptor(func)
    return a


def translate(bound, params, acc, bound_first):
    """Arguments for our implementation from the real binding; extras are the real-but-unsimulated ones."""
    pos, kw, extras = [], {}, {}
    # A non-empty *args forces every parameter before it to travel positionally.
    star = next((i for i, p in enumerate(params) if p[1] == "*" and bound[p[0]]), -1)
    for i, p in enumerate(params):
        name, kind = p[0], p[1]
        v = bound[name]
        if kind == "*":
            pos.extend(v)
        elif kind == "**":
            for k, vv in v.items():
                if k in acc.kw or acc.varkw:
                    kw[k] = vv
                else:
                    extras[k] = vv
        elif v is _NOT_GIVEN:
            if name in acc.required and len(p) > 2 and not isinstance(p[2], dict):
                kw[name] = p[2]
        elif (i == 0 and bound_first) or kind == "p" or name in acc.pos_only or i < star:
            if not kw:
                pos.append(v)
            elif name in acc.kw:
                kw[name] = v
            else:
                extras[name] = v
        elif name in acc.kw or acc.varkw:
            kw[name] = v
        else:
            extras[name] = v
    return pos, kw, extras


_CATEGORIES = {"DeprecationWarning": DeprecationWarning, "FutureWarning": FutureWarning, "UserWarning": UserWarning,
               "PendingDeprecationWarning": PendingDeprecationWarning, "RuntimeWarning": RuntimeWarning}


def category(name):
    return _CATEGORIES.get(name, FutureWarning)


def emit(cat, msg, stacklevel, package=None):
    """A deprecation as the release reports it: a warning, or a line logged by the package's logger
    (category 'logging.WARNING')."""
    if cat.startswith("logging."):
        import logging

        logging.getLogger(package or "transformers").warning(msg)
    else:
        warnings.warn(msg, category(cat), stacklevel=stacklevel + 1)


def given(bound, params, kwarg):
    """True when the user passed `kwarg` (by name or position, or into **kwargs)."""
    if kwarg in bound:
        return bound[kwarg] is not _NOT_GIVEN
    for p in params:
        if p[1] == "**" and kwarg in bound[p[0]]:
            return True
    return False


def make_wrapper(func, params, owner, fname, *, method, config_like=False, deps=None, package=None):
    """Wrap `func` (ours) so that user calls are bound against `params` first.

    method: True when the first real parameter is the instance/class (passed through unchanged).
    deps: [(kwarg or None, category, message)] deprecations of this API."""
    if params is None and not deps:
        return func
    if params is not None and deps and not any(p[1] == "**" for p in params):
        # The release warned for these keywords rather than failing: a renaming decorator accepts
        # them although the recorded (unwrapped) signature does not show them.
        names = {p[0] for p in params}
        extra = [[kw, "k", None] for kw, _, _ in deps if kw and kw not in names]
        if extra:
            params = list(params) + extra
    is_init = fname == "__init__"
    lazy = []  # [shadow, acceptor], compiled at the first call from a script

    def wrapper(*args, **kwargs):
        if internal(1):
            return func(*args, **kwargs)
        if not lazy:
            lazy[:] = [shadow(owner, fname, params) if params is not None else None, acceptor(func)]
        sh, acc = lazy
        if sh is None:
            bound = None
        else:
            bound = sh(*args, **kwargs)
        fired = None
        if deps:
            for kwarg, cat, msg in deps:
                if not kwarg or (bound is not None and given(bound, params, kwarg)) or (bound is None and kwarg in kwargs):
                    emit(cat, msg, 2, package)
                    if not cat.startswith("logging."):
                        fired = fired or set()
                        fired.add(category(cat))
        if bound is None:
            call_pos, call_kw, extras = list(args), kwargs, {}
        else:
            call_pos, call_kw, extras = translate(bound, params, acc, method)
        if fired:
            # The data's warning replaces our hand-written one of the same category for this call.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = func(*call_pos, **call_kw)
            for w in caught:
                if w.category not in fired:
                    warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        else:
            result = func(*call_pos, **call_kw)
        if extras and is_init and config_like and call_pos:
            for k, v in extras.items():
                try:
                    setattr(call_pos[0], k, v)
                except Exception:  # noqa: BLE001 - a read-only attribute simply stays as it is
                    pass
        return result

    for attr in ("__name__", "__qualname__", "__module__", "__doc__"):
        try:
            setattr(wrapper, attr, getattr(func, attr))
        except (AttributeError, TypeError):
            pass
    wrapper.__wrapped__ = func
    wrapper.__fe_params__ = params
    return wrapper

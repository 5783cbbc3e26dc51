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

    __slots__ = ("kw", "pos_only", "positional", "varargs", "varkw", "required", "defaults")

    def __init__(self, func):
        self.kw, self.pos_only, self.varargs, self.varkw, self.required = set(), [], False, True, set()
        self.positional = []  # names that can be filled positionally, in order
        self.defaults = {}  # name -> our default
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
                self.positional.append(p.name)
                if p.default is p.empty:
                    self.required.add(p.name)
            else:
                self.kw.add(p.name)
                if p.kind is p.POSITIONAL_OR_KEYWORD:
                    self.positional.append(p.name)
                if p.default is p.empty:
                    self.required.add(p.name)
                else:
                    self.defaults[p.name] = p.default


_ACCEPTORS = {}


def acceptor(func):
    a = _ACCEPTORS.get(func)
    if a is None:
        a = _ACCEPTORS[func] = Acceptor(func)
    return a


_SCALARS = (type(None), bool, int, float, str)


def real_defaults(kw, bound, params, acc):
    """Configuration objects: a field the user left out gets the release's recorded default where ours
    differs (trl 0.23 SFTConfig(logging_steps=10, gradient_checkpointing=True), ...)."""
    for p in params:
        name = p[0]
        if len(p) < 3 or p[1] not in ("pk", "k") or name in kw or name not in acc.defaults or bound.get(name, None) is not _NOT_GIVEN:
            continue
        real, ours = p[2], acc.defaults[name]
        if isinstance(real, _SCALARS) and isinstance(ours, _SCALARS) and (type(real) is not type(ours) or real != ours) \
                and real is not None and not (isinstance(real, (int, float)) and isinstance(ours, (int, float))
                                                             and not isinstance(real, bool) and not isinstance(ours, bool) and real == ours):
            kw[name] = real


def translate(args, kwargs, bound, params, acc, renames=None):
    """Arguments for our implementation: what the user passed positionally stays positional (as far
    as our signature takes positionals), keywords stay keywords; extras are the real-but-unsimulated
    keywords our implementation cannot take. `renames` maps a deprecated keyword to its new name."""
    real_pos = [p[0] for p in params if p[1] in ("p", "pk")]
    cap = len(args) if acc.varargs else min(len(args), len(acc.positional))
    pos, kw, extras = list(args[:cap]), {}, {}
    filled = set(acc.positional[:cap])
    for i in range(cap, len(args)):
        # More positionals than our signature takes: pass them by their real name when we accept it.
        name = real_pos[i] if i < len(real_pos) else None
        if name is not None and name not in filled and (name in acc.kw or acc.varkw):
            kw[name] = args[i]
        elif name is not None:
            extras[name] = args[i]
    for k, v in kwargs.items():
        if renames and k in renames:
            if renames[k] in kwargs and renames[k] != k:
                continue  # both names given: the new one wins, as the real decorators do
            k = renames[k]
        if k in filled:
            continue
        if k in acc.kw or acc.varkw:
            kw[k] = v
        else:
            extras[k] = v
    # A parameter our implementation requires but the real one defaults: pass the real default.
    for p in params:
        name = p[0]
        if p[1] in ("p", "pk", "k") and name in acc.required and name not in filled and name not in kw and len(p) > 2 \
                and not isinstance(p[2], dict) and bound.get(name, None) is _NOT_GIVEN and name not in acc.pos_only:
            kw[name] = p[2]
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


def make_wrapper(func, params, owner, fname, *, method, config_like=False, deps=None, package=None, renames=None):
    """Wrap `func` (ours) so that user calls are bound against `params` first.

    method: True when the first real parameter is the instance/class (passed through unchanged).
    deps: [(kwarg or None, category, message)] deprecations of this API.
    renames: {old kwarg: {"new", "category", "message"}} a real renaming decorator accepts."""
    if params is None and not deps and not renames:
        return func
    if params is not None and renames:
        names = {p[0] for p in params}
        renames = {k: v for k, v in renames.items() if k not in names}
        if not any(p[1] == "**" for p in params):
            params = list(params) + [[k, "k", None] for k in sorted(renames)]
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
                        fired.add(msg[:40])
        rmap = None
        if renames:
            for kwarg in renames:
                if kwarg in kwargs:
                    r = renames[kwarg]
                    # The catalog-harvested deprecation of the same keyword (deps) already warned.
                    if r.get("category") and r.get("message") and not any(d[0] == kwarg for d in (deps or ())):
                        emit(r["category"], r["message"], 2, package)
                        if not r["category"].startswith("logging."):
                            fired = fired or set()
                            fired.add(category(r["category"]))
                    rmap = rmap or {}
                    new = r.get("new")
                    # Our implementation gets the new name (or the old one if that is all it takes).
                    rmap[kwarg] = new if new and (new in acc.kw or acc.varkw or kwarg not in acc.kw) else kwarg
        if bound is None:
            call_pos, call_kw, extras = list(args), kwargs, {}
        else:
            call_pos, call_kw, extras = translate(args, kwargs, bound, params, acc, rmap)
            if config_like and is_init:
                real_defaults(call_kw, bound, params, acc)
        if fired:
            # The data's warning replaces our hand-written one of the same category (or the same
            # wording under another category) for this call.
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                result = func(*call_pos, **call_kw)
            for w in caught:
                if w.category not in fired and str(w.message)[:40] not in fired:
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

"""The API surface layer: our stand-ins obey the episode snapshot's recorded API (docs/snapshots.md).

Installed at interpreter start by simlibs/sitecustomize.py as the first sys.meta_path finder. For the
covered packages that have data in the selected snapshot:
- a module the data lacks and we do not have on disk fails with CPython's own ModuleNotFoundError; a
  module the data has but we lack is built on the fly;
- a module's public names are exactly the data's: others raise the data's `missing_getattr` wording
  (and `from m import X` CPython's ImportError); a recorded name resolves to our hand-written object of
  the same public name, else to a generic stub built from the data;
- recorded classes/functions bind calls against the real signature (surface_call), removed members
  raise the real AttributeError, and the data's deprecation warnings are emitted.
Our own code (files under simlibs) is never gated or bound, so the stand-ins keep working inside.
"""
import contextlib
import importlib
import importlib.machinery
import os
import sys
import warnings
import weakref
from types import ModuleType

from _forgeenv_sim import surface_data as _data
from _forgeenv_sim.surface_call import emit, internal, make_wrapper

_PathFinder = importlib.machinery.PathFinder
_mget = ModuleType.__getattribute__
_MISSING = object()
_BUSY = set()
_RESOLVED = {}  # object key -> resolved (and surfaced) object
_SURFACED_CLASSES = set()
_OURS = _data.SIMLIBS + os.sep
_BUILDERS = frozenset(("to", "cuda", "cpu", "train", "eval", "half", "float", "double", "bfloat16", "requires_grad_", "zero_grad",
                       "add_module", "apply", "with_format", "shuffle", "select", "filter", "map", "flatten", "cast"))
_NEUTRAL = {"str": "", "int": 0, "float": 0.0, "bool": False, "dict": {}, "list": [], "tuple": (), "NoneType": None}


def _is_ours(module):
    f = getattr(module, "__file__", None) if module is not None else None
    return bool(f) and f.startswith(_OURS) and not getattr(module, "__fe_synthetic__", False)


# ---------------------------------------------------------------- the data MRO of a class


def _mro(key):
    """[(key, obj)] for the class and its recorded bases (depth first, each once); complete=False
    when a base outside builtins has no data (then nothing can be declared absent)."""
    out, seen, complete = [], set(), True
    todo = [key]
    while todo:
        k = todo.pop(0)
        if k in seen:
            continue
        seen.add(k)
        if k in ("builtins.object", "typing.Generic", "abc.ABC"):
            continue
        if k.startswith(("builtins.", "typing.", "abc.", "enum.", "collections.")):
            complete = False  # members of a standard base are not recorded: declare nothing absent
            continue
        o = _data.find_object(k)
        if o is None:
            complete = False
            continue
        out.append((k, o))
        if o.get("cut"):
            complete = False  # only some members were recorded (model classes)
        todo[:0] = [b for b in o.get("bases", []) if b not in seen]
    return out, complete


def _members(mro):
    names = set()
    for _, o in mro:
        names.update(o.get("methods", {}))
        names.update(o.get("properties", []))
        names.update(o.get("attributes", []))
        names.update(o.get("classmethods", []))
    return names


def _init_params(mro):
    for _, o in mro:
        if o.get("init") is not None:
            return o["init"]
    return None


def _method_params(mro, name):
    for _, o in mro:
        m = o.get("methods", {})
        if name in m:
            return m[name], name in o.get("classmethods", [])
    return None, False


def _renames(mro, name):
    """Renamed keywords recorded for `name` on the class that defines it in the data MRO."""
    for k, o in mro:
        if (name == "__init__" and o.get("init") is not None) or name in o.get("methods", {}):
            return _data.renamed(k + "." + name)
    return None


def _class_deps(key, pkg_name):
    """{member or None: [(kwarg, category, message)]} for a class or function key."""
    pkg = _data.package(pkg_name)
    out = {}
    if pkg is None:
        return out
    for (target, member, kw), (cat, msg) in pkg.deps().items():
        if target == key:
            # "pkg.Name" of a class or function warns when it is called, as real deprecations do.
            out.setdefault(member, []).append((kw or "", cat, msg))
    return out


# ---------------------------------------------------------------- classes


class _Removed:
    """A member our stand-in has but the snapshot's class does not: the real AttributeError for users."""

    __slots__ = ("name", "orig")

    def __init__(self, name, orig):
        self.name, self.orig = name, orig

    def __get__(self, obj, cls=None):
        if internal(1) or _member_of_subclass(type(obj) if obj is not None else cls, self.name):
            get = getattr(type(self.orig), "__get__", None)
            return get(self.orig, obj, cls) if get else self.orig
        if obj is None:
            raise AttributeError("type object '%s' has no attribute '%s'" % (cls.__name__, self.name))
        raise AttributeError("'%s' object has no attribute '%s'" % (type(obj).__name__, self.name))


_CLASS_KEYS = {}  # id(our surfaced class) -> its recorded key (surfaced classes live as long as their module)
_SUB_MEMBER = weakref.WeakKeyDictionary()  # class -> {name: bool}; weak, so a collected class's id is never reused here


def _member_of_subclass(cls, name):
    """True when the nearest surfaced class of `cls` has `name` in its recorded MRO: our stand-in defines
    a method on a base (PreTrainedTokenizerBase.convert_tokens_to_ids) that the real release defines
    lower down (PreTrainedTokenizerFast), so the base hides it but the subclass must not."""
    if cls is None:
        return False
    try:
        known = _SUB_MEMBER.setdefault(cls, {})
    except TypeError:  # not weak-referenceable
        known = {}
    hit = known.get(name)
    if hit is not None:
        return hit
    found = False
    for c in getattr(cls, "__mro__", ()):
        key = _CLASS_KEYS.get(id(c))
        if key is not None:
            found = name in _members(_mro(key)[0])
            break
    known[name] = found
    return found


def _raw_member(cls, name):
    for c in cls.__mro__:
        if name in c.__dict__:
            return c.__dict__[name]
    return _MISSING


def _config_like(obj, name):
    return bool(obj.get("dataclass")) or name.endswith(("Config", "Arguments", "Args"))


def surface_class(cls, key, obj=None):
    """Bind `cls`'s recorded methods against the real signatures and hide what the snapshot lacks."""
    if id(cls) in _SURFACED_CLASSES:
        return cls  # one class, one recorded identity (our aliases such as IterableDataset = Dataset keep the first)
    _SURFACED_CLASSES.add(id(cls))
    obj = obj or _data.find_object(key)
    if obj is None:
        return cls
    _CLASS_KEYS[id(cls)] = key
    top = key.partition(".")[0]
    mro, complete = _mro(key)
    deps = _class_deps(key, top)
    for k, _ in mro[1:]:
        # A method's deprecation recorded on the base that defines it (PreTrainedModel.from_pretrained(torch_dtype=)).
        for member, entries in _class_deps(k, k.partition(".")[0]).items():
            if member is not None:
                deps.setdefault(member, [])
                deps[member] = deps[member] + [e for e in entries if e not in deps[member]]
    owner = obj.get("qualname", cls.__name__)
    hot = top == "torch"  # tensors and modules are called in tight loops: bind constructors only
    init = _init_params(mro)
    raw = _raw_member(cls, "__init__")
    if (init is not None or deps.get(None)) and raw is not _MISSING and not isinstance(raw, (staticmethod, classmethod)) and callable(raw):
        base = getattr(raw, "__wrapped__", raw) if getattr(raw, "__fe_params__", None) is not None else raw
        if base is not object.__init__ and getattr(raw, "__fe_params__", _MISSING) is not init:
            w = make_wrapper(base, init, owner, "__init__", method=True, config_like=_config_like(obj, owner), deps=deps.get(None), package=top,
                             renames=_renames(mro, "__init__"))
            if w is not base:
                type.__setattr__(cls, "__init__", w)
    if not hot:
        for name in _members(mro):
            if (name.startswith("__") and name != "__call__") or name == "__init__":
                continue
            params, is_cm = _method_params(mro, name)
            member_deps = [(kw, c, m) for kw, c, m in deps.get(name, [])]
            if is_cm and name.startswith("from_"):
                # A deprecated class warns when it is built, through its constructors too (AutoModelWithLMHead.from_config).
                member_deps += [d for d in deps.get(None, []) if not d[0]]
            if params is None and not member_deps:
                continue
            rawm = _raw_member(cls, name)
            if rawm is _MISSING:
                # Recorded but not simulated (or removed by a hand-written gate): the data wins.
                rawm = _stub_method(name, is_cm)
                type.__setattr__(cls, name, rawm)
            # CPython names the class that defines the method (PushToHubMixin.push_to_hub()), as the data does.
            definer = next((o.get("qualname") for _, o in mro if name in o.get("methods", {})), None) or owner
            _wrap_member(cls, name, rawm, params, definer, member_deps, top, _renames(mro, name))
    if complete:
        known = _members(mro)
        for c in cls.__mro__[:-1]:
            if not _is_ours(sys.modules.get(c.__module__)) and not c.__module__.partition(".")[0] in _data.COVERED:
                continue
            for name, v in list(c.__dict__.items()):
                if name.startswith("_") or name in known or isinstance(_raw_member(cls, name), _Removed):
                    continue
                # Methods only: attribute-like members (properties) may be served by the real class's
                # __getattr__ (e.g. special tokens in transformers >= 4.47), which the data does not record.
                if (callable(v) and not isinstance(v, type)) or isinstance(v, (classmethod, staticmethod)):
                    type.__setattr__(cls, name, _Removed(name, _raw_member(cls, name)))
    return cls


def _wrap_member(cls, name, rawm, params, owner, deps, top, renames=None):
    if getattr(rawm, "__fe_params__", _MISSING) is params and params is not None:
        return
    if isinstance(rawm, classmethod):
        f = rawm.__func__
        if params is not None and not (params and params[0][0] in ("cls", "self") and params[0][1] in ("p", "pk")):
            params = [["cls", "pk"]] + list(params)
        type.__setattr__(cls, name, classmethod(make_wrapper(f, params, owner, name, method=True, deps=deps, package=top, renames=renames)))
    elif isinstance(rawm, staticmethod):
        type.__setattr__(cls, name, staticmethod(make_wrapper(rawm.__func__, params, owner, name, method=False, deps=deps, package=top, renames=renames)))
    elif callable(rawm) and not isinstance(rawm, type):
        f = getattr(rawm, "__wrapped__", rawm) if getattr(rawm, "__fe_params__", None) is not None else rawm
        if params is not None and not params:
            return
        type.__setattr__(cls, name, make_wrapper(f, params, owner, name, method=True, deps=deps, package=top, renames=renames))


def _hook_subclasses(cls):
    """Classes our code creates later (per-family tokenizers, models, configs) are surfaced under
    their public name when they are created, so instances never escape the layer."""
    if "__fe_hooked__" in cls.__dict__:
        return
    prev = cls.__dict__.get("__init_subclass__")

    def hook(sub, **kwargs):
        if isinstance(prev, classmethod):
            prev.__func__(sub, **kwargs)
        else:
            super(cls, sub).__init_subclass__(**kwargs)
        if internal(1):
            _surface_new(sub)

    type.__setattr__(cls, "__init_subclass__", classmethod(hook))
    type.__setattr__(cls, "__fe_hooked__", True)


def _surface_new(sub):
    top = sub.__module__.partition(".")[0]
    pkg = _data.package(top)
    if pkg is None:
        return
    ref = pkg.modules.get(top, {}).get("names", {}).get(sub.__name__)
    if ref and not ref.startswith(("module:", "value:")) and _RESOLVED.setdefault(ref, sub) is sub:
        obj = _data.find_object(ref)
        if obj is not None and obj.get("kind") == "class":
            surface_class(sub, ref, obj)


# ---------------------------------------------------------------- generic stubs


def _stub_method(name, is_classmethod):
    if is_classmethod:
        if name.startswith("from_"):
            def make(cls, *args, **kwargs):
                inst = cls.__new__(cls)
                for k, v in kwargs.items():
                    try:
                        setattr(inst, k, v)
                    except Exception:  # noqa: BLE001
                        pass
                return inst

            return classmethod(make)
        return classmethod(lambda cls, *a, **k: None)
    if name in _BUILDERS or name.startswith(("with_", "add_")):
        return lambda self, *a, **k: self
    if name.startswith("as_") or name.endswith("_context"):
        return lambda self, *a, **k: contextlib.nullcontext()
    return lambda self, *a, **k: None


class _StubBase:
    def __repr__(self):
        return "%s()" % type(self).__name__


def _stub_class(key, obj):
    mro, _ = _mro(key)
    ns = {"__module__": obj.get("module", key.rpartition(".")[0]), "__qualname__": obj.get("qualname", key.rpartition(".")[2]), "__doc__": None}

    def __init__(self, *args, **kwargs):
        for k, v in kwargs.items():
            try:
                setattr(self, k, v)
            except Exception:  # noqa: BLE001
                pass

    ns["__init__"] = __init__
    cms = set()
    for _, o in mro:
        cms.update(o.get("classmethods", []))
    for _, o in reversed(mro):
        for p in o.get("properties", []):
            ns[p] = property(lambda self: None)
        for a in o.get("attributes", []):
            ns[a] = None
        for m in o.get("methods", {}):
            if m.startswith("__") and m != "__call__":
                continue
            ns[m] = _stub_method(m, m in cms)
    name = ns["__qualname__"].rpartition(".")[2]
    cls = type(name, (_StubBase,), ns)
    cls.__fe_stub__ = True
    return cls


def _stub_function(key, obj):
    def stub(*args, **kwargs):
        return None

    stub.__name__ = obj.get("qualname", key).rpartition(".")[2]
    stub.__qualname__ = obj.get("qualname", stub.__name__)
    stub.__module__ = obj.get("module")
    return stub


# ---------------------------------------------------------------- resolving a recorded name


def _dict_get(module, name):
    d = module.__dict__
    if name in d:
        return d[name]
    ga = d.get("__fe_orig_getattr__") or (d.get("__getattr__") if not isinstance(module, _SurfaceModule) else None)
    if ga is not None:
        try:
            return ga(name)
        except Exception:  # noqa: BLE001 - a hand-written gate said no: the data decides instead
            return _MISSING
    return _MISSING


def _lookup(module, qualname):
    v = _dict_get(module, qualname.split(".")[0])
    for part in qualname.split(".")[1:]:
        if v is _MISSING:
            break
        v = getattr(v, part, _MISSING)
    return v


def _implementation(key, obj):
    """Our hand-written object for a recorded one: same module path if we have it, else the real
    object's qualname (or `_` + qualname) in our top-level stand-in, else any of our loaded submodules."""
    qual = obj.get("qualname", key.rpartition(".")[2])
    short = qual.rpartition(".")[2]
    top = key.partition(".")[0]
    m = sys.modules.get(obj.get("module", ""))
    if _is_ours(m):
        v = _lookup(m, qual)
        if v is not _MISSING:
            return v
    topmod = sys.modules.get(top)
    if not _is_ours(topmod):
        return _MISSING
    for cand in (qual, "_" + qual):
        v = _lookup(topmod, cand)
        if v is not _MISSING:
            return v
    return _our_names(top).get(short, _MISSING)


_OUR_NAMES = {}  # top -> (number of modules seen, {public name: object})


def _our_names(top):
    """Objects defined in our loaded submodules of `top`, by their __name__ (rebuilt when more load)."""
    n = len(sys.modules)
    hit = _OUR_NAMES.get(top)
    if hit is not None and hit[0] == n:
        return hit[1]
    found = {}
    for name, sub in list(sys.modules.items()):
        if name.startswith(top + ".") and _is_ours(sub):
            for k, v in list(sub.__dict__.items()):
                real = getattr(v, "__name__", None) if isinstance(v, type) or callable(v) else None
                if isinstance(real, str) and (k == real or k == "_" + real):
                    found.setdefault(real, v)
    _OUR_NAMES[top] = (n, found)
    return found


def resolve_object(key):
    v = _RESOLVED.get(key, _MISSING)
    if v is not _MISSING:
        return v
    obj = _data.find_object(key)
    if obj is None:
        # Not recorded (e.g. a re-export from an uncovered package): import it the ordinary way.
        mod, _, name = key.rpartition(".")
        try:
            v = getattr(importlib.import_module(mod), name)
        except Exception:  # noqa: BLE001
            v = None
        _RESOLVED[key] = v
        return v
    return adopt(key, obj, _implementation(key, obj))


def adopt(key, obj, impl):
    """Surface `impl` (ours, or a stub when _MISSING) as the recorded object `key`."""
    kind = obj.get("kind")
    if impl is _MISSING:
        if kind == "class":
            impl = _stub_class(key, obj)
        else:
            impl = _stub_function(key, obj)
    _RESOLVED[key] = impl  # before surfacing: recursion through bases finds it
    if isinstance(impl, type):
        if kind == "class" and impl.__name__ == obj.get("qualname", key).rpartition(".")[2]:
            surface_class(impl, key, obj)
            if not getattr(impl, "__fe_stub__", False):
                _hook_subclasses(impl)
    elif callable(impl) and kind == "function" and key.partition(".")[0] != "torch":
        deps = _class_deps(key, key.partition(".")[0]).get(None)
        w = make_wrapper(impl, obj.get("signature"), "", obj.get("qualname", key).rpartition(".")[2], method=False, deps=deps, package=key.partition(".")[0],
                         renames=_data.renamed(key))
        qn = obj.get("qualname", "")
        if w is not impl and "." in qn:
            w.__qualname__ = qn
        impl = _RESOLVED[key] = w
    return impl


def resolve_ref(ref, pkg):
    if ref.startswith("module:"):
        return importlib.import_module(ref[7:])
    if ref.startswith("value:"):
        v = _NEUTRAL.get(ref[6:])
        return v.copy() if isinstance(v, (dict, list)) else v
    return resolve_object(ref)


# ---------------------------------------------------------------- gated modules


def mget_top(module):
    return _mget(module, "__name__").partition(".")[0]


class _SurfaceModule(ModuleType):
    """A module whose public names are the snapshot's (state lives on a per-module subclass)."""

    def __getattribute__(self, name):
        if name[:2] == "__":
            if name == "__all__" or name == "__version__":
                cls = type(self)
                if name == "__version__" and name not in cls._fe_names:
                    return _mget(self, name)
                return cls._fe_special(self, name)
            return _mget(self, name)
        cls = type(self)
        done = cls._fe_done.get(name, _MISSING)
        if done is not _MISSING:
            if name in cls._fe_deps and not internal(1):
                cat, msg = cls._fe_deps[name]
                emit(cat, msg, 2, mget_top(self))
            return done
        ref = cls._fe_names.get(name)
        if ref is not None and ref[:12] == "unavailable:":
            # The real release fails to import this name; our implementation stands in if we have one.
            ref = None if name not in _mget(self, "__dict__") else ref
        if ref is not None:
            if name in cls._fe_deps and not internal(1):
                cat, msg = cls._fe_deps[name]
                emit(cat, msg, 2, mget_top(self))
            return cls._fe_resolve(self, name, ref)
        if name[:1] == "_" or internal(1) or (_mget(self, "__name__") + "." + name) in sys.modules:
            return _mget(self, name)
        exc_type, msg = cls._fe_missing
        raise exc_type(msg.replace("{name}", name))

    def __setattr__(self, name, value):
        type(self)._fe_done.pop(name, None)
        ModuleType.__setattr__(self, name, value)

    def __dir__(self):
        return sorted(set(type(self)._fe_names) | {k for k in _mget(self, "__dict__") if k.startswith("__")})


def _missing_wording(info, modname):
    text = info.get("missing_getattr") or "AttributeError: module '%s' has no attribute '{name}'" % modname
    head, sep, rest = text.partition(": ")
    if sep and head.isidentifier() and head.endswith("Error"):
        import builtins

        return getattr(builtins, head, AttributeError), rest
    return AttributeError, text


def _gate(module, info, pkg):
    """Turn `module` (ours or synthetic) into a gated module following `info` (the data's entry)."""
    modname = module.__name__
    names = dict(info.get("names", {}))
    dep_attr = {}
    for (target, member, kw), (cat, msg) in pkg.deps().items():
        if target == "path" and kw is None and member.rpartition(".")[0] == modname:
            ref = names.get(member.rpartition(".")[2], "")
            if ref.startswith(("module:", "value:")):
                dep_attr[member.rpartition(".")[2]] = (cat, msg)

    def resolve(self, name, ref):
        ours = self.__dict__.get(name, _MISSING)
        if ref.startswith("unavailable:"):
            v = ours
        elif not ref.startswith(("module:", "value:")):
            obj = _data.find_object(ref)
            if ref in _RESOLVED or obj is None or ours is _MISSING or isinstance(ours, ModuleType):
                v = resolve_object(ref)
            else:
                # Our module defines the name itself: that is the implementation.
                v = adopt(ref, obj, ours)
        elif ours is not _MISSING and (ref.startswith("value:") or isinstance(ours, ModuleType) or not isinstance(ours, (type, int, float, str, bool))):
            # A real submodule that we implement as a module-like object (torch.cuda): ours, which has
            # the members (torch.cuda.amp) that the data's cut walk did not record.
            v = ours
        elif ref.startswith("value:") and _is_ours(sys.modules.get(pkg.name)) and name in sys.modules[pkg.name].__dict__ \
                and not isinstance(sys.modules[pkg.name].__dict__[name], ModuleType):
            # A value the release defines in a submodule we do not have (peft.mapping's registries):
            # our top-level definition of it rather than an empty placeholder.
            v = sys.modules[pkg.name].__dict__[name]
        else:
            v = resolve_ref(ref, pkg)
        type(self)._fe_done[name] = v
        return v

    def special(self, name):
        if name == "__all__":
            # Submodules the data does not describe (CLI, tests) would fail a star import: leave them out.
            return sorted(n for n, r in names.items() if not n.startswith("_") and not r.startswith(("module:", "unavailable:")))
        if name == "__version__":
            v = self.__dict__.get("__version__", _MISSING)
            if modname == pkg.name and pkg.version:
                return pkg.version  # the release the data was recorded from
            return v if v is not _MISSING else pkg.version
        return _mget(self, name)

    sub = type("_SurfaceModule", (_SurfaceModule,), {
        "_fe_names": names, "_fe_done": {}, "_fe_deps": dep_attr, "_fe_missing": _missing_wording(info, modname),
        "_fe_resolve": staticmethod(resolve), "_fe_special": staticmethod(special),
    })
    d = module.__dict__
    if "__getattr__" in d and "__fe_orig_getattr__" not in d:
        d["__fe_orig_getattr__"] = d["__getattr__"]
    module.__class__ = sub
    dep = pkg.deps().get(("path", modname, None))
    if dep is not None:
        emit(dep[0], dep[1], 2, pkg.name)  # a deprecated module warns on import
    if not d.get("__fe_synthetic__"):
        # Our classes already here are surfaced now (and hooked), so that the instances our own
        # code creates obey the snapshot even when the script never names their class.
        for name, ref in names.items():
            v = d.get(name)
            if isinstance(v, type) and not ref.startswith(("module:", "value:")) and ref not in _RESOLVED and _is_ours(sys.modules.get(v.__module__, module)):
                obj = _data.find_object(ref)
                if obj is not None and obj.get("kind") == "class":
                    adopt(ref, obj, v)
    return module


# ---------------------------------------------------------------- the finder


class _OursLoader:
    """Runs our on-disk module, then gates it."""

    def __init__(self, loader, pkg, info):
        self._loader, self._pkg, self._info = loader, pkg, info

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        self._loader.exec_module(module)
        _gate(module, self._info, self._pkg)

    def __getattr__(self, name):
        return getattr(self._loader, name)


class _SyntheticLoader:
    """Builds a module the data records but our stand-ins do not have."""

    def __init__(self, pkg, info):
        self._pkg, self._info = pkg, info

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        module.__fe_synthetic__ = True
        _gate(module, self._info, self._pkg)

    def is_package(self, fullname):
        return self._info.get("file", "").endswith("__init__.py")


_FULLY_WALKED = frozenset(("trl", "peft", "accelerate", "datasets", "evaluate", "huggingface_hub"))


def _imported_by_us():
    """True when the import statement being served is in our own simulated code."""
    f = sys._getframe(2)
    while f is not None and f.f_code.co_filename.startswith("<frozen importlib"):
        f = f.f_back
    return f is not None and f.f_code.co_filename.startswith(_OURS)


class SurfaceFinder:
    @classmethod
    def find_spec(cls, fullname, path=None, target=None):
        top = fullname.partition(".")[0]
        if top not in _data.COVERED or fullname in _BUSY:
            return None
        pkg = _data.package(top)
        if pkg is None:
            return None
        info = pkg.module(fullname)
        _BUSY.add(fullname)
        try:
            spec = _PathFinder.find_spec(fullname, path if "." in fullname else None)
        finally:
            _BUSY.discard(fullname)
        if spec is not None:
            if info is None and top in _FULLY_WALKED and fullname.count(".") == 1 and not fullname.rpartition(".")[2].startswith("_") \
                    and not _imported_by_us():
                # Every public subpackage of these is recorded: one the release lacks does not exist
                # there, although our stand-in has it for other releases (trl.experimental, trl.core).
                raise ModuleNotFoundError("No module named '%s'" % fullname, name=fullname)
            if info is not None and spec.loader is not None:
                spec.loader = _OursLoader(spec.loader, pkg, info)
            return spec
        if info is None:
            return None  # CPython then raises its own "No module named '...'"
        is_pkg = info.get("file", "").endswith("__init__.py")
        spec = importlib.machinery.ModuleSpec(fullname, _SyntheticLoader(pkg, info), origin=os.path.join(_data.SIMLIBS, info.get("file", "")), is_package=is_pkg)
        spec.has_location = True
        return spec


def install():
    """Put the finder first on sys.meta_path when the snapshot has API data; otherwise do nothing."""
    chosen = _data.select()
    if chosen is None or any(isinstance(f, type) and f is SurfaceFinder for f in sys.meta_path):
        return False
    _data._SELECTED[:] = [chosen]
    sys.meta_path.insert(0, SurfaceFinder)
    return True

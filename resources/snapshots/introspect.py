"""Record the public API surface of one installed package (runs INSIDE a snapshot venv).

    python introspect.py PACKAGE OUT.json [--deprecations FILE.json]

Writes the `resources/snapshots/api/<snapshot>/<package>.json` format of docs/snapshots.md: the
module tree scripts import from, every public class and function with its signature, own
members per class, and the text of each module's missing-attribute error. Deterministic:
sorted keys, no memory addresses. Failures to import a module or an object are counted and
recorded (`unavailable:` references, the `unimportable` section), never fatal.
"""

import dataclasses
import enum
import functools
import importlib
import importlib.metadata
import importlib.util
import inspect
import io
import json
import os
import pkgutil
import re
import sys
import time
import types
import warnings

SENTINEL = "__forgeenv_missing__"
MAX_DEFAULT = 80
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")
DIST_NAMES = {"huggingface_hub": "huggingface_hub", "torch": "torch"}

# torch: only the top-level names of the modules scripts use, no walk.
TORCH_MODULES = [
    "torch", "torch.nn", "torch.nn.functional", "torch.optim", "torch.optim.lr_scheduler",
    "torch.utils.data", "torch.cuda", "torch.distributed",
]
# Package parts no training script imports from (CLIs, test helpers, converters, other frameworks).
SKIP_PARTS = {"commands", "cli", "tests", "testing", "test_utils", "testing_utils", "conftest", "__main__",
              "scripts_utils"}
TF_FLAX = re.compile(r"(^|_)(tf|flax|keras)(_|$)")
MODEL_FILE = re.compile(
    r"^(modeling|configuration|tokenization|processing|image_processing|feature_extraction|video_processing)_"
)
# Methods kept on classes defined in transformers.models.* (model, layer, config, tokenizer and
# processor classes); their shared bases outside models/ keep every method. See docs/snapshots.md.
MODEL_METHODS = {"__init__", "__call__", "forward", "from_pretrained", "generate", "save_pretrained",
                 "from_config", "get_input_embeddings", "resize_token_embeddings",
                 "gradient_checkpointing_enable", "encode", "decode", "batch_decode", "tokenize",
                 "convert_tokens_to_ids", "convert_ids_to_tokens", "get_vocab", "pad", "preprocess",
                 "apply_chat_template", "build_inputs_with_special_tokens", "save_vocabulary"}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------- module selection

def want_module(package, name):
    """Whether module `name` (dotted) of `package` is part of the recorded surface."""
    parts = name.split(".")
    if any(p.startswith("_") for p in parts[1:]):
        return False
    if any(p in SKIP_PARTS for p in parts[1:]):
        return False
    if package != "transformers":
        return True
    # transformers: the first level, the model packages and their PyTorch model/config/tokenizer
    # modules, the second level of utils/generation/data/integrations/pipelines/models.auto.
    if any(TF_FLAX.search(p) for p in parts[1:]) or any(p.startswith("convert_") for p in parts[1:]):
        return False
    if any(p.startswith("dummy_") for p in parts[1:]):
        return False
    if len(parts) <= 2:
        return True
    if parts[1] == "models":
        if len(parts) == 3:
            return True
        if parts[2] == "deprecated":
            return len(parts) == 4
        if parts[2] == "auto":
            return len(parts) == 4
        return len(parts) == 4 and bool(MODEL_FILE.match(parts[3]))
    if parts[1] in ("utils", "generation", "data", "integrations", "pipelines", "quantizers", "trainer"):
        return len(parts) == 3
    return False


def module_names(package):
    """Module names of `package` to record, found on disk without importing them."""
    if package == "torch":
        return list(TORCH_MODULES)
    spec = importlib.util.find_spec(package)
    names = [package]
    if spec is None or not spec.submodule_search_locations:
        return names

    def walk(paths, prefix):
        for info in sorted(pkgutil.iter_modules(paths), key=lambda m: m.name):
            full = prefix + "." + info.name
            if not want_module(package, full) and not (info.ispkg and want_package(package, full)):
                continue
            if want_module(package, full):
                names.append(full)
            if info.ispkg:
                walk([os.path.join(p, info.name) for p in paths], full)

    walk(list(spec.submodule_search_locations), package)
    return sorted(set(names))


def want_package(package, name):
    """A package that is not recorded itself but whose children may be."""
    parts = name.split(".")
    if any(p.startswith("_") or p in SKIP_PARTS for p in parts[1:]):
        return False
    return package == "transformers" and len(parts) <= 3 and parts[1] == "models"


# --------------------------------------------------------------------------- values

SHIM_NAME = re.compile(r"""\bname\s*==\s*["']([A-Za-z_]\w*)["']""")
CLOCK = re.compile(r"(?<!\d)\d{10}(?!\d)")
BUILD_TIME = time.time()


def default_value(v):
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int) and not isinstance(v, enum.Enum):
        return v
    if isinstance(v, float) and not isinstance(v, enum.Enum) and v == v and v not in (float("inf"), float("-inf")):
        return v
    if isinstance(v, str) and not isinstance(v, enum.Enum) and len(v) <= MAX_DEFAULT:
        # Defaults built from the clock at import (BenchmarkArguments' f"..._{round(time())}.csv") would
        # make every rebuild differ: the build's own time becomes "{time}".
        return CLOCK.sub(lambda m: "{time}" if abs(int(m.group(0)) - BUILD_TIME) < 86400 else m.group(0), v)
    try:
        r = repr(v)
    except Exception:
        r = "<" + type(v).__name__ + ">"
    return {"r": ADDRESS.sub("", r)[:MAX_DEFAULT]}


KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "p",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "pk",
    inspect.Parameter.VAR_POSITIONAL: "*",
    inspect.Parameter.KEYWORD_ONLY: "k",
    inspect.Parameter.VAR_KEYWORD: "**",
}


def signature(fn):
    """[[name, kind(, default)], ...] or None when Python cannot tell (builtins)."""
    try:
        sig = inspect.signature(fn)
    except Exception:
        return None
    out = []
    for p in sig.parameters.values():
        item = [p.name, KINDS[p.kind]]
        if p.default is not inspect.Parameter.empty:
            item.append(default_value(p.default))
        out.append(item)
    return out


def root(modname):
    return (modname or "").split(".")[0]


def mod_of(obj, host):
    mod = getattr(obj, "__module__", None)
    return mod if isinstance(mod, str) else host


def obj_key(obj, host):
    return mod_of(obj, host) + "." + qual_of(obj)


def qual_of(obj):
    qual = getattr(obj, "__qualname__", None)
    if not isinstance(qual, str):
        qual = getattr(obj, "__name__", None)
    return qual if isinstance(qual, str) else "?"


def is_function(obj):
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or isinstance(obj, (types.MethodDescriptorType, functools.partial)):
        return True
    # A decorated function (functools.lru_cache: accelerate's and transformers' is_*_available) is one too.
    try:
        # (Bound methods re-exported as functions, as huggingface_hub's create_repo = api.create_repo, stay values.)
        return not inspect.isclass(obj) and not inspect.ismethod(obj) and callable(obj) and inspect.isfunction(inspect.unwrap(obj))
    except Exception:  # noqa: BLE001 - unwrap loops or odd __wrapped__
        return False


# --------------------------------------------------------------------------- recorder

class Recorder:
    def __init__(self, package):
        self.package = package
        self.modules = {}
        self.objects = {}
        self.unimportable = {}
        self.failed_names = 0
        self.shim_warnings = {}  # "module.Name" -> {category, message}: warnings of module __getattr__ shims

    def in_package(self, modname):
        return root(modname) == self.package

    def record_module(self, name):
        try:
            mod = importlib.import_module(name)
        except BaseException as e:  # noqa: BLE001 - SystemExit from argparse-at-import modules too
            self.unimportable[name] = describe_failure(e)
            return
        lazy = type(mod).__name__ == "_LazyModule"
        exported = getattr(mod, "__all__", None)
        exported = set(exported) if isinstance(exported, (list, tuple, set)) else None
        if lazy or exported is None or self.package == "torch":
            candidates = [n for n in dir(mod)]
        else:
            candidates = list(exported)
        names = {}
        own_only = self.package == "transformers" and name.count(".") >= 3 and name.split(".")[1] == "models"
        for n in sorted(set(candidates)):
            if not isinstance(n, str) or "." in n or (n.startswith("_") and n != "__version__"):
                continue
            try:
                value = getattr(mod, n)
            except BaseException as e:  # noqa: BLE001
                if exported is not None and n not in exported and not lazy:
                    continue
                names[n] = "unavailable:" + type(e).__name__
                self.failed_names += 1
                continue
            if own_only and (exported is None or n not in exported) and mod_of(value, "") != name:
                continue
            try:
                ref = self.reference(value, name, listed=lazy or (exported is not None and n in exported))
            except Exception as e:  # noqa: BLE001 - objects with odd metadata must not stop the walk
                log(f"{name}.{n}: cannot describe: {type(e).__name__}: {e}")
                ref = "value:" + type(value).__name__
                self.failed_names += 1
            if ref is not None:
                names[n] = ref
        if not lazy:
            self.record_getattr_shims(mod, name, names)
        self.modules[name] = {
            "file": module_file(mod, self.package),
            "lazy": lazy,
            "names": names,
            "missing_getattr": missing_getattr(mod),
        }

    def record_getattr_shims(self, mod, name, names):
        """Names served by a module-level __getattr__ (backward-compatibility shims such as peft's
        PEFT_TYPE_TO_MODEL_MAPPING) are invisible to dir(): take the names its source compares against,
        fetch each (recording the warning it gives) and keep those that resolve."""
        ga = vars(mod).get("__getattr__")
        if not inspect.isfunction(ga):
            return
        try:
            src = inspect.getsource(ga)
        except (OSError, TypeError):
            return
        for n in sorted(set(SHIM_NAME.findall(src))):
            if n in names or n.startswith("_"):
                continue
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    value = getattr(mod, n)
                except BaseException:  # noqa: BLE001 - an optional backend the shim needs is absent
                    continue
            try:
                ref = self.reference(value, name, listed=True)
            except Exception:  # noqa: BLE001
                continue
            if ref is None:
                continue
            names[n] = ref
            for w in caught:
                if issubclass(w.category, (DeprecationWarning, FutureWarning, PendingDeprecationWarning)):
                    self.shim_warnings.setdefault(f"{name}.{n}", {"category": w.category.__name__, "message": str(w.message)})
                    break

    def reference(self, value, host, listed):
        """The reference string for a module member, or None when it is not part of the surface."""
        if n_is_module(value):
            if self.in_package(value.__name__) or listed:
                return "module:" + value.__name__
            return None
        if inspect.isclass(value) or is_function(value):
            key = obj_key(value, host)
            if not (self.in_package(key) or listed):
                return None
            if self.in_package(key):
                self.record_object(key, value, host)
            return key
        t = type(value)
        if t.__module__ == "builtins" or self.in_package(t.__module__) or listed:
            return "value:" + t.__name__
        return None

    def record_object(self, key, obj, host):
        if key in self.objects:
            return
        if inspect.isclass(obj):
            self.objects[key] = {}  # placeholder first: bases may refer back
            modname = key[: -len(qual_of(obj)) - 1]
            self.objects[key] = self.describe_class(obj, modname)
            for b in obj.__bases__:
                bkey = obj_key(b, modname)
                if self.in_package(bkey) and bkey not in self.objects:
                    self.record_object(bkey, b, modname)
        else:
            self.objects[key] = {
                "kind": "function",
                "module": key[: -len(qual_of(obj)) - 1],
                "qualname": qual_of(obj),
                "signature": signature(obj),
            }

    def describe_class(self, cls, modname):
        own = dict(vars(cls))
        is_dc = "__dataclass_fields__" in own
        fields = set(own.get("__dataclass_fields__", {}) or {}) if is_dc else set()
        is_model = self.package == "transformers" and modname.startswith("transformers.models.")
        methods, classmethods, properties, attributes = {}, [], [], []
        for name in sorted(own):
            if name.startswith("_") and name not in ("__init__", "__call__"):
                continue
            if is_model and name not in MODEL_METHODS:
                continue
            v = own[name]
            if isinstance(v, (classmethod, staticmethod)):
                methods[name] = signature(v.__func__)
                classmethods.append(name)
            elif isinstance(v, (property, functools.cached_property)):
                properties.append(name)
            elif inspect.isfunction(v) or inspect.ismethoddescriptor(v) or inspect.isbuiltin(v):
                if name == "__init__":
                    continue
                methods[name] = signature(v)
            elif name not in fields:
                attributes.append(name)
        out = {
            "kind": "class",
            "module": modname,
            "qualname": qual_of(cls),
            "bases": [obj_key(b, modname) for b in cls.__bases__],
            "dataclass": is_dc,
            "methods": methods,
            "classmethods": classmethods,
            "properties": properties,
            "attributes": attributes,
        }
        if "__init__" in own:
            init = own["__init__"]
            out["init"] = signature(init) if (inspect.isfunction(init) or hasattr(init, "__wrapped__")) else None
        if is_model:
            out["cut"] = True
        return out


def n_is_module(v):
    return isinstance(v, types.ModuleType)


def module_file(mod, package):
    f = getattr(mod, "__file__", None)
    if not f:
        return None
    top = sys.modules.get(package)
    base = os.path.dirname(os.path.dirname(os.path.abspath(top.__file__))) if top and top.__file__ else None
    return os.path.relpath(os.path.abspath(f), base).replace(os.sep, "/") if base else os.path.basename(f)


def missing_getattr(mod):
    try:
        getattr(mod, SENTINEL)
    except BaseException as e:  # noqa: BLE001
        return ADDRESS.sub("", f"{type(e).__name__}: {e}").replace(SENTINEL, "{name}")
    return None


def describe_failure(e):
    if isinstance(e, ModuleNotFoundError) and e.name:
        return f"{type(e).__name__}: No module named '{e.name}'"
    return type(e).__name__


def dist_version(package):
    for name in (package, package.replace("_", "-")):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def harvest_deprecations(path, package):
    """{api: {category, message}} for probe outcomes whose old form warns without raising."""
    if not path or not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    entries = data.get("results", data.get("entries", data)) if isinstance(data, dict) else data
    out = {}
    for e in entries if isinstance(entries, list) else []:
        api = e.get("api") or ""
        if root(api) != package or api in out:
            continue
        old = e.get("old") or {}
        warns = old.get("warnings") or []
        if old.get("ok") and warns:
            w = warns[0]
            out[api] = {"category": w.get("category"), "message": ADDRESS.sub("", str(w.get("message", "")))}
    return out


def trim_internal_model_classes(rec):
    """Classes under transformers.models that no lazy package exports (layers such as BertAttention,
    LlamaDecoderLayer) keep their name, bases and init but no methods: scripts name them (FSDP wrap
    policies) but do not call their methods. Bases of exported classes are kept whole."""
    exported = set()
    for m in rec.modules.values():
        if m["lazy"]:
            exported.update(m["names"].values())
    stack = list(exported)
    while stack:
        o = rec.objects.get(stack.pop())
        if o and o.get("kind") == "class":
            for b in o["bases"]:
                if b not in exported:
                    exported.add(b)
                    stack.append(b)
    for key, o in rec.objects.items():
        if o.get("kind") == "class" and o.get("cut") and key not in exported:
            o["methods"] = {}
            o["classmethods"] = []


def main(argv):
    args = list(argv)
    dep_file = None
    if "--deprecations" in args:
        i = args.index("--deprecations")
        dep_file = args[i + 1]
        del args[i:i + 2]
    package, out_path = args
    warnings.simplefilter("ignore")
    os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    rec = Recorder(package)
    names = module_names(package)
    log(f"{package}: {len(names)} modules")
    real_stdout = sys.stdout
    sys.stdout = io.StringIO()  # modules that print on import must not garble anything
    try:
        for i, name in enumerate(names):
            rec.record_module(name)
            if (i + 1) % 200 == 0:
                log(f"{package}: {i + 1}/{len(names)} modules, {len(rec.objects)} objects")
    finally:
        sys.stdout = real_stdout
    if package == "transformers":
        trim_internal_model_classes(rec)
    data = {
        "format": 1,
        "package": package,
        "version": dist_version(package),
        "modules": rec.modules,
        "objects": rec.objects,
        "deprecations": {**rec.shim_warnings, **harvest_deprecations(dep_file, package)},
        "unimportable": rec.unimportable,
        "stats": {"modules": len(rec.modules), "objects": len(rec.objects),
                  "unimportable_modules": len(rec.unimportable), "unavailable_names": rec.failed_names},
    }
    text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text + "\n")
    log(f"{package}: wrote {out_path} ({len(text)} bytes, {len(rec.modules)} modules, {len(rec.objects)} objects,"
        f" {len(rec.unimportable)} unimportable modules, {rec.failed_names} unavailable names)")


if __name__ == "__main__":
    main(sys.argv[1:])

"""Which snapshot's API data the surface layer uses, and loading it (docs/snapshots.md).

The data of a package is read only when that package is first imported; each JSON file is cached
as a marshal blob (much faster to load than JSON) under PYTHONPYCACHEPREFIX or the temp folder,
keyed by the file's path, size and mtime."""
import gc
import json
import marshal
import os
import re
import sys
import tempfile

SIMLIBS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COVERED = frozenset(("transformers", "datasets", "trl", "peft", "accelerate", "evaluate", "tokenizers", "huggingface_hub", "torch"))
_SNAPSHOTS_JSON = os.path.join(os.path.dirname(SIMLIBS), "snapshots", "snapshots.json")


def _snapshots():
    try:
        with open(_SNAPSHOTS_JSON, encoding="utf-8") as f:
            return json.load(f).get("snapshots", [])
    except (OSError, ValueError):
        return []


def _given_versions():
    try:
        v = json.loads(os.environ.get("FORGEENV_LIBRARY_VERSIONS") or "{}")
        return v if isinstance(v, dict) else {}
    except ValueError:
        return {}


def select():
    """(api_dir, snapshot id) or None when the layer is off (no snapshot or no data for it)."""
    api_dir = os.environ.get("FORGEENV_API_DIR") or os.path.join(os.path.dirname(SIMLIBS), "snapshots", "api")
    snap = os.environ.get("FORGEENV_SNAPSHOT")
    if not snap:
        from _forgeenv_sim.versions import DEFAULTS

        tv = _given_versions().get("transformers") or DEFAULTS["transformers"]
        snap = next((s.get("id") for s in _snapshots() if s.get("versions", {}).get("transformers") == tv), None)
    elif not os.environ.get("FORGEENV_LIBRARY_VERSIONS"):
        # A snapshot given alone also fixes the versions our hand-written code and __version__ report.
        hit = next((s for s in _snapshots() if s.get("id") == snap), None)
        if hit:
            os.environ["FORGEENV_LIBRARY_VERSIONS"] = json.dumps(
                {k: v for k, v in hit.get("versions", {}).items() if re.fullmatch(r"\d+(\.\d+)*", str(v))}
            )
    if not snap or not os.path.isdir(os.path.join(api_dir, snap)):
        return None
    return api_dir, snap


def _cache_dir():
    base = os.environ.get("PYTHONPYCACHEPREFIX") or tempfile.gettempdir()
    return os.path.join(base, "forgeenv-surface")


class LazyMap:
    """A read-only mapping whose values are marshal chunks of one blob file, decoded on first use."""

    __slots__ = ("_index", "_path", "_cache")

    def __init__(self, index, path):
        self._index, self._path, self._cache = index, path, {}

    def get(self, key, default=None):
        v = self._cache.get(key, _NONE)
        if v is not _NONE:
            return v
        span = self._index.get(key)
        if span is None:
            return default
        with open(self._path, "rb") as f:
            f.seek(span[0])
            v = _unmarshal(f.read(span[1]))
        self._cache[key] = v
        return v

    def __contains__(self, key):
        return key in self._index

    def __iter__(self):
        return iter(self._index)

    def __len__(self):
        return len(self._index)


_NONE = object()


def _unmarshal(blob):
    # Many small containers at once: without this the cyclic GC runs over the whole heap repeatedly.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return marshal.loads(blob)
    finally:
        if enabled:
            gc.enable()


def _build_cache(path, ipath, bpath):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    parents = set()
    for m in data.get("modules") or {}:
        parts = m.split(".")
        parents.update(".".join(parts[:i]) for i in range(1, len(parts)))
    index = {"version": data.get("version"), "deprecations": data.get("deprecations", {}), "modules": {}, "objects": {},
             "parents": sorted(parents)}
    tmp_b, tmp_i = "%s.%d.tmp" % (bpath, os.getpid()), "%s.%d.tmp" % (ipath, os.getpid())
    with open(tmp_b, "wb") as f:
        for section in ("modules", "objects"):
            for key, value in (data.get(section) or {}).items():
                chunk = marshal.dumps(value)
                index[section][key] = (f.tell(), len(chunk))
                f.write(chunk)
    with open(tmp_i, "wb") as f:
        marshal.dump(index, f)
    os.replace(tmp_b, bpath)
    os.replace(tmp_i, ipath)  # written last: an index always has its blob


def load(api_dir, snap, package):
    """The package's API data (modules and objects as LazyMaps), or None without a file for it."""
    path = os.path.join(api_dir, snap, package + ".json")
    try:
        st = os.stat(path)
    except OSError:
        return None
    tag = "v2-%s-%s-%d-%d-%08x" % (snap, package, st.st_size, st.st_mtime_ns, hash_path(os.path.abspath(path)))
    base = os.path.join(_cache_dir(), tag)
    ipath, bpath = base + ".idx", base + ".blob"
    for attempt in (0, 1):
        try:
            with open(ipath, "rb") as f:
                index = _unmarshal(f.read())
            return {"version": index["version"], "deprecations": index["deprecations"], "parents": index["parents"],
                    "modules": LazyMap(index["modules"], bpath), "objects": LazyMap(index["objects"], bpath)}
        except (OSError, EOFError, ValueError, TypeError, KeyError):
            if attempt:
                break
            try:
                os.makedirs(_cache_dir(), exist_ok=True)
                _build_cache(path, ipath, bpath)
            except OSError:
                break
    with open(path, encoding="utf-8") as f:  # no writable cache: plain JSON
        return json.load(f)


def hash_path(p):
    # hash() is salted per process; this small stable hash keeps cache names apart per data folder.
    h = 0
    for ch in p:
        h = (h * 131 + ord(ch)) & 0xFFFFFFFF
    return h


class Package:
    """One package's data plus the indexes the surface needs (built lazily)."""

    def __init__(self, name, data):
        self.name = name
        self.version = data.get("version")
        self.modules = data.get("modules", {})
        self.objects = data.get("objects", {})
        self.deprecations = data.get("deprecations", {})
        self._deps = None
        self._parents = set(data["parents"]) if "parents" in data else None

    def module(self, name):
        """The data's entry for a module; a package only implied by recorded submodules gets an empty one."""
        info = self.modules.get(name)
        if info is None:
            if self._parents is None:
                self._parents = set()
                for m in self.modules:
                    parts = m.split(".")
                    self._parents.update(".".join(parts[:i]) for i in range(1, len(parts)))
            if name in self._parents:
                info = {"file": name.replace(".", "/") + "/__init__.py", "names": {}}
        return info

    def deps(self):
        """{(public path or object key, member or None, kwarg or None): (category, message)}."""
        if self._deps is None:
            self._deps = {}
            for key, d in self.deprecations.items():
                m = re.fullmatch(r"([\w.]+?)(?:\((\w*)=?\))?", key)
                if not m:
                    continue
                # "pkg.Name(kw=)": that keyword; "pkg.Name()": any call; "pkg.Name": the access.
                path, kw = m.group(1), (m.group(2) or "") if "(" in key else None
                entry = (d.get("category") or "FutureWarning", d.get("message") or "")
                # A harvested warning that does not name the API it is filed under came from something
                # else the probe did (e.g. tokenizer loading): not this API's deprecation. An empty message
                # names nothing else (datasets 2.x's @deprecated on Dataset.prepare_for_task really is empty).
                word = kw or path.rpartition(".")[2]
                stem = re.sub(r"(Config|Arguments|Args|Trainer)$", "", word)  # "Bone will be removed" names BoneConfig
                if word and entry[1] and word.lower() not in entry[1].lower() and not (stem and stem.lower() in entry[1].lower()):
                    continue
                target = self._split(path)
                if target is not None:
                    self._deps[(target[0], target[1], kw)] = entry
                self._deps.setdefault(("path", path, kw), entry)
        return self._deps

    def _split(self, path):
        """'transformers.TrainingArguments.to_dict' -> ('transformers.training_args.TrainingArguments', 'to_dict')."""
        parts = path.split(".")
        for i in range(len(parts) - 1, 0, -1):
            mod = self.modules.get(".".join(parts[:i]))
            if mod is None:
                continue
            ref = mod.get("names", {}).get(parts[i])
            if not ref:
                # A harvested path names the package the probe imported from; the object may live in a
                # submodule only (accelerate.utils.is_tpu_available is accelerate.utils.imports'): the one
                # submodule that defines it.
                ref = self._only_submodule_ref(".".join(parts[:i]), parts[i])
            if not ref or ref.startswith(("module:", "value:")):
                return None
            rest = parts[i + 1 :]
            return ref, (rest[0] if rest else None)
        return None

    def _only_submodule_ref(self, modname, name):
        prefix = modname + "."
        refs = {(self.modules.get(k) or {}).get("names", {}).get(name) for k in self.modules if k.startswith(prefix)}
        refs.discard(None)
        return refs.pop() if len(refs) == 1 else None


_PACKAGES = {}
_SELECTED = []


def package(name):
    """The Package for a covered top-level name, or None (no data: our stand-in behaves as before)."""
    if name in _PACKAGES:
        return _PACKAGES[name]
    pkg = None
    if _SELECTED and name in COVERED:
        try:
            data = load(_SELECTED[0][0], _SELECTED[0][1], name)
            pkg = Package(name, data) if isinstance(data, dict) else None
        except (OSError, ValueError) as exc:
            sys.stderr.write("forgeenv-sim: ignoring unreadable API data for %s (%s)\n" % (name, exc))
    _PACKAGES[name] = pkg
    return pkg


_RENAMED = []


def renamed(key):
    """{old kwarg: {"new", "category", "message"}} that a real renaming decorator accepts for the
    callable `key` ("<object key>.<method>" or a function's key), from api/<snapshot>/_renamed_kwargs.json."""
    if not _RENAMED:
        data = {}
        if _SELECTED:
            try:
                with open(os.path.join(_SELECTED[0][0], _SELECTED[0][1], "_renamed_kwargs.json"), encoding="utf-8") as f:
                    data = json.load(f)
            except (OSError, ValueError):
                data = {}
        _RENAMED.append(data if isinstance(data, dict) else {})
    v = _RENAMED[0].get(key)
    return v if isinstance(v, dict) else None


def find_object(key):
    """The recorded object for a fully qualified key, looked up in its own package's data."""
    pkg = package(key.partition(".")[0])
    return pkg.objects.get(key) if pkg is not None else None

"""ForgeEnv's CPU runtime shims (real mode). A task that make-task adapted to this machine's CPU names
them in tasks.json `runtime.shims`; every run of that task (original, broken, repair, verifier) gets
them, through sitecustomize.py, and nothing else does. Each shim replaces only what a GPU-only run
would need, and only while CUDA is unavailable; it never catches an error, and keyword arguments
are passed on to the library as given (a keyword a release removed still fails as it would):

- cuda-to-cpu: `.cuda()` and `.to(<a CUDA device>)` of tensors and modules keep them on the CPU;
  `from_pretrained(device_map=<a CUDA device, a map of them, or "auto">)` puts the model on the CPU; the
  `torch.cuda` queries a script makes about its GPU answer for this machine (`get_device_capability`
  (0, 0), `get_device_name` "cpu", `mem_get_info` the host's memory, `set_device`/`synchronize` and
  the peak-memory resets do nothing, `current_device` 0). `torch.cuda.is_available()` stays False and `device_count()` 0.
- no-quantization: a bitsandbytes 8-/4-bit quantization requested for loading (`BitsAndBytesConfig`,
  `load_in_8bit=True` where the release still accepts it) is dropped at the library's quantizer
  (transformers < 4.37, which has none, from from_pretrained's keywords, which it accepts) and
  the model is loaded in float32 (its config keeps no `quantization_config`); a checkpoint saved
  quantized still fails. BitsAndBytesConfig's check of the installed bitsandbytes version (its last
  check) is skipped when bitsandbytes is not installed. When bitsandbytes is not installed, the script's own `import bitsandbytes`
  (not a library's probe) gets the CPU stand-in of _forgeenv_stubs/bitsandbytes: torch's optimizers
  for `bnb.optim.*8bit`/`Paged*`, `torch.nn.Linear` for `bnb.nn.Linear8bitLt`/`Linear4bit`.
- trained-model-evidence: for a script that saves no model, the trained model is saved at exit into
  the run folder's .forgeenv-evidence/ for the verifier (_forgeenv_evidence.py says how and its limits).
- no-mixed-precision: `TrainingArguments(fp16/bf16/…_full_eval/tf32=True)` set in the script's code
  train in float32, and `Accelerator(mixed_precision="fp16")` in full precision.
- no-hub-push: not a CPU adaptation, an offline one. huggingface_hub's Hub writes (HfApi's
  create_repo, create_commit, upload_file, upload_folder, upload_large_folder, create_branch,
  create_tag, and whoami, which names the repo's owner) send nothing and print one
  `forgeenv no-hub-push:` line each on stderr; the script-facing APIs around them
  (`PushToHubMixin.push_to_hub`, `Trainer.push_to_hub`) run as the release has them, saving
  locally as they do. Each stubbed call first binds its arguments to the release's own
  signature, so a keyword the release does not take fails as it would. Git-based
  `Repository` clones (transformers < 4.3x Trainer) are not covered.
- offline-hub-queries: an offline one too. `huggingface_hub.file_exists` asks the Hub whether a repo has
  a file and, offline, raises (`OfflineModeIsEnabled`); libraries that call it unguarded (PEFT's
  adapter loading before its offline check) then cannot load what the offline hub holds. With
  HF_HUB_OFFLINE set, it answers from the local hub cache instead (`try_to_load_from_cache`: True when
  the file is cached), after binding its arguments to the release's own signature. Online it runs as
  shipped.
- offline-hub-files: an offline one too. A URL of a hub repo's file
  (`https://huggingface.co/[datasets/|spaces/]<repo>/resolve/<revision>/<path>`) that the script fetches itself,
  or hands to a library that does (`requests.get`, `urllib.request.urlopen`: a processor given an example
  image URL), is answered from the local hub cache when HF_HUB_OFFLINE is set and the cache holds that file
  (make-task puts a synthetic one there, of the kind its extension names). Any other URL, and a hub file the
  cache lacks, goes to the network as shipped (and fails offline as it would).
"""
import functools
import importlib.abc
import importlib.metadata
import importlib.util
import os
import sys

from _forgeenv_after_import import AfterImportLoader

SHIMS = (
    "cuda-to-cpu",
    "no-quantization",
    "no-mixed-precision",
    "trained-model-evidence",
    "no-hub-push",
    "offline-hub-queries",
    "offline-hub-files",
)
_active = set()
# One entry per from_pretrained in progress: whether its quantization was dropped.
_dropped = []
_STUBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_forgeenv_stubs")


def install(spec):
    names = {s.strip() for s in spec.split(",") if s.strip()}
    unknown = sorted(names - set(SHIMS))
    if unknown:
        raise ValueError("unknown shim(s) %s (known: %s)" % (", ".join(unknown), ", ".join(SHIMS)))
    if not names or _active:
        return
    _active.update(names)
    sys.meta_path.insert(0, _Finder())
    for name, hook in _HOOKS.items():
        if name in sys.modules:
            hook(sys.modules[name])


def _cuda_available():
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_available())
    except Exception:  # noqa: BLE001
        return False


# --- cuda-to-cpu -------------------------------------------------------------------------------

def _is_cuda(d):
    if isinstance(d, bool):
        return False
    if isinstance(d, int):
        return d >= 0  # a bare index is a CUDA device to torch
    if isinstance(d, str):
        return d == "cuda" or d.startswith("cuda:")
    torch = sys.modules.get("torch")
    return torch is not None and isinstance(d, torch.device) and d.type == "cuda"


def _cpu(d):
    if not _is_cuda(d):
        return d
    torch = sys.modules["torch"]
    return torch.device("cpu") if isinstance(d, torch.device) else "cpu"


def _to_cpu_args(args, kwargs):
    if args:
        args = (_cpu(args[0]),) + tuple(args[1:])
    if "device" in kwargs:
        kwargs["device"] = _cpu(kwargs["device"])
    return args, kwargs


def _patch_torch(torch):
    if "cuda-to-cpu" not in _active or _cuda_available():
        return
    tensor_to, module_to = torch.Tensor.to, torch.nn.Module.to

    @functools.wraps(tensor_to)
    def to(self, *args, **kwargs):
        args, kwargs = _to_cpu_args(args, kwargs)
        return tensor_to(self, *args, **kwargs)

    @functools.wraps(torch.Tensor.cuda)
    def cuda(self, device=None, non_blocking=False, **kwargs):
        return tensor_to(self, "cpu")

    @functools.wraps(module_to)
    def module_to_cpu(self, *args, **kwargs):
        args, kwargs = _to_cpu_args(args, kwargs)
        return module_to(self, *args, **kwargs)

    @functools.wraps(torch.nn.Module.cuda)
    def module_cuda(self, device=None):
        return self

    torch.Tensor.to, torch.Tensor.cuda = to, cuda
    torch.nn.Module.to, torch.nn.Module.cuda = module_to_cpu, module_cuda

    def host_memory():
        total = free = 0
        try:
            with open("/proc/meminfo") as f:
                info = dict(line.split(":", 1) for line in f if ":" in line)
            total = int(info["MemTotal"].split()[0]) * 1024
            free = int(info.get("MemAvailable", info["MemFree"]).split()[0]) * 1024
        except Exception:  # noqa: BLE001
            pass
        return free, total

    class _Properties:
        name = "cpu"
        major = minor = 0
        multi_processor_count = os.cpu_count() or 1

        @property
        def total_memory(self):
            return host_memory()[1]

    c = torch.cuda
    c.get_device_capability = lambda device=None: (0, 0)
    c.get_device_name = lambda device=None: "cpu"
    c.get_device_properties = lambda device=None: _Properties()
    c.mem_get_info = lambda device=None: host_memory()
    c.set_device = lambda device: None
    c.current_device = lambda: 0
    c.synchronize = lambda device=None: None
    # The peak-memory gauges read 0 without CUDA, but resetting them raises ("invalid argument to
    # reset_peak_memory_stats"): a script's memory tracker resets them around its training loop.
    for name in ("reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached", "reset_accumulated_memory_stats"):
        if hasattr(c, name):
            setattr(c, name, lambda device=None: None)


def _cpu_device_map(m):
    if isinstance(m, dict):
        return {k: _cpu(v) for k, v in m.items()}
    # "auto" and the other strategies spread the model over GPUs by their memory (a script's
    # `max_memory` names GPU budgets): with no GPU the whole model is on the CPU.
    if m in ("auto", "balanced", "balanced_low_0", "sequential"):
        return {"": "cpu"}
    return _cpu(m)


# --- no-quantization ---------------------------------------------------------------------------

def _is_bnb(qc):
    if qc is None:
        return False
    get = qc.get if isinstance(qc, dict) else (lambda k, d=None: getattr(qc, k, d))
    method = get("quant_method")
    method = getattr(method, "value", method)
    return method == "bitsandbytes" or bool(get("load_in_8bit")) or bool(get("load_in_4bit"))


def _patch_from_pretrained(mod):
    cls = getattr(mod, "PreTrainedModel", None)
    raw = cls.__dict__.get("from_pretrained") if cls is not None else None
    if raw is None or getattr(raw, "_forgeenv_shim", False):
        return
    func = raw.__func__

    @functools.wraps(func)
    def from_pretrained(klass, *args, **kwargs):
        if "cuda-to-cpu" in _active and "device_map" in kwargs and not _cuda_available():
            kwargs["device_map"] = _cpu_device_map(kwargs["device_map"])
        _dropped.append(False)
        if "no-quantization" in _active and not _has_quantizers() and not _cuda_available():
            _dropped[-1] = _drop_inline_quantization(kwargs)
        try:
            model = func(klass, *args, **kwargs)
        finally:
            dropped = _dropped.pop()
        if dropped:
            _unquantized(model)
        return model

    shim = classmethod(from_pretrained)
    from_pretrained._forgeenv_shim = True
    cls.from_pretrained = shim


def _has_quantizers():
    """transformers >= 4.37 quantizes through transformers.quantizers (patched at AutoHfQuantizer)."""
    try:
        return importlib.util.find_spec("transformers.quantizers") is not None
    except (ImportError, ValueError):
        return False


def _drop_inline_quantization(kwargs):
    """transformers < 4.37 reads the quantization from from_pretrained's own keywords (which those
    releases accept): a bitsandbytes request is taken out of them before the library reads them."""
    qc = kwargs.get("quantization_config")
    asked = _is_bnb(qc) or bool(kwargs.get("load_in_8bit")) or bool(kwargs.get("load_in_4bit"))
    if not asked or (qc is not None and not _is_bnb(qc)):
        return False
    kwargs.pop("quantization_config", None)
    try:
        import inspect

        from transformers import BitsAndBytesConfig

        names = set(inspect.signature(BitsAndBytesConfig).parameters) - {"kwargs"}
    except Exception:  # noqa: BLE001
        names = {"load_in_8bit", "load_in_4bit"}
    for name in names | {"load_in_8bit", "load_in_4bit"}:
        kwargs.pop(name, None)
    return True


def _unquantized(model):
    torch = sys.modules["torch"]
    config = getattr(model, "config", None)
    if config is not None and hasattr(config, "quantization_config"):
        try:
            delattr(config, "quantization_config")
        except AttributeError:
            pass
    if any(p.dtype in (torch.float16, torch.bfloat16) for p in model.parameters()):
        model.to(torch.float32)


def _patch_quantizer(mod):
    cls = getattr(mod, "AutoHfQuantizer", None)
    raw = cls.__dict__.get("from_config") if cls is not None else None
    if raw is None or "no-quantization" not in _active:
        return
    func = raw.__func__

    @functools.wraps(func)
    def from_config(klass, quantization_config, **kwargs):
        # Quantizing on load needs bitsandbytes on a GPU: the weights stay unquantized. A checkpoint
        # saved quantized (pre_quantized) cannot be loaded otherwise: left to fail as it would.
        if not kwargs.get("pre_quantized", False) and _is_bnb(quantization_config) and not _cuda_available():
            if _dropped:
                _dropped[-1] = True
            return None
        return func(klass, quantization_config, **kwargs)

    cls.from_config = classmethod(from_config)


def _patch_bnb_config(mod):
    cls = getattr(mod, "BitsAndBytesConfig", None)
    post = getattr(cls, "post_init", None)
    if post is None or getattr(post, "_forgeenv_shim", False):
        return

    @functools.wraps(post)
    def post_init(self):
        # Its last check reads bitsandbytes' installed version (transformers 4.3x-4.5x); every other
        # check has run by then. Not installed: the quantization is dropped anyway, so no version.
        try:
            return post(self)
        except importlib.metadata.PackageNotFoundError as e:
            # No metadata: bitsandbytes is not installed (the script's import may hold the stand-in).
            if getattr(e, "name", None) != "bitsandbytes":
                raise

    post_init._forgeenv_shim = True
    cls.post_init = post_init


def _from_the_script():
    """Whether the import in progress is the script's own (or a module of its run folder), not a library's."""
    cwd = os.path.realpath(os.getcwd())
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if name.startswith("<frozen importlib") or os.sep + "importlib" + os.sep in name:
            f = f.f_back
            continue
        if f.f_globals.get("__name__") == "__main__":
            return True
        return os.path.realpath(name).startswith(cwd + os.sep)
    return False


# --- no-mixed-precision ------------------------------------------------------------------------

def _patch_training_args(mod):
    cls = getattr(mod, "TrainingArguments", None)
    post = getattr(cls, "__post_init__", None)
    if post is None or getattr(post, "_forgeenv_shim", False):
        return

    @functools.wraps(post)
    def __post_init__(self):
        if not _cuda_available():
            for name in ("fp16", "bf16", "fp16_full_eval", "bf16_full_eval", "tf32"):
                if getattr(self, name, None) is True:
                    setattr(self, name, False)
        return post(self)

    __post_init__._forgeenv_shim = True
    cls.__post_init__ = __post_init__


def _patch_accelerator(mod):
    cls = getattr(mod, "Accelerator", None)
    init = getattr(cls, "__init__", None)
    if init is None or getattr(init, "_forgeenv_shim", False):
        return

    @functools.wraps(init)
    def __init__(self, *args, **kwargs):
        if kwargs.get("mixed_precision") == "fp16" and not _cuda_available():
            kwargs["mixed_precision"] = "no"
        return init(self, *args, **kwargs)

    __init__._forgeenv_shim = True
    cls.__init__ = __init__


# --- no-hub-push -------------------------------------------------------------------------------

_HUB_WRITES = ("create_repo", "create_commit", "upload_file", "upload_folder", "upload_large_folder", "create_branch", "create_tag", "whoami")


class _NotPushed(str):
    """What a stubbed upload returns: the URL it would have had, with CommitInfo's usual attributes."""

    def __new__(cls, url, repo_id):
        self = super().__new__(cls, url)
        self.commit_url = self.repo_url = url
        self.repo_id = repo_id
        self.oid = "0" * 40
        self.commit_message = self.commit_description = ""
        self.pr_url = self.pr_revision = self.pr_num = None
        return self


def _hub_result(mod, name, repo_id):
    url = "https://huggingface.co/%s" % (repo_id or "forgeenv-offline/not-pushed")
    if name == "whoami":
        return {"type": "user", "name": "forgeenv-offline", "orgs": []}
    if name == "create_repo":
        repo_url = getattr(mod, "RepoUrl", None)
        try:
            return repo_url(url) if repo_url is not None else url
        except Exception:  # noqa: BLE001 - an era whose RepoUrl parses differently gets the plain URL
            return url
    if name in ("create_branch", "create_tag"):
        return None
    return _NotPushed(url, repo_id)


def _hub_write_stub(mod, name, func):
    import inspect

    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        sig = None

    @functools.wraps(func)
    def stub(*args, **kwargs):
        # Bound to the release's own signature: a keyword it does not take fails as it would.
        bound = sig.bind(*args, **kwargs).arguments if sig is not None else kwargs
        repo_id = bound.get("repo_id") or bound.get("name")
        sys.stderr.write("forgeenv no-hub-push: %s(%s) not sent to the Hub (offline run)\n" % (name, repo_id or ""))
        return _hub_result(mod, name, repo_id)

    stub._forgeenv_shim = True
    return stub


def _patch_hub_writes(mod):
    cls = getattr(mod, "HfApi", None)
    if cls is None:
        return
    for name in _HUB_WRITES:
        func = cls.__dict__.get(name)
        if func is None or getattr(func, "_forgeenv_shim", False):
            continue
        setattr(cls, name, _hub_write_stub(mod, name, func))
    # The module's aliases (`create_repo = api.create_repo`) were bound at import: rebind them.
    api = getattr(mod, "api", None)
    if isinstance(api, cls):
        for name in _HUB_WRITES:
            if hasattr(mod, name):
                setattr(mod, name, getattr(api, name))


# --- offline-hub-queries -----------------------------------------------------------------------


def _offline():
    return os.environ.get("HF_HUB_OFFLINE", "").strip().upper() in ("1", "ON", "YES", "TRUE")


def _cached_file_exists(func):
    import inspect

    sig = inspect.signature(func)

    @functools.wraps(func)
    def file_exists(*args, **kwargs):
        bound = sig.bind(*args, **kwargs).arguments  # a keyword the release does not take fails as it would
        if not _offline():
            return func(*args, **kwargs)
        from huggingface_hub.file_download import try_to_load_from_cache

        found = try_to_load_from_cache(
            bound["repo_id"], bound["filename"], revision=bound.get("revision"), repo_type=bound.get("repo_type")
        )
        return isinstance(found, str)

    file_exists._forgeenv_shim = True
    return file_exists


def _patch_hub_queries(mod):
    cls = getattr(mod, "HfApi", None)
    func = cls.__dict__.get("file_exists") if cls is not None else None
    if func is None or getattr(func, "_forgeenv_shim", False):
        return
    cls.file_exists = _cached_file_exists(func)
    # The module's alias (`file_exists = api.file_exists`) was bound at import: rebind it.
    api = getattr(mod, "api", None)
    if isinstance(api, cls) and hasattr(mod, "file_exists"):
        mod.file_exists = api.file_exists


# --- offline-hub-files -------------------------------------------------------------------------

_HUB_FILE_URL = None


def _cached_hub_file(url):
    """The local hub cache's copy of the hub file `url` names, or None (not a hub file URL, not cached, online)."""
    global _HUB_FILE_URL
    if not _offline() or not isinstance(url, str):
        return None
    if _HUB_FILE_URL is None:
        import re

        _HUB_FILE_URL = re.compile(
            r"^https?://(?:www\.)?huggingface\.co/(?:(datasets|spaces)/)?([A-Za-z0-9][\w.-]*(?:/[\w.-]+)?)/resolve/([\w.-]+)/([^?#]+)"
        )
    m = _HUB_FILE_URL.match(url)
    if m is None:
        return None
    from urllib.parse import unquote

    from huggingface_hub import try_to_load_from_cache

    repo_type = {"datasets": "dataset", "spaces": "space"}.get(m.group(1), "model")
    found = try_to_load_from_cache(m.group(2), unquote(m.group(4)), revision=m.group(3), repo_type=repo_type)
    return found if isinstance(found, str) and os.path.isfile(found) else None


def _content_type(path):
    import mimetypes

    return mimetypes.guess_type(path)[0] or "application/octet-stream"


def _patch_requests_adapter(mod):
    cls = getattr(mod, "HTTPAdapter", None)
    send = getattr(cls, "send", None)
    if send is None or getattr(send, "_forgeenv_shim", False):
        return

    @functools.wraps(send)
    def shim_send(self, request, *args, **kwargs):
        path = _cached_hub_file(getattr(request, "url", None))
        if path is None or (getattr(request, "method", "GET") or "GET").upper() not in ("GET", "HEAD"):
            return send(self, request, *args, **kwargs)
        import io

        import requests

        with open(path, "rb") as f:
            data = f.read()
        resp = requests.models.Response()
        resp.status_code, resp.reason, resp.url, resp.request, resp.connection = 200, "OK", request.url, request, self
        resp.headers = requests.structures.CaseInsensitiveDict({"Content-Length": str(len(data)), "Content-Type": _content_type(path)})
        resp.raw = io.BytesIO(b"" if request.method.upper() == "HEAD" else data)
        return resp

    shim_send._forgeenv_shim = True
    cls.send = shim_send


def _patch_urlopen(mod):
    urlopen = getattr(mod, "urlopen", None)
    if urlopen is None or getattr(urlopen, "_forgeenv_shim", False):
        return

    @functools.wraps(urlopen)
    def shim_urlopen(url, *args, **kwargs):
        full = url.full_url if isinstance(url, mod.Request) else url
        path = _cached_hub_file(full)
        if path is None:
            return urlopen(url, *args, **kwargs)
        import email.message
        import io
        import urllib.response

        with open(path, "rb") as f:
            data = f.read()
        headers = email.message.Message()
        headers["Content-Length"] = str(len(data))
        headers["Content-Type"] = _content_type(path)
        return urllib.response.addinfourl(io.BytesIO(data), headers, full, 200)

    shim_urlopen._forgeenv_shim = True
    mod.urlopen = shim_urlopen


def _when(shims, hook):
    def run(mod):
        if _active & set(shims):
            hook(mod)
    return run


_HOOKS = {
    "torch": _when(["cuda-to-cpu"], _patch_torch),
    "transformers.modeling_utils": _when(["cuda-to-cpu", "no-quantization"], _patch_from_pretrained),
    "transformers.quantizers.auto": _when(["no-quantization"], _patch_quantizer),
    "transformers.utils.quantization_config": _when(["no-quantization"], _patch_bnb_config),
    "transformers.training_args": _when(["no-mixed-precision"], _patch_training_args),
    "accelerate.accelerator": _when(["no-mixed-precision"], _patch_accelerator),
    "huggingface_hub.hf_api": lambda mod: (
        _when(["no-hub-push"], _patch_hub_writes)(mod),
        _when(["offline-hub-queries"], _patch_hub_queries)(mod),
    ),
    "requests.adapters": _when(["offline-hub-files"], _patch_requests_adapter),
    "urllib.request": _when(["offline-hub-files"], _patch_urlopen),
    # Not a CPU adaptation: the evidence of training for a script that saves no model (_forgeenv_evidence.py).
    "torch.optim.optimizer": _when(["trained-model-evidence"], lambda mod: __import__("_forgeenv_evidence").install_hook(mod)),
}


class _Finder(importlib.abc.MetaPathFinder):
    def _real(self, name, path, target):
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(name, path, target)
            if spec is not None:
                return spec
        return None

    def find_spec(self, name, path=None, target=None):
        if name == "bitsandbytes" and "no-quantization" in _active:
            spec = self._real(name, path, target)
            if spec is None and _from_the_script():
                stub = os.path.join(_STUBS, "bitsandbytes")
                return importlib.util.spec_from_file_location(name, os.path.join(stub, "__init__.py"), submodule_search_locations=[stub])
            return spec
        hook = _HOOKS.get(name)
        if hook is None:
            return None
        spec = self._real(name, path, target)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = AfterImportLoader(spec.loader, hook)
        return spec


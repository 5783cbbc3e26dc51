"""Runs drift-catalog probes in ONE interpreter and records what each did.

    python probe_runner.py --catalog catalog.json [--ids a,b] [--forms old,new] --out results.json
                           [--deprecations deprecations.json]

--deprecations also writes, per entry whose old form ran, {"api", "old": {"ok", "warnings"}}: the
shape resources/snapshots/introspect.py --deprecations reads to fill an API file's "deprecations".

Every probe is plain Python executed in a fresh namespace, in a fresh temporary working directory,
under warnings.catch_warnings(record=True) with simplefilter('always') and a per-probe alarm.
Imports are paid once per process, so the libraries the catalog names are imported up front with
their import-time warnings discarded (otherwise the first probe would see them and later ones not).
The output JSON has no timings or temporary paths, so the same libraries give the same bytes.
"""
import argparse
import builtins
import io
import json
import logging
import os
import re
import shutil
import signal
import sys
import tempfile
import warnings

# Offline and quiet before any library is imported.
for _k, _v in {
    "HF_HUB_OFFLINE": "1",
    "HF_DATASETS_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    "TOKENIZERS_PARALLELISM": "false",
    "WANDB_MODE": "disabled",
    "DISABLE_MLFLOW_INTEGRATION": "TRUE",
    "TRANSFORMERS_NO_ADVISORY_WARNINGS": "1",
}.items():
    os.environ.setdefault(_k, _v)

LIBRARIES = ("transformers", "datasets", "trl", "peft", "accelerate", "evaluate", "tokenizers", "huggingface_hub")
TIMEOUT_SECONDS = 60
# Warnings that speak about an API's lifecycle; anything else a library says while a probe runs
# (initialisation notices, hardware hints) does not relate to the drift being probed.
LIFECYCLE = re.compile(r"deprecat|removed|no longer|not supported|anymore|renamed|instead|obsolete|legacy", re.I)
LIFECYCLE_CATEGORIES = (DeprecationWarning, PendingDeprecationWarning, FutureWarning)


class ProbeTimeout(BaseException):
    """Raised by the alarm; a BaseException so that probes' `except Exception` cannot swallow it."""


def _on_alarm(signum, frame):
    raise ProbeTimeout(f"probe did not finish within {TIMEOUT_SECONDS} s")


def qualified_name(exc_type):
    """The exception class as a traceback's last line names it."""
    module = getattr(exc_type, "__module__", "builtins")
    qualname = getattr(exc_type, "__qualname__", exc_type.__name__)
    return qualname if module in ("builtins", "__main__", None) else f"{module}.{qualname}"


def package_dirs():
    """Directories of the installed HF packages (real or simulated), for attributing warnings."""
    dirs = []
    # _forgeenv_sim: the simulated packages' shared helpers, which warn on their behalf.
    for name in LIBRARIES + ("_forgeenv_sim",):
        mod = sys.modules.get(name)
        path = getattr(mod, "__file__", None) if mod else None
        if path:
            dirs.append(os.path.dirname(os.path.abspath(path)) + os.sep)
    return dirs


def versions():
    out = {}
    try:
        import importlib.metadata as md
    except ImportError:  # pragma: no cover
        md = None
    for name in LIBRARIES + ("torch",):
        mod = sys.modules.get(name)
        v = getattr(mod, "__version__", None) if mod else None
        if v is None and md is not None:
            try:
                v = md.version(name.replace("_", "-"))
            except Exception:
                v = None
        out[name] = v if isinstance(v, str) else None
    return out


def preimport(entries):
    wanted = sorted({e.get("library") for e in entries if e.get("library") in LIBRARIES})
    # trl/peft import transformers and torch; importing them here keeps import-time noise out of probes.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ["torch"] + wanted:
            try:
                __import__(name)
            except BaseException:
                pass


class LogCapture(logging.Handler):
    def __init__(self):
        super().__init__(level=logging.WARNING)
        self.records = []

    def emit(self, record):
        try:
            self.records.append(record.getMessage())
        except Exception:
            pass


def scrub(text, tmp):
    return text.replace(os.path.realpath(tmp), "<tmp>").replace(tmp, "<tmp>") if tmp else text


def run_probe(code, label, tmp):
    """Executes one probe; returns (status, exc_type, message, warnings)."""
    namespace = {"__name__": "__main__", "__builtins__": builtins}
    probe_file = f"<probe {label}>"
    log_capture = LogCapture()
    loggers = [logging.getLogger(n) for n in LIBRARIES]
    for lg in loggers:
        lg.addHandler(log_capture)
    exc = None
    sink = io.StringIO()
    old_stdout, old_stderr = sys.stdout, sys.stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        signal.signal(signal.SIGALRM, _on_alarm)
        signal.alarm(TIMEOUT_SECONDS)
        sys.stdout, sys.stderr = sink, sink
        try:
            exec(compile(code, probe_file, "exec"), namespace)
        except KeyboardInterrupt:
            raise
        except BaseException as e:  # noqa: BLE001 - a probe's SystemExit is an outcome too
            exc = e
        finally:
            signal.alarm(0)
            sys.stdout, sys.stderr = old_stdout, old_stderr
    for lg in loggers:
        lg.removeHandler(log_capture)
    dirs = package_dirs()
    kept = []
    for w in caught:
        filename = os.path.abspath(w.filename) if not w.filename.startswith("<") else w.filename
        from_library = w.filename == probe_file or any(filename.startswith(d) for d in dirs)
        msg = scrub(str(w.message), tmp)
        related = issubclass(w.category, LIFECYCLE_CATEGORIES) or bool(LIFECYCLE.search(msg))
        if from_library and related:
            item = {"category": w.category.__name__, "message": msg}
            if item not in kept:
                kept.append(item)
    # Libraries also announce deprecations through their loggers (transformers' warning_once).
    for m in log_capture.records:
        item = {"category": "logging.WARNING", "message": scrub(m, tmp)}
        if LIFECYCLE.search(item["message"]) and item not in kept:
            kept.append(item)
    if exc is not None:
        return "raised", qualified_name(type(exc)), scrub(str(exc), tmp), kept
    return ("warned" if kept else "ok"), None, None, kept


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--catalog", required=True)
    ap.add_argument("--ids", default="")
    ap.add_argument("--forms", default="old,new")
    ap.add_argument("--out", required=True)
    ap.add_argument("--deprecations", default=None)
    args = ap.parse_args(argv)
    with open(args.catalog, encoding="utf-8") as f:
        data = json.load(f)
    entries = data["entries"] if isinstance(data, dict) else data
    ids = [s for s in args.ids.split(",") if s]
    if ids:
        by_id = {e["id"]: e for e in entries}
        unknown = [i for i in ids if i not in by_id]
        if unknown:
            print(f"probe_runner: unknown ids: {', '.join(unknown)}", file=sys.stderr)
            return 2
        entries = [by_id[i] for i in ids]
    forms = [s for s in args.forms.split(",") if s]
    for form in forms:
        if form not in ("old", "new"):
            print(f"probe_runner: unknown form {form!r} (old, new)", file=sys.stderr)
            return 2
    preimport(entries)
    home = os.getcwd()
    results = []
    for entry in entries:
        for form in forms:
            tmp = tempfile.mkdtemp(prefix="forgeenv-probe-")
            os.chdir(tmp)
            try:
                status, exc_type, message, kept = run_probe(entry[form], f"{entry['id']}:{form}", tmp)
            finally:
                os.chdir(home)
                shutil.rmtree(tmp, ignore_errors=True)
            results.append({
                "id": entry["id"],
                "form": form,
                "status": status,
                "exc_type": exc_type,
                "message": message,
                "warnings": kept,
            })
    out = {
        "format": 1,
        "python": "%d.%d" % sys.version_info[:2],
        "versions": versions(),
        "results": results,
    }
    with open(args.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    if args.deprecations:
        apis = {e["id"]: e.get("api", "") for e in entries}
        deps = [
            {"id": r["id"], "api": apis[r["id"]], "old": {"ok": r["status"] != "raised", "warnings": r["warnings"]}}
            for r in results
            if r["form"] == "old"
        ]
        with open(args.deprecations, "w", encoding="utf-8") as f:
            json.dump({"entries": deps}, f, indent=1, sort_keys=True, ensure_ascii=False)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""ForgeEnv's trained-model evidence (runtime shim `trained-model-evidence`), for tasks whose script
saves no model (a PPO loop, an accelerate example that only logs): the environment, not the script,
keeps what training produced, so the verifier has an artifact to judge.

- Every optimizer step is seen through torch's global step hook; the parameters that had a gradient
  at a step are the trained ones (a step without gradients trains nothing).
- At interpreter exit, the model that owns most trained parameters (a peft PeftModel before the
  transformers model inside it; a value-head wrapper's inner transformers model) is saved with its
  own save_pretrained into $HOME/.forgeenv-evidence/model (HOME is the run folder, read at start-up),
  beside evidence.json (the process, its optimizer steps, the trained parameters). The owners are
  looked up when the trained set grows and kept alive until exit: a model local to a function that
  has returned (`def main(): model = ...`) is still there to save.
- The process that trained nothing removes the evidence folder at exit (one the script planted
  itself), so evidence only comes from a process whose optimizer stepped; os._exit settles the
  evidence first. Training in a spawned child under a launcher that trains nothing itself is not
  covered: the launcher's exit removes the child's evidence (the task then fails to verify, never
  the other way round).

What this cannot stop (docs/verifier.md, "Limits"): the script runs in the same interpreter, so a
script written against this hook (writing perturbed weights there and leaving through posix._exit or
libc's _exit, which skip Python) is as strong as a script that saves perturbed weights itself: the
weights-moved check's known limit.
"""
import atexit
import json
import os
import shutil
import sys

DIRNAME = ".forgeenv-evidence"
_state = {"steps": 0, "trained": {}, "home": None, "pid": None, "done": False, "owners": [], "owners_for": 0}


def evidence_dir():
    return os.path.join(_state["home"], DIRNAME)


def install_hook(optimizer_module):
    """Called once torch.optim.optimizer is imported (the shims' import hook)."""
    if _state["home"] is not None:
        return
    _state["home"] = os.path.abspath(os.environ.get("HOME") or os.getcwd())
    _state["pid"] = os.getpid()
    register = getattr(optimizer_module, "register_optimizer_step_post_hook", None)
    if register is None:
        sys.stderr.write("forgeenv: trained-model evidence needs torch >= 2.0 (no global optimizer step hook)\n")
        return
    register(_after_step)
    atexit.register(_at_exit)
    # os._exit skips atexit: the evidence is settled first (a script leaving that way keeps no planted evidence).
    real_exit = os._exit

    def _exit(status):
        _at_exit()
        real_exit(status)

    os._exit = _exit


def _after_step(optimizer, args, kwargs):
    _state["steps"] += 1
    for group in optimizer.param_groups:
        for p in group["params"]:
            if getattr(p, "grad", None) is not None:
                _state["trained"][id(p)] = p
    # The models holding them, kept alive until exit: a script that trains inside a function (`def main():
    # model = ...`) has dropped its model by then, and only the bare parameters would be left to find.
    # Looked up again only when the trained set grows (the first step, a second optimizer), not every step.
    if len(_state["trained"]) != _state["owners_for"]:
        _state["owners_for"] = len(_state["trained"])
        _state["owners"] = _owners()


def _owners():
    """The transformers and peft models alive now, with how many trained parameters each holds."""
    import gc

    peft = getattr(sys.modules.get("peft"), "PeftModel", None)
    base = getattr(sys.modules.get("transformers"), "PreTrainedModel", None)
    kinds = tuple(c for c in (peft, base) if isinstance(c, type))
    if not kinds:
        return []
    found = []
    for obj in gc.get_objects():
        # By type(obj) alone: isinstance falls back to obj.__class__, which runs the object's own
        # __getattribute__ (torch's deprecated `reduce_op` warns from it), output the script never made.
        cls = type(obj)
        if not issubclass(cls, kinds):
            continue
        try:
            params = list(obj.parameters())
        except Exception:  # noqa: BLE001 - a half-built object
            continue
        hits = sum(1 for p in params if id(p) in _state["trained"])
        if hits:
            # A PeftModel first (it saves the adapter the verifier loads over its base), then the outermost model.
            found.append((hits, 1 if peft is not None and issubclass(cls, peft) else 0, len(params), obj))
    found.sort(key=lambda t: t[:3], reverse=True)
    return [t[3] for t in found]


def _at_exit():
    # Once, and only in the process that installed the hook (a forked DataLoader worker inherits the
    # record of trained parameters but trains nothing of its own).
    if _state["done"] or os.getpid() != _state["pid"]:
        return
    _state["done"] = True
    out = evidence_dir()
    manifest = os.path.join(out, "evidence.json")
    if not _state["trained"]:
        shutil.rmtree(out, ignore_errors=True)
        return
    owners = _owners()
    shutil.rmtree(out, ignore_errors=True)
    if not owners:
        sys.stderr.write("forgeenv: training ran, but no transformers or peft model holds the trained parameters: no evidence saved\n")
        return
    model = owners[0]
    try:
        os.makedirs(out, exist_ok=True)
        model.save_pretrained(os.path.join(out, "model"))
        with open(manifest, "w", encoding="utf-8") as f:
            json.dump({"pid": os.getpid(), "steps": _state["steps"], "trained_parameters": len(_state["trained"]), "model": type(model).__name__}, f)
    except Exception as e:  # noqa: BLE001 - the run's own result stands; the verifier then finds no evidence
        shutil.rmtree(out, ignore_errors=True)
        sys.stderr.write("forgeenv: the trained model could not be saved as evidence (%s: %s)\n" % (type(e).__name__, str(e)[:300]))

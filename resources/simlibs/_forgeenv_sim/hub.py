"""push_to_hub in the simulation: there is no network, so it fails, unless the run opted into a
local stand-in for the Hub with FORGEENV_SIM_HUB_DIR (a folder, relative to the run directory), where
pushed repositories are written with save_pretrained."""
import os


def push(obj, repo_id, **save_kwargs):
    root = os.environ.get("FORGEENV_SIM_HUB_DIR")
    if not root:
        raise OSError("forgeenv-sim: there is no network; push_to_hub is not available")
    path = os.path.join(root, str(repo_id))
    os.makedirs(path, exist_ok=True)
    save_kwargs = {k: v for k, v in save_kwargs.items() if k in ("state_dict", "safe_serialization")}
    try:
        obj.save_pretrained(path, **save_kwargs)
    except TypeError:
        obj.save_pretrained(path)
    return "https://huggingface.co/%s (simulated: %s)" % (repo_id, path)

"""Simulated huggingface_hub (ForgeEnv): no network; uploads are refused the way an offline client fails."""
import os

from _forgeenv_sim import versions as _v

__version__ = _v.ACTIVE.get("huggingface_hub", "0.29.3")


def _http_base():
    """The base the release's HfHubHTTPError really has (requests.HTTPError before 1.0, httpx's after),
    as recorded in the API data; the real class when that library is installed, else a placeholder
    of the same name and module (both are OSErrors)."""
    key = "requests.exceptions.HTTPError"
    try:
        from _forgeenv_sim import surface_data

        for k in ("huggingface_hub.errors.HfHubHTTPError", "huggingface_hub.utils._errors.HfHubHTTPError"):
            obj = surface_data.find_object(k)
            if obj and obj.get("bases"):
                key = next((b for b in obj["bases"] if not b.startswith("builtins.")), key)
                break
    except Exception:  # noqa: BLE001 - no data: the 0.x hierarchy
        pass
    mod, _, name = key.rpartition(".")
    try:
        import importlib

        return getattr(importlib.import_module(mod), name)
    except Exception:  # noqa: BLE001 - not installed
        return type(name, (OSError,), {"__module__": mod})


class HfHubHTTPError(_http_base()):
    def __init__(self, message, response=None, *, server_message=None):
        super().__init__(message)
        self.response, self.server_message = response, server_message
        self.request_id = None


class RepositoryNotFoundError(HfHubHTTPError):
    pass


class GatedRepoError(RepositoryNotFoundError):
    pass


class RevisionNotFoundError(HfHubHTTPError):
    pass


class EntryNotFoundError(HfHubHTTPError):
    pass


class LocalEntryNotFoundError(EntryNotFoundError, FileNotFoundError, ValueError):
    def __init__(self, message):
        super().__init__(message, response=None)


class OfflineModeIsEnabled(ConnectionError):
    pass


def _offline_mode():
    return os.environ.get("HF_HUB_OFFLINE", "").upper() in ("1", "ON", "YES", "TRUE")


def _offline(what):
    raise HfHubHTTPError("forgeenv-sim: %s needs the Hugging Face Hub, which simulated runs cannot reach" % what)


class HfApi:
    def __init__(self, endpoint=None, token=None, **kwargs):
        self.token = token

    def create_repo(self, repo_id, token=None, private=None, repo_type=None, exist_ok=False, **kwargs):
        _offline("create_repo")

    def upload_folder(self, *args, **kwargs):
        _offline("upload_folder")

    def upload_file(self, *args, **kwargs):
        _offline("upload_file")

    def whoami(self, token=None):
        _offline("whoami")


def create_repo(repo_id, token=None, private=None, repo_type=None, exist_ok=False, **kwargs):
    _offline("create_repo")


class Repository:
    def __init__(self, local_dir, clone_from=None, token=None, **kwargs):
        _offline("Repository")


def login(token=None, add_to_git_credential=False, **kwargs):
    return None


def whoami(token=None):
    _offline("whoami")


def hf_hub_download(repo_id, filename, subfolder=None, repo_type=None, revision=None, cache_dir=None, local_dir=None, token=None, local_files_only=False, **kwargs):
    if local_files_only or _offline_mode():
        raise LocalEntryNotFoundError(
            "Cannot find the requested files in the disk cache and outgoing traffic has been disabled. To enable hf.co "
            "look-ups and downloads online, set 'local_files_only' to False."
        )
    raise EntryNotFoundError("404 Client Error: Entry Not Found for url: https://huggingface.co/%s/resolve/main/%s" % (repo_id, filename))


def snapshot_download(repo_id, revision=None, repo_type=None, cache_dir=None, local_dir=None, token=None, **kwargs):
    return local_dir or os.path.join(os.getcwd(), ".sim_hub", repo_id.replace("/", "--"))


def get_full_repo_name(model_id, organization=None, token=None):
    return "%s/%s" % (organization or "user", model_id)


def upload_folder(*args, **kwargs):
    _offline("upload_folder")

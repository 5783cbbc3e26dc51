"""Simulated huggingface_hub (ForgeEnv): no network; uploads are refused the way an offline client fails."""
import os

from _forgeenv_sim import versions as _v

__version__ = _v.ACTIVE.get("huggingface_hub", "0.29.3")


class HfHubHTTPError(Exception):
    pass


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


def hf_hub_download(repo_id, filename, subfolder=None, repo_type=None, revision=None, cache_dir=None, local_dir=None, token=None, **kwargs):
    raise HfHubHTTPError("404 Client Error: Entry Not Found for url: https://huggingface.co/%s/resolve/main/%s" % (repo_id, filename))


def snapshot_download(repo_id, revision=None, repo_type=None, cache_dir=None, local_dir=None, token=None, **kwargs):
    return local_dir or os.path.join(os.getcwd(), ".sim_hub", repo_id.replace("/", "--"))


def get_full_repo_name(model_id, organization=None, token=None):
    return "%s/%s" % (organization or "user", model_id)


def upload_folder(*args, **kwargs):
    _offline("upload_folder")

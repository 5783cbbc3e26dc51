import os
import shutil

from ..spec import AbstractFileSystem


class LocalFileSystem(AbstractFileSystem):
    protocol = ("file", "local")

    def __init__(self, auto_mkdir=False, **kwargs):
        super().__init__(**kwargs)
        self.auto_mkdir = auto_mkdir

    def exists(self, path):
        return os.path.exists(path)

    def isdir(self, path):
        return os.path.isdir(path)

    def isfile(self, path):
        return os.path.isfile(path)

    def makedirs(self, path, exist_ok=False):
        os.makedirs(path, exist_ok=exist_ok)

    def mkdir(self, path, create_parents=True, **kwargs):
        os.makedirs(path, exist_ok=True) if create_parents else os.mkdir(path)

    def ls(self, path, detail=False):
        names = sorted(os.path.join(path, n) for n in os.listdir(path))
        return [{"name": n, "type": "directory" if os.path.isdir(n) else "file"} for n in names] if detail else names

    def rm(self, path, recursive=False):
        shutil.rmtree(path) if recursive and os.path.isdir(path) else os.remove(path)

    def open(self, path, mode="rb", **kwargs):
        if self.auto_mkdir and "w" in mode:
            os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
        return open(path, mode)

    def unstrip_protocol(self, name):
        return "file://" + os.path.abspath(name)

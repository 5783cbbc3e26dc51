"""PIL.Image over the simulation's lazy images (pixels computed on demand)."""
import enum
import os

from _forgeenv_sim.hashing import stable_hash
from _forgeenv_sim.imaging import Image


class Resampling(enum.IntEnum):
    NEAREST = 0
    LANCZOS = 1
    BILINEAR = 2
    BICUBIC = 3
    BOX = 4
    HAMMING = 5


NEAREST, LANCZOS, BILINEAR, BICUBIC, BOX, HAMMING = (int(r) for r in Resampling)
ANTIALIAS = LANCZOS


def new(mode, size, color=0):
    if isinstance(color, int):
        color = (color,) * (4 if mode == "RGBA" else 3 if mode == "RGB" else 1)
    value = color if mode in ("RGB", "RGBA") else color[0]
    return Image(mode, size, lambda x, y: value)


def alpha_composite(im1, im2):
    if im1.mode != "RGBA" or im2.mode != "RGBA":
        raise ValueError("image has wrong mode")
    return im2


def open(fp, mode="r", formats=None):
    path = getattr(fp, "name", fp)
    if isinstance(path, (str, os.PathLike)) and not os.path.exists(path):
        raise FileNotFoundError(2, "No such file or directory", str(path))
    seed = stable_hash("PIL.open", str(path))
    return Image("RGB", (32, 32), lambda x, y: ((x * 7 + seed) % 256, (y * 5 + seed) % 256, (x + y + seed) % 256))


def fromarray(obj, mode=None):
    data = obj.tolist() if hasattr(obj, "tolist") else obj
    h, w = len(data), len(data[0])
    return Image(mode or "RGB", (w, h), lambda x, y: tuple(int(v) for v in data[y][x]) if isinstance(data[y][x], (list, tuple)) else int(data[y][x]))

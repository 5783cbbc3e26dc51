from . import tqdm, trange  # noqa: F401

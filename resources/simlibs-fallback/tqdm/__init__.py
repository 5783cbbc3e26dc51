"""Stand-in tqdm (ForgeEnv fallback): iterates silently; the API surface training scripts use."""
__version__ = "4.66.0"


class tqdm:
    def __init__(self, iterable=None, desc=None, total=None, leave=True, file=None, ncols=None, mininterval=0.1, maxinterval=10.0,
                 miniters=None, ascii=None, disable=False, unit="it", unit_scale=False, dynamic_ncols=False, smoothing=0.3,
                 bar_format=None, initial=0, position=None, postfix=None, unit_divisor=1000, write_bytes=False, lock_args=None,
                 nrows=None, colour=None, delay=0.0, gui=False, **kwargs):
        self.iterable = iterable
        self.desc = desc
        if total is None and iterable is not None:
            try:
                total = len(iterable)
            except (TypeError, AttributeError):
                total = None
        self.total = total
        self.n = initial
        self.disable = disable

    def __iter__(self):
        for x in self.iterable:
            self.n += 1
            yield x

    def __len__(self):
        return self.total if self.total is not None else len(self.iterable)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def update(self, n=1):
        self.n += n
        return True

    def set_description(self, desc=None, refresh=True):
        self.desc = desc

    def set_description_str(self, desc=None, refresh=True):
        self.desc = desc

    def set_postfix(self, ordered_dict=None, refresh=True, **kwargs):
        pass

    def set_postfix_str(self, s="", refresh=True):
        pass

    def refresh(self, nolock=False, lock_args=None):
        pass

    def reset(self, total=None):
        self.n = 0
        if total is not None:
            self.total = total

    def close(self):
        pass

    def clear(self, nolock=False):
        pass

    @classmethod
    def write(cls, s, file=None, end="\n", nolock=False):
        import sys

        (file or sys.stdout).write(str(s) + end)


def trange(*args, **kwargs):
    return tqdm(range(*args), **kwargs)


def _pandas(*args, **kwargs):
    """tqdm.pandas(): registers progress_apply on pandas objects; nothing to do without pandas."""
    return None


tqdm.pandas = staticmethod(_pandas)

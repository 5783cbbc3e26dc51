"""datasets.Dataset and DatasetDict, column-oriented over Python lists."""
import json
import math
import random

from collections.abc import Sequence as _SequenceABC

from _forgeenv_sim import versions as _v
from _forgeenv_sim.hashing import stable_hash
from _forgeenv_sim.surface_call import internal as _internal

from . import features as _f
from .features import ClassLabel, Features


class ArrowInvalid(ValueError):
    """Raised where the real library lets pyarrow reject a table (printed as pyarrow.lib.ArrowInvalid)."""


ArrowInvalid.__module__ = "pyarrow.lib"


def _plain(v):
    """Converts tensors and BatchEncodings to the Python values Arrow would store."""
    if hasattr(v, "tolist") and hasattr(v, "shape"):
        return v.tolist()
    if isinstance(v, tuple):
        return [_plain(x) for x in v]
    if isinstance(v, list):
        return [_plain(x) for x in v] if v and (isinstance(v[0], (list, tuple)) or hasattr(v[0], "tolist")) else v
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    return v


class LazyRow(dict):
    """What map/filter pass to a per-example function: a dict whose missing keys raise KeyError."""


class LazyBatch(dict):
    """What map/filter pass to a batched function: column name -> list of values."""


def _to_torch(values, feature):
    import torch

    if not values:
        return values
    first = values[0]
    if isinstance(first, str) or first is None:
        return values
    if type(first).__name__ == "Image":
        return [_image_tensor(v) for v in values]
    if isinstance(first, dict):
        return values
    try:
        return torch.tensor(values)
    except (ValueError, TypeError):
        return [_to_torch_one(v) for v in values]


def _to_torch_one(value):
    import torch

    if isinstance(value, str) or value is None or isinstance(value, dict):
        return value
    if type(value).__name__ == "Image":
        return _image_tensor(value)
    try:
        return torch.tensor(value)
    except (ValueError, TypeError):
        return [_to_torch_one(v) for v in value] if isinstance(value, list) else value


def _image_tensor(img):
    import torch

    w, h = img.size
    data = img.getdata()
    if img.mode == "RGB":
        flat = [c for px in data for c in px]
        return torch.tensor(flat, dtype=torch.uint8).view(h, w, 3)
    return torch.tensor(data, dtype=torch.uint8).view(h, w)


class Dataset:
    def __init__(self, columns, features=None, split=None, info=None):
        self._data = {k: list(v) for k, v in columns.items()}
        lengths = {len(v) for v in self._data.values()}
        if len(lengths) > 1:
            raise ArrowInvalid("All arrays must be of equal length")
        self._n = lengths.pop() if lengths else 0
        feats = Features()
        for k, v in self._data.items():
            feats[k] = (features or {}).get(k) or _f.infer(v[:64])
        self._features = feats
        self._split = split
        self._format = {"type": None, "columns": None, "output_all_columns": False}
        self._transform = None

    # -- construction --
    @classmethod
    def from_dict(cls, mapping, features=None, info=None, split=None):
        return cls({k: list(v) for k, v in mapping.items()}, features=features, split=split)

    @classmethod
    def from_list(cls, mapping, features=None, info=None, split=None):
        keys = list(mapping[0].keys()) if mapping else []
        return cls({k: [row.get(k) for row in mapping] for k in keys}, features=features, split=split)

    @classmethod
    def from_generator(cls, generator, features=None, cache_dir=None, keep_in_memory=False, gen_kwargs=None, num_proc=None, split="train", **kwargs):
        return cls.from_list(list(generator(**(gen_kwargs or {}))), features=features)

    def _derive(self, columns, features=None, keep_format=True):
        ds = Dataset(columns, features=features if features is not None else {k: v for k, v in self._features.items() if k in columns}, split=self._split)
        if keep_format:
            ds._format = dict(self._format)
            if ds._format["columns"]:
                ds._format["columns"] = [c for c in ds._format["columns"] if c in columns]
            ds._transform = self._transform
        return ds

    # -- metadata --
    @property
    def column_names(self):
        return list(self._data.keys())

    @property
    def features(self):
        return self._features

    @property
    def num_rows(self):
        return self._n

    @property
    def num_columns(self):
        return len(self._data)

    @property
    def shape(self):
        return (self._n, len(self._data))

    @property
    def split(self):
        return self._split

    @property
    def format(self):
        return dict(self._format)

    def __len__(self):
        return self._n

    def __repr__(self):
        return "Dataset({\n    features: %r,\n    num_rows: %d\n})" % (self.column_names, self._n)

    # -- access --
    def _check_column(self, name):
        if name not in self._data:
            raise KeyError("Column %s not in the dataset. Current columns in the dataset: %s" % (name, self.column_names))

    def _format_batch(self, batch):
        if self._transform is not None:
            cols = self._format["columns"]
            view = {k: v for k, v in batch.items() if cols is None or k in cols}
            return self._transform(view)
        t = self._format["type"]
        cols = self._format["columns"]
        if cols is not None and not self._format["output_all_columns"]:
            batch = {k: v for k, v in batch.items() if k in cols}
        if t in ("torch", "pt", "numpy", "np"):
            batch = {k: (_to_torch(v, self._features.get(k)) if cols is None or k in cols else v) for k, v in batch.items()}
        return batch

    def _row(self, i):
        return {k: v[i] for k, v in self._data.items()}

    def __getitem__(self, key):
        if isinstance(key, str):
            self._check_column(key)
            col = self._data[key]
            out = self._format_batch({key: col})
            values = out[key] if key in out else col
            if self._format["type"] is None and _v.changed("datasets-column-access-returns-column") and not _internal(1):
                return Column(values, key)  # datasets >= 4.0: a lazy column, not a list
            return values
        if isinstance(key, bool) or not isinstance(key, (int, slice, range, list, tuple)) and not hasattr(key, "__index__"):
            raise TypeError("Wrong key type: '%s' of type '%s'. Expected one of int, slice, range, str or Iterable." % (key, type(key)))
        if isinstance(key, slice):
            idx = range(*key.indices(self._n))
        elif isinstance(key, (range, list, tuple)):
            idx = list(key)
        else:
            i = int(key)
            if i < -self._n or i >= self._n:
                raise IndexError("Invalid key: %d is out of bounds for size %d" % (i, self._n))
            i %= self._n
            batch = self._format_batch({k: [v[i]] for k, v in self._data.items()})
            return {k: v[0] for k, v in batch.items()}
        for i in idx:
            if i < -self._n or i >= self._n:
                raise IndexError("Invalid key: %d is out of bounds for size %d" % (i, self._n))
        return self._format_batch({k: [v[i] for i in idx] for k, v in self._data.items()})

    def __getitems__(self, keys):
        batch = self[list(keys)]
        # As the real one: the number of examples is the first column's length (a transform may change it).
        n = len(batch[next(iter(batch))]) if batch else 0
        return [{k: v[i] for k, v in batch.items()} for i in range(n)]

    def __iter__(self):
        for i in range(self._n):
            yield self[i]

    def iter(self, batch_size, drop_last_batch=False):
        for s in range(0, self._n, batch_size):
            if drop_last_batch and s + batch_size > self._n:
                return
            yield self[s : s + batch_size]

    def to_dict(self, batch_size=None, batched=False):
        return {k: list(v) for k, v in self._data.items()}

    def to_list(self):
        return [self._row(i) for i in range(self._n)]

    def unique(self, column):
        self._check_column(column)
        seen = []
        for v in self._data[column]:
            if v not in seen:
                seen.append(v)
        return seen

    # -- transforms --
    def map(self, function=None, with_indices=False, with_rank=False, input_columns=None, batched=False, batch_size=1000, drop_last_batch=False, remove_columns=None, keep_in_memory=False, load_from_cache_file=None, cache_file_name=None, writer_batch_size=1000, features=None, disable_nullable=False, fn_kwargs=None, num_proc=None, suffix_template="_{rank:05d}_of_{num_proc:05d}", new_fingerprint=None, desc=None):
        if isinstance(remove_columns, str):
            remove_columns = [remove_columns]
        if remove_columns:
            missing = [c for c in remove_columns if c not in self._data]
            if missing:
                raise ValueError("Column to remove %s not in the dataset. Current columns in the dataset: %s" % (missing, self.column_names))
        if isinstance(input_columns, str):
            input_columns = [input_columns]
        if input_columns:
            for c in input_columns:
                if c not in self._data:
                    raise ValueError("Input column %s not in the dataset. Current columns in the dataset: %s" % (c, self.column_names))
        fn_kwargs = fn_kwargs or {}
        if function is None:
            function = lambda x: x  # noqa: E731
        removed = set(remove_columns or [])
        new_cols = {}
        out_rows = 0
        if batched:
            bs = self._n if batch_size is None or batch_size <= 0 else batch_size
            for start in range(0, self._n, bs):
                stop = min(start + bs, self._n)
                if drop_last_batch and stop - start < bs:
                    break
                batch = LazyBatch({k: v[start:stop] for k, v in self._data.items()})
                args = [batch[c] for c in input_columns] if input_columns else [batch]
                if with_indices:
                    args.append(list(range(start, stop)))
                res = function(*args, **fn_kwargs)
                if res is None:
                    res = batch
                res = dict(res.items()) if hasattr(res, "items") else res
                if not isinstance(res, dict):
                    raise TypeError("Provided `function` which is applied to all elements of table returns a variable of type %s. Make sure provided `function` returns a variable of type `dict` (or a pyarrow table) to update the dataset or `None` if you are only interested in side effects." % type(res))
                lengths = {k: len(v) for k, v in res.items()}
                n_out = next(iter(lengths.values())) if lengths else stop - start
                for i, (k, ln) in enumerate(lengths.items()):
                    if ln != n_out:
                        raise ArrowInvalid("Column %d named %s expected length %d but got length %d" % (i + 1, k, n_out, ln))
                kept = [k for k in self._data if k not in removed and k not in res]
                if n_out != stop - start and kept:
                    raise ArrowInvalid("Column %d named %s expected length %d but got length %d" % (len(kept) + 1, next(iter(res)), stop - start, n_out))
                for k in kept:
                    new_cols.setdefault(k, []).extend(batch[k])
                for k, v in res.items():
                    new_cols.setdefault(k, []).extend(_plain(list(v)) if not isinstance(v, list) else [_plain(x) for x in v])
                out_rows += n_out
        else:
            for i in range(self._n):
                row = LazyRow(self._row(i))
                args = [row[c] for c in input_columns] if input_columns else [row]
                if with_indices:
                    args.append(i)
                res = function(*args, **fn_kwargs)
                if res is None:
                    res = {}
                res = dict(res.items()) if hasattr(res, "items") else res
                if not isinstance(res, dict):
                    raise TypeError("Provided `function` which is applied to all elements of table returns a variable of type %s. Make sure provided `function` returns a variable of type `dict` (or a pyarrow table) to update the dataset or `None` if you are only interested in side effects." % type(res))
                merged = {k: v for k, v in row.items() if k not in removed}
                merged.update({k: _plain(v) for k, v in res.items()})
                for k, v in merged.items():
                    col = new_cols.setdefault(k, [None] * out_rows)
                    col.append(v)
                out_rows += 1
        feats = {k: v for k, v in self._features.items() if k in new_cols and k not in removed}
        for k in new_cols:
            if k in feats and k in self._data and new_cols[k] is not self._data[k]:
                same = len(new_cols[k]) == len(self._data[k]) and new_cols[k] == self._data[k]
                if not same:
                    feats.pop(k)
        if features is not None:
            feats.update(features)
        return self._derive(new_cols, features=feats)

    def filter(self, function=None, with_indices=False, with_rank=False, input_columns=None, batched=False, batch_size=1000, keep_in_memory=False, load_from_cache_file=None, cache_file_name=None, writer_batch_size=1000, fn_kwargs=None, num_proc=None, suffix_template="_{rank:05d}_of_{num_proc:05d}", new_fingerprint=None, desc=None):
        fn_kwargs = fn_kwargs or {}
        if isinstance(input_columns, str):
            input_columns = [input_columns]
        keep = []
        if batched:
            bs = batch_size or self._n
            for start in range(0, self._n, bs):
                stop = min(start + bs, self._n)
                batch = LazyBatch({k: v[start:stop] for k, v in self._data.items()})
                args = [batch[c] for c in input_columns] if input_columns else [batch]
                if with_indices:
                    args.append(list(range(start, stop)))
                mask = function(*args, **fn_kwargs)
                keep.extend(start + j for j, m in enumerate(mask) if m)
        else:
            for i in range(self._n):
                row = LazyRow(self._row(i))
                args = [row[c] for c in input_columns] if input_columns else [row]
                if with_indices:
                    args.append(i)
                if function(*args, **fn_kwargs):
                    keep.append(i)
        return self.select(keep)

    def select(self, indices, keep_in_memory=False, indices_cache_file_name=None, writer_batch_size=1000, new_fingerprint=None):
        idx = list(indices)
        for i in idx:
            if not isinstance(i, int) or i < -self._n or i >= self._n:
                raise IndexError("Invalid key: %s is out of bounds for size %d" % (i, self._n))
        return self._derive({k: [v[i] for i in idx] for k, v in self._data.items()}, features=self._features)

    def take(self, n):
        return self.select(range(min(n, self._n)))

    def skip(self, n):
        return self.select(range(min(n, self._n), self._n))

    def shuffle(self, seed=None, generator=None, keep_in_memory=False, load_from_cache_file=None, indices_cache_file_name=None, writer_batch_size=1000, new_fingerprint=None):
        # Real: a random permutation from numpy (random when seed is None). Sim: deterministic always.
        order = list(range(self._n))
        random.Random(stable_hash("shuffle", 0 if seed is None else seed, self._n)).shuffle(order)
        return self.select(order)

    def sort(self, column_names, reverse=False, kind=None, null_placement="at_end", keep_in_memory=False, load_from_cache_file=None, indices_cache_file_name=None, writer_batch_size=1000, new_fingerprint=None):
        col = column_names if isinstance(column_names, str) else column_names[0]
        self._check_column(col)
        order = sorted(range(self._n), key=lambda i: self._data[col][i], reverse=reverse)
        return self.select(order)

    def train_test_split(self, test_size=None, train_size=None, shuffle=True, stratify_by_column=None, seed=None, generator=None, keep_in_memory=False, load_from_cache_file=None, train_indices_cache_file_name=None, test_indices_cache_file_name=None, writer_batch_size=1000, train_new_fingerprint=None, test_new_fingerprint=None):
        n = self._n
        if test_size is None and train_size is None:
            test_size = 0.25
        if isinstance(test_size, float):
            if not 0 < test_size < 1:
                raise ValueError("test_size=%s should be either positive and smaller than the number of samples %d or a float in the (0, 1) range" % (test_size, n))
            n_test = int(math.ceil(test_size * n))
        elif test_size is not None:
            n_test = int(test_size)
        else:
            n_test = None
        if isinstance(train_size, float):
            n_train = int(math.floor(train_size * n))
        elif train_size is not None:
            n_train = int(train_size)
        else:
            n_train = n - n_test
        if n_test is None:
            n_test = n - n_train
        if n_train + n_test > n or n_train <= 0 or n_test <= 0:
            raise ValueError(
                "With n_samples=%d, test_size=%s and train_size=%s, the resulting train set will be empty. Adjust any of the aforementioned parameters." % (n, test_size, train_size)
            )
        order = list(range(n))
        if shuffle:
            random.Random(stable_hash("split", 0 if seed is None else seed, n)).shuffle(order)
        from .dataset_dict import DatasetDict

        return DatasetDict({"train": self.select(order[:n_train]), "test": self.select(order[n_train : n_train + n_test])})

    def rename_column(self, original_column_name, new_column_name, new_fingerprint=None):
        if original_column_name not in self._data:
            raise ValueError(
                "Original column name %s not in the dataset. Current columns in the dataset: %s" % (original_column_name, self.column_names)
            )
        if new_column_name in self._data:
            raise ValueError("New column name %s already in the dataset. Please choose a column name which is not already in the dataset. Current columns in the dataset: %s" % (new_column_name, self.column_names))
        if not new_column_name:
            raise ValueError("New column name is empty.")
        cols = {(new_column_name if k == original_column_name else k): v for k, v in self._data.items()}
        feats = {(new_column_name if k == original_column_name else k): v for k, v in self._features.items()}
        return self._derive(cols, features=feats)

    def rename_columns(self, column_mapping, new_fingerprint=None):
        ds = self
        for a, b in column_mapping.items():
            ds = ds.rename_column(a, b)
        return ds

    def remove_columns(self, column_names, new_fingerprint=None):
        if isinstance(column_names, str):
            column_names = [column_names]
        missing = [c for c in column_names if c not in self._data]
        if missing:
            raise ValueError("Column name %s not in the dataset. Current columns in the dataset: %s" % (missing, self.column_names))
        return self._derive({k: v for k, v in self._data.items() if k not in column_names})

    def select_columns(self, column_names, new_fingerprint=None):
        if isinstance(column_names, str):
            column_names = [column_names]
        missing = [c for c in column_names if c not in self._data]
        if missing:
            raise ValueError("Column name %s not in the dataset. Current columns in the dataset: %s." % (missing, self.column_names))
        return self._derive({k: self._data[k] for k in column_names})

    def add_column(self, name, column, new_fingerprint=None, feature=None):
        cols = dict(self._data)
        cols[name] = list(column)
        return self._derive(cols)

    def cast_column(self, column, feature, new_fingerprint=None):
        self._check_column(column)
        feats = dict(self._features)
        feats[column] = feature
        data = self._data
        if isinstance(feature, _f.Audio) and feature.sampling_rate:
            # Decoding at another rate resamples (here: by picking samples).
            def resample(a):
                if not isinstance(a, dict) or not a.get("sampling_rate") or a["sampling_rate"] == feature.sampling_rate:
                    return a
                r = a["sampling_rate"] / feature.sampling_rate
                arr = a["array"]
                return dict(a, array=[arr[int(i * r)] for i in range(int(len(arr) / r))], sampling_rate=feature.sampling_rate)

            data = dict(data)
            data[column] = [resample(a) for a in data[column]]
        return self._derive(data, features=feats)

    def class_encode_column(self, column, include_nulls=False):
        self._check_column(column)
        names = sorted(set(self._data[column]))
        cols = dict(self._data)
        cols[column] = [names.index(v) for v in self._data[column]]
        feats = dict(self._features)
        feats[column] = ClassLabel(names=[str(n) for n in names])
        return self._derive(cols, features=feats)

    def flatten(self, new_fingerprint=None, max_depth=16):
        cols, feats = {}, {}
        for k, v in self._data.items():
            if v and isinstance(v[0], dict):
                for sub in v[0]:
                    cols[k + "." + sub] = [row.get(sub) for row in v]
            else:
                cols[k] = v
                feats[k] = self._features[k]
        return self._derive(cols, features=feats)

    def set_format(self, type=None, columns=None, output_all_columns=False, **format_kwargs):
        if type not in (None, "python", "torch", "pt", "numpy", "np", "pandas", "arrow", "custom"):
            raise ValueError("Return type should be None or selected in ['python', 'numpy', 'torch', 'tensorflow', 'jax', 'arrow', 'pandas', 'polars', 'custom'], but got '%s'" % type)
        if type == "pandas":
            raise ImportError("pandas is not available in the simulated environment")
        if isinstance(columns, str):
            columns = [columns]
        if columns is not None:
            missing = [c for c in columns if c not in self._data]
            if missing:
                raise ValueError("Columns %s not in the dataset. Current columns in the dataset: %s" % (missing, self.column_names))
        self._format = {"type": None if type == "python" else type, "columns": list(columns) if columns is not None else None, "output_all_columns": output_all_columns}
        self._transform = None

    def with_format(self, type=None, columns=None, output_all_columns=False, **format_kwargs):
        ds = self._derive(self._data, features=self._features)
        ds.set_format(type=type, columns=columns, output_all_columns=output_all_columns, **format_kwargs)
        return ds

    def reset_format(self):
        self._format = {"type": None, "columns": None, "output_all_columns": False}
        self._transform = None

    def set_transform(self, transform, columns=None, output_all_columns=False):
        self._format = {"type": "custom", "columns": list(columns) if columns else None, "output_all_columns": output_all_columns}
        self._transform = transform

    def with_transform(self, transform, columns=None, output_all_columns=False):
        ds = self._derive(self._data, features=self._features)
        ds.set_transform(transform, columns, output_all_columns)
        return ds

    def save_to_disk(self, dataset_path, max_shard_size=None, num_shards=None, num_proc=None, storage_options=None):
        import os

        os.makedirs(dataset_path, exist_ok=True)
        with open(os.path.join(dataset_path, "data.json"), "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in self._data.items() if not (v and type(v[0]).__name__ == "Image")}, f)
        # Class labels survive the round trip (the sim's stand-in for the Arrow schema in dataset_info.json).
        labels = {k: ["class", list(f.names)] for k, f in self._features.items() if isinstance(f, ClassLabel)}
        with open(os.path.join(dataset_path, "dataset_info.json"), "w", encoding="utf-8") as f:
            json.dump({"sim_features": labels}, f)

    def to_json(self, path_or_buf, batch_size=None, num_proc=None, storage_options=None, **to_json_kwargs):
        with open(path_or_buf, "w", encoding="utf-8") as f:
            for row in self.to_list():
                f.write(json.dumps(row) + "\n")


class Column(_SequenceABC):
    """datasets >= 4.0: what `ds["col"]` returns (a read-only sequence of the column's values)."""

    def __init__(self, source, column_name):
        self.source, self.column_name = source, column_name

    def __getitem__(self, key):
        if isinstance(key, slice):
            return Column(self.source[key], self.column_name)
        if isinstance(key, str):
            raise TypeError("list indices must be integers or slices, not str")
        return self.source[key]

    def __len__(self):
        return len(self.source)

    def __iter__(self):
        return iter(self.source)

    def __repr__(self):
        head = ", ".join(repr(v) for v in self.source[:5])
        return "Column([%s%s])" % (head, ", ..." if len(self.source) > 5 else "")

"""datasets.load_dataset over the synthetic builders (no network) and local csv/json/text files."""
import csv
import json
import re

from _forgeenv_sim import synthetic
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

from .arrow_dataset import Dataset
from .dataset_dict import DatasetDict
from .features import Features, from_spec


class DatasetNotFoundError(FileNotFoundError):
    pass


DatasetNotFoundError.__module__ = "datasets.exceptions"


def _builder_config_error(name, config, key):
    return ValueError(
        "BuilderConfig ParquetConfig(name='%s', version=0.0.0, data_dir=None, data_files=None, description=None, batch_size=None, columns=None, features=None, filters=None) doesn't have a '%s' key."
        % (config or "default", key)
    )


_PACKAGED = ("csv", "json", "text", "parquet", "arrow")


def _packaged_config_fields(kind):
    """The real <Kind>Config's fields for a packaged builder (from the snapshot's API data), or None."""
    try:
        from _forgeenv_sim import surface_data

        obj = surface_data.find_object("datasets.packaged_modules.%s.%s.%sConfig" % (kind, kind, kind.capitalize()))
    except Exception:  # noqa: BLE001 - no layer: the generic builder-config error below
        return None
    if not obj or not obj.get("init"):
        return None
    return {p[0] for p in obj["init"] if p[1] in ("pk", "k")} - {"self"}


def _config_error(path, name, key, data_files):
    """Packaged builders (csv, json, …) build their config from the keywords: an unknown one is the
    dataclass's TypeError; a builder with predefined configs reports the missing key instead."""
    if path in _PACKAGED and not (path in ("parquet", "arrow") and _hub_files(data_files)):
        if _packaged_config_fields(path) is not None:
            return TypeError("%sConfig.__init__() got an unexpected keyword argument '%s'" % (path.capitalize(), key))
    return _builder_config_error(path, name, key)


def _split_spec(split, available):
    m = re.fullmatch(r"\s*(\w+)\s*(?:\[\s*(-?\d*)\s*(%?)\s*:\s*(-?\d*)\s*(%?)\s*\])?\s*", split)
    if not m:
        raise ValueError("Unknown split \"%s\". Should be one of %s." % (split, list(available)))
    name = m.group(1)
    if name not in available:
        raise ValueError("Unknown split \"%s\". Should be one of %s." % (name, list(available)))
    return name, m.group(2), m.group(3), m.group(4), m.group(5)


def _apply_split(ds, lo, lo_pct, hi, hi_pct):
    n = len(ds)

    def conv(v, pct):
        if v in (None, ""):
            return None
        v = int(v)
        return int(round(n * v / 100.0)) if pct else v

    a, b = conv(lo, lo_pct), conv(hi, hi_pct)
    return ds.select(range(*slice(a, b).indices(n)))


def _local(kind, data_files, delimiter=None):
    if isinstance(data_files, str):
        data_files = {"train": [data_files]}
    elif isinstance(data_files, (list, tuple)):
        data_files = {"train": list(data_files)}
    else:
        data_files = {k: [v] if isinstance(v, str) else list(v) for k, v in data_files.items()}
    out = {}
    for split, files in data_files.items():
        rows = []
        for path in files:
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    if kind == "csv":
                        for r in csv.DictReader(f, delimiter=delimiter or ","):
                            rows.append({k: _num(v) for k, v in r.items()})
                    elif kind == "json":
                        text = f.read()
                        if text.lstrip().startswith("["):
                            rows.extend(json.loads(text))
                        else:
                            rows.extend(json.loads(line) for line in text.splitlines() if line.strip())
                    else:
                        rows.extend({"text": line.rstrip("\n")} for line in f)
            except FileNotFoundError:
                raise FileNotFoundError("Unable to find '%s'" % path) from None
        out[split] = Dataset.from_list(rows, split=split)
    return DatasetDict(out)


def _num(v):
    for cast in (int, float):
        try:
            return cast(v)
        except (TypeError, ValueError):
            pass
    return v


def load_dataset(
    path,
    name=None,
    data_dir=None,
    data_files=None,
    split=None,
    cache_dir=None,
    features=None,
    download_config=None,
    download_mode=None,
    verification_mode=None,
    keep_in_memory=None,
    save_infos=False,
    revision=None,
    token=None,
    streaming=False,
    num_proc=None,
    storage_options=None,
    trust_remote_code=None,
    **config_kwargs,
):
    # Version-gated keywords, as the real signatures have them.
    if "use_auth_token" in config_kwargs:
        value = config_kwargs.pop("use_auth_token")
        if _v.changed("datasets-load-dataset-use-auth-token"):
            raise _config_error(path, name, "use_auth_token", data_files)
        _warn.future(
            "'use_auth_token' was deprecated in favor of 'token' in version 2.14.0 and will be removed in 3.0.0.\n"
            "You can remove this warning by passing 'token=<use_auth_token>' instead."
        )
        token = value
    if "ignore_verifications" in config_kwargs or "task" in config_kwargs:
        key = "ignore_verifications" if "ignore_verifications" in config_kwargs else "task"
        if _v.changed("datasets-load-dataset-ignore-verifications" if key == "ignore_verifications" else "datasets-load-dataset-task-kwarg"):
            raise _config_error(path, name, key, data_files)
        config_kwargs.pop(key)
    if trust_remote_code is not None and not _v.changed("datasets-load-dataset-trust-remote-code-added"):
        raise _builder_config_error(path, name, "trust_remote_code")
    fields = _packaged_config_fields(path) if path in _PACKAGED else None
    csv_delimiter = None
    if fields is not None:
        for key in list(config_kwargs):
            if key in fields:
                value = config_kwargs.pop(key)  # a real option of the builder; only the delimiter is simulated
                if key in ("sep", "delimiter") and value:
                    csv_delimiter = value
    if config_kwargs:
        raise _config_error(path, name, next(iter(config_kwargs)), data_files)
    if path in ("parquet", "arrow") and _hub_files(data_files):
        # hf://datasets/<owner>/<name>/... files: the simulated hub's copy of that dataset, split as data_files says.
        dd = _hub_parquet(data_files)
    elif path in ("csv", "json", "text", "parquet", "arrow"):
        if data_files is None:
            raise ValueError("At least one data file must be specified, but got data_files=None")
        dd = _local(path, data_files, csv_delimiter)
    else:
        canonical = synthetic.ALIASES.get(path, path)
        entry = synthetic.BUILDERS.get(canonical)
        if entry is None:
            from _forgeenv_sim import hub_datasets

            entry = hub_datasets.lookup(path)
        if entry is None:
            raise DatasetNotFoundError("Dataset '%s' doesn't exist on the Hub or cannot be accessed." % path)
        configs, build = entry
        if configs is not None:
            if name is None:
                raise ValueError("Config name is missing.\nPlease pick one among the available configs: %s\nExample of usage:\n\t`load_dataset('%s', '%s')`" % (configs, path, configs[0]))
            if name not in configs:
                raise ValueError("BuilderConfig '%s' not found. Available: %s" % (name, configs))
        splits = build(name)
        if splits is None:
            raise NotImplementedError("forgeenv-sim: the simulated '%s' dataset has no '%s' config" % (path, name))
        dd = DatasetDict()
        for s, (cols, spec) in splits.items():
            dd[s] = Dataset(cols, features=Features({k: from_spec(v) for k, v in spec.items()}), split=s)
    if features is not None:
        for s in dd:
            for k, f in features.items():
                if k in dd[s].column_names:
                    dd[s] = dd[s].cast_column(k, f)
    if split is None:
        return dd
    if isinstance(split, (list, tuple)):
        return [load_one(dd, s) for s in split]
    return load_one(dd, split)


def _hub_files(data_files):
    files = [data_files] if isinstance(data_files, str) else list(data_files.values()) if isinstance(data_files, dict) else list(data_files or [])
    flat = [f for x in files for f in ([x] if isinstance(x, str) else x)]
    return bool(flat) and all(str(f).startswith("hf://datasets/") for f in flat)


def _hub_parquet(data_files):
    from _forgeenv_sim import hub_datasets

    if isinstance(data_files, str) or isinstance(data_files, (list, tuple)):
        data_files = {"train": data_files}
    out = DatasetDict()
    for split, files in data_files.items():
        first = files if isinstance(files, str) else files[0]
        repo = "/".join(first[len("hf://datasets/"):].split("/")[:2])
        entry = hub_datasets.lookup(repo)
        if entry is None:
            raise FileNotFoundError("Unable to find '%s'" % first)
        built = entry[1](None)
        cols, spec = built.get(split) or next(iter(built.values()))
        out[split] = Dataset(cols, features=Features({k: from_spec(v) for k, v in spec.items()}), split=split)
    return out


def load_one(dd, split):
    if "+" in str(split):
        # "train+validation": the parts, concatenated in order (as the real split grammar).
        parts = [load_one(dd, p.strip()) for p in str(split).split("+")]
        cols = {k: [v for d in parts for v in d._data[k]] for k in parts[0].column_names}
        return Dataset(cols, features=parts[0].features, split=str(split))
    name, lo, lo_pct, hi, hi_pct = _split_spec(str(split), dd.keys())
    ds = dd[name]
    if lo is None and hi is None:
        return ds
    return _apply_split(ds, lo, lo_pct, hi, hi_pct)


def load_from_disk(dataset_path, keep_in_memory=None, storage_options=None):
    import os

    def one(folder, split=None):
        with open(os.path.join(folder, "data.json"), encoding="utf-8") as f:
            cols = json.load(f)
        feats = None
        info = os.path.join(folder, "dataset_info.json")
        if os.path.exists(info):
            with open(info, encoding="utf-8") as f:
                spec = json.load(f).get("sim_features", {})
            feats = Features({k: from_spec(tuple(v) if isinstance(v, list) else v) for k, v in spec.items()})
        return Dataset(cols, features=feats, split=split)

    if os.path.exists(os.path.join(dataset_path, "data.json")):
        return one(dataset_path)
    splits = {}
    for name in sorted(os.listdir(dataset_path)) if os.path.isdir(dataset_path) else []:
        if os.path.exists(os.path.join(dataset_path, name, "data.json")):
            splits[name] = one(os.path.join(dataset_path, name), name)
    if not splits:
        raise FileNotFoundError("Directory %s is neither a `Dataset` directory nor a `DatasetDict` directory." % dataset_path)
    return DatasetDict(splits)

"""datasets.DatasetDict: a dict of splits whose methods apply to every split."""


class DatasetDict(dict):
    def _check_values_type(self):
        from .arrow_dataset import Dataset

        for k, v in self.items():
            if not isinstance(v, Dataset):
                raise TypeError("Values in `DatasetDict` should be of type `Dataset` but got type '%s'" % type(v))

    def __getitem__(self, k):
        if isinstance(k, str) and k not in self:
            # The real DatasetDict says which splits exist (datasets >= 2.x).
            raise KeyError(k)
        return dict.__getitem__(self, k)

    def _apply(self, name, *args, **kwargs):
        return DatasetDict({k: getattr(v, name)(*args, **kwargs) for k, v in self.items()})

    def map(self, function=None, with_indices=False, with_rank=False, input_columns=None, batched=False, batch_size=1000, drop_last_batch=False, remove_columns=None, keep_in_memory=False, load_from_cache_file=None, cache_file_names=None, writer_batch_size=1000, features=None, disable_nullable=False, fn_kwargs=None, num_proc=None, desc=None):
        return self._apply("map", function=function, with_indices=with_indices, input_columns=input_columns, batched=batched, batch_size=batch_size, drop_last_batch=drop_last_batch, remove_columns=remove_columns, features=features, fn_kwargs=fn_kwargs, num_proc=num_proc, desc=desc)

    def filter(self, function=None, with_indices=False, with_rank=False, input_columns=None, batched=False, batch_size=1000, keep_in_memory=False, load_from_cache_file=None, cache_file_names=None, writer_batch_size=1000, fn_kwargs=None, num_proc=None, desc=None):
        return self._apply("filter", function=function, with_indices=with_indices, input_columns=input_columns, batched=batched, batch_size=batch_size, fn_kwargs=fn_kwargs, num_proc=num_proc, desc=desc)

    def shuffle(self, seeds=None, seed=None, generators=None, keep_in_memory=False, load_from_cache_file=None, indices_cache_file_names=None, writer_batch_size=1000):
        return DatasetDict({k: v.shuffle(seed=(seeds or {}).get(k, seed) if isinstance(seeds, dict) else (seed if seeds is None else seeds)) for k, v in self.items()})

    def sort(self, column_names, reverse=False, **kwargs):
        return self._apply("sort", column_names, reverse=reverse)

    def rename_column(self, original_column_name, new_column_name):
        return self._apply("rename_column", original_column_name, new_column_name)

    def rename_columns(self, column_mapping):
        return self._apply("rename_columns", column_mapping)

    def remove_columns(self, column_names):
        return self._apply("remove_columns", column_names)

    def select_columns(self, column_names):
        return self._apply("select_columns", column_names)

    def cast_column(self, column, feature):
        return self._apply("cast_column", column, feature)

    def class_encode_column(self, column, include_nulls=False):
        return self._apply("class_encode_column", column)

    def flatten(self, max_depth=16):
        return self._apply("flatten")

    def set_format(self, type=None, columns=None, output_all_columns=False, **format_kwargs):
        for v in self.values():
            v.set_format(type=type, columns=columns, output_all_columns=output_all_columns, **format_kwargs)

    def with_format(self, type=None, columns=None, output_all_columns=False, **format_kwargs):
        return self._apply("with_format", type=type, columns=columns, output_all_columns=output_all_columns, **format_kwargs)

    def reset_format(self):
        for v in self.values():
            v.reset_format()

    def set_transform(self, transform, columns=None, output_all_columns=False):
        for v in self.values():
            v.set_transform(transform, columns, output_all_columns)

    def with_transform(self, transform, columns=None, output_all_columns=False):
        return self._apply("with_transform", transform, columns, output_all_columns)

    def unique(self, column):
        return {k: v.unique(column) for k, v in self.items()}

    @property
    def column_names(self):
        return {k: v.column_names for k, v in self.items()}

    @property
    def num_rows(self):
        return {k: v.num_rows for k, v in self.items()}

    @property
    def num_columns(self):
        return {k: v.num_columns for k, v in self.items()}

    @property
    def shape(self):
        return {k: v.shape for k, v in self.items()}

    def save_to_disk(self, dataset_dict_path, **kwargs):
        for k, v in self.items():
            v.save_to_disk(dataset_dict_path + "/" + k)

    def __repr__(self):
        parts = []
        for k, v in self.items():
            body = repr(v).replace("\n", "\n    ")
            parts.append("    %s: %s" % (k, body))
        return "DatasetDict({\n%s\n})" % "\n".join(parts)

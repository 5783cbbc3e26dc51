"""torch.utils.data: Dataset, TensorDataset, DataLoader, random_split."""
import math

from ..._tensor import Tensor, _as_tensor, default_generator, randperm, stack, tensor


class Dataset:
    def __getitem__(self, index):
        raise NotImplementedError("Subclasses of Dataset should implement __getitem__.")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    def __iter__(self):
        raise NotImplementedError


class TensorDataset(Dataset):
    def __init__(self, *tensors):
        if not all(tensors[0].size(0) == t.size(0) for t in tensors):
            raise AssertionError("Size mismatch between tensors")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].size(0)


class Subset(Dataset):
    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, list(indices)

    def __getitem__(self, idx):
        return self.dataset[self.indices[idx]]

    def __len__(self):
        return len(self.indices)


class ConcatDataset(Dataset):
    def __init__(self, datasets):
        self.datasets = list(datasets)

    def __len__(self):
        return sum(len(d) for d in self.datasets)

    def __getitem__(self, idx):
        for d in self.datasets:
            if idx < len(d):
                return d[idx]
            idx -= len(d)
        raise IndexError("absolute value of index should not exceed dataset length")


def random_split(dataset, lengths, generator=None):
    n = len(dataset)
    if all(0 <= x <= 1 for x in lengths) and abs(sum(lengths) - 1) < 1e-9 and sum(lengths) != n:
        counts = [int(math.floor(n * f)) for f in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if sum(lengths) != n:
        raise ValueError("Sum of input lengths does not equal the length of the input dataset!")
    perm = randperm(n, generator=generator).tolist()
    out, off = [], 0
    for ln in lengths:
        out.append(Subset(dataset, perm[off : off + ln]))
        off += ln
    return out


def default_collate(batch):
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(batch, 0)
    if isinstance(elem, bool) or isinstance(elem, int) or isinstance(elem, float):
        return tensor(batch)
    if isinstance(elem, str):
        return list(batch)
    if isinstance(elem, dict):
        return {k: default_collate([b[k] for b in batch]) for k in elem}
    if isinstance(elem, (tuple, list)):
        sizes = {len(b) for b in batch}
        if len(sizes) != 1:
            raise RuntimeError("each element in list of batch should be of equal size")
        transposed = list(zip(*batch))
        res = [default_collate(list(s)) for s in transposed]
        return tuple(res) if isinstance(elem, tuple) else res
    raise TypeError("default_collate: batch must contain tensors, numpy arrays, numbers, dicts or lists; found %s" % type(elem))


class DataLoader:
    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None, num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0, worker_init_fn=None, multiprocessing_context=None, generator=None, *, prefetch_factor=None, persistent_workers=False, pin_memory_device="", in_order=True):
        if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0):
            raise ValueError("batch_size should be a positive integer value, but got batch_size=%s" % batch_size)
        self.dataset = dataset
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)
        self.sampler = sampler
        self.collate_fn = collate_fn or default_collate
        self.drop_last = drop_last
        self.generator = generator
        self.num_workers = num_workers

    def __len__(self):
        n = len(self.sampler) if self.sampler is not None else len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def _order(self):
        if self.sampler is not None:
            return list(iter(self.sampler))
        n = len(self.dataset)
        if not self.shuffle:
            return list(range(n))
        return randperm(n, generator=self.generator).tolist()

    def __iter__(self):
        order = self._order()
        bs = self.batch_size
        for start in range(0, len(order), bs):
            idx = order[start : start + bs]
            if self.drop_last and len(idx) < bs:
                return
            getitems = getattr(self.dataset, "__getitems__", None)
            items = getitems(idx) if getitems else [self.dataset[i] for i in idx]
            yield self.collate_fn(items)


class Sampler:
    def __init__(self, data_source=None):
        self.data_source = data_source


class SequentialSampler(Sampler):
    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source, self.generator = data_source, generator

    def __iter__(self):
        return iter(randperm(len(self.data_source), generator=self.generator).tolist())

    def __len__(self):
        return len(self.data_source)

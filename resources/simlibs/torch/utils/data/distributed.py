"""torch.utils.data.distributed.DistributedSampler on one process: every index, in order or shuffled."""
from . import Sampler


class DistributedSampler(Sampler):
    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0, drop_last=False):
        if num_replicas is None or rank is None:
            raise RuntimeError("Default process group has not been initialized, please make sure to call init_process_group.")
        self.dataset, self.shuffle, self.seed, self.epoch = dataset, shuffle, seed, 0

    def __iter__(self):
        import random

        idx = list(range(len(self.dataset)))
        if self.shuffle:
            random.Random(self.seed + self.epoch).shuffle(idx)
        return iter(idx)

    def __len__(self):
        return len(self.dataset)

    def set_epoch(self, epoch):
        self.epoch = epoch

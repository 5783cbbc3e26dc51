from .trainer import EvalPrediction, PredictionOutput, TrainOutput, enable_full_determinism, get_last_checkpoint, set_seed  # noqa: F401
from .training_args import IntervalStrategy, SchedulerType  # noqa: F401


def is_main_process(local_rank):
    return local_rank in [-1, 0]


class EvalLoopOutput:
    def __init__(self, predictions, label_ids, metrics, num_samples):
        self.predictions, self.label_ids, self.metrics, self.num_samples = predictions, label_ids, metrics, num_samples

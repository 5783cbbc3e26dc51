from .trainer import EvalPrediction, PredictionOutput, TrainOutput, enable_full_determinism, get_last_checkpoint, set_seed  # noqa: F401
from .training_args import IntervalStrategy, SchedulerType  # noqa: F401

"""TrainingArguments / Seq2SeqTrainingArguments as real dataclasses, so an unknown keyword raises
Python's own `TrainingArguments.__init__() got an unexpected keyword argument '...'`. Which fields
exist depends on the simulated transformers version (read once, at import)."""
import json
import math
from dataclasses import asdict, dataclass, field, fields
from enum import Enum
from typing import Any, Dict, List, Optional, Union

from _forgeenv_sim import hardware as _hw
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

_NEW_EVAL = _v.deprecated("transformers-trainingargs-evaluation-strategy")  # eval_strategy added
_OLD_EVAL = not _v.changed("transformers-trainingargs-evaluation-strategy")  # evaluation_strategy still accepted


class ExplicitEnum(str, Enum):
    @classmethod
    def _missing_(cls, value):
        raise ValueError("%r is not a valid %s, please select one of %s" % (value, cls.__name__, [m.value for m in cls]))

    def __str__(self):
        return self.value


class IntervalStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"


class SaveStrategy(ExplicitEnum):
    NO = "no"
    STEPS = "steps"
    EPOCH = "epoch"
    BEST = "best"


class SchedulerType(ExplicitEnum):
    LINEAR = "linear"
    COSINE = "cosine"
    COSINE_WITH_RESTARTS = "cosine_with_restarts"
    POLYNOMIAL = "polynomial"
    CONSTANT = "constant"
    CONSTANT_WITH_WARMUP = "constant_with_warmup"
    INVERSE_SQRT = "inverse_sqrt"
    REDUCE_ON_PLATEAU = "reduce_lr_on_plateau"
    COSINE_WITH_MIN_LR = "cosine_with_min_lr"
    WARMUP_STABLE_DECAY = "warmup_stable_decay"


class OptimizerNames(ExplicitEnum):
    ADAMW_TORCH = "adamw_torch"
    ADAMW_TORCH_FUSED = "adamw_torch_fused"
    ADAMW_HF = "adamw_hf"
    ADAFACTOR = "adafactor"
    SGD = "sgd"
    ADAMW_8BIT = "adamw_8bit"
    PAGED_ADAMW_8BIT = "paged_adamw_8bit"
    PAGED_ADAMW = "paged_adamw_32bit"
    ADAGRAD = "adagrad"
    RMSPROP = "rmsprop"


@dataclass
class TrainingArguments:
    output_dir: str
    overwrite_output_dir: bool = False
    do_train: bool = False
    do_eval: bool = False
    do_predict: bool = False
    if _NEW_EVAL:
        eval_strategy: Union[IntervalStrategy, str] = "no"
    if _OLD_EVAL:
        evaluation_strategy: Union[IntervalStrategy, str] = None if _NEW_EVAL else "no"
    prediction_loss_only: bool = False
    per_device_train_batch_size: int = 8
    per_device_eval_batch_size: int = 8
    per_gpu_train_batch_size: Optional[int] = None
    per_gpu_eval_batch_size: Optional[int] = None
    gradient_accumulation_steps: int = 1
    eval_accumulation_steps: Optional[int] = None
    eval_delay: Optional[float] = 0
    torch_empty_cache_steps: Optional[int] = None
    learning_rate: float = 5e-5
    weight_decay: float = 0.0
    adam_beta1: float = 0.9
    adam_beta2: float = 0.999
    adam_epsilon: float = 1e-8
    max_grad_norm: float = 1.0
    num_train_epochs: float = 3.0
    max_steps: int = -1
    lr_scheduler_type: Union[SchedulerType, str] = "linear"
    lr_scheduler_kwargs: Optional[Union[dict, str]] = field(default_factory=dict)
    warmup_ratio: float = 0.0
    warmup_steps: int = 0
    log_level: Optional[str] = "passive"
    log_level_replica: Optional[str] = "warning"
    log_on_each_node: bool = True
    logging_dir: Optional[str] = None
    logging_strategy: Union[IntervalStrategy, str] = "steps"
    logging_first_step: bool = False
    logging_steps: float = 500
    logging_nan_inf_filter: bool = True
    save_strategy: Union[SaveStrategy, str] = "steps"
    save_steps: float = 500
    save_total_limit: Optional[int] = None
    save_safetensors: Optional[bool] = True
    save_on_each_node: bool = False
    save_only_model: bool = False
    restore_callback_states_from_checkpoint: bool = False
    no_cuda: bool = False
    use_cpu: bool = False
    use_mps_device: bool = False
    seed: int = 42
    data_seed: Optional[int] = None
    jit_mode_eval: bool = False
    use_ipex: bool = False
    bf16: bool = False
    fp16: bool = False
    fp16_opt_level: str = "O1"
    half_precision_backend: str = "auto"
    bf16_full_eval: bool = False
    fp16_full_eval: bool = False
    tf32: Optional[bool] = None
    local_rank: int = -1
    ddp_backend: Optional[str] = None
    tpu_num_cores: Optional[int] = None
    debug: Union[str, List[Any]] = ""
    dataloader_drop_last: bool = False
    eval_steps: Optional[float] = None
    dataloader_num_workers: int = 0
    dataloader_prefetch_factor: Optional[int] = None
    past_index: int = -1
    run_name: Optional[str] = None
    disable_tqdm: Optional[bool] = None
    remove_unused_columns: Optional[bool] = True
    label_names: Optional[List[str]] = None
    load_best_model_at_end: Optional[bool] = False
    metric_for_best_model: Optional[str] = None
    greater_is_better: Optional[bool] = None
    ignore_data_skip: bool = False
    fsdp: Optional[Union[List[Any], str]] = ""
    fsdp_config: Optional[Union[dict, str]] = None
    deepspeed: Optional[Union[dict, str]] = None
    label_smoothing_factor: float = 0.0
    optim: Union[OptimizerNames, str] = "adamw_torch"
    optim_args: Optional[str] = None
    adafactor: bool = False
    group_by_length: bool = False
    length_column_name: Optional[str] = "length"
    report_to: Union[None, str, List[str]] = None
    ddp_find_unused_parameters: Optional[bool] = None
    dataloader_pin_memory: bool = True
    dataloader_persistent_workers: bool = False
    skip_memory_metrics: bool = True
    push_to_hub: bool = False
    resume_from_checkpoint: Optional[str] = None
    hub_model_id: Optional[str] = None
    hub_strategy: str = "every_save"
    hub_token: Optional[str] = None
    hub_private_repo: Optional[bool] = None
    gradient_checkpointing: bool = False
    gradient_checkpointing_kwargs: Optional[Union[dict, str]] = None
    include_inputs_for_metrics: bool = False
    include_for_metrics: List[str] = field(default_factory=list)
    eval_do_concat_batches: bool = True
    auto_find_batch_size: bool = False
    full_determinism: bool = False
    torchdynamo: Optional[str] = None
    ray_scope: Optional[str] = "last"
    ddp_timeout: Optional[int] = 1800
    torch_compile: bool = False
    torch_compile_backend: Optional[str] = None
    torch_compile_mode: Optional[str] = None
    include_tokens_per_second: Optional[bool] = False
    include_num_input_tokens_seen: Optional[bool] = False
    neftune_noise_alpha: Optional[float] = None
    optim_target_modules: Union[None, str, List[str]] = None
    batch_eval_metrics: bool = False
    eval_on_start: bool = False
    use_liger_kernel: Optional[bool] = False
    eval_use_gather_object: Optional[bool] = False
    average_tokens_across_devices: Optional[bool] = False

    def __post_init__(self):
        if not _v.deprecated("transformers-trainingargs-warmup-ratio") and (not isinstance(self.warmup_steps, int) or self.warmup_steps < 0):
            # 5.0 accepts a float (a ratio below 1); before, only a non-negative int.
            raise ValueError("warmup_steps must be of type int and must be 0 or a positive integer.")
        if _OLD_EVAL and self.evaluation_strategy is not None and _NEW_EVAL:
            _warn.future(
                "`evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead",
                stacklevel=4,
            )
            self.eval_strategy = self.evaluation_strategy
        if not _NEW_EVAL:
            self.eval_strategy = self.evaluation_strategy
        if self.no_cuda:
            _warn.future("using `no_cuda` is deprecated and will be removed in version 5.0 of 🤗 Transformers. Use `use_cpu` instead", stacklevel=4)
            self.use_cpu = True
        self.eval_strategy = IntervalStrategy(self.eval_strategy)
        self.logging_strategy = IntervalStrategy(self.logging_strategy)
        self.save_strategy = SaveStrategy(self.save_strategy)
        self.lr_scheduler_type = SchedulerType(self.lr_scheduler_type)
        self.optim = OptimizerNames(self.optim)
        if self.do_eval is False and self.eval_strategy != IntervalStrategy.NO:
            self.do_eval = True
        if self.eval_strategy == IntervalStrategy.STEPS and (self.eval_steps is None or self.eval_steps == 0):
            if self.logging_steps > 0:
                self.eval_steps = self.logging_steps
            else:
                raise ValueError("evaluation strategy %s requires either non-zero --eval_steps or --logging_steps" % self.eval_strategy)
        if self.logging_strategy == IntervalStrategy.STEPS and self.logging_steps == 0:
            raise ValueError("logging strategy %s requires non-zero --logging_steps" % self.logging_strategy)
        for name in ("logging_steps", "eval_steps", "save_steps"):
            v = getattr(self, name)
            if v is not None and v > 1 and v != int(v):
                raise ValueError("--%s must be an integer if bigger than 1: %s" % (name, v))
        if self.load_best_model_at_end and self.save_strategy != SaveStrategy.BEST:
            if self.eval_strategy != self.save_strategy:
                raise ValueError(
                    "--load_best_model_at_end requires the save and eval strategy to match, but found\n- Evaluation strategy: %s\n- Save strategy: %s"
                    % (self.eval_strategy, self.save_strategy)
                )
            if self.eval_strategy == IntervalStrategy.STEPS and self.save_steps % self.eval_steps != 0:
                raise ValueError(
                    "--load_best_model_at_end requires the saving steps to be a round multiple of the evaluation steps, but found %s, which is not a round multiple of %s."
                    % (self.save_steps, self.eval_steps)
                )
        if self.load_best_model_at_end and self.metric_for_best_model is None:
            self.metric_for_best_model = "loss"
        if self.greater_is_better is None and self.metric_for_best_model is not None:
            self.greater_is_better = not self.metric_for_best_model.endswith("loss")
        if self.tf32 and not _hw.SIM_CUDA:
            raise ValueError("--tf32 requires Ampere or a newer GPU arch, cuda>=11 and torch>=1.7")
        # A CPU-only machine: bf16 is accepted (CPU autocast); fp16 only with torch >= 2.3 from 4.41 on.
        if (self.fp16 or getattr(self, "fp16_full_eval", False)) and not _hw.SIM_CUDA and (not _v.changed("transformers-trainingargs-fp16-on-cpu") or not _v.changed("torch-cpu-amp-fp16")):
            raise ValueError("fp16 mixed precision requires a GPU (not 'cpu').")
        if self.warmup_ratio < 0 or self.warmup_ratio > 1:
            raise ValueError("warmup_ratio must lie in range [0,1]")
        if self.run_name is None:
            self.run_name = self.output_dir
        if self.report_to is None:
            self.report_to = []
        if self.logging_dir is None:
            self.logging_dir = self.output_dir + "/runs/sim"

    def main_process_first(self, local=True, desc="work"):
        """One process: the block just runs."""
        import contextlib

        return contextlib.nullcontext()

    @property
    def distributed_state(self):
        from accelerate import PartialState

        return PartialState()

    @property
    def train_batch_size(self):
        # The deprecated per_gpu_* value still wins where the release has it (one CPU process).
        return getattr(self, "per_gpu_train_batch_size", None) or self.per_device_train_batch_size

    @property
    def eval_batch_size(self):
        return getattr(self, "per_gpu_eval_batch_size", None) or self.per_device_eval_batch_size

    @property
    def device(self):
        import torch

        return torch.device("cpu")

    n_gpu = 0
    world_size = 1
    process_index = 0
    local_process_index = 0
    should_log = True
    should_save = True
    parallel_mode = "not_parallel"

    def get_warmup_steps(self, num_training_steps):
        if isinstance(self.warmup_steps, float) and 0 < self.warmup_steps < 1:
            return math.ceil(num_training_steps * self.warmup_steps)
        return int(self.warmup_steps) if self.warmup_steps > 0 else math.ceil(num_training_steps * self.warmup_ratio)

    def to_dict(self):
        d = {}
        for f in fields(self):
            v = getattr(self, f.name)
            d[f.name] = v.value if isinstance(v, Enum) else v
        return d

    def to_json_string(self):
        return json.dumps(self.to_dict(), indent=2, default=str)

    def to_sanitized_dict(self):
        return {k: (v if isinstance(v, (bool, int, float, str)) else str(v)) for k, v in self.to_dict().items()}


@dataclass
class Seq2SeqTrainingArguments(TrainingArguments):
    sortish_sampler: bool = False
    predict_with_generate: bool = False
    generation_max_length: Optional[int] = None
    generation_num_beams: Optional[int] = None
    generation_config: Optional[Any] = None

"""accelerate.Accelerator on one CPU process: prepare() hands objects back (optimizers wrapped for
gradient accumulation), backward() runs the real autograd and prints the simulation's
`step=N loss=X` line, save_state() writes real-format weights."""
import contextlib
import os
import pickle
import warnings

import torch

from _forgeenv_sim import hardware as _hw
from _forgeenv_sim import progress
from _forgeenv_sim import safetensors_io
from _forgeenv_sim import versions as _v

from .state import AcceleratorState, DistributedType, GradientState, PartialState, _OneProcessSync
from .utils import ProjectConfiguration


class AcceleratedOptimizer:
    """Delegates to the wrapped optimizer; step/zero_grad are skipped while gradients accumulate."""

    def __init__(self, optimizer, accelerator):
        self.optimizer = optimizer
        self._acc = accelerator

    def __getattr__(self, name):
        try:
            return getattr(self.__dict__["optimizer"], name)
        except (AttributeError, KeyError):
            raise AttributeError("'%s' object has no attribute '%s'" % (type(self).__name__, name)) from None

    @property
    def param_groups(self):
        return self.optimizer.param_groups

    if not _v.changed("accelerate-optimizer-is-overflow-removed"):

        @property
        def is_overflow(self):
            warnings.warn(
                "The `is_overflow` property is deprecated and will be removed in version 1.0 of Accelerate use "
                "`optimizer.step_was_skipped` instead.",
                FutureWarning,
                stacklevel=2,
            )
            return self.step_was_skipped

    @property
    def state(self):
        return self.optimizer.state

    def step(self, closure=None):
        if self._acc.sync_gradients:
            return self.optimizer.step() if closure is None else self.optimizer.step(closure)
        return None

    def zero_grad(self, set_to_none=None):
        if self._acc.sync_gradients:
            if set_to_none is None:
                return self.optimizer.zero_grad()
            return self.optimizer.zero_grad(set_to_none=set_to_none)
        return None

    @property
    def step_was_skipped(self):
        return False

    def state_dict(self):
        return self.optimizer.state_dict()

    def load_state_dict(self, state_dict):
        return self.optimizer.load_state_dict(state_dict)


class AcceleratedScheduler:
    def __init__(self, scheduler, accelerator):
        self.scheduler = scheduler
        self._acc = accelerator

    def __getattr__(self, name):
        return getattr(self.scheduler, name)

    def step(self, *args, **kwargs):
        if self._acc.sync_gradients:
            return self.scheduler.step(*args, **kwargs)
        return None

    def get_last_lr(self):
        return self.scheduler.get_last_lr()

    def state_dict(self):
        return self.scheduler.state_dict()

    def load_state_dict(self, state_dict):
        return self.scheduler.load_state_dict(state_dict)


class _SkipDataLoader:
    def __init__(self, dataloader, skip):
        self.dataloader, self.skip = dataloader, skip

    def __iter__(self):
        for i, batch in enumerate(self.dataloader):
            if i >= self.skip:
                yield batch

    def __len__(self):
        return max(0, len(self.dataloader) - self.skip)

    def __getattr__(self, name):
        return getattr(self.dataloader, name)


class _Tracker:
    def __init__(self, name):
        self.name = name
        self.tracker = self

    def log(self, values, step=None, **kwargs):
        pass

    def store_init_configuration(self, values):
        pass

    def finish(self):
        pass


class Accelerator(_OneProcessSync):
    def __init__(self, device_placement=True, split_batches=False, mixed_precision=None, gradient_accumulation_steps=1, cpu=False,
                 dataloader_config=None, deepspeed_plugin=None, fsdp_plugin=None, megatron_lm_plugin=None, rng_types=None, log_with=None,
                 project_dir=None, project_config=None, gradient_accumulation_plugin=None, dispatch_batches=None, even_batches=True,
                 use_seedable_sampler=False, step_scheduler_with_optimizer=True, kwargs_handlers=None, dynamo_backend=None, **kwargs):
        mixed_precision = mixed_precision or os.environ.get("ACCELERATE_MIXED_PRECISION", "no")
        if mixed_precision not in ("no", "fp16", "bf16", "fp8"):
            raise ValueError("Unknown mixed_precision mode: %s. Choose between ['no', 'fp8', 'fp16', 'bf16']" % mixed_precision)
        if mixed_precision == "fp16" and not _hw.SIM_CUDA:
            # Real accelerate refuses fp16 on a CPU-only machine.
            raise ValueError("fp16 mixed precision requires a GPU (not 'cpu').")
        if gradient_accumulation_plugin is not None:
            gradient_accumulation_steps = gradient_accumulation_plugin.num_steps or gradient_accumulation_steps
        self.state = AcceleratorState(mixed_precision=mixed_precision, cpu=cpu)
        self.gradient_state = GradientState()
        self.gradient_accumulation_steps = int(gradient_accumulation_steps)
        self.project_configuration = project_config or ProjectConfiguration(project_dir=project_dir)
        if project_dir is not None and self.project_configuration.project_dir is None:
            self.project_configuration.set_directories(project_dir)
        self.log_with = log_with
        self.trackers = []
        self.step = 0
        self._backward_calls = 0
        self._models, self._optimizers, self._schedulers, self._dataloaders, self._custom_objects = [], [], [], [], []
        self._save_hooks, self._load_hooks = [], []
        self.flag_tensor = None
        self.step_scheduler_with_optimizer = step_scheduler_with_optimizer

    # --- process properties -------------------------------------------------------------------
    device = property(lambda self: torch.device("cpu"))
    distributed_type = property(lambda self: self.state.distributed_type)
    num_processes = property(lambda self: self.state.num_processes)
    process_index = property(lambda self: self.state.process_index)
    local_process_index = property(lambda self: self.state.local_process_index)
    is_main_process = property(lambda self: self.state.is_main_process)
    is_local_main_process = property(lambda self: self.state.is_local_main_process)
    is_last_process = property(lambda self: self.state.is_last_process)
    mixed_precision = property(lambda self: self.state.mixed_precision)

    if not _v.changed("accelerate-use-fp16-removed"):

        @property
        def use_fp16(self):
            warnings.warn(
                "The `use_fp16` property is deprecated and will be removed in version 1.0 of Accelerate use "
                "`Accelerator.mixed_precision == 'fp16'` instead.",
                FutureWarning,
                stacklevel=2,
            )
            return self.mixed_precision == "fp16"
    use_distributed = property(lambda self: self.state.use_distributed)
    sync_gradients = property(lambda self: self.gradient_state.sync_gradients)
    project_dir = property(lambda self: self.project_configuration.project_dir)
    logging_dir = property(lambda self: self.project_configuration.logging_dir)
    save_iteration = property(lambda self: self.project_configuration.iteration)
    optimizer_step_was_skipped = property(lambda self: False)

    @property
    def is_fsdp2(self):
        return False

    def print(self, *args, **kwargs):
        if self.is_local_main_process:
            print(*args, **kwargs)

    # --- preparation --------------------------------------------------------------------------
    def prepare(self, *args, device_placement=None):
        out = []
        for obj in args:
            out.append(self._prepare_one(obj))
        return out[0] if len(out) == 1 else tuple(out)

    def _prepare_one(self, obj):
        if isinstance(obj, torch.nn.Module):
            self._models.append(obj)
            return obj
        if isinstance(obj, torch.optim.Optimizer):
            opt = AcceleratedOptimizer(obj, self)
            self._optimizers.append(opt)
            return opt
        if isinstance(obj, torch.utils.data.DataLoader):
            self._dataloaders.append(obj)
            return obj
        if hasattr(obj, "step") and hasattr(obj, "get_last_lr"):
            sch = AcceleratedScheduler(obj, self)
            self._schedulers.append(sch)
            return sch
        return obj

    def prepare_model(self, model, device_placement=None, evaluation_mode=False):
        self._models.append(model)
        return model

    def prepare_optimizer(self, optimizer, device_placement=None):
        return self._prepare_one(optimizer)

    def prepare_scheduler(self, scheduler):
        return self._prepare_one(scheduler)

    def prepare_data_loader(self, data_loader, device_placement=None, slice_fn_for_dispatch=None):
        return self._prepare_one(data_loader)

    def skip_first_batches(self, dataloader, num_batches=0):
        return _SkipDataLoader(dataloader, num_batches)

    def register_for_checkpointing(self, *objects):
        self._custom_objects.extend(objects)

    # --- training -----------------------------------------------------------------------------
    def backward(self, loss, **kwargs):
        if self.gradient_accumulation_steps > 1 and not kwargs.pop("_no_scale", False):
            loss = loss / self.gradient_accumulation_steps
        loss.backward(**kwargs)
        progress.clear()  # reported here, not again by the optimizer step
        self._backward_calls += 1
        # The simulation's progress line (the Trainer prints the same shape): custom loops print
        # nothing of their own on every step, and the environment reads the losses from here.
        if self.is_main_process:
            value = float(loss.detach().item()) * (self.gradient_accumulation_steps if self.gradient_accumulation_steps > 1 else 1)
            print("step=%d loss=%.4f" % (self._backward_calls, value), flush=True)

    @contextlib.contextmanager
    def accumulate(self, *models):
        self.step += 1
        self.gradient_state.sync_gradients = self.step % self.gradient_accumulation_steps == 0
        yield

    @contextlib.contextmanager
    def no_sync(self, model):
        yield

    @contextlib.contextmanager
    def autocast(self, autocast_handler=None, cache_enabled=False):
        yield

    def clip_grad_norm_(self, parameters, max_norm, norm_type=2):
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm, norm_type=norm_type)

    def clip_grad_value_(self, parameters, clip_value):
        for p in parameters:
            if p.grad is not None:
                p.grad.clamp_(-clip_value, clip_value)

    def unscale_gradients(self, optimizer=None):
        pass

    # --- collectives (one process: identity) --------------------------------------------------
    def gather(self, tensor):
        return tensor

    def gather_for_metrics(self, input_data, use_gather_object=False):
        return input_data

    def reduce(self, tensor, reduction="sum", scale=1.0):
        return tensor

    def pad_across_processes(self, tensor, dim=0, pad_index=0, pad_first=False):
        return tensor

    def set_trigger(self):
        self.flag_tensor = True

    def check_trigger(self):
        if self.flag_tensor:
            self.flag_tensor = None
            return True
        return False

    # --- models and checkpoints ---------------------------------------------------------------
    def unwrap_model(self, model, keep_fp32_wrapper=True, keep_torch_compile=True):
        return model

    def get_state_dict(self, model, unwrap=True):
        return model.state_dict()

    def free_memory(self, *objects):
        self._models, self._optimizers, self._schedulers, self._dataloaders = [], [], [], []
        return [None for _ in objects]

    clear = free_memory

    def save(self, obj, f, safe_serialization=False):
        if safe_serialization and isinstance(obj, dict):
            safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in obj.items()}, f)
        else:
            torch.save(obj, f)

    def save_model(self, model, save_directory, max_shard_size="10GB", safe_serialization=True):
        os.makedirs(save_directory, exist_ok=True)
        sd = model.state_dict()
        safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "model.safetensors"), {"format": "pt"})

    def register_save_state_pre_hook(self, hook):
        self._save_hooks.append(hook)
        return hook

    def register_load_state_pre_hook(self, hook):
        self._load_hooks.append(hook)
        return hook

    def save_state(self, output_dir=None, safe_serialization=True, **save_model_func_kwargs):
        cfg = self.project_configuration
        if cfg.automatic_checkpoint_naming:
            output_dir = os.path.join(cfg.project_dir, "checkpoints", "checkpoint_%d" % cfg.iteration)
        elif output_dir is None:
            raise ValueError("An `output_dir` must be passed to `save_state` when `automatic_checkpoint_naming` is not enabled.")
        os.makedirs(output_dir, exist_ok=True)
        weights = [m.state_dict() for m in self._models]
        for hook in self._save_hooks:
            hook(self._models, weights, output_dir)
        for i, sd in enumerate(weights):
            name = "model.safetensors" if i == 0 else "model_%d.safetensors" % i
            if safe_serialization:
                safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(output_dir, name))
            else:
                torch.save(sd, os.path.join(output_dir, "pytorch_model.bin" if i == 0 else "pytorch_model_%d.bin" % i))
        for i, opt in enumerate(self._optimizers):
            torch.save(opt.state_dict(), os.path.join(output_dir, "optimizer.bin" if i == 0 else "optimizer_%d.bin" % i))
        for i, sch in enumerate(self._schedulers):
            torch.save(sch.state_dict(), os.path.join(output_dir, "scheduler.bin" if i == 0 else "scheduler_%d.bin" % i))
        for i, obj in enumerate(self._custom_objects):
            torch.save(obj.state_dict(), os.path.join(output_dir, "custom_checkpoint_%d.pkl" % i))
        with open(os.path.join(output_dir, "random_states_0.pkl"), "wb") as f:
            pickle.dump({"step": self.step}, f)
        cfg.iteration += 1
        return output_dir

    def load_state(self, input_dir=None, load_module_strict=True, **load_model_func_kwargs):
        if input_dir is None:
            cfg = self.project_configuration
            folder = os.path.join(cfg.project_dir or ".", "checkpoints")
            names = sorted(os.listdir(folder), key=lambda n: int(n.rsplit("_", 1)[-1]))
            input_dir = os.path.join(folder, names[-1])
        if not os.path.isdir(input_dir):
            raise ValueError("Tried to find %s but folder does not exist" % input_dir)
        for hook in self._load_hooks:
            hook(self._models, input_dir)
        for i, model in enumerate(self._models):
            st = os.path.join(input_dir, "model.safetensors" if i == 0 else "model_%d.safetensors" % i)
            if os.path.exists(st):
                loaded = safetensors_io.load(st)
                model.load_state_dict({k: torch.tensor(v).reshape(*shape) if shape else torch.tensor(v[0]) for k, (shape, v) in loaded.items()},
                                      strict=load_module_strict)
            else:
                model.load_state_dict(torch.load(os.path.join(input_dir, "pytorch_model.bin" if i == 0 else "pytorch_model_%d.bin" % i)))
        for i, opt in enumerate(self._optimizers):
            p = os.path.join(input_dir, "optimizer.bin" if i == 0 else "optimizer_%d.bin" % i)
            if os.path.exists(p):
                opt.load_state_dict(torch.load(p))
        for i, sch in enumerate(self._schedulers):
            p = os.path.join(input_dir, "scheduler.bin" if i == 0 else "scheduler_%d.bin" % i)
            if os.path.exists(p):
                sch.load_state_dict(torch.load(p))

    # --- trackers -----------------------------------------------------------------------------
    def init_trackers(self, project_name, config=None, init_kwargs=None):
        names = self.log_with if isinstance(self.log_with, (list, tuple)) else ([self.log_with] if self.log_with else [])
        self.trackers = [_Tracker(str(getattr(n, "value", n))) for n in names]

    def get_tracker(self, name, unwrap=False):
        for t in self.trackers:
            if t.name == name:
                return t
        return _Tracker(name)

    def log(self, values, step=None, log_kwargs=None):
        for t in self.trackers:
            t.log(values, step=step)

    def end_training(self):
        for t in self.trackers:
            t.finish()

    def __repr__(self):
        return "Accelerator(device=cpu, num_processes=%d)" % self.num_processes

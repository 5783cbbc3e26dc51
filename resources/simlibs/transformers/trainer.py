"""Simulated Trainer / Seq2SeqTrainer: a real training loop (collator, optimiser, scheduler,
logging/eval/save strategies, compute_metrics) over the simulated models. Timings in the metrics
are simulated and deterministic so that a run's output is byte-for-byte reproducible."""
import functools
import json
import math
import sys
import os
import random
import shutil
from collections import namedtuple

import torch

from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

from .data_collator import DataCollatorWithPadding, default_data_collator
from .optimization import get_scheduler
from .tokenization import PreTrainedTokenizerBase
from .training_args import IntervalStrategy, SaveStrategy, TrainingArguments

_NEW_API = _v.deprecated("transformers-trainer-tokenizer-kwarg")  # processing_class=
_NUM_ITEMS = _v.changed("transformers-trainer-compute-loss-num-items")  # compute_loss(num_items_in_batch=)
_STEP_TIME = 0.05  # simulated seconds per optimisation step
_EVAL_TIME = 0.01  # simulated seconds per evaluation batch

TrainOutput = namedtuple("TrainOutput", ["global_step", "training_loss", "metrics"])
PredictionOutput = namedtuple("PredictionOutput", ["predictions", "label_ids", "metrics"])


class EvalPrediction:
    def __init__(self, predictions, label_ids, inputs=None, losses=None):
        self.predictions, self.label_ids, self.inputs, self.losses = predictions, label_ids, inputs, losses
        self._elems = (predictions, label_ids) + ((inputs,) if inputs is not None else ())

    def __iter__(self):
        return iter(self._elems)

    def __getitem__(self, idx):
        if idx < 0 or idx >= len(self._elems):
            raise IndexError("tuple index out of range")
        return self._elems[idx]

    def __len__(self):
        return len(self._elems)


def set_seed(seed, deterministic=False):
    random.seed(seed)
    torch.manual_seed(seed)


def enable_full_determinism(seed, warn_only=False):
    set_seed(seed)


def get_last_checkpoint(folder):
    if not os.path.isdir(folder):
        return None
    cps = [d for d in os.listdir(folder) if d.startswith("checkpoint-") and d[11:].isdigit() and os.path.isdir(os.path.join(folder, d))]
    if not cps:
        return None
    return os.path.join(folder, max(cps, key=lambda d: int(d[11:])))


class TrainerState:
    def __init__(self):
        self.epoch = None
        self.global_step = 0
        self.max_steps = 0
        self.num_train_epochs = 0
        self.logging_steps = 500
        self.eval_steps = 500
        self.save_steps = 500
        self.train_batch_size = None
        self.log_history = []
        self.best_metric = None
        self.best_model_checkpoint = None
        self.is_world_process_zero = True
        self.is_local_process_zero = True
        self.total_flos = 0

    def save_to_json(self, json_path):
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump(dict(vars(self)), f, indent=2, sort_keys=True, default=str)

    @classmethod
    def load_from_json(cls, json_path):
        s = cls()
        with open(json_path, encoding="utf-8") as f:
            s.__dict__.update(json.load(f))
        return s


class TrainerControl:
    def __init__(self):
        self.should_training_stop = False
        self.should_epoch_stop = False
        self.should_save = False
        self.should_evaluate = False
        self.should_log = False


class TrainerCallback:
    def on_init_end(self, args, state, control, **kwargs):
        pass

    def on_train_begin(self, args, state, control, **kwargs):
        pass

    def on_train_end(self, args, state, control, **kwargs):
        pass

    def on_epoch_begin(self, args, state, control, **kwargs):
        pass

    def on_epoch_end(self, args, state, control, **kwargs):
        pass

    def on_step_begin(self, args, state, control, **kwargs):
        pass

    def on_step_end(self, args, state, control, **kwargs):
        pass

    def on_evaluate(self, args, state, control, **kwargs):
        pass

    def on_save(self, args, state, control, **kwargs):
        pass

    def on_log(self, args, state, control, **kwargs):
        pass

    def on_prediction_step(self, args, state, control, **kwargs):
        pass


class EarlyStoppingCallback(TrainerCallback):
    def __init__(self, early_stopping_patience=1, early_stopping_threshold=0.0):
        self.early_stopping_patience = early_stopping_patience
        self.early_stopping_threshold = early_stopping_threshold
        self.early_stopping_patience_counter = 0

    def on_train_begin(self, args, state, control, **kwargs):
        if not args.load_best_model_at_end:
            raise AssertionError("EarlyStoppingCallback requires load_best_model_at_end = True")
        if args.metric_for_best_model is None:
            raise AssertionError("EarlyStoppingCallback requires metric_for_best_model to be defined")
        if args.eval_strategy == IntervalStrategy.NO:
            raise AssertionError("EarlyStoppingCallback requires IntervalStrategy of steps or epoch")

    def on_evaluate(self, args, state, control, metrics=None, **kwargs):
        key = args.metric_for_best_model
        key = key if key.startswith("eval_") else "eval_" + key
        value = (metrics or {}).get(key)
        if value is None:
            _warn.log("early stopping required metric_for_best_model, but did not find %s so early stopping is disabled" % key)
            return
        better = state.best_metric is None or (value > state.best_metric + self.early_stopping_threshold if args.greater_is_better else value < state.best_metric - self.early_stopping_threshold)
        self.early_stopping_patience_counter = 0 if better else self.early_stopping_patience_counter + 1
        if self.early_stopping_patience_counter >= self.early_stopping_patience:
            control.should_training_stop = True


class PrinterCallback(TrainerCallback):
    pass


class ProgressCallback(TrainerCallback):
    pass


def deprecate_tokenizer_kwarg(owner, removal="5.0.0"):
    """transformers >= 4.46: `tokenizer=` still works, with the real FutureWarning."""

    def wrap(fn):
        @functools.wraps(fn)
        def inner(self, *args, **kwargs):
            if "tokenizer" in kwargs:
                if "processing_class" in kwargs:
                    raise ValueError("Both `tokenizer` and `processing_class` are set for `%s.__init__`. Only `processing_class` should be set." % owner)
                _warn.future("`tokenizer` is deprecated and will be removed in version %s for `%s.__init__`. Use `processing_class` instead." % (removal, owner), stacklevel=3)
                kwargs["processing_class"] = kwargs.pop("tokenizer")
            return fn(self, *args, **kwargs)

        return inner

    return wrap


def _to_host(t):
    if isinstance(t, (list, tuple)):
        return type(t)(_to_host(x) for x in t)
    if isinstance(t, dict):
        return {k: _to_host(v) for k, v in t.items()}
    return t.detach() if isinstance(t, torch.Tensor) else t


def _pad_cat(a, b, pad=-100):
    """nested_concat: joins batches along dim 0, padding dim 1 with -100 when lengths differ."""
    if a is None:
        return b
    if isinstance(a, (list, tuple)):
        return type(a)(_pad_cat(x, y, pad) for x, y in zip(a, b))
    from .modeling import _LazyLogits, _cat_lazy

    if isinstance(a, _LazyLogits):
        return _cat_lazy([a, b])
    if a.dim() == 1 or a.shape[1:] == b.shape[1:]:
        return torch.cat([a, b], dim=0)
    t = max(a.shape[1], b.shape[1])

    def widen(x):
        if x.shape[1] == t:
            return x
        rest = 1
        for s in x.shape[2:]:
            rest *= s
        rows = []
        w = x.shape[1] * rest
        for i in range(x.shape[0]):
            rows.extend(x.data[i * w : (i + 1) * w] + [pad] * ((t - x.shape[1]) * rest))
        return torch.Tensor._make(rows, (x.shape[0], t) + tuple(x.shape[2:]), x.dtype)

    return torch.cat([widen(a), widen(b)], dim=0)


class Trainer:
    if _NEW_API:

        @deprecate_tokenizer_kwarg("Trainer")
        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, processing_class=None, model_init=None,
                     compute_loss_func=None, compute_metrics=None, callbacks=None, optimizers=(None, None), optimizer_cls_and_kwargs=None,
                     preprocess_logits_for_metrics=None):
            self._setup(model, args, data_collator, train_dataset, eval_dataset, processing_class, model_init, compute_loss_func, compute_metrics,
                        callbacks, optimizers, preprocess_logits_for_metrics)

    else:

        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, tokenizer=None, model_init=None,
                     compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None):
            self._setup(model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, None, compute_metrics, callbacks, optimizers,
                        preprocess_logits_for_metrics)

    def _setup(self, model, args, data_collator, train_dataset, eval_dataset, processing_class, model_init, compute_loss_func, compute_metrics,
               callbacks, optimizers, preprocess_logits_for_metrics):
        if args is None:
            _warn.log("No `TrainingArguments` passed, using `output_dir=tmp_trainer`.")
            args = TrainingArguments(output_dir="tmp_trainer")
        if not isinstance(args, TrainingArguments):
            raise TypeError("args must be a TrainingArguments (got %s)" % type(args).__name__)
        self.args = args
        set_seed(args.seed)
        self.model_init = model_init
        if model is None:
            if model_init is None:
                raise RuntimeError("`Trainer` requires either a `model` or `model_init` argument")
            model = model_init()
        self.model = model
        self.processing_class = processing_class
        if data_collator is None:
            data_collator = DataCollatorWithPadding(processing_class) if isinstance(processing_class, PreTrainedTokenizerBase) else default_data_collator
        self.data_collator = data_collator
        self.train_dataset = train_dataset
        self.eval_dataset = eval_dataset
        self.compute_loss_func = compute_loss_func
        self.compute_metrics = compute_metrics
        self.preprocess_logits_for_metrics = preprocess_logits_for_metrics
        self.optimizer, self.lr_scheduler = optimizers
        self.callback_handler = list(callbacks or [])
        self.state = TrainerState()
        self.control = TrainerControl()
        self._best_state = None
        if _v.changed("transformers-trainer-eval-strategy-needs-eval-dataset") and args.eval_strategy != IntervalStrategy.NO and eval_dataset is None:
            raise ValueError(
                "You have set `args.eval_strategy` to %s but you didn't pass an `eval_dataset` to `Trainer`. Either set `args.eval_strategy` to `no` or pass an `eval_dataset`. "
                % args.eval_strategy
            )
        if args.max_steps <= 0 and train_dataset is not None and not hasattr(train_dataset, "__len__"):
            raise ValueError("The train_dataset does not implement __len__, max_steps has to be specified. The number of steps needs to be known in advance for the learning rate scheduler.")
        self._call("on_init_end")

    # One CPU process: no FSDP / DeepSpeed; the accelerator is accelerate's single-process one.
    is_fsdp_enabled = False
    is_deepspeed_enabled = False

    @property
    def accelerator(self):
        acc = self.__dict__.get("_sim_accelerator")
        if acc is None:
            from accelerate import Accelerator

            acc = self.__dict__["_sim_accelerator"] = Accelerator()
        return acc

    @property
    def tokenizer(self):
        if _NEW_API:
            _warn.log("Trainer.tokenizer is now deprecated. You should use Trainer.processing_class instead.")
        return self.processing_class

    def add_callback(self, callback):
        self.callback_handler.append(callback() if isinstance(callback, type) else callback)

    def pop_callback(self, callback):
        for cb in list(self.callback_handler):
            if cb is callback or (isinstance(callback, type) and isinstance(cb, callback)):
                self.callback_handler.remove(cb)
                return cb

    def remove_callback(self, callback):
        self.pop_callback(callback)

    def _call(self, event, **kwargs):
        for cb in self.callback_handler:
            getattr(cb, event)(self.args, self.state, self.control, model=self.model, processing_class=self.processing_class, **kwargs)

    def is_world_process_zero(self):
        return True

    def is_local_process_zero(self):
        return True

    # -- data --
    def _model_for_signature(self):
        m = self.model
        get_base = getattr(m, "get_base_model", None)
        return get_base() if callable(get_base) else m

    def _signature_columns(self):
        from .modeling import PreTrainedModel, forward_params

        m = self._model_for_signature()
        if isinstance(m, PreTrainedModel):
            cols = forward_params(m._family, m._head)
        else:
            import inspect

            cols = list(inspect.signature(m.forward).parameters)
        return cols + ["label", "label_ids"] + list(self.args.label_names or [])

    def _remove_unused_columns(self, dataset, description):
        if not self.args.remove_unused_columns or not hasattr(dataset, "column_names") or not hasattr(dataset, "remove_columns"):
            return dataset
        sig = self._signature_columns()
        cols = dataset.column_names
        ignored = [c for c in cols if c not in sig]
        if len(ignored) == len(cols):
            raise ValueError(
                "No columns in the dataset match the model's forward method signature. The following columns have been ignored: [%s]. "
                "Please check the dataset and model. You may need to set `remove_unused_columns=False` in `TrainingArguments`." % ", ".join(ignored)
            )
        return dataset.remove_columns(ignored) if ignored else dataset

    def get_train_dataloader(self):
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        ds = self._remove_unused_columns(self.train_dataset, "training")
        g = torch.Generator().manual_seed(self.args.data_seed if self.args.data_seed is not None else self.args.seed)
        return torch.utils.data.DataLoader(ds, batch_size=self.args.train_batch_size, shuffle=True, collate_fn=self.data_collator,
                                           drop_last=self.args.dataloader_drop_last, generator=g)

    def get_eval_dataloader(self, eval_dataset=None):
        ds = eval_dataset if eval_dataset is not None else self.eval_dataset
        if ds is None:
            raise ValueError("Trainer: evaluation requires an eval_dataset.")
        ds = self._remove_unused_columns(ds, "evaluation")
        return torch.utils.data.DataLoader(ds, batch_size=self.args.eval_batch_size, shuffle=False, collate_fn=self.data_collator)

    def get_test_dataloader(self, test_dataset):
        return self.get_eval_dataloader(test_dataset)

    # -- optimisation --
    def create_optimizer(self):
        if self.optimizer is None:
            decay, no_decay = [], []
            for n, p in self.model.named_parameters():
                if not p.requires_grad:
                    continue
                (no_decay if n.endswith("bias") or "LayerNorm" in n or "layer_norm" in n else decay).append(p)
            groups = [{"params": decay, "weight_decay": self.args.weight_decay}, {"params": no_decay, "weight_decay": 0.0}]
            groups = [g for g in groups if g["params"]]
            if not groups:
                raise ValueError("optimizer got an empty parameter list")
            name = str(self.args.optim)
            if name == "sgd":
                self.optimizer = torch.optim.SGD(groups, lr=self.args.learning_rate)
            elif name in ("adamw_8bit", "paged_adamw_8bit", "paged_adamw_32bit"):
                try:
                    import bitsandbytes  # noqa: F401  (the simulated one: float AdamW underneath)
                except ImportError:
                    raise ImportError("You need to install `bitsandbytes` in order to use bitsandbytes optimizers: `pip install -U bitsandbytes`")
                self.optimizer = torch.optim.AdamW(groups, lr=self.args.learning_rate, betas=(self.args.adam_beta1, self.args.adam_beta2), eps=self.args.adam_epsilon)
            else:
                self.optimizer = torch.optim.AdamW(groups, lr=self.args.learning_rate, betas=(self.args.adam_beta1, self.args.adam_beta2), eps=self.args.adam_epsilon)
        return self.optimizer

    def create_scheduler(self, num_training_steps, optimizer=None):
        if self.lr_scheduler is None:
            self.lr_scheduler = get_scheduler(self.args.lr_scheduler_type, optimizer or self.optimizer, num_warmup_steps=self.args.get_warmup_steps(num_training_steps),
                                              num_training_steps=num_training_steps, scheduler_specific_kwargs=self.args.lr_scheduler_kwargs or None)
        return self.lr_scheduler

    def create_optimizer_and_scheduler(self, num_training_steps):
        self.create_optimizer()
        self.create_scheduler(num_training_steps, self.optimizer)

    def _label_names(self):
        if self.args.label_names:
            return list(self.args.label_names)
        from .modeling import PreTrainedModel

        m = self._model_for_signature()
        if isinstance(m, PreTrainedModel) and m._head == "qa":
            return ["start_positions", "end_positions"]
        return ["labels"]

    if _NUM_ITEMS:

        def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
            return self._compute_loss(model, inputs, return_outputs, num_items_in_batch)

    else:

        def compute_loss(self, model, inputs, return_outputs=False):
            return self._compute_loss(model, inputs, return_outputs, None)

    def _compute_loss(self, model, inputs, return_outputs, num_items_in_batch):
        labels = inputs.pop("labels", None) if self.compute_loss_func is not None else None
        outputs = model(**inputs)
        if self.compute_loss_func is not None:
            loss = self.compute_loss_func(outputs, labels, num_items_in_batch=num_items_in_batch)
        else:
            if isinstance(outputs, dict) and "loss" not in outputs:
                raise ValueError(
                    "The model did not return a loss from the inputs, only the following keys: %s. For reference, the inputs it received are %s."
                    % (",".join(outputs.keys()), ",".join(inputs.keys()))
                )
            loss = outputs["loss"] if isinstance(outputs, dict) else outputs[0]
        return (loss, outputs) if return_outputs else loss

    def _loss(self, inputs, n_items):
        if _NUM_ITEMS:
            return self.compute_loss(self.model, inputs, num_items_in_batch=n_items)
        return self.compute_loss(self.model, inputs)

    def log(self, logs, start_time=None):
        if self.state.epoch is not None:
            logs["epoch"] = self.state.epoch
        self.state.log_history.append(dict(logs, step=self.state.global_step))
        if "loss" in logs:
            print("step=%d loss=%.4f learning_rate=%.3e epoch=%.2f" % (self.state.global_step, logs["loss"], logs.get("learning_rate", 0.0), logs.get("epoch") or 0.0), flush=True)
        self._call("on_log", logs=logs)

    def train(self, resume_from_checkpoint=None, trial=None, ignore_keys_for_eval=None, **kwargs):
        if kwargs:
            raise TypeError("train() received got unexpected keyword arguments: %s." % ", ".join(kwargs))
        from _forgeenv_sim import progress

        with progress.muted():  # the Trainer prints its own log lines
            return self._sim_train(resume_from_checkpoint, ignore_keys_for_eval)

    def _sim_train(self, resume_from_checkpoint, ignore_keys_for_eval):
        args = self.args
        loader = self.get_train_dataloader()
        n_batches = len(loader)
        if n_batches == 0:
            raise ValueError("num_samples should be a positive integer value, but got num_samples=0")
        accum = max(1, args.gradient_accumulation_steps)
        per_epoch = max(n_batches // accum, 1)
        if args.max_steps > 0:
            total = args.max_steps
            epochs = math.ceil(total / per_epoch)
        else:
            total = math.ceil(args.num_train_epochs * per_epoch)
            epochs = math.ceil(args.num_train_epochs)
        resume_step = 0
        if resume_from_checkpoint:
            path = get_last_checkpoint(args.output_dir) if resume_from_checkpoint is True else resume_from_checkpoint
            if path is None or not os.path.isdir(path):
                raise ValueError("No valid checkpoint found in output directory (%s)" % args.output_dir)
            from _forgeenv_sim import safetensors_io

            own = dict(self.model.named_parameters())
            for k, (shape, data) in safetensors_io.load(os.path.join(path, "model.safetensors")).items():
                if k in own:
                    own[k].data[:] = data
            resume_step = TrainerState.load_from_json(os.path.join(path, "trainer_state.json")).global_step
        self.create_optimizer_and_scheduler(total)
        logging_steps = math.ceil(total * args.logging_steps) if args.logging_steps < 1 else int(args.logging_steps)
        eval_steps = args.eval_steps if args.eval_steps is not None else logging_steps
        eval_steps = math.ceil(total * eval_steps) if eval_steps < 1 else int(eval_steps)
        save_steps = math.ceil(total * args.save_steps) if args.save_steps < 1 else int(args.save_steps)
        st = self.state
        st.max_steps, st.num_train_epochs, st.logging_steps, st.eval_steps, st.save_steps = total, epochs, logging_steps, eval_steps, save_steps
        st.train_batch_size = args.train_batch_size
        st.global_step = 0
        st.epoch = 0.0
        self.model.train()
        if args.gradient_checkpointing and hasattr(self.model, "gradient_checkpointing_enable"):
            self.model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=args.gradient_checkpointing_kwargs)
        self._call("on_train_begin")
        total_loss, window_loss, window_steps = 0.0, 0.0, 0
        step_losses, step_acc, logged_before = [], 0.0, sum(1 for h in st.log_history if "loss" in h)
        params = [p for p in self.model.parameters() if p.requires_grad]
        done = False
        for epoch in range(epochs):
            self._call("on_epoch_begin")
            micro = 0
            for step, batch in enumerate(loader):
                if st.global_step < resume_step:
                    if (step + 1) % accum == 0 or step + 1 == n_batches:
                        st.global_step += 1
                    continue
                n_items = None
                if "labels" in batch and isinstance(batch["labels"], torch.Tensor):
                    n_items = sum(1 for v in batch["labels"].data if v != -100)
                loss = self._loss(dict(batch), n_items)
                if not isinstance(loss, torch.Tensor):
                    raise TypeError("loss must be a tensor (got %s)" % type(loss).__name__)
                (loss / accum).backward() if accum > 1 else loss.backward()
                lv = loss.item()
                window_loss += lv / accum
                step_acc += lv / accum
                micro += 1
                if micro % accum != 0 and step + 1 != n_batches:
                    continue
                if args.max_grad_norm and args.max_grad_norm > 0:
                    torch.nn.utils.clip_grad_norm_(params, args.max_grad_norm)
                self.optimizer.step()
                self.lr_scheduler.step()
                lr = self.lr_scheduler.get_last_lr()[0]
                self.model.zero_grad()
                st.global_step += 1
                window_steps += 1
                step_losses.append((st.global_step, step_acc))
                step_acc = 0.0
                st.epoch = epoch + (step + 1) / n_batches
                self._call("on_step_end")
                gs = st.global_step
                if args.logging_strategy == IntervalStrategy.STEPS and (gs % logging_steps == 0 or (args.logging_first_step and gs == 1)):
                    self.log({"loss": round(window_loss / window_steps, 4), "grad_norm": 1.0, "learning_rate": lr})
                    total_loss += window_loss
                    window_loss, window_steps = 0.0, 0
                if args.eval_strategy == IntervalStrategy.STEPS and gs % eval_steps == 0:
                    self._maybe_evaluate(ignore_keys_for_eval)
                if args.save_strategy == SaveStrategy.STEPS and gs % save_steps == 0:
                    self._save_checkpoint()
                if gs >= total or self.control.should_training_stop:
                    done = True
                    break
            if not done:
                st.epoch = float(epoch + 1)
            self._call("on_epoch_end")
            if args.logging_strategy == IntervalStrategy.EPOCH and window_steps:
                self.log({"loss": round(window_loss / window_steps, 4), "grad_norm": 1.0, "learning_rate": self.lr_scheduler.get_last_lr()[0]})
                total_loss += window_loss
                window_loss, window_steps = 0.0, 0
            if args.eval_strategy == IntervalStrategy.EPOCH:
                self._maybe_evaluate(ignore_keys_for_eval)
            if args.save_strategy == SaveStrategy.EPOCH:
                self._save_checkpoint()
            if done or self.control.should_training_stop:
                break
        total_loss += window_loss
        if sum(1 for h in st.log_history if "loss" in h) - logged_before < 2 and len(step_losses) >= 2:
            # The run logged (almost) no losses (logging_steps beyond the run's length): the simulation
            # still shows its progress, one line per step (at most ten), in the log line's format, on stderr
            # so that a script's own stdout stays exactly what it printed.
            stride = max(1, math.ceil(len(step_losses) / 10))
            for gs, lv in step_losses[::stride] + ([step_losses[-1]] if (len(step_losses) - 1) % stride else []):
                sys.stderr.write("step=%d loss=%.4f (sim: not logged by the script's logging_steps)\n" % (gs, lv))
        steps = max(st.global_step - resume_step, 1)
        if args.load_best_model_at_end and self._best_state is not None:
            own = dict(self.model.named_parameters())
            for k, data in self._best_state.items():
                own[k].data[:] = data
        runtime = round(_STEP_TIME * st.global_step, 4)
        metrics = {
            "train_runtime": runtime,
            "train_samples_per_second": round(st.global_step * args.train_batch_size / runtime, 3) if runtime else 0.0,
            "train_steps_per_second": round(st.global_step / runtime, 3) if runtime else 0.0,
            "total_flos": 0.0,
            "train_loss": total_loss / steps,
            "epoch": st.epoch,
        }
        st.log_history.append(dict(metrics, step=st.global_step))
        self._call("on_train_end")
        self.model.eval()
        return TrainOutput(st.global_step, total_loss / steps, metrics)

    def _maybe_evaluate(self, ignore_keys):
        metrics = self.evaluate(ignore_keys=ignore_keys)
        key = self.args.metric_for_best_model
        if key:
            key = key if key.startswith("eval_") else "eval_" + key
            val = metrics.get(key)
            if val is not None:
                better = self.state.best_metric is None or (val > self.state.best_metric if self.args.greater_is_better else val < self.state.best_metric)
                if better:
                    self.state.best_metric = val
                    self._best_state = {k: list(p.data) for k, p in self.model.named_parameters()}
                    self.state.best_model_checkpoint = os.path.join(self.args.output_dir, "checkpoint-%d" % self.state.global_step)
        return metrics

    def _save_checkpoint(self):
        out = os.path.join(self.args.output_dir, "checkpoint-%d" % self.state.global_step)
        self.save_model(out, _internal_call=True)
        self.state.save_to_json(os.path.join(out, "trainer_state.json"))
        limit = self.args.save_total_limit
        if limit:
            cps = sorted((d for d in os.listdir(self.args.output_dir) if d.startswith("checkpoint-") and d[11:].isdigit()), key=lambda d: int(d[11:]))
            for d in cps[:-limit]:
                shutil.rmtree(os.path.join(self.args.output_dir, d), ignore_errors=True)
        self._call("on_save")

    # -- evaluation --
    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None):
        names = self._label_names()
        has_labels = all(inputs.get(n) is not None for n in names)
        labels = None
        if has_labels:
            labels = tuple(inputs[n] for n in names)
            labels = labels[0] if len(labels) == 1 else labels
        with torch.no_grad():
            outputs = model(**inputs)
        loss = outputs.get("loss") if isinstance(outputs, dict) else None
        if loss is not None:
            loss = loss.detach()
        if prediction_loss_only:
            return loss, None, None
        ignore = set(ignore_keys or []) | {"loss", "past_key_values", "hidden_states", "attentions", "encoder_last_hidden_state", "decoder_hidden_states"}
        logits = tuple(v for k, v in outputs.items() if k not in ignore) if isinstance(outputs, dict) else outputs
        logits = logits[0] if len(logits) == 1 else logits
        return loss, logits, labels

    def _loop(self, dataset, prefix, ignore_keys, gen_kwargs=None):
        loader = self.get_eval_dataloader(dataset)
        self.model.eval()
        losses, preds, labels = [], None, None
        n_batches = 0
        want_preds = self.compute_metrics is not None and not self.args.prediction_loss_only
        for batch in loader:
            n_batches += 1
            loss, logits, lab = self._prediction_step(self.model, dict(batch), not want_preds and prefix != "test", ignore_keys, gen_kwargs)
            if loss is not None:
                losses.append(loss.item())
            if logits is not None:
                if self.preprocess_logits_for_metrics is not None:
                    logits = self.preprocess_logits_for_metrics(logits, lab)
                preds = _pad_cat(preds, _to_host(logits))
            if lab is not None:
                labels = _pad_cat(labels, _to_host(lab))
        metrics = {}
        if self.compute_metrics is not None and preds is not None and labels is not None:
            metrics = dict(self.compute_metrics(EvalPrediction(predictions=preds, label_ids=labels)))
        metrics = {k: (v.item() if hasattr(v, "item") and not isinstance(v, (list, dict)) else v) for k, v in metrics.items()}
        if losses:
            metrics[prefix + "_loss"] = sum(losses) / len(losses)
        runtime = round(_EVAL_TIME * max(n_batches, 1), 4)
        n = len(dataset) if hasattr(dataset, "__len__") else n_batches
        metrics[prefix + "_runtime"] = runtime
        metrics[prefix + "_samples_per_second"] = round(n / runtime, 3)
        metrics[prefix + "_steps_per_second"] = round(n_batches / runtime, 3)
        for k in list(metrics):
            if not k.startswith(prefix + "_"):
                metrics[prefix + "_" + k] = metrics.pop(k)
        return preds, labels, metrics

    def _prediction_step(self, model, inputs, loss_only, ignore_keys, gen_kwargs):
        return self.prediction_step(model, inputs, loss_only, ignore_keys=ignore_keys)

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval"):
        ds = eval_dataset if eval_dataset is not None else self.eval_dataset
        if isinstance(ds, dict) and not hasattr(ds, "column_names") or (isinstance(ds, dict) and type(ds).__name__ == "DatasetDict"):
            out = {}
            for name, d in ds.items():
                out.update(self.evaluate(d, ignore_keys, "%s_%s" % (metric_key_prefix, name)))
            return out
        if ds is None:
            raise ValueError("Trainer: evaluation requires an eval_dataset.")
        _, _, metrics = self._loop(ds, metric_key_prefix, ignore_keys)
        if self.state.epoch is not None:
            metrics["epoch"] = self.state.epoch
        self.state.log_history.append(dict(metrics, step=self.state.global_step))
        self._call("on_evaluate", metrics=metrics)
        return metrics

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test"):
        preds, labels, metrics = self._loop(test_dataset, metric_key_prefix, ignore_keys)
        return PredictionOutput(predictions=preds, label_ids=labels, metrics=metrics)

    # -- saving --
    def save_model(self, output_dir=None, _internal_call=False):
        out = output_dir if output_dir is not None else self.args.output_dir
        os.makedirs(out, exist_ok=True)
        self.model.save_pretrained(out, safe_serialization=self.args.save_safetensors)
        if self.processing_class is not None and hasattr(self.processing_class, "save_pretrained"):
            self.processing_class.save_pretrained(out)
        torch.save(self.args.to_dict(), os.path.join(out, "training_args.bin"))

    def save_state(self):
        os.makedirs(self.args.output_dir, exist_ok=True)
        self.state.save_to_json(os.path.join(self.args.output_dir, "trainer_state.json"))

    def log_metrics(self, split, metrics):
        print("***** %s metrics *****" % split)
        fmt = {k: (("%.4g" % v) if isinstance(v, float) else str(v)) for k, v in metrics.items()}
        kw = max(len(k) for k in fmt) if fmt else 0
        vw = max(len(v) for v in fmt.values()) if fmt else 0
        for k in sorted(fmt):
            print("  %s = %s" % (k.ljust(kw), fmt[k].rjust(vw)))

    def save_metrics(self, split, metrics, combined=True):
        os.makedirs(self.args.output_dir, exist_ok=True)
        with open(os.path.join(self.args.output_dir, "%s_results.json" % split), "w", encoding="utf-8") as f:
            json.dump(metrics, f, indent=4, sort_keys=True)
        if combined:
            path = os.path.join(self.args.output_dir, "all_results.json")
            allm = {}
            if os.path.exists(path):
                with open(path, encoding="utf-8") as f:
                    allm = json.load(f)
            allm.update(metrics)
            with open(path, "w", encoding="utf-8") as f:
                json.dump(allm, f, indent=4, sort_keys=True)

    def create_model_card(self, language=None, license=None, tags=None, model_name=None, finetuned_from=None, tasks=None, dataset_tags=None,
                          dataset=None, dataset_args=None, **kwargs):
        os.makedirs(self.args.output_dir, exist_ok=True)
        with open(os.path.join(self.args.output_dir, "README.md"), "w", encoding="utf-8") as f:
            f.write("---\nlibrary_name: transformers\n---\n\n# %s\n\nTrained with the simulated Trainer.\n" % (model_name or os.path.basename(self.args.output_dir)))

    def push_to_hub(self, commit_message="End of training", blocking=True, token=None, revision=None, **kwargs):
        from _forgeenv_sim import hub

        return hub.push(self.model, self.args.hub_model_id or os.path.basename(os.path.abspath(self.args.output_dir)))

    def hyperparameter_search(self, *args, **kwargs):
        raise RuntimeError("At least one of optuna or ray should be installed. To install optuna run `pip install optuna`. To install ray run `pip install ray[tune]`.")


class Seq2SeqTrainer(Trainer):
    if _NEW_API:

        @deprecate_tokenizer_kwarg("Seq2SeqTrainer")
        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, processing_class=None, model_init=None,
                     compute_loss_func=None, compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None):
            self._setup(model, args, data_collator, train_dataset, eval_dataset, processing_class, model_init, compute_loss_func, compute_metrics,
                        callbacks, optimizers, preprocess_logits_for_metrics)

    else:

        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, tokenizer=None, model_init=None,
                     compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None):
            self._setup(model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, None, compute_metrics, callbacks, optimizers,
                        preprocess_logits_for_metrics)

    def evaluate(self, eval_dataset=None, ignore_keys=None, metric_key_prefix="eval", **gen_kwargs):
        self._gen_kwargs = gen_kwargs
        return super().evaluate(eval_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)

    def predict(self, test_dataset, ignore_keys=None, metric_key_prefix="test", **gen_kwargs):
        self._gen_kwargs = gen_kwargs
        return super().predict(test_dataset, ignore_keys=ignore_keys, metric_key_prefix=metric_key_prefix)

    def _prediction_step(self, model, inputs, loss_only, ignore_keys, gen_kwargs):
        if not getattr(self.args, "predict_with_generate", False) or loss_only:
            return self.prediction_step(model, inputs, loss_only, ignore_keys=ignore_keys)
        kwargs = dict(getattr(self, "_gen_kwargs", {}) or {})
        if "max_length" not in kwargs and "max_new_tokens" not in kwargs and self.args.generation_max_length is not None:
            kwargs["max_length"] = self.args.generation_max_length
        if "num_beams" not in kwargs and self.args.generation_num_beams is not None:
            kwargs["num_beams"] = self.args.generation_num_beams
        gen_inputs = {k: v for k, v in inputs.items() if k in ("input_ids", "attention_mask")}
        with torch.no_grad():
            generated = model.generate(**gen_inputs, **kwargs)
            outputs = model(**inputs)
        loss = outputs.get("loss")
        labels = inputs.get("labels")
        return (loss.detach() if loss is not None else None), generated, labels

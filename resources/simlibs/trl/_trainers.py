"""TRL's preference / RL trainers over the simulated Trainer loop.

Every trainer turns its dataset rows into text (prompt + chosen / completion / prompt only, chat
templates applied to conversational rows), tokenizes it and trains the simulated model's language-
model loss with the real Trainer loop, so losses print as `step=N loss=X` and decrease. Reward
functions (GRPO, online DPO) are called on completions copied from the prompts, so a wrong reward
signature fails as it would for real. Signatures follow the trl release: `tokenizer=` before 0.12,
`processing_class=` from 0.12 on."""
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Union

from _forgeenv_sim import versions as _v

from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, TrainingArguments
from transformers.trainer import Trainer

_NEW = _v.deprecated("trl-sfttrainer-tokenizer-kwarg")  # processing_class=


def _as_text(value, tokenizer):
    if isinstance(value, list) and value and isinstance(value[0], dict) and "content" in value[0]:
        if getattr(tokenizer, "chat_template", None) is not None:
            return tokenizer.apply_chat_template(value, tokenize=False)
        return "\n".join(str(m["content"]) if not isinstance(m["content"], list) else " ".join(str(c.get("text", "")) for c in m["content"] if isinstance(c, dict))
                         for m in value)
    if isinstance(value, list):
        return " ".join(str(v) for v in value)
    return "" if value is None else str(value)


def _tokenizer_of(processing_class):
    return getattr(processing_class, "tokenizer", None) or processing_class


class _TextTrainer(Trainer):
    """Shared set-up: model from a name, tokenizer, PEFT, the text columns → input_ids."""

    _text_columns = (("prompt", "chosen"), ("prompt", "completion"), ("question", "response_j"), ("prompt",), ("messages",), ("text",))
    _config_name = "TrainingArguments"

    def _init_text(self, model, args, data_collator, train_dataset, eval_dataset, processing_class, callbacks, optimizers, peft_config,
                   compute_metrics=None, preprocess_logits_for_metrics=None, model_init_kwargs=None):
        if args is None:
            args = self._default_args()
        if isinstance(model, str):
            model = AutoModelForCausalLM.from_pretrained(model, **(model_init_kwargs or getattr(args, "model_init_kwargs", None) or {}))
        if processing_class is None:
            processing_class = AutoTokenizer.from_pretrained(model.name_or_path)
        tok = _tokenizer_of(processing_class)
        if getattr(tok, "pad_token", "x") is None:
            tok.pad_token = tok.eos_token
        if peft_config is not None:
            from peft import get_peft_model

            model = get_peft_model(model, peft_config)
        max_len = getattr(args, "max_length", None) or getattr(args, "max_seq_length", None) or 128
        self._sim_tokenizer = tok
        train_dataset = self._prepare(train_dataset, tok, max_len)
        eval_dataset = self._prepare(eval_dataset, tok, max_len) if eval_dataset is not None else None
        if data_collator is None or not callable(data_collator):
            data_collator = DataCollatorForLanguageModeling(tok, mlm=False)
        self._setup(model, args, data_collator, train_dataset, eval_dataset, processing_class, None, None, compute_metrics, callbacks, optimizers,
                    preprocess_logits_for_metrics)

    def _default_args(self):
        return TrainingArguments(output_dir="tmp_trainer")

    def _row_text(self, row, tok):
        for cols in self._text_columns:
            if all(c in row for c in cols):
                return " ".join(_as_text(row[c], tok) for c in cols)
        first = next(iter(row.values()))
        return _as_text(first, tok)

    def _prepare(self, dataset, tok, max_len):
        if dataset is None or (hasattr(dataset, "column_names") and "input_ids" in dataset.column_names):
            return dataset
        cols = dataset.column_names
        self._check_columns(cols)

        def fn(row):
            enc = tok(self._row_text(row, tok), truncation=True, max_length=max_len)
            return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

        return dataset.map(fn, remove_columns=cols)

    def _check_columns(self, cols):
        pass


def _trainer_init(cls_name, extra_params, required_columns=None):
    """Builds an __init__ with the release's keyword names: `tokenizer=` before trl 0.12, `processing_class=` after."""
    proc = "processing_class" if _NEW else "tokenizer"

    def __init__(self, model=None, ref_model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, processing_class=None,
                 model_init=None, compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None, peft_config=None,
                 **kwargs):
        if _NEW and "tokenizer" in kwargs:
            if _v.changed("trl-dpotrainer-tokenizer-kwarg"):
                raise TypeError("%s.__init__() got an unexpected keyword argument 'tokenizer'" % cls_name)
            warnings.warn("`tokenizer` is deprecated and will be removed in version 0.14.0 for `%s.__init__`. Use `processing_class` instead." % cls_name,
                          FutureWarning, stacklevel=2)
            processing_class = kwargs.pop("tokenizer")
        if not _NEW and "tokenizer" in kwargs:
            processing_class = kwargs.pop("tokenizer")
        for k in list(kwargs):
            if k not in extra_params:
                raise TypeError("%s.__init__() got an unexpected keyword argument '%s'" % (cls_name, k))
            v = kwargs.pop(k)
            if args is not None and hasattr(args, k) and v is not None:
                try:
                    setattr(args, k, v)
                except Exception:  # frozen or property
                    pass
            setattr(self, "_" + k, v)
        if not isinstance(model, str) and model is None and ref_model is not None and not hasattr(ref_model, "parameters"):
            raise ValueError("model must be given")
        self.ref_model = ref_model if hasattr(ref_model, "parameters") else None
        self._init_text(model, args, data_collator, train_dataset, eval_dataset, processing_class, callbacks, optimizers, peft_config,
                        compute_metrics, preprocess_logits_for_metrics)

    if not _NEW:
        # Older signatures spell the processing class `tokenizer`.
        def __init_old__(self, model=None, ref_model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, tokenizer=None, **kwargs):
            if "processing_class" in kwargs:
                raise TypeError("%s.__init__() got an unexpected keyword argument 'processing_class'" % cls_name)
            __init__(self, model, ref_model, args, data_collator, train_dataset, eval_dataset, tokenizer, **kwargs)

        __init_old__.__qualname__ = cls_name + ".__init__"
        return __init_old__
    __init__.__qualname__ = cls_name + ".__init__"
    return __init__


def _config(name, base=TrainingArguments, **fields_):
    ns = {"__annotations__": {}}
    for k, (t, default) in fields_.items():
        ns["__annotations__"][k] = t
        ns[k] = field(default_factory=default) if callable(default) and not isinstance(default, type) and getattr(default, "__name__", "") == "<lambda>" else default
    # Built under a private name and renamed once it is a dataclass (like _SFTConfig): the API surface
    # layer surfaces public names at class creation, before @dataclass could add the fields' __init__.
    cls = dataclass(type("_" + name, (base,), ns))
    cls.__name__ = cls.__qualname__ = name
    cls.__init__.__qualname__ = name + ".__init__"
    cls.__module__ = "trl.trainer"
    return cls


_COMMON = dict(
    max_length=(Optional[int], None),
    max_prompt_length=(Optional[int], None),
    max_completion_length=(Optional[int], None),
    beta=(float, 0.1),
    disable_dropout=(bool, True),
    label_pad_token_id=(int, -100),
    padding_value=(Optional[int], None),
    truncation_mode=(str, "keep_end"),
    generate_during_eval=(bool, False),
    is_encoder_decoder=(Optional[bool], None),
    model_init_kwargs=(Optional[Dict[str, Any]], None),
    ref_model_init_kwargs=(Optional[Dict[str, Any]], None),
    dataset_num_proc=(Optional[int], None),
    precompute_ref_log_probs=(bool, False),
)

DPOConfig = _config("DPOConfig", loss_type=(str, "sigmoid"), label_smoothing=(float, 0.0), reference_free=(bool, False), rpo_alpha=(Optional[float], None),
                    sync_ref_model=(bool, False), ref_adapter_name=(Optional[str], None), model_adapter_name=(Optional[str], None), use_logits_to_keep=(bool, False),
                    padding_free=(bool, False), **_COMMON)
KTOConfig = _config("KTOConfig", desirable_weight=(float, 1.0), undesirable_weight=(float, 1.0), loss_type=(str, "kto"), **_COMMON)
BCOConfig = _config("BCOConfig", prompt_sample_size=(int, 1024), min_density_ratio=(float, 0.5), max_density_ratio=(float, 10.0), **_COMMON)
ORPOConfig = _config("ORPOConfig", **_COMMON)
CPOConfig = _config("CPOConfig", loss_type=(str, "sigmoid"), cpo_alpha=(float, 1.0), simpo_gamma=(float, 0.5), label_smoothing=(float, 0.0), **_COMMON)
RewardConfig = _config("RewardConfig", max_length=(Optional[int], None), center_rewards_coefficient=(Optional[float], None), dataset_num_proc=(Optional[int], None),
                       disable_dropout=(bool, True))
_GEN = dict(
    max_new_tokens=(int, 64), temperature=(float, 0.9), missing_eos_penalty=(Optional[float], None), reward_model_path=(Optional[str], None),
    judge=(Optional[str], None), num_generations=(int, 8), max_prompt_length=(Optional[int], 512), max_completion_length=(Optional[int], 256),
    model_init_kwargs=(Optional[Dict[str, Any]], None), beta=(float, 0.0), num_iterations=(int, 1), epsilon=(float, 0.2), loss_type=(str, "dapo"),
    importance_sampling_level=(str, "token"), scale_rewards=(str, "group"), use_vllm=(bool, False), vllm_mode=(str, "server"),
    top_p=(float, 1.0), top_k=(Optional[int], None), generation_batch_size=(Optional[int], None), steps_per_generation=(Optional[int], None),
    log_completions=(bool, False), reward_weights=(Optional[List[float]], None), mask_truncated_completions=(bool, False), epsilon_high=(Optional[float], None),
    dataset_num_proc=(Optional[int], None), disable_dropout=(bool, False), max_length=(Optional[int], None), shuffle_dataset=(bool, True),
)
GRPOConfig = _config("GRPOConfig", **_GEN)
OnlineDPOConfig = _config("OnlineDPOConfig", **dict(_GEN, beta=(float, 0.1), num_generations=(int, 2), loss_type=(str, "sigmoid")))
RLOOConfig = _config("RLOOConfig", **dict(_GEN, num_generations=(int, 2)))
PPOConfig = _config("PPOConfig", exp_name=(str, "ppo"), sft_model_path=(str, "EleutherAI/pythia-160m"), reward_model_path=(str, "EleutherAI/pythia-160m"),
                    total_episodes=(Optional[int], None), num_ppo_epochs=(int, 4), num_mini_batches=(int, 1), response_length=(int, 53),
                    stop_token=(Optional[str], None), stop_token_id=(Optional[int], None), missing_eos_penalty=(Optional[float], None),
                    local_rollout_forward_batch_size=(int, 64), num_sample_generations=(int, 10), temperature=(float, 0.7), kl_coef=(float, 0.05),
                    kl_estimator=(str, "k1"), cliprange=(float, 0.2), vf_coef=(float, 0.1), cliprange_value=(float, 0.2), gamma=(float, 1.0),
                    lam=(float, 0.95), whiten_rewards=(bool, False), model_adapter_name=(Optional[str], None), ref_adapter_name=(Optional[str], None),
                    dataset_num_proc=(Optional[int], None), world_size=(Optional[int], None), num_total_batches=(Optional[int], None),
                    local_batch_size=(Optional[int], None), batch_size=(Optional[int], None), mini_batch_size=(Optional[int], None),
                    local_mini_batch_size=(Optional[int], None), num_nodes=(int, 1))

_PREF_EXTRA = {"beta", "loss_type", "max_length", "max_prompt_length", "max_target_length", "max_completion_length", "label_pad_token_id",
               "padding_value", "truncation_mode", "generate_during_eval", "is_encoder_decoder", "disable_dropout", "precompute_ref_log_probs",
               "model_init_kwargs", "ref_model_init_kwargs", "label_smoothing", "model_adapter_name", "ref_adapter_name", "reference_free",
               "force_use_ref_model", "dataset_num_proc"}


class DPOTrainer(_TextTrainer):
    _text_columns = (("prompt", "chosen"), ("chosen",))
    __init__ = _trainer_init("DPOTrainer", _PREF_EXTRA)

    def _check_columns(self, cols):
        if "chosen" not in cols and "input_ids" not in cols:
            raise KeyError("chosen")


class KTOTrainer(_TextTrainer):
    _text_columns = (("prompt", "completion"),)
    # embedding_func/embedding_tokenizer: BCO ran through KTOTrainer (loss_type="bco") in trl 0.9; the
    # snapshot's recorded signature decides whether a release accepts them.
    __init__ = _trainer_init("KTOTrainer", _PREF_EXTRA | {"embedding_func", "embedding_tokenizer"})

    def _check_columns(self, cols):
        for c in ("prompt", "completion", "label"):
            if c not in cols:
                raise KeyError(c)


class BCOTrainer(KTOTrainer):
    __init__ = _trainer_init("BCOTrainer", _PREF_EXTRA | {"embedding_func", "embedding_tokenizer"})


class ORPOTrainer(_TextTrainer):
    _text_columns = (("prompt", "chosen"), ("chosen",))
    __init__ = _trainer_init("ORPOTrainer", _PREF_EXTRA)


class CPOTrainer(ORPOTrainer):
    __init__ = _trainer_init("CPOTrainer", _PREF_EXTRA)


class RewardTrainer(_TextTrainer):
    _text_columns = (("prompt", "chosen"), ("chosen",), ("input_ids_chosen",))
    __init__ = _trainer_init("RewardTrainer", {"max_length"})


def _call_rewards(reward_funcs, dataset, tok):
    if not reward_funcs or dataset is None:
        return
    funcs = reward_funcs if isinstance(reward_funcs, (list, tuple)) else [reward_funcs]
    rows = [dataset[i] for i in range(min(2, len(dataset)))]
    if not rows or "prompt" not in rows[0]:
        return
    prompts = [r["prompt"] for r in rows]
    conversational = isinstance(prompts[0], list)
    completions = [[{"role": "assistant", "content": "<think>\nsimulated\n</think>\n" + _as_text(p, None)}] if conversational else " " + _as_text(p, None)
                   for p in prompts]
    extra = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    for f in funcs:
        if callable(f) and not hasattr(f, "parameters"):
            out = f(prompts=prompts, completions=completions, completion_ids=[[0] for _ in rows], trainer_state=None, **extra)
            if out is not None and len(out) != len(prompts):
                raise ValueError("reward function %s returned %d rewards for %d completions" % (getattr(f, "__name__", f), len(out), len(prompts)))


class GRPOTrainer(_TextTrainer):
    _text_columns = (("prompt",),)

    def __init__(self, model, reward_funcs, args=None, train_dataset=None, eval_dataset=None, processing_class=None, reward_processing_classes=None,
                 callbacks=None, optimizers=(None, None), peft_config=None, **kwargs):
        for k in kwargs:
            if k not in ("quantization_config", "rollout_func", "tools"):
                raise TypeError("GRPOTrainer.__init__() got an unexpected keyword argument '%s'" % k)
        if args is None:
            args = GRPOConfig(output_dir="tmp_trainer")
        self.reward_funcs = reward_funcs
        _call_rewards(reward_funcs, train_dataset, processing_class)
        self._init_text(model, args, None, train_dataset, eval_dataset, processing_class, callbacks, optimizers, peft_config)

    def _check_columns(self, cols):
        if "prompt" not in cols:
            raise KeyError("prompt")


class OnlineDPOTrainer(_TextTrainer):
    _text_columns = (("prompt",),)

    def __init__(self, model, ref_model=None, reward_funcs=None, judge=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None,
                 processing_class=None, reward_processing_classes=None, peft_config=None, compute_metrics=None, callbacks=None, optimizers=(None, None),
                 preprocess_logits_for_metrics=None, **kwargs):
        if "reward_model" in kwargs:
            reward_funcs = kwargs.pop("reward_model")
        for k in kwargs:
            raise TypeError("OnlineDPOTrainer.__init__() got an unexpected keyword argument '%s'" % k)
        if reward_funcs is None and judge is None:
            raise ValueError("Either `reward_funcs` or `judge` must be provided.")
        self.reward_funcs, self.judge = reward_funcs, judge
        _call_rewards(reward_funcs, train_dataset, processing_class)
        self._init_text(model, args, data_collator, train_dataset, eval_dataset, processing_class, callbacks, optimizers, peft_config, compute_metrics,
                        preprocess_logits_for_metrics)


class RLOOTrainer(GRPOTrainer):
    pass


class PPOTrainer(_TextTrainer):
    """trl ≥ 0.12's PPOTrainer (the PPOv2 design: policy, ref, reward and value models)."""

    _text_columns = (("input_ids",), ("prompt",))

    def __init__(self, args, processing_class, model, ref_model, reward_model, train_dataset, value_model=None, data_collator=None, eval_dataset=None,
                 optimizers=(None, None), callbacks=None, peft_config=None):
        if args.total_episodes is None:
            args.total_episodes = int(args.num_train_epochs * len(train_dataset))
        if args.max_steps is None or args.max_steps <= 0:
            bs = args.per_device_train_batch_size * args.gradient_accumulation_steps
            args.max_steps = max(1, args.total_episodes // max(1, bs))
        self.value_model, self.reward_model = value_model, reward_model
        self._init_text(model, args, data_collator, train_dataset, eval_dataset, processing_class, callbacks, optimizers, peft_config)

    def generate_completions(self, sampling=False):
        """Generates completions for a few evaluation prompts (trl prints them as a table; the simulation keeps quiet)."""
        ds = self.eval_dataset
        if ds is None or len(ds) == 0:
            return []
        tok = self._sim_tokenizer
        rows = [ds[i]["input_ids"] for i in range(min(2, len(ds)))]
        return [tok.decode(r, skip_special_tokens=True) for r in rows]


class LogCompletionsCallback:
    def __init__(self, trainer, generation_config=None, num_prompts=None, freq=None):
        self.trainer, self.generation_config, self.num_prompts, self.freq = trainer, generation_config, num_prompts, freq

    def __getattr__(self, name):
        if name.startswith("on_"):
            return lambda *a, **k: None
        raise AttributeError(name)


def setup_chat_format(model, tokenizer, format="chatml", resize_to_multiple_of=None):
    if getattr(tokenizer, "chat_template", None) is not None:
        raise ValueError("Chat template is already added to the tokenizer. If you want to overwrite it, please set it to None")
    tokenizer.chat_template = "chatml"
    tokenizer.add_special_tokens({"additional_special_tokens": ["<|im_start|>", "<|im_end|>"]})
    if hasattr(model, "resize_token_embeddings"):
        model.resize_token_embeddings(len(tokenizer))
    return model, tokenizer

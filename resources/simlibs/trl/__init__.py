"""Simulated trl (ForgeEnv): SFTTrainer / SFTConfig over the simulated Trainer, with the version-gated
signatures (SFTConfig from 0.9; SFTTrainer's dataset kwargs removed and processing_class= in 0.12)."""
import warnings
from dataclasses import dataclass
from typing import Any, Dict, Optional

from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer, DataCollatorForLanguageModeling, TrainingArguments
from transformers.trainer import Trainer, deprecate_tokenizer_kwarg

__version__ = _v.version("trl")

_HAS_CONFIG = _v.at_least("trl", "0.9")
_NEW = _v.at_least("trl", "0.12")


@dataclass
class _SFTConfig(TrainingArguments):
    dataset_text_field: str = "text"
    packing: bool = False
    max_seq_length: Optional[int] = None
    dataset_num_proc: Optional[int] = None
    dataset_batch_size: int = 1000
    model_init_kwargs: Optional[Dict[str, Any]] = None
    dataset_kwargs: Optional[Dict[str, Any]] = None
    eval_packing: Optional[bool] = None
    num_of_sequences: int = 1024
    chars_per_token: float = 3.6
    use_liger: bool = False


_SFTConfig.__name__ = _SFTConfig.__qualname__ = "SFTConfig"
_SFTConfig.__init__.__qualname__ = "SFTConfig.__init__"


def _prepare(dataset, tokenizer, text_field, formatting_func, max_len, packing):
    if dataset is None or not hasattr(dataset, "column_names") or "input_ids" in dataset.column_names:
        return dataset  # already tokenized, or an iterable such as ConstantLengthDataset
    cols = dataset.column_names

    def tok(batch):
        if formatting_func is not None:
            texts = formatting_func(batch)
            if not isinstance(texts, list):
                raise ValueError(
                    "The `formatting_func` should return a list of processed strings since it can lead to silent bugs."
                )
        elif text_field not in batch and _HAS_CONFIG and "messages" in batch:
            # Conversational datasets (trl >= 0.9): the chat template renders each conversation.
            from ._trainers import _as_text

            texts = [_as_text(m, tokenizer) for m in batch["messages"]]
        elif text_field not in batch and _HAS_CONFIG and "prompt" in batch and "completion" in batch:
            from ._trainers import _as_text

            texts = [_as_text(p, tokenizer) + _as_text(c, tokenizer) for p, c in zip(batch["prompt"], batch["completion"])]
        else:
            texts = batch[text_field]
        enc = tokenizer(texts, truncation=True, max_length=max_len, padding=False, add_special_tokens=True)
        return {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"]}

    ds = dataset.map(tok, batched=True, remove_columns=cols)
    if packing:
        eos = tokenizer.eos_token_id
        flat = []
        for row in ds["input_ids"]:
            flat.extend(row + ([eos] if eos is not None else []))
        chunks = [flat[i : i + max_len] for i in range(0, len(flat) - max_len + 1, max_len)] or [flat]
        from datasets import Dataset

        ds = Dataset.from_dict({"input_ids": chunks, "attention_mask": [[1] * len(c) for c in chunks]})
    return ds


class SFTTrainer(Trainer):
    if _NEW and _v.below("trl", "0.13"):
        # 0.12 took processing_class= but still accepted the dataset keywords (deprecated, removed in 0.13).

        @deprecate_tokenizer_kwarg("SFTTrainer", "0.14.0")
        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, processing_class=None, model_init=None,
                     compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None, peft_config=None,
                     dataset_text_field=None, packing=False, formatting_func=None, max_seq_length=None, infinite=None, num_of_sequences=None,
                     chars_per_token=None, dataset_num_proc=None, dataset_batch_size=None, neftune_noise_alpha=None, model_init_kwargs=None,
                     dataset_kwargs=None, eval_packing=None):
            legacy = {"dataset_text_field": dataset_text_field, "packing": packing or None, "max_seq_length": max_seq_length,
                      "dataset_num_proc": dataset_num_proc, "model_init_kwargs": model_init_kwargs, "dataset_kwargs": dataset_kwargs}
            self._sft(model, args, data_collator, train_dataset, eval_dataset, processing_class, model_init, compute_metrics, callbacks, optimizers,
                      preprocess_logits_for_metrics, peft_config, formatting_func, {k: v for k, v in legacy.items() if v is not None})

    elif _NEW:

        @deprecate_tokenizer_kwarg("SFTTrainer", "0.14.0")
        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, processing_class=None, model_init=None,
                     compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None, peft_config=None, formatting_func=None):
            self._sft(model, args, data_collator, train_dataset, eval_dataset, processing_class, model_init, compute_metrics, callbacks, optimizers,
                      preprocess_logits_for_metrics, peft_config, formatting_func, {})

    else:

        def __init__(self, model=None, args=None, data_collator=None, train_dataset=None, eval_dataset=None, tokenizer=None, model_init=None,
                     compute_metrics=None, callbacks=None, optimizers=(None, None), preprocess_logits_for_metrics=None, peft_config=None,
                     dataset_text_field=None, packing=False, formatting_func=None, max_seq_length=None, infinite=None, num_of_sequences=1024,
                     chars_per_token=3.6, dataset_num_proc=None, dataset_batch_size=1000, neftune_noise_alpha=None, model_init_kwargs=None,
                     dataset_kwargs=None, eval_packing=None):
            legacy = {"dataset_text_field": dataset_text_field, "packing": packing or None, "max_seq_length": max_seq_length,
                      "dataset_num_proc": dataset_num_proc, "model_init_kwargs": model_init_kwargs, "dataset_kwargs": dataset_kwargs}
            self._sft(model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, compute_metrics, callbacks, optimizers,
                      preprocess_logits_for_metrics, peft_config, formatting_func, {k: v for k, v in legacy.items() if v is not None})

    def _sft(self, model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, compute_metrics, callbacks, optimizers,
             preprocess_logits_for_metrics, peft_config, formatting_func, legacy):
        if args is None:
            args = SFTConfig(output_dir="tmp_trainer") if _HAS_CONFIG else TrainingArguments(output_dir="tmp_trainer")
        settings = {"dataset_text_field": getattr(args, "dataset_text_field", None), "packing": getattr(args, "packing", False),
                    "max_seq_length": getattr(args, "max_seq_length", None), "model_init_kwargs": getattr(args, "model_init_kwargs", None)}
        for k, v in legacy.items():
            if _HAS_CONFIG:
                warnings.warn(
                    "You passed a `%s` argument to the SFTTrainer, the value you passed will override the one in the `SFTConfig`." % k, UserWarning, stacklevel=3
                )
            settings[k] = v
        if isinstance(model, str):
            model = AutoModelForCausalLM.from_pretrained(model, **(settings["model_init_kwargs"] or {}))
        if tokenizer is None:
            tokenizer = AutoTokenizer.from_pretrained(model.name_or_path)
        if getattr(tokenizer, "pad_token", "x") is None:
            tokenizer.pad_token = tokenizer.eos_token
        if peft_config is not None:
            from peft import get_peft_model

            model = get_peft_model(model, peft_config)
        text_field = settings["dataset_text_field"]
        if text_field is None and formatting_func is None and not _HAS_CONFIG:
            if train_dataset is not None and "input_ids" not in (getattr(train_dataset, "column_names", None) or ["input_ids"]):
                raise ValueError(
                    "You passed `packing=False` to the SFTTrainer/SFTConfig, but you didn't pass a `dataset_text_field` or `formatting_func` argument."
                )
        max_len = settings["max_seq_length"] or min(getattr(tokenizer, "model_max_length", 1024), 1024)
        if settings["max_seq_length"] is None:
            _warn.log("You didn't pass a `max_seq_length` argument to the SFTTrainer, this will default to %d" % max_len)
        train_dataset = _prepare(train_dataset, tokenizer, text_field or "text", formatting_func, max_len, settings["packing"])
        eval_dataset = _prepare(eval_dataset, tokenizer, text_field or "text", formatting_func, max_len, settings["packing"]) if eval_dataset is not None else None
        if data_collator is None:
            data_collator = DataCollatorForLanguageModeling(tokenizer, mlm=False)
        self._setup(model, args, data_collator, train_dataset, eval_dataset, tokenizer, model_init, None, compute_metrics, callbacks, optimizers,
                    preprocess_logits_for_metrics)


class DataCollatorForCompletionOnlyLM(DataCollatorForLanguageModeling):
    def __init__(self, response_template, instruction_template=None, *args, mlm=False, ignore_index=-100, padding_free=False, **kwargs):
        super().__init__(*args, mlm=mlm, **kwargs)
        self.ignore_index = ignore_index
        self.response_ids = self.tokenizer.encode(response_template, add_special_tokens=False) if isinstance(response_template, str) else list(response_template)

    def __call__(self, examples):
        batch = super().__call__(examples)
        labels = batch["labels"]
        t = labels.shape[1]
        r = self.response_ids
        for i in range(labels.shape[0]):
            row = batch["input_ids"].data[i * t : (i + 1) * t]
            start = None
            for j in range(t - len(r) + 1):
                if row[j : j + len(r)] == r:
                    start = j + len(r)
                    break
            if start is None:
                warnings.warn("Could not find response key %s in the following instance. This instance will be ignored in loss calculation." % r, UserWarning)
                start = t
            for j in range(start):
                labels.data[i * t + j] = self.ignore_index
        return batch


# name -> (first trl version that has it, first version without it, module, attribute)
_GATED = {
    "DPOTrainer": ("0.5", None, "_trainers", "DPOTrainer"),
    "DPOConfig": ("0.9", None, "_trainers", "DPOConfig"),
    "KTOTrainer": ("0.8.2", None, "_trainers", "KTOTrainer"),
    "KTOConfig": ("0.8.2", None, "_trainers", "KTOConfig"),
    "ORPOTrainer": ("0.8.2", None, "_trainers", "ORPOTrainer"),
    "ORPOConfig": ("0.8.2", None, "_trainers", "ORPOConfig"),
    "CPOTrainer": ("0.8.2", None, "_trainers", "CPOTrainer"),
    "CPOConfig": ("0.8.2", None, "_trainers", "CPOConfig"),
    "BCOTrainer": ("0.9", None, "_trainers", "BCOTrainer"),
    "BCOConfig": ("0.9", None, "_trainers", "BCOConfig"),
    "RewardTrainer": ("0.5", None, "_trainers", "RewardTrainer"),
    "RewardConfig": ("0.7", None, "_trainers", "RewardConfig"),
    "GRPOTrainer": ("0.14", None, "_trainers", "GRPOTrainer"),
    "GRPOConfig": ("0.14", None, "_trainers", "GRPOConfig"),
    "OnlineDPOTrainer": ("0.11", "0.22", "_trainers", "OnlineDPOTrainer"),
    "OnlineDPOConfig": ("0.11", "0.22", "_trainers", "OnlineDPOConfig"),
    "RLOOTrainer": ("0.9", None, "_trainers", "RLOOTrainer"),
    "RLOOConfig": ("0.9", None, "_trainers", "RLOOConfig"),
    "LogCompletionsCallback": ("0.12", None, "_trainers", "LogCompletionsCallback"),
    "setup_chat_format": ("0.7", None, "_trainers", "setup_chat_format"),
    "ModelConfig": ("0.8", None, "_parser", "ModelConfig"),
    "TrlParser": ("0.8", None, "_parser", "TrlParser"),
    "ScriptArguments": ("0.11", None, "_parser", "ScriptArguments"),
    "get_peft_config": ("0.8", None, "_parser", "get_peft_config"),
    "get_quantization_config": ("0.8", None, "_parser", "get_quantization_config"),
    "get_kbit_device_map": ("0.8", None, "_parser", "get_kbit_device_map"),
    "AutoModelForCausalLMWithValueHead": ("0.1", "0.22", "_ppo_legacy", "AutoModelForCausalLMWithValueHead"),
    "AutoModelForSeq2SeqLMWithValueHead": ("0.1", "0.22", "_ppo_legacy", "AutoModelForSeq2SeqLMWithValueHead"),
    "set_seed": ("0.1", "0.12", "transformers", "set_seed"),
}


def __getattr__(name):
    import importlib

    if name == "SFTConfig" and _HAS_CONFIG:
        return _SFTConfig
    if name in ("PPOConfig", "PPOTrainer"):
        if _v.below("trl", "0.12"):
            return getattr(importlib.import_module("trl._ppo_legacy"), name)
        if _v.below("trl", "0.22"):
            return getattr(importlib.import_module("trl._trainers"), name)
    gate = _GATED.get(name)
    if gate is not None and _v.at_least("trl", gate[0]) and (gate[1] is None or _v.below("trl", gate[1])):
        mod = importlib.import_module(gate[2] if gate[2] == "transformers" else "trl." + gate[2])
        return getattr(mod, gate[3])
    raise AttributeError("module 'trl' has no attribute '%s'" % name)


if _HAS_CONFIG:
    SFTConfig = _SFTConfig

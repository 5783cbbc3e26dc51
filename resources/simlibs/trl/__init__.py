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

_HAS_CONFIG = _v.changed("trl-sftconfig-added")
_NEW = _v.deprecated("trl-sfttrainer-tokenizer-kwarg")  # processing_class=


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
    if _NEW and not _v.changed("trl-sfttrainer-dataset-text-field-kwarg"):
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


# name -> (catalog id of the drift that added it or None, catalog id of the one that removed it or None, module, attribute):
# the boundaries are the drift catalog's (resources/drifts/catalog.json), checked against the real releases.
_GATED = {
    "DPOTrainer": ("trl-dpotrainer-added", None, "_trainers", "DPOTrainer"),
    "DPOConfig": ("trl-dpoconfig-added", None, "_trainers", "DPOConfig"),
    "KTOTrainer": ("trl-kto-added", None, "_trainers", "KTOTrainer"),
    "KTOConfig": ("trl-kto-added", None, "_trainers", "KTOConfig"),
    "ORPOTrainer": ("trl-orpo-cpo-added", "trl-orpo-moved-to-experimental", "_trainers", "ORPOTrainer"),
    "ORPOConfig": ("trl-orpo-cpo-added", "trl-orpo-moved-to-experimental", "_trainers", "ORPOConfig"),
    "CPOTrainer": ("trl-orpo-cpo-added", "trl-cpo-moved-to-experimental", "_trainers", "CPOTrainer"),
    "CPOConfig": ("trl-orpo-cpo-added", "trl-cpo-moved-to-experimental", "_trainers", "CPOConfig"),
    "BCOTrainer": ("trl-bco-added", "trl-bco-moved-to-experimental", "_trainers", "BCOTrainer"),
    "BCOConfig": ("trl-bco-added", "trl-bco-moved-to-experimental", "_trainers", "BCOConfig"),
    "RewardTrainer": ("trl-rewardtrainer-added", None, "_trainers", "RewardTrainer"),
    "RewardConfig": ("trl-rewardconfig-added", None, "_trainers", "RewardConfig"),
    "GRPOTrainer": ("trl-grpo-added", None, "_trainers", "GRPOTrainer"),
    "GRPOConfig": ("trl-grpo-added", None, "_trainers", "GRPOConfig"),
    "OnlineDPOTrainer": ("trl-online-dpo-added", "trl-online-dpo-moved-to-experimental", "_trainers", "OnlineDPOTrainer"),
    "OnlineDPOConfig": ("trl-online-dpo-added", "trl-online-dpo-moved-to-experimental", "_trainers", "OnlineDPOConfig"),
    "RLOOTrainer": ("trl-rloo-added", None, "_trainers", "RLOOTrainer"),
    "RLOOConfig": ("trl-rloo-added", None, "_trainers", "RLOOConfig"),
    "LogCompletionsCallback": ("trl-logcompletionscallback-added", None, "_trainers", "LogCompletionsCallback"),
    "setup_chat_format": ("trl-setup-chat-format-added", "trl-setup-chat-format-removed", "_trainers", "setup_chat_format"),
    "ModelConfig": ("trl-model-config-added", None, "_parser", "ModelConfig"),
    "TrlParser": ("trl-trlparser-added", None, "_parser", "TrlParser"),
    "ScriptArguments": ("trl-scriptarguments-added", None, "_parser", "ScriptArguments"),
    "get_peft_config": ("trl-model-config-added", None, "_parser", "get_peft_config"),
    "get_quantization_config": ("trl-model-config-added", None, "_parser", "get_quantization_config"),
    "get_kbit_device_map": ("trl-model-config-added", None, "_parser", "get_kbit_device_map"),
    "AutoModelForCausalLMWithValueHead": (None, "trl-value-head-models-removed", "_ppo_legacy", "AutoModelForCausalLMWithValueHead"),
    "AutoModelForSeq2SeqLMWithValueHead": (None, "trl-value-head-models-removed", "_ppo_legacy", "AutoModelForSeq2SeqLMWithValueHead"),
    "set_seed": (None, "trl-set-seed-removed", "transformers", "set_seed"),
}


def __getattr__(name):
    import importlib

    if name == "SFTConfig" and _HAS_CONFIG:
        return _SFTConfig
    if name in ("PPOConfig", "PPOTrainer"):
        if not _v.changed("trl-ppotrainer-v2-migration"):
            return getattr(importlib.import_module("trl._ppo_legacy"), name)
        if not _v.changed("trl-ppo-moved-to-experimental"):
            return getattr(importlib.import_module("trl._trainers"), name)
    gate = _GATED.get(name)
    if gate is not None and (gate[0] is None or _v.changed(gate[0])) and (gate[1] is None or not _v.changed(gate[1])):
        mod = importlib.import_module(gate[2] if gate[2] == "transformers" else "trl." + gate[2])
        return getattr(mod, gate[3])
    raise AttributeError("module 'trl' has no attribute '%s'" % name)


if _HAS_CONFIG:
    SFTConfig = _SFTConfig

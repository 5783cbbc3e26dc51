"""Simulated peft (ForgeEnv): LoRA adapters injected into the simulated models' Linear layers."""
import enum
import json
import os
import random
from dataclasses import asdict, dataclass, field
from typing import List, Optional, Union

import torch
from torch import nn

from _forgeenv_sim import safetensors_io
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn
from _forgeenv_sim.hashing import stable_hash

__version__ = _v.version("peft")


class TaskType(str, enum.Enum):
    SEQ_CLS = "SEQ_CLS"
    SEQ_2_SEQ_LM = "SEQ_2_SEQ_LM"
    CAUSAL_LM = "CAUSAL_LM"
    TOKEN_CLS = "TOKEN_CLS"
    QUESTION_ANS = "QUESTION_ANS"
    FEATURE_EXTRACTION = "FEATURE_EXTRACTION"


class PeftType(str, enum.Enum):
    LORA = "LORA"


DEFAULT_TARGETS = {
    "bert": ["query", "value"], "distilbert": ["q_lin", "v_lin"], "roberta": ["query", "value"], "albert": ["query", "value"],
    "electra": ["query", "value"], "deberta-v2": ["query_proj", "value_proj"], "gpt2": ["c_attn"], "opt": ["q_proj", "v_proj"],
    "llama": ["q_proj", "v_proj"], "qwen2": ["q_proj", "v_proj"], "falcon": ["query_key_value"], "t5": ["q", "v"], "bart": ["q_proj", "v_proj"], "vit": ["query", "value"], "clip": ["q_proj", "v_proj"],
}
HEAD_MODULES = {"SEQ_CLS": ["classifier", "score", "pre_classifier", "classification_head"], "TOKEN_CLS": ["classifier", "score"], "QUESTION_ANS": ["qa_outputs"]}


@dataclass
class PeftConfig:
    base_model_name_or_path: Optional[str] = None
    revision: Optional[str] = None
    peft_type: Optional[str] = None
    task_type: Optional[Union[str, TaskType]] = None
    inference_mode: bool = False

    def to_dict(self):
        return {k: (v.value if isinstance(v, enum.Enum) else v) for k, v in asdict(self).items()}

    def save_pretrained(self, save_directory, **kwargs):
        os.makedirs(save_directory, exist_ok=True)
        d = self.to_dict()
        if isinstance(d.get("target_modules"), set):
            d["target_modules"] = sorted(d["target_modules"])
        with open(os.path.join(save_directory, "adapter_config.json"), "w", encoding="utf-8") as f:
            json.dump(d, f, indent=2, sort_keys=True, default=list)

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, subfolder=None, **kwargs):
        folder = os.path.join(pretrained_model_name_or_path, subfolder) if subfolder else pretrained_model_name_or_path
        p = os.path.join(folder, "adapter_config.json")
        if not os.path.exists(p):
            if "/" in str(pretrained_model_name_or_path) and not os.path.exists(str(pretrained_model_name_or_path)):
                # A Hub adapter id: the simulated hub serves a default LoRA adapter for the base model it names.
                return LoraConfig(task_type="CAUSAL_LM", base_model_name_or_path=str(pretrained_model_name_or_path))
            raise ValueError("Can't find '%s' at '%s'" % ("adapter_config.json", pretrained_model_name_or_path))
        with open(p, encoding="utf-8") as f:
            d = json.load(f)
        from ._more import peft_config_from_dict

        return peft_config_from_dict(d)


@dataclass
class LoraConfig(PeftConfig):
    r: int = 8
    target_modules: Optional[Union[List[str], str]] = None
    if _v.changed("peft-loraconfig-exclude-modules-added"):
        exclude_modules: Optional[Union[List[str], str]] = None
    lora_alpha: int = 8
    lora_dropout: float = 0.0
    fan_in_fan_out: bool = False
    bias: str = "none"
    use_rslora: bool = False
    modules_to_save: Optional[List[str]] = None
    init_lora_weights: Union[bool, str] = True
    layers_to_transform: Optional[Union[List[int], int]] = None
    layers_pattern: Optional[Union[List[str], str]] = None
    rank_pattern: Optional[dict] = field(default_factory=dict)
    alpha_pattern: Optional[dict] = field(default_factory=dict)
    megatron_config: Optional[dict] = None
    megatron_core: Optional[str] = "megatron.core"
    loftq_config: Union[dict, None] = field(default_factory=dict)
    if _v.changed("peft-loraconfig-use-dora-added"):
        use_dora: bool = False
    if _v.changed("peft-loraconfig-layer-replication-added"):
        layer_replication: Optional[List] = None
    if _v.changed("peft-loraconfig-lora-bias-added"):
        lora_bias: bool = False

    def __post_init__(self):
        self.peft_type = PeftType.LORA
        if isinstance(self.target_modules, list):
            self.target_modules = set(self.target_modules)
        if self.bias not in ("none", "all", "lora_only"):
            raise ValueError("Invalid bias option %s, should be one of 'none', 'all', 'lora_only'" % self.bias)
        if self.task_type is not None and not isinstance(self.task_type, TaskType):
            try:
                self.task_type = TaskType(self.task_type)
            except ValueError:
                raise ValueError("Invalid task type: '%s'. Must be one of the following task types: %s." % (self.task_type, ", ".join(t.value for t in TaskType))) from None


class LoraLayer(nn.Module):
    def __init__(self, base_layer, r, alpha, seed):
        super().__init__()
        self.base_layer = base_layer
        self.r, self.scaling = r, alpha / r
        self.lora_A = nn.ModuleDict({"default": nn.Linear(base_layer.in_features, r, bias=False)})
        self.lora_B = nn.ModuleDict({"default": nn.Linear(r, base_layer.out_features, bias=False)})
        rng = random.Random(seed)
        a = self.lora_A["default"].weight
        vals = [rng.uniform(-0.5, 0.5) for _ in a.data]
        m = sum(vals) / len(vals)
        a.data[:] = [v - m for v in vals]  # mean-centred, so a fresh adapter leaves q unchanged
        self.lora_B["default"].weight.zero_()
        self.in_features, self.out_features = base_layer.in_features, base_layer.out_features

    @property
    def weight(self):
        return self.base_layer.weight

    def forward(self, x):
        return self.base_layer(x) + self.lora_B["default"](self.lora_A["default"](x)) * self.scaling

    def merged_base(self):
        # Preserve the sum of tensor means (the simulated model's progress) when folding B@A into W.
        delta = sum(sum(p.data) / len(p.data) for p in (self.lora_A["default"].weight, self.lora_B["default"].weight))
        w = self.base_layer.weight
        w.data[:] = [v + delta for v in w.data]
        return self.base_layer


def _inject(model, config):
    family = getattr(model, "_family", None)
    targets = config.target_modules
    if targets is None:
        if family not in DEFAULT_TARGETS:
            raise ValueError("Please specify `target_modules` in `peft_config`")
        targets = set(DEFAULT_TARGETS[family])
        config.target_modules = targets
    if targets == "all-linear":
        targets = {"all-linear"}
    if isinstance(targets, str):
        import re

        match = lambda name: re.fullmatch(targets, name) is not None  # noqa: E731
    elif "all-linear" in targets if isinstance(targets, (set, list)) else False:
        match = lambda name: isinstance(dict(model.named_modules())[name], nn.Linear) and not any(h in name for h in ("classifier", "score", "lm_head", "qa_outputs"))  # noqa: E731
    else:
        match = lambda name: name.split(".")[-1] in targets or name in targets  # noqa: E731
    found = []
    for name, mod in list(model.named_modules()):
        if isinstance(mod, nn.Linear) and name and match(name):
            found.append(name)
    if not found:
        raise ValueError(
            "Target modules %s not found in the base model. Please check the target modules and try again." % (targets,)
        )
    for p in model.parameters():
        p.requires_grad_(False)
    for name in found:
        parent_name, _, leaf = name.rpartition(".")
        parent = dict(model.named_modules())[parent_name] if parent_name else model
        base = parent._modules[leaf]
        parent._modules[leaf] = LoraLayer(base, config.r, config.lora_alpha, stable_hash("lora", name))
    heads = list(config.modules_to_save or [])
    if config.task_type is not None:
        heads += HEAD_MODULES.get(config.task_type.value, [])
    for name, mod in model.named_modules():
        if any(name == h or name.startswith(h + ".") for h in heads):
            for p in mod.parameters():
                p.requires_grad_(True)
    if config.bias == "all":
        for n, p in model.named_parameters():
            if n.endswith("bias"):
                p.requires_grad_(True)
    return found


class PeftModel(nn.Module):
    def __init__(self, model, peft_config, adapter_name="default", autocast_adapter_dtype=True, low_cpu_mem_usage=False):
        super().__init__()
        self.base_model = _LoraModel(model, peft_config)
        self.peft_config = {adapter_name: peft_config}
        self.active_adapter = adapter_name
        peft_config.base_model_name_or_path = getattr(model, "name_or_path", None)

    def __getattr__(self, name):
        try:
            return nn.Module.__getattr__(self, name)
        except AttributeError:
            pass
        tuner = nn.Module.__getattr__(self, "base_model")
        if name in type(tuner).__dict__ or name in tuner.__dict__:
            return getattr(tuner, name)  # the tuner's own API (e.g. AdaLoRA's update_and_allocate), as real peft
        for c in type(self).__mro__:
            d = c.__dict__.get(name)
            if d is not None and type(d).__name__ == "_Removed":
                # Hidden by the API layer because the real PeftModel lacks it: real peft reaches it on
                # the tuner (LoraModel.merge_and_unload), which ours implements on PeftModel.
                return d.__get__(self, type(self))
        return getattr(tuner.model, name)

    @property
    def config(self):
        return self.base_model.model.config

    def get_base_model(self):
        return self.base_model.model

    def forward(self, *args, **kwargs):
        return self.base_model.model(*args, **kwargs)

    def generate(self, *args, **kwargs):
        return self.base_model.model.generate(*args, **kwargs)

    def get_nb_trainable_parameters(self):
        trainable = sum(p.numel() for p in self.parameters() if p.requires_grad)
        return trainable, sum(p.numel() for p in self.parameters())

    def print_trainable_parameters(self):
        t, a = self.get_nb_trainable_parameters()
        print("trainable params: {:,d} || all params: {:,d} || trainable%: {:.4f}".format(t, a, 100 * t / a))

    def save_pretrained(self, save_directory, safe_serialization=True, selected_adapters=None, save_embedding_layers="auto", is_main_process=True, **kwargs):
        if os.path.isfile(save_directory):
            raise ValueError("Provided path (%s) should be a directory, not a file" % save_directory)
        os.makedirs(save_directory, exist_ok=True)
        sd = {k: v for k, v in self.state_dict().items() if "lora_" in k or any(h in k for h in ("classifier", "score", "qa_outputs"))}
        sd = {k.replace(".default", ""): v for k, v in sd.items()}
        if safe_serialization:
            safetensors_io.save({k: (tuple(v.shape), list(map(float, v.data))) for k, v in sd.items()}, os.path.join(save_directory, "adapter_model.safetensors"))
        else:
            torch.save(sd, os.path.join(save_directory, "adapter_model.bin"))
        self.peft_config[self.active_adapter].save_pretrained(save_directory)

    def merge_and_unload(self, progressbar=False, safe_merge=False, adapter_names=None):
        model = self.base_model.model
        for name, mod in list(model.named_modules()):
            for child_name, child in list(mod._modules.items()):
                if isinstance(child, LoraLayer):
                    mod._modules[child_name] = child.merged_base()
        return model

    def unload(self):
        return self.merge_and_unload()

    @classmethod
    def from_pretrained(cls, model, model_id, adapter_name="default", is_trainable=False, config=None, autocast_adapter_dtype=True, ephemeral_gpu_offload=False, low_cpu_mem_usage=False, **kwargs):
        cfg = config or PeftConfig.from_pretrained(model_id)
        peft = _wrap(model, cfg)
        path = os.path.join(model_id, "adapter_model.safetensors")
        if os.path.exists(path):
            own = {k.replace(".default", ""): p for k, p in peft.named_parameters()}
            for k, (shape, data) in safetensors_io.load(path).items():
                if k in own:
                    own[k].data[:] = data
        if not is_trainable:
            for p in peft.parameters():
                p.requires_grad_(False)
        return peft


class _LoraModel(nn.Module):
    def __init__(self, model, config):
        super().__init__()
        _inject(model, config)
        self.model = model
        self.peft_config = {"default": config}
        if getattr(config, "peft_type", None) == "ADALORA":
            # AdaLoRA's rank allocator: the simulation keeps every rank (the budget schedule is not modelled).
            self.update_and_allocate = lambda global_step: None

    def forward(self, *args, **kwargs):
        return self.model(*args, **kwargs)


def _subclass(name):
    return type(name, (PeftModel,), {})


PeftModelForSequenceClassification = _subclass("PeftModelForSequenceClassification")
PeftModelForCausalLM = _subclass("PeftModelForCausalLM")
PeftModelForSeq2SeqLM = _subclass("PeftModelForSeq2SeqLM")
PeftModelForTokenClassification = _subclass("PeftModelForTokenClassification")
PeftModelForQuestionAnswering = _subclass("PeftModelForQuestionAnswering")
PeftModelForFeatureExtraction = _subclass("PeftModelForFeatureExtraction")
_BY_TASK = {
    "SEQ_CLS": PeftModelForSequenceClassification, "CAUSAL_LM": PeftModelForCausalLM, "SEQ_2_SEQ_LM": PeftModelForSeq2SeqLM,
    "TOKEN_CLS": PeftModelForTokenClassification, "QUESTION_ANS": PeftModelForQuestionAnswering, "FEATURE_EXTRACTION": PeftModelForFeatureExtraction,
}


def _wrap(model, config):
    if hasattr(config, "_as_lora"):
        # Prompt-learning methods train through small adapters in the simulation.
        lora = config._as_lora()
        peft = _wrap(model, lora)
        peft.peft_config = {"default": config}
        config.base_model_name_or_path = getattr(model, "name_or_path", None)
        return peft
    cls = _BY_TASK.get(config.task_type.value if config.task_type else "", PeftModel)
    return cls(model, config)


def get_peft_model(model, peft_config, adapter_name="default", mixed=False, autocast_adapter_dtype=True, revision=None, low_cpu_mem_usage=False):
    if not isinstance(peft_config, PeftConfig):
        raise AttributeError("'%s' object has no attribute 'task_type'" % type(peft_config).__name__)
    return _wrap(model, peft_config)


def prepare_model_for_kbit_training(model, use_gradient_checkpointing=True, gradient_checkpointing_kwargs=None):
    for p in model.parameters():
        p.requires_grad_(False)
    if use_gradient_checkpointing and hasattr(model, "gradient_checkpointing_enable"):
        model.gradient_checkpointing_enable(gradient_checkpointing_kwargs=gradient_checkpointing_kwargs)
    return model


def _prepare_model_for_int8_training(*args, **kwargs):
    _warn.future("prepare_model_for_int8_training is deprecated and will be removed in a future version. Use prepare_model_for_kbit_training instead.", stacklevel=2)
    return prepare_model_for_kbit_training(*args, **kwargs)


_prepare_model_for_int8_training.__name__ = "prepare_model_for_int8_training"


from ._more import (  # noqa: E402,F401
    AdaLoraConfig,
    AutoPeftModel,
    AutoPeftModelForCausalLM,
    AutoPeftModelForSeq2SeqLM,
    AutoPeftModelForSequenceClassification,
    AutoPeftModelForTokenClassification,
    FrodConfig,
    LoftQConfig,
    PrefixTuningConfig,
    PromptEncoderConfig,
    PromptEncoderReparameterizationType,
    PromptTuningConfig,
    PromptTuningInit,
    get_peft_model_state_dict,
    replace_lora_weights_loftq,
    set_peft_model_state_dict,
)


# The registries scripts index by PEFT type (the data decides which modules expose them).
PEFT_TYPE_TO_CONFIG_MAPPING = {"LORA": LoraConfig, "ADALORA": AdaLoraConfig, "PROMPT_TUNING": PromptTuningConfig,
                               "PREFIX_TUNING": PrefixTuningConfig, "P_TUNING": PromptEncoderConfig}
PEFT_TYPE_TO_TUNER_MAPPING = {"LORA": _LoraModel, "ADALORA": _LoraModel}
# peft.peft_model's backward-compatibility shim (peft 0.15+ module __getattr__) returns the tuner mapping.
PEFT_TYPE_TO_MODEL_MAPPING = PEFT_TYPE_TO_TUNER_MAPPING


def __getattr__(name):
    # Removed in peft 0.10: from-imports then fail with the real ImportError.
    if name == "prepare_model_for_int8_training" and not _v.changed("peft-prepare-model-for-int8-training-removed"):
        return _prepare_model_for_int8_training
    raise AttributeError("module 'peft' has no attribute '%s'" % name)

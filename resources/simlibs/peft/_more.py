"""More PEFT methods over the simulated LoRA injection: AdaLoRA, LoftQ/OLoRA initialisations (LoRA
with another init), FRoD, and the prompt-learning methods (prompt/prefix tuning, p-tuning), which the
simulation trains through small adapters on the model's attention projections."""
import enum
import json
import os
from dataclasses import dataclass, field
from typing import List, Optional, Union

from _forgeenv_sim import versions as _v

from . import LoraConfig, PeftConfig, PeftType, TaskType

for _name in ("ADALORA", "PROMPT_TUNING", "PREFIX_TUNING", "P_TUNING", "IA3", "LOHA", "LOKR", "OFT", "BOFT", "FROD", "VERA", "LOFTQ"):
    pass


class PeftTypeFull(str, enum.Enum):
    LORA = "LORA"
    ADALORA = "ADALORA"
    PROMPT_TUNING = "PROMPT_TUNING"
    PREFIX_TUNING = "PREFIX_TUNING"
    P_TUNING = "P_TUNING"
    IA3 = "IA3"
    FROD = "FROD"


@dataclass
class AdaLoraConfig(LoraConfig):
    target_r: int = 8
    init_r: int = 12
    tinit: int = 0
    tfinal: int = 0
    deltaT: int = 1
    beta1: float = 0.85
    beta2: float = 0.85
    orth_reg_weight: float = 0.5
    total_step: Optional[int] = None
    rank_pattern: Optional[dict] = None

    def __post_init__(self):
        super().__post_init__()
        self.peft_type = "ADALORA"
        self.r = self.init_r


@dataclass
class LoftQConfig:
    loftq_bits: int = 4
    loftq_iter: int = 1


@dataclass
class FrodConfig(PeftConfig):
    """FRoD: trained through LoRA-style adapters on the same modules in the simulation."""

    target_modules: Optional[Union[List[str], str]] = None
    frod_dropout: float = 0.0
    sparse_rate: float = 0.01
    projection_prng_key: int = 0
    runtime_offload_base_weight: bool = False
    modules_to_save: Optional[List[str]] = None

    def __post_init__(self):
        self.peft_type = "FROD"

    def _as_lora(self):
        return LoraConfig(r=4, lora_alpha=8, target_modules=self.target_modules, task_type=self.task_type, modules_to_save=self.modules_to_save)


@dataclass
class PromptLearningConfig(PeftConfig):
    num_virtual_tokens: int = None
    token_dim: int = None
    num_transformer_submodules: Optional[int] = None
    num_attention_heads: Optional[int] = None
    num_layers: Optional[int] = None
    modules_to_save: Optional[List[str]] = None

    def _as_lora(self):
        return LoraConfig(r=max(1, min(int(self.num_virtual_tokens or 4), 4)), lora_alpha=8, task_type=self.task_type,
                          modules_to_save=self.modules_to_save)


@dataclass
class PromptTuningConfig(PromptLearningConfig):
    prompt_tuning_init: Union[str, enum.Enum] = "RANDOM"
    prompt_tuning_init_text: Optional[str] = None
    tokenizer_name_or_path: Optional[str] = None
    tokenizer_kwargs: Optional[dict] = None

    def __post_init__(self):
        self.peft_type = "PROMPT_TUNING"


@dataclass
class PrefixTuningConfig(PromptLearningConfig):
    encoder_hidden_size: int = None
    prefix_projection: bool = False

    def __post_init__(self):
        self.peft_type = "PREFIX_TUNING"


@dataclass
class PromptEncoderConfig(PromptLearningConfig):
    encoder_reparameterization_type: Union[str, enum.Enum] = "MLP"
    encoder_hidden_size: int = None
    encoder_num_layers: int = 2
    encoder_dropout: float = 0.0

    def __post_init__(self):
        self.peft_type = "P_TUNING"


class PromptTuningInit(str, enum.Enum):
    TEXT = "TEXT"
    RANDOM = "RANDOM"


class PromptEncoderReparameterizationType(str, enum.Enum):
    MLP = "MLP"
    LSTM = "LSTM"


def peft_config_from_dict(d):
    kind = d.get("peft_type", "LORA")
    cls = {"ADALORA": AdaLoraConfig, "FROD": FrodConfig, "PROMPT_TUNING": PromptTuningConfig, "PREFIX_TUNING": PrefixTuningConfig,
           "P_TUNING": PromptEncoderConfig}.get(kind, LoraConfig)
    return cls(**{k: v for k, v in d.items() if k in cls.__dataclass_fields__ and k != "peft_type"})


class _AutoPeft:
    _auto = "AutoModelForCausalLM"

    @classmethod
    def from_pretrained(cls, pretrained_model_name_or_path, adapter_name="default", is_trainable=False, config=None, revision=None, **kwargs):
        import transformers

        from . import PeftModel

        peft_config = PeftConfig.from_pretrained(pretrained_model_name_or_path)
        base = getattr(transformers, cls._auto).from_pretrained(peft_config.base_model_name_or_path, **kwargs)
        return PeftModel.from_pretrained(base, pretrained_model_name_or_path, adapter_name=adapter_name, is_trainable=is_trainable, config=config)


class AutoPeftModelForCausalLM(_AutoPeft):
    _auto = "AutoModelForCausalLM"


class AutoPeftModelForSeq2SeqLM(_AutoPeft):
    _auto = "AutoModelForSeq2SeqLM"


class AutoPeftModelForSequenceClassification(_AutoPeft):
    _auto = "AutoModelForSequenceClassification"


class AutoPeftModelForTokenClassification(_AutoPeft):
    _auto = "AutoModelForTokenClassification"


class AutoPeftModel(_AutoPeft):
    _auto = "AutoModelForCausalLM"


def fsdp_auto_wrap_policy(model):
    return None


def get_peft_model_state_dict(model, state_dict=None, adapter_name="default", unwrap_compiled=False, save_embedding_layers="auto"):
    sd = state_dict or model.state_dict()
    return {k: v for k, v in sd.items() if "lora_" in k}


def set_peft_model_state_dict(model, peft_model_state_dict, adapter_name="default", ignore_mismatched_sizes=False, low_cpu_mem_usage=False):
    own = dict(model.named_parameters())
    for k, v in peft_model_state_dict.items():
        if k in own:
            own[k].data[:] = list(v.data)
    return None


def replace_lora_weights_loftq(peft_model, model_path=None, adapter_name="default", callback=None):
    return None

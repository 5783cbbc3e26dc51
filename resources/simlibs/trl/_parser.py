"""TrlParser (HfArgumentParser + `--config` YAML), ModelConfig, ScriptArguments and the
get_*_config helpers, as the trl scripts use them."""
import os
import sys
from dataclasses import dataclass, field
from typing import List, Optional

from transformers import HfArgumentParser


@dataclass
class ScriptArguments:
    dataset_name: Optional[str] = None
    dataset_config: Optional[str] = None
    dataset_train_split: str = "train"
    dataset_test_split: str = "test"
    dataset_streaming: bool = False
    gradient_checkpointing_use_reentrant: bool = False
    ignore_bias_buffers: bool = False


@dataclass
class ModelConfig:
    model_name_or_path: Optional[str] = None
    model_revision: str = "main"
    torch_dtype: Optional[str] = None
    dtype: Optional[str] = None
    trust_remote_code: bool = False
    attn_implementation: Optional[str] = None
    use_peft: bool = False
    lora_r: int = 16
    lora_alpha: int = 32
    lora_dropout: float = 0.05
    lora_target_modules: Optional[List[str]] = None
    lora_target_parameters: Optional[List[str]] = None
    lora_modules_to_save: Optional[List[str]] = None
    lora_task_type: str = "CAUSAL_LM"
    use_rslora: bool = False
    use_dora: bool = False
    load_in_8bit: bool = False
    load_in_4bit: bool = False
    bnb_4bit_quant_type: str = "nf4"
    use_bnb_nested_quant: bool = False
    bnb_4bit_quant_storage: Optional[str] = None

    def __post_init__(self):
        if self.load_in_8bit and self.load_in_4bit:
            raise ValueError("You can't use 8 bit and 4 bit precision at the same time")
        if isinstance(self.lora_target_modules, list) and len(self.lora_target_modules) == 1:
            self.lora_target_modules = self.lora_target_modules[0]


class TrlParser(HfArgumentParser):
    # trl <= 0.12 names the first parameter `parsers` (with `ignore_extra_args`), later releases
    # `dataclass_types`; the API layer binds the era's real signature, so both spellings arrive here.
    def __init__(self, dataclass_types=None, parsers=None, ignore_extra_args=False, **kwargs):
        if dataclass_types is None:
            dataclass_types = parsers
        self._ignore_extra_args = bool(ignore_extra_args)
        super().__init__(dataclass_types=dataclass_types, **kwargs)

    def parse_args_and_config(self, args=None, return_remaining_strings=False, fail_with_unknown_args=True):
        args = list(args) if args is not None else sys.argv[1:]
        if "--config" in args:
            i = args.index("--config")
            config_path = args[i + 1]
            del args[i : i + 2]
            import yaml

            with open(config_path, encoding="utf-8") as f:
                config = yaml.safe_load(f) or {}
            env = config.pop("env", {})
            if not isinstance(env, dict):
                raise ValueError("`env` field should be a dict in the YAML file.")
            for k, v in env.items():
                os.environ[k] = str(v)
            defaults = self.set_defaults_with_config(**config)
        else:
            defaults = {}
        output = self.parse_args_into_dataclasses(args=args, return_remaining_strings=True)
        remaining = output[-1]
        output = output[:-1]
        unknown = list(defaults)
        if unknown and fail_with_unknown_args:
            raise ValueError("Some specified config arguments are not used by the TrlParser: %s" % unknown)
        if remaining and fail_with_unknown_args and not return_remaining_strings:
            raise ValueError("Some specified arguments are not used by the TrlParser: %s" % remaining)
        return (*output, remaining) if return_remaining_strings else output

    def _known_dests(self):
        return {a.dest for a in self._actions}

    def set_defaults_with_config(self, **kwargs):
        known = self._known_dests()
        for action in self._actions:
            if action.dest in kwargs:
                action.default = kwargs[action.dest]
                action.required = False
        return {k: v for k, v in kwargs.items() if k not in known}


def _model_args(model_args, kwargs):
    # The parameter is `model_config` in older trl and `model_args` in newer ones; calls bound against the
    # recorded signature arrive by keyword.
    return model_args if model_args is not None else kwargs.get("model_config")


def get_quantization_config(model_args=None, **kwargs):
    from transformers import BitsAndBytesConfig

    model_args = _model_args(model_args, kwargs)

    if model_args.load_in_4bit:
        return BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_compute_dtype=model_args.dtype or model_args.torch_dtype,
                                  bnb_4bit_quant_type=model_args.bnb_4bit_quant_type, bnb_4bit_use_double_quant=model_args.use_bnb_nested_quant)
    if model_args.load_in_8bit:
        return BitsAndBytesConfig(load_in_8bit=True)
    return None


def get_kbit_device_map():
    return None


def get_peft_config(model_args=None, **kwargs):
    model_args = _model_args(model_args, kwargs)
    if model_args.use_peft is False:
        return None
    from peft import LoraConfig

    return LoraConfig(task_type=model_args.lora_task_type, r=model_args.lora_r, target_modules=model_args.lora_target_modules,
                      lora_alpha=model_args.lora_alpha, lora_dropout=model_args.lora_dropout, bias="none",
                      modules_to_save=model_args.lora_modules_to_save)

"""Simulated transformers (ForgeEnv): the slice of the Hugging Face API the task corpus uses, with
version-gated names and signatures. Version-gated names live in __getattr__ so that a removed name
fails with Python's own `cannot import name 'X' from 'transformers'`."""
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

from . import _families
from .data_collator import (
    DataCollatorForLanguageModeling,
    DataCollatorForSeq2Seq,
    DataCollatorForTokenClassification,
    DataCollatorWithPadding,
    DefaultDataCollator,
    default_data_collator,
)
from .image_processing import AutoFeatureExtractor, AutoImageProcessor, BaseImageProcessor, BatchFeature, ViTFeatureExtractor, ViTImageProcessor
from .modeling import AUTO_CLASSES as _AUTO
from .modeling import AutoConfig, GenerationConfig, PretrainedConfig, PreTrainedModel
from .modeling import config_class as _config_class
from .modeling import model_class as _model_class
from .optimization import (
    get_constant_schedule,
    get_constant_schedule_with_warmup,
    get_cosine_schedule_with_warmup,
    get_linear_schedule_with_warmup,
    get_polynomial_decay_schedule_with_warmup,
    get_scheduler,
)
from .pipelines import Pipeline, pipeline
from .tokenization import AutoTokenizer, BatchEncoding, PreTrainedTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast
from .tokenization import tokenizer_class as _tokenizer_class
from .trainer import (
    EarlyStoppingCallback,
    EvalPrediction,
    PrinterCallback,
    ProgressCallback,
    Seq2SeqTrainer,
    Trainer,
    TrainerCallback,
    TrainerControl,
    TrainerState,
    enable_full_determinism,
    set_seed,
)
from .training_args import IntervalStrategy, SchedulerType, Seq2SeqTrainingArguments, TrainingArguments
from .utils import logging

__version__ = _v.version("transformers")

AutoModel = _AUTO["AutoModel"]
AutoModelForSequenceClassification = _AUTO["AutoModelForSequenceClassification"]
AutoModelForTokenClassification = _AUTO["AutoModelForTokenClassification"]
AutoModelForQuestionAnswering = _AUTO["AutoModelForQuestionAnswering"]
AutoModelForCausalLM = _AUTO["AutoModelForCausalLM"]
AutoModelForSeq2SeqLM = _AUTO["AutoModelForSeq2SeqLM"]
AutoModelForMaskedLM = _AUTO["AutoModelForMaskedLM"]
AutoModelForImageClassification = _AUTO["AutoModelForImageClassification"]


class BitsAndBytesConfig:
    def __init__(self, load_in_8bit=False, load_in_4bit=False, llm_int8_threshold=6.0, llm_int8_skip_modules=None, llm_int8_enable_fp32_cpu_offload=False,
                 llm_int8_has_fp16_weight=False, bnb_4bit_compute_dtype=None, bnb_4bit_quant_type="fp4", bnb_4bit_use_double_quant=False,
                 bnb_4bit_quant_storage=None, **kwargs):
        self.load_in_8bit, self.load_in_4bit = load_in_8bit, load_in_4bit
        self.bnb_4bit_compute_dtype, self.bnb_4bit_quant_type = bnb_4bit_compute_dtype, bnb_4bit_quant_type

    def __bool__(self):
        return bool(self.load_in_8bit or self.load_in_4bit)


def is_torch_available():
    return True


def _concrete_names():
    names = {}
    for fam, spec in _families.FAMILIES.items():
        names[spec["prefix"] + "Config"] = ("config", fam, None)
        for head in spec["heads"]:
            names[_families.model_class_name(fam, head)] = ("model", fam, head)
        if spec["style"] != "image":
            prefix = {"opt": "GPT2", "llama": "GPT2"}.get(fam, spec["prefix"])
            names[prefix + "TokenizerFast"] = ("tok", fam, True)
            names[prefix + "Tokenizer"] = ("tok", fam, False)
    names["T5ForConditionalGeneration"] = ("model", "t5", "seq2seq")
    names["BartForConditionalGeneration"] = ("model", "bart", "seq2seq")
    names["LlamaTokenizerFast"] = ("tok", "llama", True)
    return names


_CONCRETE = _concrete_names()


def __getattr__(name):
    if name == "AdamW" and _v.below("transformers", "4.46"):
        from .optimization import AdamW

        return AdamW
    if name == "AutoModelWithLMHead" and _v.below("transformers", "4.46"):
        from .modeling import _AutoModelWithLMHead

        return _AutoModelWithLMHead
    hit = _CONCRETE.get(name)
    if hit is not None:
        kind, fam, extra = hit
        if kind == "config":
            return _config_class(fam)
        if kind == "model":
            return _model_class(fam, extra)
        return _tokenizer_class(fam, extra)
    raise AttributeError("module 'transformers' has no attribute '%s'" % name)

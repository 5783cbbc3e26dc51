"""Simulated transformers (ForgeEnv): the slice of the Hugging Face API the task corpus uses, with
version-gated names and signatures. Version-gated names live in __getattr__ so that a removed name
fails with Python's own `cannot import name 'X' from 'transformers'`."""
from _forgeenv_sim import versions as _v
from _forgeenv_sim import warn as _warn

from . import _families
from .data.processors.squad import SquadExample, SquadFeatures, SquadV1Processor, SquadV2Processor, squad_convert_examples_to_features
from .data_collator import (
    DataCollatorForLanguageModeling,
    DataCollatorForSeq2Seq,
    DataCollatorForTokenClassification,
    DataCollatorForWholeWordMask,
    DataCollatorWithPadding,
    DefaultDataCollator,
    default_data_collator,
)
from .hf_argparser import HfArgumentParser
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
from . import audio as _audio
from .audio import AutoModelForCTC, Wav2Vec2Config, Wav2Vec2CTCTokenizer, Wav2Vec2FeatureExtractor, Wav2Vec2ForCTC, Wav2Vec2Processor
from .multimodal import AutoProcessor, DonutProcessor, IdeficsForVisionText2Text, IdeficsProcessor, VisionEncoderDecoderConfig, VisionEncoderDecoderModel
from .whisper import WhisperConfig, WhisperFeatureExtractor, WhisperForConditionalGeneration, WhisperProcessor, WhisperTokenizer
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
AutoModelForImageTextToText = _AUTO["AutoModelForImageTextToText"]
AutoModelForVision2Seq = _AUTO["AutoModelForVision2Seq"]
CONFIG_MAPPING = {fam: None for fam in _families.FAMILIES}
MODEL_FOR_CAUSAL_LM_MAPPING = {fam: None for fam, spec in _families.FAMILIES.items() if "causal" in spec["heads"]}
MODEL_FOR_MASKED_LM_MAPPING = {fam: None for fam, spec in _families.FAMILIES.items() if "mlm" in spec["heads"]}
MODEL_MAPPING = {fam: None for fam in _families.FAMILIES}


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
    # Legacy examples list XLM/XLNet next to BERT: the names import, backed by the bert family.
    for prefix in ("XLM", "XLNet"):
        names[prefix + "Config"] = ("config", "bert", None)
        names[prefix + "ForQuestionAnswering"] = ("model", "bert", "qa")
        names[prefix + "Tokenizer"] = ("tok", "bert", False)
    return names


_CONCRETE = _concrete_names()


def __getattr__(name):
    if name == "AdamW" and not _v.changed("transformers-adamw-removed"):
        from .optimization import AdamW

        return AdamW
    if name == "AutoModelWithLMHead" and not _v.changed("transformers-automodelwithlmhead-removed"):
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


for _fam in list(CONFIG_MAPPING):
    CONFIG_MAPPING[_fam] = _config_class(_fam)
MODEL_TYPES = list(CONFIG_MAPPING)
# Real mappings are keyed by config classes (scripts read `conf.model_type` from the keys).
MODEL_MAPPING = {_config_class(f): None for f in MODEL_MAPPING}
MODEL_FOR_CAUSAL_LM_MAPPING = {_config_class(f): None for f in MODEL_FOR_CAUSAL_LM_MAPPING}
MODEL_FOR_MASKED_LM_MAPPING = {_config_class(f): None for f in MODEL_FOR_MASKED_LM_MAPPING}
WEIGHTS_NAME = "pytorch_model.bin"
CONFIG_NAME = "config.json"


# Speech (wav2vec2) checkpoints and folders dispatch to the audio classes (transformers/audio.py).
def _audio_dispatch(auto, target):
    orig = auto.from_pretrained.__func__

    def from_pretrained(cls, pretrained_model_name_or_path, *args, **kwargs):
        if _audio.is_wav2vec2(pretrained_model_name_or_path, kwargs):
            return target.from_pretrained(pretrained_model_name_or_path, **kwargs)
        return orig(cls, pretrained_model_name_or_path, *args, **kwargs)

    auto.from_pretrained = classmethod(from_pretrained)


_audio_dispatch(AutoConfig, Wav2Vec2Config)
_audio_dispatch(AutoTokenizer, Wav2Vec2CTCTokenizer)
_audio_dispatch(AutoFeatureExtractor, Wav2Vec2FeatureExtractor)
_audio_dispatch(AutoProcessor, Wav2Vec2Processor)
